"""Spend caps on batch jobs: a job whose first request does not fit stops at the cap,
the questions never sent are asked again even with --no-retry-failed, a billed request
that brought no answer counts, a resumed state without worst cases keeps the cap, the
Fanout's own cap holds for its batch jobs, and a line whose model has no price is
refused under a cap. (The first version of the caps, 1d0133c, failed each of these.)"""

from __future__ import annotations

import asyncio
import json
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from fanout import ConfigError, Fanout, Policy, Pricing
from fanout.core.models import Usage
from fanout.engine.merging import build_merged
from fanout.engine.planning import MERGE_ANSWER_OVERHEAD
from fanout.engine.spending import Pricer, worst_case
from fanout.jobs import BatchOptions, JobSummary, run_job

from .._virtual import on_virtual_time
from ..conftest import SimFactory

pytestmark = pytest.mark.slow

PRICE = Pricing(input=1, output=1)  # USD per million tokens, every model
PRICER = Pricer(pricing=PRICE)
FAST = BatchOptions(poll_s=0.05)


def _write(path: Path, questions: list[str]) -> Path:
    path.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                            for i, q in enumerate(questions)))  # fmt: skip
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _billed(server: Any) -> Decimal:
    """What the simulator's batches billed: every output line's usage, batch price."""
    store = server.batches
    total = Decimal(0)
    for batch in store.batches.values():
        if batch.output_file_id is None:
            continue
        for raw in store.files[batch.output_file_id].data.decode().splitlines():
            u = json.loads(raw)["response"]["body"]["usage"]
            usage = Usage(
                prompt_tokens=u["prompt_tokens"], completion_tokens=u["completion_tokens"]
            )
            cost = PRICER.cost(usage, "m", "batch")
            assert cost is not None
            total += cost
    return total


def _worst(question: str, **params: Any) -> Decimal:
    body = {"model": "m", **params, "messages": [{"role": "user", "content": question}]}
    return worst_case(PRICER, body, "m", None, tier="batch")


@on_virtual_time
async def test_a_batch_job_whose_first_request_does_not_fit_stops_at_the_cap(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A cap below one request's worst case: nothing is submitted, every question gets
    its BudgetExceededError record and the job stops at the cap (a run with nothing to
    submit raised FileNotFoundError: no batch directory had been made)."""
    questions = [f"What is {i}?" for i in range(3)]
    src, dst = _write(tmp_path / "q.jsonl", questions), tmp_path / "a.jsonl"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (server, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing=PRICE, memory=False)
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=FAST,
                      max_cost=_worst(questions[0]) / 2)  # fmt: skip
        assert not server.batches.batches
    assert summary.stopped_for_budget and summary.failed == 3
    assert all(r["error"].startswith("BudgetExceededError") for r in _records(dst))


@on_virtual_time
async def test_a_batch_job_stopped_at_the_cap_asks_the_unsent_again_with_no_retry_failed(
    sim: SimFactory, tmp_path: Path
) -> None:
    """docs/cost.md: the questions not sent for the cap are asked again by the next run
    "even with --no-retry-failed (they were never sent)", in a batch job as online.
    (Answers that use their max_tokens: two cost nearly their worst case, and the third
    does not fit once they are in.)"""
    questions = [f"What is {i}? {{{{tokens=400}}}}" for i in range(6)]
    src, dst = _write(tmp_path / "q.jsonl", questions), tmp_path / "a.jsonl"
    w = [_worst(q, max_tokens=400) for q in questions]
    room_for_two = w[0] + w[1] + w[2] / 2
    async with sim(time_scale=100, batch_completion_s=1) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing=PRICE, memory=False,
                    max_tokens=400)  # fmt: skip
        first = JobSummary()
        await run_job(first, fo, src, dst, batch=True, options=FAST, max_cost=room_for_two)
        assert first.stopped_for_budget and first.answered == 2 and first.failed == 4
        _write(src, [*questions, "What is 6?"])  # one more: the run has a batch to send
        again = JobSummary()
        await run_job(again, fo, src, dst, batch=True, options=FAST, retry_failed=False,
                      max_cost=1)  # fmt: skip
    last = {r["id"]: r for r in _records(dst)}
    assert sorted(last) == list(range(7))
    unanswered = sorted(i for i, r in last.items() if r["error"] is not None)
    assert unanswered == [], (unanswered, again.skipped_failed)


@on_virtual_time
async def test_a_merged_batch_request_without_usable_answers_still_counts_against_the_cap(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Every request has max_tokens, so the spend must never pass the cap. A merged
    batch request cut at its max_tokens before a whole answer was billed: its cost is
    recorded (a record for each of its questions, before they are asked again), so the
    records' spend is what was billed, and what it leaves is too little to ask the four
    alone. (Its usage went to the answers parsed, none, and the retries passed the cap
    by half.)"""
    questions = ["What is 0? {{tokens=400}}"] + [
        f"What is {i}? {{{{tokens=50}}}}" for i in (1, 2, 3)
    ]
    src, dst = _write(tmp_path / "q.jsonl", questions), tmp_path / "a.jsonl"
    merged = build_merged(questions, "json")
    body = {"model": "m", "max_tokens": 4 * 60 + 4 * (MERGE_ANSWER_OVERHEAD + 24),
            "messages": [{"role": "user", "content": merged.user_message}]}  # fmt: skip
    cap = worst_case(PRICER, body, "m", None, tier="batch") * Decimal("1.02")
    async with sim(time_scale=100, batch_completion_s=1) as (server, client):
        policy = Policy(mode="merge", max_group_size=4)
        fo = Fanout(client, model="m", policy=policy, pricing=PRICE, memory=False)
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=FAST, max_cost=cap,
                      max_tokens=60)  # fmt: skip
        billed = _billed(server)
    recorded = sum(Decimal(str(r["cost"])) for r in _records(dst) if r["cost"] is not None)
    assert billed <= cap, f"billed ${billed} > cap ${cap} (the records say ${recorded})"
    assert recorded == billed
    # Counted, the merged request leaves too little for the four asked again alone:
    # each gets a record naming it (the merged request's cost, then not sent).
    last = {r["id"]: r for r in _records(dst)}
    assert sorted(last) == list(range(4))
    assert all(r["error"].startswith(f"BudgetExceededError: id {i} ") for i, r in last.items())
    assert summary.stopped_for_budget


@on_virtual_time
async def test_a_batch_job_resumed_from_a_state_without_worst_cases_keeps_the_cap(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A batch started without a cap (or before batch jobs kept one) and killed while
    its batch runs; run again with --max-cost and ten more questions: the batch still
    out reserves its worst case, costed from its input file (its state has none), and
    what is billed stays within the cap."""
    questions = [f"What is {i}? {{{{tokens=50}}}}" for i in range(20)]
    src, dst = _write(tmp_path / "q.jsonl", questions[:10]), tmp_path / "a.jsonl"
    state = tmp_path / "a.jsonl.batches" / "state.json"
    cap = sum(_worst(q, max_tokens=50) for q in questions[:10])  # room for ten
    async with sim(time_scale=100, batch_completion_s=200) as (server, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing=PRICE, memory=False)
        job = asyncio.ensure_future(run_job(JobSummary(), fo, src, dst, batch=True, options=FAST,
                                            max_tokens=50))  # fmt: skip
        for _ in range(1000):
            chunks = json.loads(state.read_text())["chunks"] if state.exists() else []
            if chunks and all(c["batch_id"] for c in chunks):
                break
            await asyncio.sleep(0.01)
        job.cancel()  # killed while its batch runs
        with pytest.raises(asyncio.CancelledError):
            await job
        _write(src, questions)
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=FAST, max_cost=cap,
                      max_tokens=50)  # fmt: skip
        billed = _billed(server)
    assert billed <= cap, f"billed ${billed} > cap ${cap} ({summary.batch_answered} answered)"


@on_virtual_time
async def test_a_fanouts_own_spend_cap_holds_for_its_batch_jobs(
    sim: SimFactory, tmp_path: Path
) -> None:
    """docs/cost.md: "A cap on a Fanout holds for all its calls together", batch jobs
    included: a cap below one request's worst case sends none of them."""
    questions = [f"What is {i}?" for i in range(4)]
    src, dst = _write(tmp_path / "q.jsonl", questions), tmp_path / "a.jsonl"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing=PRICE, memory=False,
                    max_cost=_worst(questions[0]) / 2)  # fmt: skip
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=FAST)
    assert fo.spend_cap is not None
    assert summary.answered == 0, f"{summary.answered} answered past the Fanout's cap"


@on_virtual_time
async def test_a_batch_jobs_spend_counts_on_its_fanouts_cap(
    sim: SimFactory, tmp_path: Path
) -> None:
    """What a batch job's answers cost is spent on its Fanout's cap, as its online
    calls' is: the cap's ``spent`` is the records' cost, nothing left reserved."""
    questions = [f"What is {i}?" for i in range(4)]
    src, dst = _write(tmp_path / "q.jsonl", questions), tmp_path / "a.jsonl"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing=PRICE, memory=False,
                    max_cost=1)  # fmt: skip
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=FAST)
    assert summary.batch_answered == 4
    assert fo.spend_cap is not None and fo.spend_cap.reserved == 0
    assert fo.spend_cap.spent == sum(Decimal(str(r["cost"])) for r in _records(dst)) > 0


@on_virtual_time
async def test_a_capped_batch_job_refuses_a_line_whose_model_has_no_price(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A line may name its own model; under a cap, one whose price is unknown could not
    be kept under it (its worst case would count $0): the job stops with a ConfigError
    naming the model, before its batch is submitted."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text(json.dumps({"id": 0, "question": "What is 0?"}) + "\n"
                   + json.dumps({"id": 1, "question": "What is 1?", "model": "unpriced-x"})
                   + "\n")  # fmt: skip
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (server, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing={"m": PRICE},
                    memory=False)  # fmt: skip
        with pytest.raises(ConfigError, match="unpriced-x"):
            await run_job(JobSummary(), fo, src, dst, batch=True, options=FAST, max_cost=1)
        assert not server.batches.batches


@on_virtual_time
async def test_batch_answers_that_come_without_usage_cost_their_reservation(
    sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Output lines whose responses carry no usage: each answer counts its request's
    reservation against the cap, as an online reply without usage does, so a job capped
    at three requests' worst cases stops there. (They counted $0: every batch and all
    the questions were submitted, whatever the cap.)"""
    from fanout.jobs._batch_lines import read_file

    def without_usage(*args: Any, **kwargs: Any) -> dict[str, dict[str, Any]]:
        lines = read_file(*args, **kwargs)
        for line in lines.values():
            body = (line.get("response") or {}).get("body")
            if isinstance(body, dict):
                body.pop("usage", None)
        return lines

    monkeypatch.setattr("fanout.jobs._batch.read_file", without_usage)
    questions = [f"What is {i}?" for i in range(12)]
    src, dst = _write(tmp_path / "q.jsonl", questions), tmp_path / "a.jsonl"
    w = _worst(questions[0], max_tokens=10)
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), pricing=PRICE, memory=False,
                    max_tokens=10)  # fmt: skip
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=FAST, max_cost=3 * w + w / 2)
    assert summary.stopped_for_budget
    assert 1 <= summary.answered <= 3 and summary.answered + summary.failed == 12
    assert summary.cost is not None and summary.cost <= 3 * w + w / 2
