"""The per-request path stays cheap: what it does once per response is not redone more
often than it must be (see benchmarks/overhead.py for the throughput it buys)."""

from __future__ import annotations

import anyio

from fanout.engine.replanning import Evidence
from fanout.planning import EndpointModel


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
