"""Canary checks: once some of a call's questions were answered alone, a merged group
is checked by carrying one of them as its last member (a request saved per check)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openai import AsyncOpenAI

import fanout
from fanout.core.config import SPOT_CHECK_EVERY
from fanout.core.models import Answer
from fanout.engine.canaries import KEPT_CANARIES, Canaries
from fanout.engine.intake import Job
from fanout.sim import answer_for

from .._scripted import scripted_server
from .._virtual import on_virtual_time
from ._merged_prompts import _policy, _shifting

if TYPE_CHECKING:
    from ..conftest import SimFactory

QUESTIONS = [f"Two words for tint {i}? {{{{tokens=2}}}}" for i in range(9)]


def _job(i: int, *, context: tuple[dict[str, str], ...] = (), mergeable: bool = True) -> Job:
    q = fanout.Question(text=f"question {i}", context=context, trusted=mergeable)
    return Job(index=i, question=q, params={}, key=str(i))


def _answer(job: Job, text: str | None = "ok", mode: str = "split", **kw: object) -> Answer:
    return Answer(index=job.index, question=job.question.text, text=text,
                  choices=[text or ""], mode=mode, **kw)  # type: ignore[arg-type]  # fmt: skip


class TestWhichAnswersBecomeCanaries:
    def test_only_answers_asked_alone_and_given_are_kept(self) -> None:
        canaries = Canaries()
        jobs = [_job(i) for i in range(5)]
        assert canaries.learn(jobs[0], _answer(jobs[0]))
        assert not canaries.learn(jobs[1], _answer(jobs[1], mode="merged"))
        assert not canaries.learn(jobs[2], _answer(jobs[2], text="  "))
        error = fanout.QuestionError("boom", index=3, question="question 3", attempts=1)
        assert not canaries.learn(jobs[3], _answer(jobs[3], text=None, error=error))
        unmergeable = _job(4, mergeable=False)
        assert not canaries.learn(unmergeable, _answer(unmergeable))
        assert canaries.known() == ["ok"]

    def test_a_question_learned_before_it_was_finished_is_kept_once(self) -> None:
        """A first check's sampled answer is learned as it comes back, then again when
        the group is finished: one canary, not two turns for it."""
        canaries = Canaries()
        job = _job(0)
        assert canaries.learn(job, _answer(job, "zero"))
        assert not canaries.learn(job, _answer(job, "zero"))
        assert canaries.known() == ["zero"]

    def test_a_canary_rides_only_a_group_it_could_be_merged_with(self) -> None:
        canaries = Canaries()
        alone = _job(0)
        canaries.learn(alone, _answer(alone, "zero"))
        assert canaries.pick([alone]) is None  # never a question of the group itself
        other_context = [_job(1, context=({"role": "user", "content": "earlier"},))]
        assert canaries.pick(other_context) is None
        picked = canaries.pick([_job(2), _job(3)])
        assert picked is not None and picked.job is alone and picked.answer == "zero"

    def test_canaries_take_turns_and_only_the_latest_are_kept(self) -> None:
        canaries = Canaries()
        jobs = [_job(i) for i in range(KEPT_CANARIES + 2)]
        for job in jobs:
            canaries.learn(job, _answer(job, f"answer {job.index}"))
        group = [_job(100), _job(101)]
        picked = {p.job.index for _ in range(KEPT_CANARIES) if (p := canaries.pick(group))}
        assert picked == {job.index for job in jobs[2:]}


def _wave(answers: fanout.Answers) -> int:
    """Questions a first wave sent alone before the call's plan (the room unknown)."""
    first = answers.report.revisions[0]
    return first.questions if first.trigger.startswith("first wave") else 0


@on_virtual_time
async def test_once_agreement_is_established_the_checked_group_carries_a_canary(
    sim: SimFactory,
) -> None:
    """Agreement established here (its memory says 9 of 9): one merged group in four
    is checked, and a question of the call answered alone by then (the first wave's)
    rides it as one more question: no request for the check, every answer its own."""
    questions = [f"Two words for tone {i}? {{{{tokens=2}}}}" for i in range(24)]
    async with sim(time_scale=50) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=120), memory=False)
        fo.endpoint.observe_merge_check("json", 9, 9, 0)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
        sent = len(server.stats.requests)
    assert answers.texts == [answer_for(q, 2) for q in questions]
    wave = _wave(answers)
    assert wave >= 1  # the room unknown: a question first
    groups = [g for g in answers.report.revisions[-1].plan.groups if len(g) > 1]
    checks = answers.report.merge_checks
    assert len(checks) == -(-len(groups) // SPOT_CHECK_EVERY), checks
    by_canary = [c for c in checks if "as the group's canary" in c]
    # A check made before the first wave's answer is back asks its group's last question
    # alone (a request); the others carry a canary (none). On an idle machine, all do.
    assert by_canary, checks
    for check in by_canary:
        assert (
            check.startswith("1 of 1 merged answers (json) agreed with split ones (question ")
            and "the group's 3 questions took the merged answers" in check
        ), check
    alone = len(checks) - len(by_canary)
    assert [a.mode for a in answers].count("split") == wave + alone
    assert sent == answers.report.requests == wave + len(groups) + alone


@on_virtual_time
async def test_before_agreement_is_established_a_check_asks_a_question_of_the_group_alone(
    sim: SimFactory,
) -> None:
    """Only 4 of 4 agreed so far: a canary is not a question of the group (on a real
    model it vouched for groups whose own answers were wrong), so the checks until
    agreement is established ask a question of their group alone; canaries only after."""
    questions = [f"Two words for tone {i}? {{{{tokens=2}}}}" for i in range(48)]
    async with sim(time_scale=50) as (_server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=300), memory=False)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
    assert answers.texts == [answer_for(q, 2) for q in questions]
    checks = answers.report.merge_checks
    alone = [n for n, c in enumerate(checks) if "canary" not in c]
    by_canary = [n for n, c in enumerate(checks) if "canary" in c]
    assert len(alone) >= 5 and by_canary, checks  # 4 + 5 agreeing establish 0.75
    assert max(alone[:5]) < min(by_canary), checks


@on_virtual_time
async def test_a_canary_answered_wrongly_sends_its_group_alone() -> None:
    """An endpoint whose merged answers were established as right (9 of 9) and now
    shifts them by one: the first checked group's canary comes back with its
    neighbour's answer, so all of that group is asked alone, and agreement is no longer
    established: no later check is a canary. (Groups that went unchecked before that
    check came back are the thinning's known risk, see docs/policy.md; whether any did
    depends on timing, so this test does not count them.)"""
    questions = [f"Two words for tint {i}? {{{{tokens=2}}}}" for i in range(12)]
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=120), memory=False)
        fo.endpoint.observe_merge_check("json", 9, 9, 0)
        answers = await fo.ask_many(questions, policy=_policy(max_group_size=3))
        await client.close()
    assert _wave(answers) == 1
    checks = answers.report.merge_checks
    assert checks[0].startswith("0 of 1 merged answers (json) agreed with split ones (question 0")
    assert checks[0].endswith("as the group's canary); the group's 3 questions asked alone instead")
    assert all("canary" not in c for c in checks[1:]), checks
    first = next(g for g in answers.report.revisions[-1].plan.groups if len(g) == 3)
    wave = 1
    for position in first:  # the canary-checked group: asked alone, each its own answer
        answer = answers[wave + position]
        assert answer.mode == "split" and answer.text == answer_for(answer.question, 2)
    compared, agreed, _ = fo.endpoint.merge_agreement("json") or (0, 0, 0)
    assert (compared, agreed) >= (10, 9) and agreed < compared
    merged = [m for m in server.user_messages() if "Answer each of the following" in m]
    assert "tint 0?" in merged[0].strip().splitlines()[-1]  # the canary, last


_RIGHT = {"What is 2 plus 2?": "4", "What is 2 times 2?": "4", "Capital of Japan?": "Tokyo",
          "Capital of Italy?": "Rome", "Capital of Spain?": "Madrid", "Capital of Peru?": "Lima",
          "How many legs has a dog?": "4"}  # fmt: skip


def _right(body: dict[str, Any]) -> str:
    """A model that answers every question rightly, alone or merged."""
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    if "Answer each of the following" not in user:
        return _RIGHT[user]
    listed = [line for line in user.split("\n\n", 1)[1].splitlines() if line.startswith("[")]
    answers = [_RIGHT[line[line.index("]") + 2 :]] for line in listed]
    keys = body["response_format"]["json_schema"]["schema"]["required"]
    return json.dumps(dict(zip(keys, answers, strict=True)))


@on_virtual_time
async def test_a_canary_whose_right_answer_a_group_member_shares_agrees() -> None:
    """The canary ("4", asked alone in the first wave) rides a group whose last
    question's right answer is "4" too: a repeated answer answers neither question in
    the group, but the canary's is compared as it came, so the check agrees, the
    endpoint is not counted as merging badly, and only the repeated question is asked
    alone again (not all of the group)."""
    async with scripted_server(_right) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=300), memory=False)
        fo.endpoint.observe_merge_check("json", 9, 9, 0)
        answers = await fo.ask_many(list(_RIGHT), policy=_policy(max_group_size=5))
        await client.close()
    assert answers.texts == list(_RIGHT.values())
    assert answers.report.merge_checks[0].startswith("1 of 1 merged answers (json) agreed")
    assert fo.endpoint.merge_agreement("json") == (10, 10, 0)
    assert [a.mode for a in answers] == ["split"] * 2 + ["merged"] * 4 + ["split"]
    # The wave, the merged groups (one on the wall clock; on virtual time, where the
    # scripted replies take no time, two: 3 and 2), and the repeated question alone.
    groups = [r for r in server.requests if "Answer each of the following" in str(r["messages"])]
    assert groups and len(server.requests) == 2 + len(groups) + 1
