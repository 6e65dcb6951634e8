"""The per-request path stays cheap: what it does once per response is not redone more
often than it must be (see benchmarks/overhead.py for the throughput it buys)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import anyio
from openai import AsyncOpenAI

import fanout
from fanout.engine.dispatch import _Run
from fanout.engine.queueing import QueueClock
from fanout.engine.replanning import Evidence
from fanout.planning import EndpointModel

from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory


def _observe(model: EndpointModel, n: int, latency_s: float) -> None:
    for _ in range(n):
        model.observe(prompt_tokens=20, completion_tokens=5, latency_s=latency_s)


def test_the_per_request_fit_is_redone_once_a_quarter_of_a_full_window_is_new() -> None:
    model = EndpointModel(window=256)
    _observe(model, 256, 0.1)
    first = model.recent_estimate()
    _observe(model, 63, 5.0)  # the endpoint got far slower: not refitted yet
    assert model.recent_estimate() is first
    _observe(model, 1, 5.0)  # 64 new of 256: refitted, and it sees the slowdown
    refit = model.recent_estimate()
    assert refit is not first
    assert refit.request_s(20, 5) > first.request_s(20, 5)


def test_a_young_fit_is_still_redone_every_16_responses() -> None:
    model = EndpointModel(window=256)
    _observe(model, 8, 0.1)
    first = model.recent_estimate()
    _observe(model, 15, 0.1)
    assert model.recent_estimate() is first
    _observe(model, 1, 0.1)
    assert model.recent_estimate() is not first


def test_a_response_makes_no_new_event_while_nobody_waits_for_one() -> None:
    evidence = Evidence()
    event = evidence._event
    evidence.add()
    evidence.report()
    assert evidence._event is event
    assert (evidence.count, evidence.reports) == (1, 1)


async def test_a_response_wakes_whoever_waits_for_one() -> None:
    evidence = Evidence()
    woken: list[int] = []

    async def wait() -> None:
        await evidence.changed()
        woken.append(evidence.count)

    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(wait)
            tg.start_soon(wait)
            await anyio.wait_all_tasks_blocked()
            evidence.add()
    assert woken == [1, 1]
    evidence.add()  # nobody waits any more: nothing to wake, nothing waits on the old event
    async with anyio.create_task_group() as tg:
        tg.start_soon(wait)
        await anyio.wait_all_tasks_blocked()
        assert woken == [1, 1]  # the waiter after the last response waits for the next
        evidence.report()
    assert woken == [1, 1, 2]


async def _turns_to_answer(n: int, client: AsyncOpenAI) -> int:
    """The event loop's turns while ``n`` questions are answered split, all allowed
    in flight at once."""
    questions = [f"together {n} {i} {{{{tokens=1}}}}" for i in range(n)]
    loop = asyncio.get_running_loop()
    run_once = loop._run_once  # type: ignore[attr-defined]
    turns = 0

    def counted() -> None:
        nonlocal turns
        turns += 1
        run_once()

    loop._run_once = counted  # type: ignore[attr-defined]
    try:
        answers = await fanout.ask_many(questions, client=client, model="m", policy="split",
                                        limits=fanout.Limits(max_concurrency=n))  # fmt: skip
    finally:
        loop._run_once = run_once  # type: ignore[attr-defined]
    assert answers.report.answered == n
    return turns


@on_virtual_time
async def test_a_plans_groups_leave_together_not_one_per_turn_of_the_event_loop(
    sim: SimFactory,
) -> None:
    """A plan's groups are started as ``asyncio.gather`` starts its tasks: together,
    not one per turn of the event loop. 280 more questions cost far fewer than 280 more
    turns (about 100 here; one turn per group, before, made it about 380, and against a
    server in another process that answers at once only about a dozen requests were
    ever in flight, each answer costing a turn and its poll of the sockets)."""
    async with sim(time_scale=1000) as (_server, client):
        await fanout.ask_many(["warm"], client=client, model="m", policy="split")
        few = await _turns_to_answer(120, client)
        many = await _turns_to_answer(400, client)
    assert many - few < 0.7 * (400 - 120)


class _CountedOpen(dict[int, tuple[anyio.CancelScope, float, float]]):
    def __init__(self) -> None:
        super().__init__()
        self.looks = 0

    def values(self) -> Any:
        self.looks += 1
        return super().values()


@on_virtual_time
async def test_an_answer_looks_at_the_attempts_in_flight_only_once_one_can_be_moved() -> None:
    """200 attempts with a 10 s deadline: answers in their first second move nothing
    and look at none of them (before, each answer went through all 200); one after a
    tenth of the deadline moves them all, once."""
    clock = QueueClock()
    clock._open = opened = _CountedOpen()
    async with anyio.create_task_group() as tg:
        for _ in range(200):
            tg.start_soon(_attempt, clock)
        await anyio.wait_all_tasks_blocked()
        start = loop_time()
        for _ in range(50):
            clock.answered(start)
            await anyio.sleep(0.01)
        assert opened.looks == 0
        await anyio.sleep(1.0)
        clock.answered(start)  # a request sent with them
        clock.answered(start)
        assert opened.looks == 1
        assert all(scope.deadline >= loop_time() + 9.9 for scope, _, _ in opened.values())
        tg.cancel_scope.cancel()


async def _attempt(clock: QueueClock) -> None:
    with clock.attempt(10.0):
        await anyio.sleep(60)


async def test_a_cancelled_call_starts_no_more_groups_when_the_window_has_room() -> None:
    """The window is taken without a turn of the event loop when it has room, but not
    by a call already cancelled: four groups back in the turn the call is aborted (an
    ``on_answer`` that raised, or its timeout) start no more groups, as a waiting
    ``acquire`` would not."""
    run = SimpleNamespace(window=anyio.Semaphore(4))
    started: list[int] = []

    async def start_groups() -> None:
        for n in range(20):
            await _Run._take_window(run)  # type: ignore[arg-type]
            started.append(n)

    with anyio.CancelScope() as scope:
        async with anyio.create_task_group() as tg:
            tg.start_soon(start_groups)
            await anyio.wait_all_tasks_blocked()  # four started, the fifth waits
            for _ in range(4):
                run.window.release()
            scope.cancel()
    assert started == [0, 1, 2, 3, 4]
