"""Attempt deadlines do not count a request's wait in the endpoint's queue.

A server with one slot answers one request at a time, first come first served: the
last of eight requests sent together waits for the seven ahead of it. It is not hung,
and abandoning it at its deadline only sends it again at the back of the queue."""

from __future__ import annotations

import fanout
from fanout.sim import answer_for

from .conftest import SimFactory


def _questions(n: int, tokens: int) -> list[str]:
    return [f"queued question {i} {{{{tokens={tokens}}}}}" for i in range(n)]


async def test_a_request_waiting_its_turn_in_the_queue_is_not_abandoned(sim: SimFactory) -> None:
    """Eight 40-token answers on one slot: each takes about a third of the deadline,
    the last waits about two deadlines behind the others; nothing is asked twice."""
    questions = _questions(8, 40)
    async with sim(time_scale=10, slots=1) as (server, client):
        await fanout.ask_many(questions[:1], client=client, model="m", policy="split")
        one = await fanout.ask_many(questions[1:2], client=client, model="m", policy="split")
        deadline = 3 * one[0].latency_s  # the last one waits about 8 answers' time
        retry = fanout.Retry(attempt_timeout=deadline)
        answers = await fanout.ask_many(questions, client=client, model="m", policy="split",
                                        retry=retry)  # fmt: skip
        sent = len(server.stats.requests) - 2
    assert answers.texts == [answer_for(q, 40) for q in questions]
    assert answers.report.retries == 0
    assert sent == 8
    assert answers.report.wall_s > 1.2 * deadline  # the queue did outlast the deadline


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
