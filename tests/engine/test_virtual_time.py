"""The engine's timing logic on virtual time: the simulator and the real SDK over
loopback HTTP, on an event loop whose clock the test runs (``looptime``: sleeps and
timeouts take no real time, I/O takes no loop time). fanout reads time only from the
running loop (``fanout.core.clock``), so its pacing, retries and timeouts happen at the
same loop times on every run: these tests assert when things happen, exactly, where a
wall-clock test could only bound them."""

from __future__ import annotations

import itertools

import pytest

import fanout
from fanout.core.exceptions import PartialFailureError, QuestionTimeoutError

from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory


def _questions(n: int, tokens: int = 3) -> list[str]:
    return [f"question {i} {{{{tokens={tokens}}}}}" for i in range(n)]


@on_virtual_time
async def test_a_call_timeout_ends_every_question_at_the_deadline(sim: SimFactory) -> None:
    """Answers that would take 30 s (2,000 tokens at 15 ms a step), a 5 s timeout: the
    call returns at 5 s on the loop's clock, each question with a timeout error naming
    it."""
    async with sim(answer_tokens=2000, rtt_s=0.1) as (_, client):
        start = loop_time()
        with pytest.raises(PartialFailureError) as failed:
            await fanout.ask_many(_questions(3, 2000), client=client, model="m",
                                  policy="split", timeout=5)  # fmt: skip
        took = loop_time() - start
    answers = failed.value.answers
    assert 5.0 <= took < 5.05, took
    assert [type(a.error) for a in answers] == [QuestionTimeoutError] * 3
    assert [a.index for a in answers] == [0, 1, 2]


@on_virtual_time
async def test_a_configured_rpm_spaces_the_requests_evenly(sim: SimFactory) -> None:
    """``Limits(rpm=120)`` on an endpoint that reports no limits: one request every
    0.5 s (the limiter's 2 % slack aside), eight requests over 3.5 s, none closer."""
    async with sim(answer_tokens=3, rtt_s=0.01) as (server, client):
        await fanout.ask_many(_questions(8), client=client, model="m", policy="split",
                              limits=fanout.Limits(rpm=120))  # fmt: skip
        arrivals = sorted(r.arrival for r in server.stats.requests)
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert len(arrivals) == 8
    assert min(gaps) >= 0.5, gaps
    assert max(gaps) <= 0.5 * 1.05, gaps


@on_virtual_time
async def test_a_429_is_retried_after_the_retry_after_it_carried(sim: SimFactory) -> None:
    """The second request is refused with ``retry-after: 1``: it is sent again 1 s after
    the refusal came back, plus the limiter's jitter (up to a quarter of the pause, so
    that clients refused together do not come back together), never sooner, and not
    at the SDK's or tenacity's own backoff; and answered."""
    async with sim(answer_tokens=3, rtt_s=0.01, fault_schedule={2: "429"}) as (server, client):
        answers = await fanout.ask_many(_questions(2), client=client, model="m",
                                        policy="split")  # fmt: skip
        records = sorted(server.stats.requests, key=lambda r: r.arrival)
    assert all(a.text for a in answers)
    refused = [r for r in records if r.status == 429]
    assert len(refused) == 1
    again = [r for r in records if r.arrival > refused[0].arrival]
    assert again, records
    assert refused[0].finished is not None
    assert 1.0 <= again[0].arrival - refused[0].finished <= 1.25, records
