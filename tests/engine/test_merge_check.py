"""The merge check: auto merges only where merged answers agree with split ones.

A model that answers well alone may answer merged questions wrongly, often with the
answer of *another* question of the group, while the reply parses perfectly. Before
auto relies on merging for an endpoint and model, it asks a few questions both ways
and compares (``Policy.merge_agreement``); what it finds is remembered.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from openai import AsyncOpenAI

import fanout
from fanout.core.config import SPOT_CHECK_EVERY
from fanout.engine.agreement import answers_agree, compare, established, still_to_check
from fanout.engine.planning import MERGE_ANSWER_OVERHEAD
from fanout.sim import answer_for

from .._scripted import scripted_server
from .._virtual import on_virtual_time
from ._merged_prompts import _faithful, _layout, _listed, _policy, _shifting

if TYPE_CHECKING:
    from ..conftest import SimFactory

# Twelve two-word answers (each its own) behind a tight request limit: the clock alone merges them.
SCALE = 10
QUESTIONS = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(12)]
# Enough for more merged groups than a first check samples: a smaller call under a
# request limit is checked group by group by canaries instead (tests/engine/test_canaries.py).
MANY = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(30)]
TIGHT = {"time_scale": SCALE, "rpm": 6}


class TestTheJudge:
    @pytest.mark.parametrize(
        ("a", "b"),
        [("Paris", "The capital of France is Paris."), ("8", "Eight legs."),
         ("Tokyo", "tokyo, japan"), ("Blue.", "blue")],
    )  # fmt: skip
    def test_short_answers_that_say_the_same_agree(self, a: str, b: str) -> None:
        """Case, punctuation, number words and a carrier sentence do not matter."""
        assert answers_agree(a, b)

    @pytest.mark.parametrize(("a", "b"), [("Paris", "Berlin"), ("8", "6 legs"), ("", "")])
    def test_different_or_empty_answers_disagree(self, a: str, b: str) -> None:
        """Another word, another number, or nothing at all: no agreement."""
        assert not answers_agree(a, b)

    @pytest.mark.parametrize(
        ("a", "b", "question"),
        [("Tokyo", "The capital of Japan is Tokyo.", "What is the capital of Japan?"),
         ("The sun", "sun", "Which is larger, the sun or the moon?"),
         ("Yes", "Yes, Paris is in France.", "Is Paris in France?"),
         ("50", "30 + 20 = 50", "What is 30 + 20?")],
    )  # fmt: skip
    def test_answers_that_say_the_same_agree_given_their_question(
        self, a: str, b: str, question: str
    ) -> None:
        """The question's own words set aside where an answer says more, or kept where
        the answer is one of them (a choice)."""
        assert answers_agree(a, b, question)

    @pytest.mark.parametrize(
        ("a", "b", "question"),
        [("Japan", "The capital of Japan is Tokyo.", "What is the capital of Japan?"),
         ("Egypt", "Cairo is the capital of Egypt.", "What is the capital of Egypt?"),
         ("The moon", "The sun", "Which is larger, the sun or the moon?")],
    )  # fmt: skip
    def test_an_answer_that_only_repeats_its_question_agrees_with_no_answer(
        self, a: str, b: str, question: str
    ) -> None:
        """SmolLM2's merged slip ("Japan" to "What is the capital of Japan?") agreed
        with the split answer that names the country and its capital, when the
        question's words were counted: three such slips made a first check agree."""
        assert answers_agree(a, b) or a == "The moon"  # what the plain rule said
        assert not answers_agree(a, b, question)

    def test_an_answer_that_belongs_to_another_question_is_counted(self) -> None:
        """Japan -> Paris, Italy -> Tokyo: shifted by one, as a small model does."""
        result = compare(["Paris", "Tokyo", "Rome"], ["Paris", "Paris", "Tokyo"])
        assert (result.compared, result.agreed, result.misattributed) == (3, 1, 2)


class TestWhenAgreementIsEstablished:
    def test_nine_agreeing_answers_establish_three_quarters_at_95_percent(self) -> None:
        """The lower Wilson bound (one-sided 95 %) of the agreement rate must reach the
        threshold: 9 of 9 for 0.75, 25 of 25 for 0.9; 8 of 8 is not enough."""
        assert established((9, 9, 0), 0.75) and not established((8, 8, 0), 0.75)
        assert established((25, 25, 0), 0.9) and not established((24, 24, 0), 0.9)
        assert not established(None, 0.75)
        assert still_to_check((4, 4, 0), 0.75) == 5
        assert still_to_check((9, 9, 0), 0.75) == 0

    def test_one_answer_of_another_question_is_never_outweighed(self) -> None:
        """A misattribution seen: no number of agreeing checks establishes agreement."""
        assert not established((500, 499, 1), 0.75)
        assert still_to_check((40, 39, 1), 0.75) is None


@on_virtual_time
async def test_auto_checks_merged_answers_before_relying_on_them(sim: SimFactory) -> None:
    """On an endpoint whose merged answers are right (the simulator), the first merged
    group is sent merged and part of it alone as well; they agree, the rest of that
    group takes its merged answers, and once enough agreed the rest merge unchecked."""
    async with sim(**TIGHT) as (_server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=6 * SCALE), memory=False)
        answers = await fo.ask_many(QUESTIONS, policy=_policy())
    report = answers.report
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS]
    assert report.merge_checks
    for check in report.merge_checks:
        n = check.split(" ", 1)[0]
        assert check.startswith(f"{n} of {n} merged answers"), check
        assert "took the merged answers" in check, check
    compared, agreed, wrong = fo.endpoint.merge_agreement("json") or (0, 0, 0)
    assert compared >= 4 and agreed == compared and wrong == 0
    modes = [a.mode for a in answers]
    # Alone: the checks' samples, and at most two of a first wave (answer lengths unknown).
    assert modes.count("split") <= compared + 2 and modes.count("merged") >= 4, modes
    assert report.requests < len(QUESTIONS)  # merged answers used, the check included


@on_virtual_time
async def test_a_small_call_pays_for_its_check_with_fewer_requests_than_splitting(
    sim: SimFactory,
) -> None:
    """A cold call of five questions behind a tight limit (2 rpm), the plan costing the
    check's requests and its schema's prompt tokens: one question goes first alone (the
    endpoint's room is unknown), then the other four as one merged group whose check
    asks two of them alone beside it; they agree, and the other two take their merged
    answers: four requests where split sends five."""
    async with sim(time_scale=SCALE, rpm=2) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=2 * SCALE), memory=False)
        answers = await fo.ask_many(QUESTIONS[:5], policy=_policy(max_group_size=5))
        sent = len(server.stats.requests)
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS[:5]]
    assert sorted(a.mode for a in answers) == ["merged"] * 2 + ["split"] * 3
    assert "1 question sent alone" in answers.report.plan_reasons[0]
    assert answers.report.merge_checks == [
        "2 of 2 merged answers (json) agreed with split ones; "
        "2 questions more of the group took the merged answers"
    ]
    assert answers.report.requests == sent == 4


def _bills_prompts_flat(fo: fanout.Fanout) -> None:
    """The scripted server bills every prompt 10 tokens: what a merged request adds to its
    questions' prompt is nothing there, as its first merged reply would teach. Said
    before the call, so that its cold plan is not costed at the prior's merged prompt
    (instructions, tags and the JSON schema: ~40 tokens a question), which on four
    two-token answers tips the plan to splitting and the check is never made."""
    fo.endpoint.observe_merge_usage(0.0, MERGE_ANSWER_OVERHEAD)


def _merged(body: dict[str, Any]) -> bool:
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return "Answer each of the following" in user


@on_virtual_time
async def test_a_checks_answers_asked_alone_are_kept_when_the_call_times_out() -> None:
    """The first merge check asks two of a group of four alone beside the merged
    request; their answers come back at once, the merged reply never comes before the
    call's timeout: those two questions get their answers (asked alone: theirs either
    way), the other two a timeout error naming them. (They timed out too before.)"""
    room = {"x-ratelimit-limit-requests": "20", "x-ratelimit-remaining-requests": "19",
            "x-ratelimit-reset-requests": "3s"}  # fmt: skip
    async with scripted_server(_shifting, room, lambda b: 30.0 if _merged(b) else 0.0) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=20), memory=False)
        _bills_prompts_flat(fo)
        answers = await fo.ask_many(QUESTIONS[:4], policy=_policy(max_group_size=4),
                                    timeout=2.0, on_error="return")  # fmt: skip
        await client.close()
        merged = [b for b in server.requests if _merged(b)]
    assert len(merged) == 1  # the check was made: one merged request, two alone
    assert [a.text for a in answers[2:]] == [answer_for(q, 2) for q in QUESTIONS[2:4]]
    assert [a.mode for a in answers[2:]] == ["split", "split"]
    for a in answers[:2]:
        assert isinstance(a.error, fanout.QuestionTimeoutError)
        assert f"question {a.index} " in str(a.error)


async def _last_refused_alone(
    model: Callable[[dict[str, Any]], str],
) -> tuple[fanout.Answers, list[dict[str, Any]]]:
    """A call that is one merged group of four under a tight limit, on a scripted
    ``model`` that refuses (400) the last question whenever it is asked alone: its
    answers, and the bodies of the requests the endpoint took."""
    last = QUESTIONS[3]
    async with scripted_server(
        model, status=lambda b: 400 if not _merged(b) and last in json.dumps(b) else 200
    ) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=12), memory=False)
        _bills_prompts_flat(fo)
        answers = await fo.ask_many(
            QUESTIONS[:4], policy=_policy(max_group_size=4), on_error="return"
        )
        await client.close()
    return answers, server.requests


@on_virtual_time
async def test_a_sampled_question_whose_alone_request_failed_takes_its_trusted_merged_answer() -> (
    None
):
    """The first merge check asks the last two of a group of four alone; the last one's
    request is refused (400), the other agrees with its merged answer. The merged
    answers are trusted, so the refused question takes its merged answer rather than the
    refusal (it used to keep the error while the merged reply answered it)."""
    answers, requests = await _last_refused_alone(_faithful)
    assert len([b for b in requests if _merged(b)]) == 1  # the check was made
    assert [a.error for a in answers] == [None] * 4
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS[:4]]
    assert [a.mode for a in answers] == ["merged", "merged", "split", "merged"]
    assert answers.report.merge_checks[0].startswith("1 of 1 merged answers")


@on_virtual_time
async def test_a_sampled_question_whose_alone_request_failed_keeps_its_error_when_the_check_fails() -> (
    None
):
    """The same refusal where the merged answers are shifted by one: nothing vouches for
    the merged answer of the refused question, so it keeps the error of its own request
    (asked alone with its retries already; not asked a third time)."""
    answers, requests = await _last_refused_alone(_shifting)
    assert answers.texts[:3] == [answer_for(q, 2) for q in QUESTIONS[:3]]
    assert isinstance(answers[3].error, fanout.FanoutError)
    assert "400" in str(answers[3].error) or "refused" in str(answers[3].error)
    assert sum(1 for b in requests if QUESTIONS[3] in json.dumps(b)) == 2  # merged, alone


@on_virtual_time
async def test_merged_groups_keep_being_checked_after_a_check_agreed() -> None:
    """An endpoint whose merged answers once agreed (its memory says 4 of 4) and now
    shift them by one: auto merges, but each merged group also asks its last question
    alone; they disagree, the groups are asked alone, and no answer is another's."""
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=12), memory=False)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        answers = await fo.ask_many(QUESTIONS[:6], policy=_policy(max_group_size=3))
        await client.close()
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS[:6]]
    assert all(a.mode == "split" for a in answers), [a.mode for a in answers]
    assert answers.report.merge_checks and all(
        check.startswith("0 of 1 merged answers") for check in answers.report.merge_checks
    ), answers.report.merge_checks


@on_virtual_time
async def test_spot_checks_thin_out_once_agreement_is_established(sim: SimFactory) -> None:
    """An endpoint whose merged answers are known to agree (its memory says 9 of 9, at
    95 % confidence above 0.75): of eight merged groups, one in four also asks its last
    question alone, not each of them; every answer is still its own."""
    async with sim(time_scale=50, rpm=6) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=6 * 50), memory=False)
        fo.endpoint.observe_merge_check("json", 9, 9, 0)
        questions = [f"Two words for shade {i}? {{{{tokens=2}}}}" for i in range(24)]
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
        sent = len(server.stats.requests)
    assert answers.texts == [answer_for(q, 2) for q in questions]
    revisions = answers.report.revisions
    wave = revisions[0].questions if revisions[0].trigger.startswith("first wave") else 0
    groups = len(revisions[-1].plan.groups)  # a first wave alone, the rest in groups of 3
    assert groups == -(-(24 - wave) // 3)
    checks = answers.report.merge_checks
    assert len(checks) == -(-groups // SPOT_CHECK_EVERY), checks
    assert [a.mode for a in answers].count("split") == wave + len(checks)
    assert sent == wave + groups + len(checks)


@on_virtual_time
async def test_spot_checks_go_on_for_every_group_until_agreement_is_established(
    sim: SimFactory,
) -> None:
    """The same call where only 4 of 4 agreed so far: every group is checked until
    agreement is established (five more agreeing), then one in four. A group checked
    before any question of the call has its answer alone asks its last question alone
    as well (a request); the others carry such a question as their canary (none)."""
    async with sim(time_scale=50, rpm=6) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=6 * 50), memory=False)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        questions = [f"Two words for shade {i}? {{{{tokens=2}}}}" for i in range(48)]
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
        sent = len(server.stats.requests)
    assert answers.texts == [answer_for(q, 2) for q in questions]
    groups = [g for g in answers.report.revisions[-1].plan.groups if len(g) > 1]
    wave = len(questions) - sum(len(g) for g in groups)  # asked alone before the groups
    checks = answers.report.merge_checks
    by_canary = [c for c in checks if "as the group's canary" in c]
    assert 5 <= len(checks) < len(groups), checks  # checked, then thinned out
    assert by_canary, checks
    assert sent == wave + len(groups) + len(checks) - len(by_canary)
    compared, agreed, _ = fo.endpoint.merge_agreement("json") or (0, 0, 0)
    assert compared == agreed == 4 + len(checks)


@on_virtual_time
async def test_groups_stop_merging_once_their_checks_bring_the_agreement_too_low() -> None:
    """An endpoint whose merged answers agreed on 7 of 8 checked (enough to merge, not to
    trust) and now shift them by one: the merged pairs are checked, they disagree, and
    the pairs that start once the agreement has fallen under 0.75 ask their questions
    alone instead of merging. Every answer is its own."""
    questions = [f"Two words for hue {i}? {{{{tokens=2}}}}" for i in range(48)]
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=300), memory=False)
        fo.endpoint.observe_merge_check("json", 8, 7, 0)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=2))
        await client.close()
    assert answers.texts == [answer_for(q, 2) for q in questions]
    assert all(a.mode == "split" for a in answers), [a.mode for a in answers]
    pairs = [g for g in answers.report.revisions[-1].plan.groups if len(g) == 2]
    merged = [m for m in server.user_messages() if "Answer each of the following" in m]
    checks = answers.report.merge_checks
    checked = [c for c in checks if c.startswith("0 of 1 merged answers")]
    alone = [c for c in checks if c.startswith("a group of 2 asked alone, not merged")]
    assert len(merged) == len(checked) < len(pairs), checks
    assert len(checked) + len(alone) == len(pairs) and alone, checks
    compared, agreed, _ = fo.endpoint.merge_agreement("json") or (0, 0, 0)
    assert (compared, agreed) == (8 + len(checked), 7)


@on_virtual_time
async def test_a_check_that_disagrees_asks_the_rest_of_its_group_alone() -> None:
    """A call that is one merged group: its last half is asked alone beside the merged
    request; when those disagree, the rest of the group is asked alone too, and no
    merged answer is kept."""
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        # A tight limit, so that the clock alone would merge all four.
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=12), memory=False)
        _bills_prompts_flat(fo)
        answers = await fo.ask_many(QUESTIONS[:4], policy=_policy(max_group_size=4))
        await client.close()
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS[:4]]
    assert all(a.mode == "split" for a in answers), [a.mode for a in answers]
    assert answers.report.merge_checks == [
        # The last two asked alone too; the third's merged answer is the second's, the
        # fourth's the third's (another sampled question's: misattributed).
        "0 of 2 merged answers (json) agreed with split ones, 1 with another question's; "
        "2 questions more of the group asked alone instead"
    ]


@on_virtual_time
async def test_a_check_that_disagrees_anywhere_keeps_the_unchecked_merged_answers_out() -> None:
    """A call that is one merged group of eight, its last four asked alone beside it;
    three of the four agree (the endpoint's threshold, 0.75) and one does not, and the
    merged reply is wrong at two positions not checked as well. The group's other
    questions are asked alone: a reply wrong at one checked position vouches for no
    unchecked one (they took the wrong merged answers when three of four sufficed)."""

    def model(body: dict[str, Any]) -> str:
        listed = _listed(body)
        if not listed:
            return _faithful(body)
        answers = {tag: answer_for(q, 2) for tag, q in listed}
        for position in (0, 1, 4):  # two unchecked, one sampled
            answers[listed[position][0]] = f"unrelated text {position}"
        return _layout(body, answers)

    async with scripted_server(model) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=12), memory=False)
        answers = await fo.ask_many(QUESTIONS[:8], policy=_policy(max_group_size=8))
        await client.close()
    assert answers.report.merge_checks[0].startswith("3 of 4 merged answers")
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS[:8]]
    assert all(a.mode == "split" for a in answers[:4]), [a.mode for a in answers]


@on_virtual_time
async def test_auto_splits_where_merged_answers_answer_other_questions() -> None:
    """A model whose merged answers are shifted by one question: the check sees it,
    auto splits the rest, every answer is the question's own, and the plan says why."""
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), memory=False)
        answers = await fo.ask_many(MANY, policy=_policy())
        await client.close()
    assert answers.texts == [answer_for(q, 2) for q in MANY]
    assert all(a.mode == "split" for a in answers)
    [check] = answers.report.merge_checks
    # The group's last four asked alone as well: each merged answer is the one of the
    # question before it (three of those were sampled: misattributed).
    assert check.startswith(
        "0 of 4 merged answers (json) agreed with split ones, 3 with another question's; "
    ) and check.endswith("more of the group asked alone instead"), check
    final = answers.report.revisions[-1].plan
    assert "Merging is off" in final.reason and "merge_agreement" in final.reason
    merged_requests = [b for b in server.requests if "Answer each of the following" in
                       next(m["content"] for m in reversed(b["messages"]) if m["role"] == "user")]  # fmt: skip
    assert len(merged_requests) == 1  # the check's only


@on_virtual_time
async def test_what_the_check_found_is_remembered_by_the_next_process(tmp_path: Path) -> None:
    """A second Fanout with the same endpoint memory does not check again: it splits
    from its first plan."""
    async with scripted_server(_shifting) as server:
        for _ in range(2):
            client = AsyncOpenAI(base_url=server.base_url, api_key="k")
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), memory=tmp_path)
            answers = await fo.ask_many(MANY, policy=_policy())
            await client.close()
    assert answers.report.merge_checks == []
    assert answers.report.plan is not None and answers.report.plan.chosen.group_size == 1
    assert "Merging is off" in answers.report.plan.reason
    assert answers.texts == [answer_for(q, 2) for q in MANY]


@on_virtual_time
async def test_the_check_can_be_turned_off() -> None:
    """``merge_agreement=None``: auto merges on the clock alone, unchecked."""
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), memory=False)
        answers = await fo.ask_many(MANY, policy=_policy(merge_agreement=None))
        await client.close()
    assert answers.report.merge_checks == []
    assert any(a.mode == "merged" for a in answers)


@on_virtual_time
async def test_a_forced_merge_warns_when_the_known_agreement_is_low(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """``mode="merge"`` still merges where the check found disagreement, and warns once."""
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), memory=False)
        await fo.ask_many(MANY, policy=_policy())  # the check: 0 of 4
        with caplog.at_level(logging.WARNING, logger="fanout"):
            forced = await fo.ask_many(QUESTIONS[:6], policy=_policy(mode="merge"))
            await fo.ask_many(QUESTIONS[6:], policy=_policy(mode="merge"))
        await client.close()
    assert any(a.mode == "merged" for a in forced)
    warnings = [r for r in caplog.records if "agreed with split" in r.getMessage()]
    assert len(warnings) == 1


def test_the_threshold_is_checked() -> None:
    """merge_agreement is a share in [0, 1], or None."""
    with pytest.raises(fanout.ConfigError):
        fanout.Policy(merge_agreement=1.5)
    with pytest.raises(fanout.ConfigError):
        fanout.Policy(merge_agreement=True)
    assert fanout.Policy(merge_agreement=None).merge_agreement is None
