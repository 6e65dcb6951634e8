"""Canary checks: once some of a call's questions were answered alone, a merged group
is checked by carrying one of them as its last member (a request saved per check)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from openai import AsyncOpenAI

import fanout
from fanout.core.models import Answer
from fanout.engine.canaries import KEPT_CANARIES, Canaries
from fanout.engine.intake import Job
from fanout.sim import answer_for

from ._scripted import scripted_server
from .test_merge_check import MANY, _policy, _shifting

if TYPE_CHECKING:
    from .conftest import SimFactory

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


async def test_merged_groups_are_checked_by_a_canary_for_no_request(sim: SimFactory) -> None:
    """Agreement not yet established here (its memory says 4 of 4): every merged group
    is checked, and once a question of the call has its answer alone (here the first
    wave's, sent to learn the room) each group carries it as one more question and
    takes its merged answers when it comes back the same: a request per group, none
    per check, every answer its own."""
    async with sim(time_scale=50) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=300), memory=False)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        answers = await fo.ask_many(QUESTIONS, policy=_policy(max_group_size=3))
        asked = [r.questions for r in server.stats.requests]
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS]
    wave = _wave(answers)
    assert wave == 1  # the room unknown: one question first
    assert [a.mode for a in answers].count("split") == wave
    groups = [g for g in answers.report.revisions[-1].plan.groups if len(g) > 1]
    checks = answers.report.merge_checks
    assert len(checks) == len(groups) == 3
    for check, group in zip(checks, groups, strict=True):
        assert check == (
            "1 of 1 merged answers (json) agreed with split ones (question 0, answered alone "
            f"before, asked again as the group's canary); the group's {len(group)} questions "
            "took the merged answers"
        )
    assert asked == [1] + [len(g) + 1 for g in groups]  # each group with its canary
    assert answers.report.requests == wave + len(groups)
    assert fo.endpoint.merge_agreement("json") == (4 + 3, 4 + 3, 0)


async def test_a_canary_answered_wrongly_sends_its_group_alone() -> None:
    """An endpoint whose merged answers agreed on 7 of 8 checked and now shift them by
    one: the first group's canary comes back with its neighbour's answer, so the group
    is asked alone; so is the second's, and with the agreement fallen under 0.75 the
    last group is not merged at all. Every answer is its own."""
    async with scripted_server(_shifting) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=300), memory=False)
        fo.endpoint.observe_merge_check("json", 8, 7, 0)
        answers = await fo.ask_many(QUESTIONS, policy=_policy(max_group_size=3))
        await client.close()
    assert answers.texts == [answer_for(q, 2) for q in QUESTIONS]
    assert all(a.mode == "split" for a in answers), [a.mode for a in answers]
    assert _wave(answers) == 1
    checks = answers.report.merge_checks
    assert len(checks) == 3, checks
    for check in checks[:2]:
        assert check.startswith("0 of 1 merged answers (json) agreed with split ones (question ")
        assert check.endswith("as the group's canary); the group's 3 questions asked alone instead")
    assert checks[2] == (
        "a group of 2 asked alone, not merged: merged answers agreed with split ones on 7 "
        "of 10 checked"
    )
    merged = [m for m in server.user_messages() if "Answer each of the following" in m]
    assert len(merged) == 2
    assert "tint 0?" in merged[0].strip().splitlines()[-1]  # the canary, last


async def test_a_small_call_under_a_request_limit_has_no_first_check(sim: SimFactory) -> None:
    """Five one-word questions on first contact under 3 requests a minute: the first wave's
    question comes back before the first merged group can go, and with no more groups
    than a first check would ask alone, each group carries it as a canary instead: the
    wave and the groups are all the requests (a first check would have asked up to four
    more), and every answer is its own."""
    questions = [f"One word for hue {i}? {{{{tokens=1}}}}" for i in range(5)]
    async with sim(time_scale=20, rpm=3) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=60), memory=False)
        answers = await fo.ask_many(questions, policy="auto")
        sent = len(server.stats.requests)
    assert answers.texts == [answer_for(q, 1) for q in questions]
    wave = _wave(answers)
    groups = [g for g in answers.report.revisions[-1].plan.groups if len(g) > 1]
    assert wave >= 1 and groups
    assert [a.mode for a in answers].count("split") == wave
    assert sent == answers.report.requests == wave + len(groups)
    checks = answers.report.merge_checks
    assert len(checks) == len(groups)
    assert all("as the group's canary" in c and "took the merged answers" in c for c in checks)
    assert "merged groups checked by canaries" in answers.report.revisions[-1].trigger


async def test_the_rest_go_on_beside_the_first_check_once_its_sample_is_back(
    sim: SimFactory,
) -> None:
    """No first wave (the endpoint's room and the answers' length known), a request
    limit, and merged replies that take long: the first check's sample comes back
    alone long before its merged reply, and from then on its answers are canaries, so
    the next groups go as the limit allows, each checked by one, not after the check's
    merged reply (docs/policy.md, "Canaries")."""
    async with sim(time_scale=10, rpm=6, step_s=0.3) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=60), memory=False)
        await fo.ask_many(["Warm up? {{tokens=2}}"])  # the room reported: no first wave
        answers = await fo.ask_many(MANY, policy=_policy(max_group_size=6))
        records = list(server.stats.requests)[1:]
    assert answers.texts == [answer_for(q, 2) for q in MANY]
    assert _wave(answers) == 0
    check = next(r for r in records if r.questions > 1)  # the first check's merged request
    sample = [r for r in records if r.questions == 1]
    assert sample and all(r.finished is not None and check.finished is not None
                          and r.finished < check.finished for r in sample)  # fmt: skip
    assert check.finished is not None
    beside = [r for r in records[records.index(check) + 1 :] if r.questions > 1]
    assert beside and beside[0].arrival < check.finished, [
        (r.questions, r.arrival, r.finished) for r in records
    ]
    assert any(r.trigger.startswith("merge check sent") for r in answers.report.revisions)
    assert all("took the merged answers" in c for c in answers.report.merge_checks)


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


async def test_a_canary_whose_right_answer_a_group_member_shares_agrees() -> None:
    """The canary ("4", asked alone in the first wave) rides a group whose last
    question's right answer is "4" too: a repeated answer answers neither question in
    the group, but the canary's is compared as it came, so the check agrees, the
    endpoint is not counted as merging badly, and only the repeated question is asked
    alone again (not all of the group)."""
    async with scripted_server(_right) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=300), memory=False)
        fo.endpoint.observe_merge_check("json", 4, 4, 0)
        answers = await fo.ask_many(list(_RIGHT), policy=_policy(max_group_size=5))
        await client.close()
    assert answers.texts == list(_RIGHT.values())
    assert answers.report.merge_checks[0].startswith("1 of 1 merged answers (json) agreed")
    assert fo.endpoint.merge_agreement("json") == (5, 5, 0)
    assert [a.mode for a in answers] == ["split"] * 2 + ["merged"] * 4 + ["split"]
    assert len(server.requests) == 2 + 1 + 1  # the wave, the group, its repeated question
