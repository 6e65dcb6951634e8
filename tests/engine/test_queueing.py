"""Attempt deadlines do not count a request's wait in the endpoint's queue.

A server with one slot answers one request at a time, first come first served: the
last of eight requests sent together waits for the seven ahead of it. It is not hung,
and abandoning it at its deadline only sends it again at the back of the queue."""

from __future__ import annotations

import anyio

import fanout
from fanout.engine.queueing import SAME_TIME_S, QueueClock
from fanout.sim import answer_for

from .._virtual import on_virtual_time
from ..conftest import SimFactory


def _questions(n: int, tokens: int) -> list[str]:
    return [f"queued question {i} {{{{tokens={tokens}}}}}" for i in range(n)]


@on_virtual_time
async def test_a_request_waiting_its_turn_in_the_queue_is_not_abandoned(sim: SimFactory) -> None:
    """Eight 40-token answers on one slot: each takes about a third of the deadline,
    the last waits about two deadlines behind the others; nothing is asked twice."""
    questions = _questions(8, 40)
    async with sim(time_scale=10, slots=1) as (server, client):
        # The same eight first, with no deadline: the client's pool then holds eight open
        # connections, so the timed burst waits for the queue, not for connections opened
        # together (which alone made its first answer take longer than the deadline).
        await fanout.ask_many(questions, client=client, model="m", policy="split")
        one = await fanout.ask_many(questions[1:2], client=client, model="m", policy="split")
        deadline = 3 * one[0].latency_s  # the last one waits about 8 answers' time
        retry = fanout.Retry(attempt_timeout=deadline)
        answers = await fanout.ask_many(questions, client=client, model="m", policy="split",
                                        retry=retry)  # fmt: skip
        sent = len(server.stats.requests) - 9
    assert answers.texts == [answer_for(q, 40) for q in questions]
    assert answers.report.retries == 0
    assert sent == 8
    assert answers.report.wall_s > 1.2 * deadline  # the queue did outlast the deadline


@on_virtual_time
async def test_a_hung_request_behind_answered_ones_is_still_abandoned(sim: SimFactory) -> None:
    """The endpoint never answers the third of four requests on one slot: it is given up
    a deadline after the last request ahead of it was answered, and asked again."""
    async with sim(time_scale=50, slots=1, fault_schedule={3: "hang"}) as (_server, client):
        retry = fanout.Retry(attempt_timeout=0.5)
        answers = await fanout.ask_many(_questions(4, 5), client=client, model="m",
                                        policy="split", retry=retry)  # fmt: skip
    assert answers.report.answered == 4
    assert answers.report.retries == 1
    assert answers.texts == [answer_for(q, 5) for q in _questions(4, 5)]


@on_virtual_time
async def test_an_answer_restarts_the_clock_of_a_request_sent_a_moment_before_it() -> None:
    """Requests sent together reach the server in any order, so one sent a moment after an
    attempt may be queued ahead of it: its answer restarts that attempt's clock. A request
    sent more than SAME_TIME_S after the attempt does not. (Two clocks, side by side: a
    deadline of 2 s, the answer at 1 s, each attempt needs 2.5 s.)"""
    outcome: dict[str, bool] = {}

    async def attempt(clock: QueueClock, name: str) -> None:
        outcome[name] = False
        with clock.attempt(2.0):
            await anyio.sleep(2.5)
            outcome[name] = True

    async def answer(clock: QueueClock, sent_after_s: float) -> None:
        await anyio.sleep(0.01)
        with clock.attempt(None) as sent:
            pass
        await anyio.sleep(1.0)
        clock.answered(sent + sent_after_s)

    just_after, long_after = QueueClock(), QueueClock()
    with anyio.fail_after(10):
        async with anyio.create_task_group() as tg:
            tg.start_soon(attempt, just_after, "sent just after")
            tg.start_soon(answer, just_after, 0.0)
            tg.start_soon(attempt, long_after, "sent long after")
            tg.start_soon(answer, long_after, SAME_TIME_S + 0.5)
    assert outcome == {"sent just after": True, "sent long after": False}
