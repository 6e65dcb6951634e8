"""Limits shared through redis at the endpoint's own limit (issue 26): sends that keep
their spacing however late their process wakes, and reset headers checked, and
distrusted, once for every process sharing the redis."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import fanout
from fanout import Limits
from fanout.limits._redis import RedisLimiter
from fanout.sim import answer_for

from ..conftest import SimFactory

RPM = 1200  # 20 a second: a sliding window of 1 s holds 20
SLIDING = {"rpm": RPM, "limit_period_s": 1.0, "limit_policing": "sliding",
           "answer_tokens": 2, "rtt_s": 0.01}  # fmt: skip


async def _busy(stall_s: float, every_s: float) -> None:
    """Block the event loop ``stall_s`` every ``every_s``: a process busy with other
    work (parsing answers, a loaded machine) whose waiters wake late."""
    while True:
        await asyncio.sleep(every_s)
        time.sleep(stall_s)  # noqa: ASYNC251 - the point: the loop is blocked


class TestSharedLimitAtTheLimit:
    async def test_clients_whose_waiters_wake_late_keep_the_shared_sliding_window(
        self, sim: SimFactory, redis_url: str
    ) -> None:
        """Three Fanouts share 1,200 rpm through redis against an endpoint that polices
        it as a sliding window of 1 s (20 in any second), and their process stalls
        0.25 s every 0.5 s. Before, the slots that came during a stall all went when it
        ended, on top of the on-time sends after them: 12 to 15 x 429 (3 runs at a load
        average of 5-6 on two cores). Now each send claims its time in redis as it goes,
        spaced like the schedule: at most one 429 (0 in each of 8 runs, at load averages
        of 4 to 8), and every answer right."""
        questions = [[f"client {c} question {i}" for i in range(40)] for c in range(3)]
        limits = Limits(rpm=RPM, backend=redis_url, namespace="late-wakers")
        async with sim(**SLIDING) as (server, client):
            fanouts = [fanout.Fanout(client, model="m", limits=limits, memory=False)
                       for _ in questions]  # fmt: skip
            stalls = asyncio.ensure_future(_busy(0.25, 0.5))
            try:
                answers = await asyncio.gather(*[
                    fo.ask_many(qs, policy="split", on_error="return")
                    for fo, qs in zip(fanouts, questions, strict=True)
                ])  # fmt: skip
            finally:
                stalls.cancel()
            refused = server.stats.rate_limited
        for got, qs in zip(answers, questions, strict=True):
            assert [a.text for a in got] == [answer_for(q, 2) for q in qs]
        assert refused <= 1, refused


class TestResetsThatMeanTheOldestEntryLeaves:
    async def test_one_process_learns_it_and_no_process_sends_into_a_promised_room(
        self, sim: SimFactory, redis_url: str, tmp_path: Path
    ) -> None:
        """A redis limit, an endpoint whose ``x-ratelimit-reset-requests`` frees only the
        oldest entry of a sliding window of 3 s. The first Fanout finds a reset's promised
        room missing and says so in redis: at most 5 x 429, every answer right. A second
        Fanout on the same redis, started at once, sends into no promised room: no
        request streamed to check one, and no more 429s than pacing makes (before, its
        first requests all went at the reset the first one's last answer reported: 34 x
        429); a third, once the shared state is gone, starts from the endpoint memory
        kept in that redis (before: 21 x 429). Measured now: 0, 0 and 0."""
        import redis

        limits = Limits(rpm=RPM, backend=redis_url, namespace="oldest")
        store = redis.Redis.from_url(redis_url)
        runs = []
        async with sim(**{**SLIDING, "limit_period_s": 3.0}, reset_header="oldest") as (
            server, client,
        ):  # fmt: skip
            for n, tag in ((120, "a"), (60, "b"), (60, "c")):
                server.reset_stats()
                fo = await _ask(client, limits, _questions(n, tag), tmp_path)
                runs.append((fo, server.stats.rate_limited,
                             [r.number for r in server.stats.requests if r.stream]))  # fmt: skip
                if tag == "a":
                    assert store.hget("fanout:oldest:trust", "state") == b"distrusted"
                    memory = [
                        json.loads(store.get(k) or "") for k in store.keys("fanout:oldest:memory:*")
                    ]
                    assert [doc["limits"]["resets"] for doc in memory] == ["distrusted"]
                if tag == "b":
                    store.delete("fanout:oldest:trust")  # the third starts from the memory alone
        store.close()
        seen = [(refused, streamed) for _, refused, streamed in runs]
        (_, refused_first, _), *later = runs
        assert refused_first <= 5, seen
        for fo, _, _ in runs:
            assert fo.limiter.reset_trust.state == "distrusted"  # type: ignore[attr-defined]
        for _, refused, streamed in later:
            assert streamed == [], seen
            assert refused <= 3, seen


def _questions(n: int, tag: str) -> list[str]:
    return [f"question {tag} {i}" for i in range(n)]


async def _ask(client: Any, limits: Limits, questions: list[str], memory: Path) -> fanout.Fanout:
    fo = fanout.Fanout(client, model="m", limits=limits, memory=memory)
    answers = await fo.ask_many(questions, policy="split")
    assert [a.text for a in answers] == [answer_for(q, 2) for q in questions]
    return fo


async def test_a_limiter_serves_more_callers_at_once_than_redis_pys_default_pool(
    redis_url: str,
) -> None:
    """redis-py 8 caps a connection pool at 100 by default: 150 requests of one process
    asking redis at once (reservations, claims) failed with "Too many connections"."""
    from fanout.limits import RedisLimiter

    limiter = RedisLimiter(Limits(rpm=60), redis_url, namespace="many")
    try:
        await asyncio.gather(*[limiter.check() for _ in range(150)])
    finally:
        await limiter.aclose()


# wall clock: redis-server is another process; on virtual time the loop
# jumps to the client's socket timeout while it waits for redis's reply
async def test_a_redis_limit_lets_many_waiters_send_at_its_rate(redis_url: str) -> None:
    """64 callers (a Fanout's default window) take 600 sends from a redis limit of
    30,000 rpm (500 a second: 1.2 s). A waiter that wakes more than a quarter interval
    (0.5 ms) late gives its claimed send time up and claims again, and the time it gave
    up is lost to every process: on a machine at a load average of ~3, each send took
    about 8 claims and the 600 took 4.0 s (148 a second, 30 % of the limit); the limiter
    before the claims (bd16363) took 1.8 s. 40 % of the limit's rate is asked here."""
    limiter = RedisLimiter(Limits(rpm=30_000), redis_url, namespace="review-claims")
    left = [600]

    async def caller() -> None:
        while left[0] > 0:
            left[0] -= 1
            await limiter.acquire(0)
            limiter.observe({})
            await asyncio.sleep(0.05)  # the request
            limiter.attempt_done()

    start = time.monotonic()
    try:
        await asyncio.wait_for(asyncio.gather(*[caller() for _ in range(64)]), 60)
        wall = time.monotonic() - start
        await asyncio.sleep(0.2)  # the reports it spawned
    finally:
        await limiter.aclose()
    assert wall <= 2.5 * 600 / 500, f"600 sends at 500 a second took {wall:.2f} s"
