"""How a call's report reads for people: ``print(answers.report)`` and rich."""

from __future__ import annotations

import io
from collections.abc import Iterator

from rich.console import Console

import fanout

from .._virtual import on_virtual_time
from ..conftest import SimFactory


@on_virtual_time
async def test_print_report_is_a_short_summary_with_the_plan_and_its_reason(
    sim: SimFactory,
) -> None:
    """str(report): a few short lines with wall time, requests, 429s, tokens, plan, reason."""
    async with sim(time_scale=50, answer_tokens=20) as (_, client):
        answers = await fanout.ask_many([f"q{i}" for i in range(6)], client=client, model="m")
    report = answers.report
    text = str(report)
    lines = text.splitlines()
    assert 4 <= len(lines) <= 10, text
    assert all(len(line) <= 110 for line in lines), text
    assert lines[0].startswith("6 questions: 6 answered, 0 failed, in ")
    assert f"requests {report.requests} (retries 0, 429s 0)" in text
    assert f"tokens {report.total_tokens:,}" in text
    assert report.plan is not None
    assert f"plan: {report.plan.chosen.label}" in text
    # The reason, whole, wrapped over the "why" lines.
    why = " ".join(line[5:].strip() for line in lines if line.startswith(("why: ", "     ")))
    assert why == " ".join(report.plan.reason.split())
    assert len(text) < len(repr(report)) / 2  # the full data stays in the model


@on_virtual_time
async def test_a_wrapped_call_planned_twice_reports_the_whole_plan(sim: SimFactory) -> None:
    """A call re-planned as the limits' room and the answers came in: the plan line
    counts every request of the call and its reason is the call's, not the last
    revision's ("split, 1 requests ... the only possible plan for 1 question(s)")."""
    three = "1. What is A?\n2. What is B?\n3. What is C?"
    async with sim(time_scale=20, answer_tokens=20) as (_, client):
        wrapped = fanout.wrap(client, limits=fanout.Limits(rpm=500))
        reply = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": three}]
        )
    report = fanout.report_of(reply)
    assert report is not None
    assert len(report.revisions) > 1  # the case at hand: re-planned for the last question
    text = str(report)
    plan_line = next(line for line in text.splitlines() if line.startswith("plan: "))
    assert plan_line.startswith(f"plan: split, {report.requests} requests, estimated ")
    assert plan_line.endswith(f"over {len(report.revisions)} revisions")
    assert "only possible plan for 1 question" not in text
    assert "split (3 requests)" in text


@on_virtual_time
async def test_plan_reasons_give_every_decision_of_a_call_that_re_planned(
    sim: SimFactory,
) -> None:
    """report.plan.reason is the last plan's alone (here: for the last question);
    report.plan_reasons has the first decision and every revision, in order."""
    three = "1. What is A?\n2. What is B?\n3. What is C?"
    async with sim(time_scale=20, answer_tokens=20) as (_, client):
        wrapped = fanout.wrap(client, limits=fanout.Limits(rpm=500))
        reply = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": three}]
        )
    report = fanout.report_of(reply)
    assert report is not None and report.plan is not None
    assert len(report.revisions) > 1
    reasons = report.plan_reasons
    assert len(reasons) == len(report.revisions)
    for line, revision in zip(reasons, report.revisions, strict=True):
        assert line == f"{revision.at_s:.2f} s, {revision.trigger}: {revision.plan.reason}"
    assert reasons[0].startswith("0.00 s, ")
    assert report.revisions[0].plan.reason != report.plan.reason  # the first decision is kept


@on_virtual_time
async def test_rich_prints_the_report_as_a_table(sim: SimFactory) -> None:
    """rich.print(report) renders a titled table of the same lines."""
    async with sim(time_scale=50, answer_tokens=5) as (_, client):
        answers = await fanout.ask_many(["a?", "b?"], client=client, model="m", policy="split")
    out = io.StringIO()
    Console(file=out, width=120, color_system=None).print(answers.report)
    rendered = out.getvalue()
    assert "fanout report" in rendered
    assert "2 questions: 2 answered, 0 failed" in rendered
    assert "split" in rendered


@on_virtual_time
async def test_a_plan_made_before_any_response_says_its_estimate_rests_on_priors(
    sim: SimFactory,
) -> None:
    """A cold call plans before the endpoint has answered anything: its estimate is an
    assumption, and the report says so ("on priors"); the next call of the same
    ``Fanout`` plans from measured responses and does not."""
    async with sim(time_scale=50, answer_tokens=20) as (_, client):
        fo = fanout.Fanout(client, model="m", memory=False)
        questions = [f"Question {i}?" for i in range(6)]
        cold = await fo.ask_many(questions, policy="split")
        warm = await fo.ask_many(questions, policy="split")
    first = cold.report.revisions[0]
    assert first.on_priors and first.as_dict()["estimate"] == "priors"
    assert "(on priors: no response measured yet)" in str(cold.report)
    last = warm.report.revisions[-1]
    assert last.observations > 0 and not last.on_priors
    assert last.as_dict()["estimate"] == "measured"
    assert "on priors" not in str(warm.report)


def test_a_report_lists_three_merge_checks_and_counts_the_rest() -> None:
    """A call of many merged groups checks many of them: the summary shows the first
    three checks and how many more the field holds, not a line per group."""
    report = fanout.Report(
        merge_checks=[f"1 of 1 merged answers agreed (group {i})" for i in range(9)]
    )
    lines = [line for line in str(report).splitlines() if line.startswith("merge check: ")]
    assert lines == [
        "merge check: 1 of 1 merged answers agreed (group 0)",
        "merge check: 1 of 1 merged answers agreed (group 1)",
        "merge check: 1 of 1 merged answers agreed (group 2)",
        "merge check: and 6 more (report.merge_checks has them all)",
    ]
    assert len(report.merge_checks) == 9


@on_virtual_time
async def test_a_streamed_input_s_report_keeps_its_decisions_not_a_plan_per_batch(
    sim: SimFactory,
) -> None:
    """600 questions from a generator, read in batches as the window frees: batches
    planned alike are one revision (each batch's held its whole plan: 2.2 KB a question
    of a streamed call, benchmarks/stream_memory.py), and the revisions still count
    every question and request."""

    def questions() -> Iterator[str]:
        for i in range(600):
            yield f"What is {i} times 3?"

    async with sim(time_scale=100, answer_tokens=2) as (server, client):
        fo = fanout.Fanout(client, model="sim-1", policy="split", memory=False)
        answers = await fo.ask_many(questions())
    report = answers.report
    assert len(answers) == 600 and all(a.error is None for a in answers)
    assert sum(r.questions for r in report.revisions) == 600
    assert sum(r.requests for r in report.revisions) == len(server.stats.requests) == 600
    assert len(report.revisions) <= 4, report.plan_reasons
    assert sum(r.batches for r in report.revisions) > 4 * len(report.revisions)
