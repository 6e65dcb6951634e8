"""Re-planning inside a call when things go wrong: a first wave that tells nothing, an
endpoint that reports no room, a limiter that never promises a whole request, and the
dry run of a call that would start with a wave. (Found by an adversarial review.)"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from openai import AsyncOpenAI

import fanout
from fanout.limits._local import LimitState, LocalLimiter
from fanout.planning import Budget
from fanout.sim import answer_for
from fanout.testing import cold_endpoint

from .._virtual import on_virtual_time
from ..conftest import SimFactory


@on_virtual_time
async def test_a_first_wave_that_tells_nothing_in_time_loses_nothing(sim: SimFactory) -> None:
    """The wave's requests hang (one or four: the opening chooses): the wait runs out and
    the rest is planned without them (the plan covers the rest, not the batch the wave
    was part of); the hung ones are retried; every answer is its own."""
    scale = 50
    qs = [f"Q {i} {{{{tokens=200}}}}" for i in range(150)]
    hangs: dict[int, str] = dict.fromkeys(range(1, 5), "hang")
    async with sim(time_scale=scale, rpm=600, fault_schedule=hangs) as (_, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600 * scale),
                           endpoint=cold_endpoint(scale), on_error="return",
                           retry=fanout.Retry(attempt_timeout=8.0))  # fmt: skip
        answers = await fo.ask_many(qs)
    revisions = answers.report.revisions
    wave = revisions[0].questions
    assert revisions[0].trigger.startswith("first wave") and wave in (1, 4)
    assert revisions[1].trigger == "no answer from the first wave in time"
    assert revisions[1].questions == 150 - wave
    assert answers.texts == [answer_for(q, 200) for q in qs]


@on_virtual_time
async def test_a_first_wave_held_by_a_long_retry_after_loses_nothing(sim: SimFactory) -> None:
    """The wave's request gets a 429 whose retry-after outlasts the wave's wait (no
    headers of room come with it): the rest goes on its own plan, all answered."""
    qs = [f"Q {i} {{{{tokens=3}}}}" for i in range(150)]
    async with sim(time_scale=0.15, rpm=4000, fault_schedule={1: "429"}) as (_, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=600), on_error="return")
        answers = await fo.ask_many(qs)
    assert answers.texts == [answer_for(q, 3) for q in qs]


@on_virtual_time
async def test_an_endpoint_that_reports_no_room_is_not_replanned_per_response(
    sim: SimFactory,
) -> None:
    """Limits configured, no x-ratelimit-* headers: the first response settles that
    there is no room to learn; the call does not re-plan after every response."""
    scale = 50
    qs = [f"Q {i} {{{{tokens=3}}}}" for i in range(400)]
    async with sim(time_scale=scale) as (_, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=6000 * scale),
                           endpoint=cold_endpoint(scale))  # fmt: skip
        answers = await fo.ask_many(qs, policy=fanout.Policy(expected_tokens=3))
    assert answers.texts == [answer_for(q, 3) for q in qs]
    assert len(answers.report.revisions) <= 3


class _FractionalRoom:
    """A user's limiter: paces in ``acquire`` and never reports a whole request of room
    (other processes share its quota)."""

    def __init__(self) -> None:
        self.inner = LocalLimiter(fanout.Limits(rpm=6000))

    async def acquire(self, tokens: int) -> float:
        return await self.inner.acquire(tokens)

    def settle(self, reserved: int, used: int | None) -> None:
        self.inner.settle(reserved, used)

    def observe(self, headers: Mapping[str, str]) -> None:
        self.inner.observe(headers)

    def cool_down(self, seconds: float) -> None:
        self.inner.cool_down(seconds)

    def state(self) -> LimitState:
        return self.inner.state()

    def budget(self) -> Budget:
        return dataclasses.replace(self.inner.budget(), requests_now=0.5, room_known=False)


@on_virtual_time
async def test_a_limiter_that_never_promises_a_whole_request_still_gets_every_answer(
    sim: SimFactory,
) -> None:
    """Nothing is held back while nothing is in flight: the call cannot stall."""
    qs = [f"Q {i} {{{{tokens=3}}}}" for i in range(40)]
    async with sim(time_scale=50) as (_, client):
        fo = fanout.Fanout(client, model="m", limiter=_FractionalRoom(), on_error="return")
        answers = await fo.ask_many(qs, timeout=60)
    assert answers.texts == [answer_for(q, 3) for q in qs]


def test_the_dry_run_of_a_call_that_starts_with_a_wave_plans_every_question() -> None:
    """``Fanout.plan`` partitions all the questions, and its reason names the wave."""
    client = AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")
    fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=100))
    questions = [f"Question number {i}?" for i in range(1024)]
    plan = fo.plan(questions, policy=fanout.Policy(max_group_size=None))
    assert sorted(i for g in plan.groups for i in g) == list(range(1024))
    assert plan.chosen.requests == len(plan.groups)
