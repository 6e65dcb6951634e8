"""Attempt deadlines do not count a request's wait in the endpoint's queue.

A server with one slot answers one request at a time, first come first served: the
last of eight requests sent together waits for the seven ahead of it. It is not hung,
and abandoning it at its deadline only sends it again at the back of the queue."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest
from openai import AsyncOpenAI

import fanout
from fanout.engine.queueing import SAME_TIME_S, QueueClock
from fanout.sim import answer_for

from .._virtual import loop_time, on_virtual_time
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


@on_virtual_time
async def test_requests_queued_behind_known_slots_are_not_timed_out(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A server of 4 slots; a warm-up of sixteen 800-token answers teaches the endpoint
    model the slots (as tests/endpoint/test_endpoint_slots.py does), then 64 more are sent at once
    (a Fanout's default window). The 64th waits 15 rounds for a slot. The automatic
    attempt deadline comes from a fit of the *services* once slots are known (the waits
    taken out, so the slowdown per request in flight is ~0), but the dispatcher still
    sends 64 at once: the deadline of a request deep in the server's queue is shorter than
    its wait, and it is abandoned and sent again (model level: 94 s for 31 ahead on 4
    slots of 12 s answers, which wait 96 s; bd16363, no slots: 176 s). The floor
    ``min_attempt_timeout`` (30 s by default) is lowered to the simulator's time scale;
    ``max_tokens=1000`` near the answers' length (without it the deadline assumes answers
    four times the usual length, which hides the wait)."""
    async with sim(time_scale=50, slots=4, rtt_s=1.0, stream_chunk_tokens=16) as (_, client):
        await fanout.Fanout(client, model="sim-1", memory=False).ask_many(
            ["a first answer {{tokens=2}}"] * 3, policy="split"
        )
        warm = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        await warm.ask_many([f"warm-up {i} {{{{tokens=800}}}}" for i in range(16)],
                            policy="split")  # fmt: skip
        fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        answers = await fo.ask_many(
            [f"Question {i} {{{{tokens=800}}}}" for i in range(64)], policy="split",
            retry=fanout.Retry(min_attempt_timeout=0.1), on_error="return", max_tokens=1000,
        )  # fmt: skip
    report = answers.report
    assert report.revisions[0].plan.inputs.endpoint.slots == 4  # the slots were known
    assert report.failed == 0
    assert report.retries == 0, f"{report.retries} attempts abandoned in the server's queue"


@on_virtual_time
async def test_an_attempt_with_a_shorter_deadline_sent_later_is_still_moved_by_an_answer() -> None:
    """The clock skips answers that come before any open attempt could be moved; an
    attempt sent later with a shorter deadline brings that time forward. A long attempt
    (100 s) is open at 0 s; one of 10 s is sent at 1 s and needs 11.5 s; at 3 s a request
    sent at 0.5 s (possibly ahead of it) is answered: its clock restarts (deadline 13 s),
    so it finishes. Had the first attempt's time (10 s) been kept, the answer at 3 s
    would have been skipped and the short attempt abandoned at 11 s."""
    clock = QueueClock()
    finished: list[str] = []

    async def attempt(name: str, after_s: float, deadline_s: float, needs_s: float) -> None:
        await anyio.sleep(after_s)
        with clock.attempt(deadline_s):
            await anyio.sleep(needs_s)
            finished.append(name)

    async def answer() -> None:
        await anyio.sleep(0.5)
        with clock.attempt(None) as sent:
            pass
        await anyio.sleep(2.5)
        clock.answered(sent)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(attempt, "long", 0.0, 100.0, 20.0)
            tg.start_soon(attempt, "short", 1.0, 10.0, 11.5)
            tg.start_soon(answer)
    assert finished == ["short", "long"]


@on_virtual_time
async def test_a_call_told_its_answers_are_long_gives_their_attempts_the_time_to_write_them(
    sim: SimFactory,
) -> None:
    """A Fanout whose endpoint model has seen short answers only (40 tokens) is asked
    for 800-token answers, and told so (``Policy(expected_tokens=800)``), with no
    ``max_tokens``: each answer takes about 40 s to write, over the 30 s floor of the
    automatic attempt deadline. The deadline allows for the answers the call expects,
    not only the lengths seen before: each question is sent once (the deadline made
    from the 40-token answers alone abandoned every attempt at 30 s and sent it again,
    three requests a question)."""
    async with sim(step_s=0.05, timeout=600) as (_, client):
        fo = fanout.Fanout(client, model="sim-1", memory=False)
        for _ in range(8):
            fo.endpoint.observe_answer(40)
        questions = [f"Essay {i} {{{{tokens=800}}}}" for i in range(3)]
        answers = await fo.ask_many(
            questions, policy=fanout.Policy(mode="split", expected_tokens=800)
        )
    assert answers.texts == [answer_for(q, 800) for q in questions]
    assert answers.report.requests == 3, f"{answers.report.retries} attempts abandoned"


@on_virtual_time
async def test_a_merged_request_gives_its_reply_the_time_of_all_its_answers(
    sim: SimFactory,
) -> None:
    """The same for a merged request of six questions with no ``max_tokens``: its reply
    holds six answers, and the deadline allows for six (one answer's length, learned
    from the answers seen alone, abandoned the merged request at 30 s)."""
    async with sim(step_s=0.05, timeout=600) as (_, client):
        fo = fanout.Fanout(client, model="sim-1", memory=False)
        for _ in range(8):
            fo.endpoint.observe_answer(100)
        questions = [f"Long question {i} {{{{tokens=100}}}}" for i in range(6)]
        answers = await fo.ask_many(questions, policy=fanout.Policy(mode="merge"))
    assert answers.texts == [answer_for(q, 100) for q in questions]
    assert answers.report.requests == 1, f"{answers.report.retries} attempts abandoned"


@on_virtual_time
async def test_an_attempt_abandoned_at_its_deadline_is_tried_again_with_twice_the_time(
    sim: SimFactory,
) -> None:
    """The same 800-token answers (40 s each) with nothing said of their length: the
    deadline made from the 40-token answers seen (the 30 s floor) abandons the first
    attempt; the next has twice the time, and its answer comes. Each question is
    answered, in two requests (every one of six attempts was abandoned at 30 s, and the
    questions failed)."""
    async with sim(step_s=0.05, timeout=600) as (_, client):
        fo = fanout.Fanout(client, model="sim-1", memory=False)
        for _ in range(8):
            fo.endpoint.observe_answer(40)
        questions = [f"Essay {i} {{{{tokens=800}}}}" for i in range(3)]
        answers = await fo.ask_many(questions, policy="split")
    assert answers.texts == [answer_for(q, 800) for q in questions]
    assert answers.report.requests == 6


@asynccontextmanager
async def _hung_server() -> AsyncIterator[tuple[str, list[float]]]:
    """A server on loopback that takes requests and never answers: its base URL, and
    when each request came (the loop's clock)."""
    arrivals: list[float] = []
    done = asyncio.Event()
    handlers: set[asyncio.Task[None]] = set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await reader.readuntil(b"\r\n\r\n")
            arrivals.append(loop_time())
            await done.wait()  # never answers; returns when the test is over
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    try:
        yield f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1", arrivals
    finally:
        server.close()
        done.set()
        await asyncio.gather(*handlers, return_exceptions=True)


@on_virtual_time
async def test_a_hung_endpoint_holds_a_question_a_bounded_few_deadlines() -> None:
    """An endpoint that never answers: each abandoned attempt doubles the next one's
    deadline, at most twice, so the six attempts take 61, 122 and then 245 s each
    (1.2 thousand seconds in all; doubling without a bound took 2.1 thousand, the
    later attempts held to the client's own 600 s)."""
    async with _hung_server() as (url, arrivals):
        client = AsyncOpenAI(base_url=url, api_key="k", timeout=10_000)
        fo = fanout.Fanout(client, model="m", memory=False)
        answers = await fo.ask_many(["Question?"], policy="split", on_error="return")
        await client.close()
    assert isinstance(answers[0].error, fanout.FanoutError)
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(arrivals) == 6
    assert gaps[1] == pytest.approx(2 * gaps[0], rel=0.05)
    assert all(gap <= 4.2 * gaps[0] for gap in gaps), gaps


@on_virtual_time
async def test_an_attempt_does_not_run_past_the_question_s_max_elapsed() -> None:
    """``Retry(max_elapsed=100)`` on an endpoint that never answers: the second attempt
    (its deadline doubled to 122 s) is cut to the 39 s left, and the question fails
    at about 100 s (it failed at 183 s). (The retry layer reads the process's clock,
    which does not move on virtual time: it lets the next attempts go, each cut to
    the least an attempt is given, 1 s.)"""
    async with _hung_server() as (url, arrivals):
        client = AsyncOpenAI(base_url=url, api_key="k", timeout=10_000)
        fo = fanout.Fanout(client, model="m", memory=False)
        start = loop_time()
        answers = await fo.ask_many(
            ["Question?"], policy="split", retry=fanout.Retry(max_elapsed=100), on_error="return"
        )
        failed_at = loop_time() - start
        await client.close()
    assert isinstance(answers[0].error, fanout.FanoutError)
    assert arrivals[1] - arrivals[0] == pytest.approx(61, abs=1)
    assert arrivals[2] == pytest.approx(100, abs=1), arrivals  # the second cut at 100 s
    assert failed_at < 110, (failed_at, arrivals)
