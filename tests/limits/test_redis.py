"""Limits shared through a real redis-server (started here on loopback)."""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

import anyio
import pytest

import fanout
from fanout import Limits
from fanout.limits import RedisLimiter
from fanout.limits._local import current_ticket

from .._logs import _warnings
from .._redis_server import free_port
from ..conftest import SimFactory

WORKER = Path(__file__).resolve().parents[1] / "_redis_worker.py"


async def test_four_processes_share_one_rpm_budget(sim: SimFactory, redis_url: str) -> None:
    """4 processes, one key, one RPM limit: no 429s, and within 25 % of the ideal time.

    The sim polices 600 rpm over 5-model-second windows (a bucket of 50 requests,
    refilled at 20 per wall second); four processes pacing on their own would each
    burst and overrun it. The ideal follows the rate; the bucket's room, reported in
    the headers, may make the processes a little faster than that, never 4 times. The
    rate is low enough for five Python processes on two busy cores to keep up.
    """
    scale, rpm_model, per_process, bucket = 2, 600, 50, 50
    rpm_wall = rpm_model * scale  # 20 requests per wall second
    async with sim(
        time_scale=scale, rpm=rpm_model, limit_period_s=5.0, answer_tokens=2, rtt_s=0.05
    ) as (server, _):
        procs = [
            await asyncio.create_subprocess_exec(
                sys.executable, str(WORKER), server.base_url, redis_url, str(rpm_wall),
                str(per_process), f"w{i}",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
            )
            for i in range(4)
        ]  # fmt: skip
        for p in procs:  # every worker started and connected, however long that took
            assert p.stdout is not None
            assert (await p.stdout.readline()).strip() == b"ready"
        start_at = time.time() + 0.3
        for p in procs:
            assert p.stdin is not None
            p.stdin.write(f"{start_at}\n".encode())
            await p.stdin.drain()
        outs = [json.loads((await p.communicate())[0]) for p in procs]
        wall = max(o["finished_at"] for o in outs) - start_at
        ideal = 4 * per_process / (rpm_wall / 60)
        print(f"4 processes: {wall:.2f}s for {4 * per_process} requests, ideal {ideal:.2f}s, "
              f"ratio {wall / ideal:.3f}, 429s {server.stats.rate_limited}")  # fmt: skip
        assert server.stats.rate_limited == 0
        assert sum(o["answered"] for o in outs) == 4 * per_process
        # Generous: leases are renewed and re-checked while waiting (measured 1.0-1.1 idle).
        assert wall <= 1.25 * ideal, (wall, ideal)
        # They did share one budget: at most the bucket went early.
        assert wall >= 0.9 * (4 * per_process - bucket) / (rpm_wall / 60), (wall, ideal)


async def test_a_cool_down_reaches_every_process(redis_url: str) -> None:
    """A 429 seen by one limiter pauses another using the same redis."""
    a = RedisLimiter(Limits(rpm=6000), redis_url, namespace="cool")
    b = RedisLimiter(Limits(rpm=6000), redis_url, namespace="cool")
    a.cool_down(0.4)
    await asyncio.sleep(0.05)  # the pause is written in the background
    waited = await b.acquire(0)
    assert waited >= 0.3
    await a.aclose()
    await b.aclose()


async def test_shared_requests_are_paced_across_limiters(redis_url: str) -> None:
    """Two limiters on one budget of 1200 rpm together take 40 in >= 39/20 s: evenly
    spaced, with no burst the endpoint did not report room for."""
    limiters = [RedisLimiter(Limits(rpm=1200), redis_url, namespace="pace") for _ in range(2)]
    start = time.monotonic()
    await asyncio.gather(*[lim.acquire(0) for lim in limiters for _ in range(20)])
    assert time.monotonic() - start >= 0.98 * 39 / 20
    for lim in limiters:
        await lim.aclose()


async def test_room_reported_by_one_process_lets_every_process_send(redis_url: str) -> None:
    """Remaining 10, reported to one limiter's request: 10 go at once, from either."""
    a = RedisLimiter(Limits(rpm=60), redis_url, namespace="room")
    b = RedisLimiter(Limits(rpm=60), redis_url, namespace="room")
    await a.acquire(0)
    a.observe({"x-ratelimit-remaining-requests": "10"})
    await asyncio.sleep(0.05)  # the report is written in the background
    start = time.monotonic()
    await b.acquire(0)  # b's first request, on the room a's answer reported
    b.observe({})
    await asyncio.gather(*[a.acquire(0) for _ in range(5)], *[b.acquire(0) for _ in range(4)])
    assert time.monotonic() - start < 0.5  # at 60 rpm, paced, these would take 10 s
    for lim in (a, b):
        await lim.aclose()


async def test_after_a_reported_reset_the_full_room_is_back_for_every_process(
    redis_url: str,
) -> None:
    """Room for 10 (remaining 9 on the first answer), spent; the last answer says 0
    left and the window empty in 0.3 s. After that, another process's first request
    goes at once, streamed: it checks the reset's promise (see limits/_redis_trust.py);
    its answer reports the room back, and the other 9 go at once. Paced at 60 rpm
    behind the 10 already sent, they would take 20 s."""
    a = RedisLimiter(Limits(rpm=60), redis_url, namespace="reset")
    b = RedisLimiter(Limits(rpm=60), redis_url, namespace="reset")
    await a.acquire(0)
    a.observe({"x-ratelimit-remaining-requests": "9"})
    a.attempt_done()
    await asyncio.sleep(0.05)  # reports are written in the background
    start = time.monotonic()
    for _ in range(9):
        await a.acquire(0)
        a.attempt_done()
    assert time.monotonic() - start < 0.5  # the reported room
    a.observe({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "0.3s"})
    await asyncio.sleep(0.5)
    start = time.monotonic()
    await b.acquire(0)  # b's first request, into the room the reset promised
    ticket = current_ticket.get()
    assert ticket is not None and ticket.on_reset and ticket.probe
    b.observe({"x-ratelimit-remaining-requests": "9"})
    b.attempt_done()
    await asyncio.sleep(0.05)  # reports are written in the background
    await asyncio.gather(*[b.acquire(0) for _ in range(9)])
    assert time.monotonic() - start < 0.5
    assert (b.reset_trust.state, b.reset_trust.kept) == ("unknown", 1)  # kept once
    for lim in (a, b):
        await lim.aclose()


async def test_a_process_reserves_its_other_slots_once_its_first_request_is_answered(
    redis_url: str,
) -> None:
    """A process's first request may reach the endpoint late (a new connection): its
    other requests reserve their slots in the shared schedule only after its answer
    has moved the schedule by that delay, or after 1 s without one."""
    limiter = RedisLimiter(Limits(rpm=60_000), redis_url, namespace="first")
    await limiter.acquire(0)
    second = asyncio.ensure_future(limiter.acquire(0))
    await asyncio.sleep(0.3)
    assert not second.done()  # 60,000 rpm would have let it go at once
    limiter.observe({})
    await asyncio.wait_for(second, 0.5)
    other = RedisLimiter(Limits(rpm=60_000), redis_url, namespace="first-other")
    await asyncio.wait_for(other.acquire(0), 0.5)  # another process's first does not wait
    await other.aclose()
    await limiter.aclose()


async def test_unreachable_redis_fails_before_anything_is_sent(sim: SimFactory) -> None:
    """A dead redis: a clear error and no request; with fallback_local, local limits."""
    dead = f"redis://127.0.0.1:{free_port()}/0"
    async with sim(time_scale=100, answer_tokens=2) as (server, client):
        fo = fanout.Fanout(client, model="m", limits=Limits(rpm=6000, backend=dead))
        with pytest.raises(fanout.RedisUnavailableError, match="cannot reach redis"):
            await fo.ask_many(["a?", "b?"])
        assert server.stats.requests == []
        fallback = fanout.Fanout(
            client, model="m", limits=Limits(rpm=6000, backend=dead, fallback_local=True)
        )
        answers = await fallback.ask_many(["a?", "b?"])
        assert answers.report.answered == 2


async def test_the_endpoint_memory_is_shared_through_redis(
    sim: SimFactory, redis_url: str, tmp_path: Path
) -> None:
    """With a redis backend, what one Fanout learned of the endpoint is kept in that
    redis (for a week), not in a file, and the next Fanout using it starts from it."""
    import redis

    limits = Limits(rpm=60_000, backend=redis_url, namespace="memory")
    questions = [f"q{i}? {{{{tokens=3}}}}" for i in range(20)]
    async with sim(time_scale=20) as (_, client):
        first = fanout.Fanout(client, model="sim-1", limits=limits, memory=tmp_path)
        await first.ask_many(questions, policy="split")
        second = fanout.Fanout(client, model="sim-1", limits=limits, memory=True)
        await second.ask_many(["one more? {{tokens=3}}"], policy="split")
    for fo in (first, second):
        await fo.limiter.aclose()  # type: ignore[attr-defined]
    learned = first.endpoint.estimate().observations  # and one response (and first token)
    assert learned >= len(questions)
    assert learned + 1 <= second.endpoint.estimate().observations <= learned + 2
    assert second.endpoint.answer_tokens == pytest.approx(3.0)
    assert os.listdir(tmp_path) == []
    store = redis.Redis.from_url(redis_url)
    try:
        (key,) = store.keys("fanout:memory:memory:*")
        assert 6 * 86400 < store.ttl(key) <= 7 * 86400
        assert json.loads(store.get(key))["key"].endswith("/v1 sim-1")  # type: ignore[arg-type]
    finally:
        store.close()


class _Clients:
    """The connections a redis-server has open, and has ever accepted (``INFO``), as
    seen from one connection of its own."""

    def __init__(self, url: str) -> None:
        import redis

        self._probe = redis.Redis.from_url(url)

    def open(self) -> int:
        return int(self._probe.info("clients")["connected_clients"]) - 1  # less the probe

    def accepted(self) -> int:
        return int(self._probe.info("stats")["total_connections_received"])

    async def settle_at(self, expected: int) -> int:
        """The open count once it reaches ``expected`` (a closed socket takes the
        server a moment to see), or what it is after 3 s."""
        for _ in range(60):
            if (now := self.open()) == expected:
                return now
            await asyncio.sleep(0.05)
        return self.open()

    def close(self) -> None:
        self._probe.close()


async def test_a_one_shot_call_with_redis_limits_closes_the_connections_it_opened(
    sim: SimFactory, redis_url: str
) -> None:
    """fanout.ask_many with limits shared through redis builds its own limiter: once the
    call returns, every connection it opened (many: one per request waiting on redis at
    once) is closed, not left for the garbage collector (a loop of such calls ran out
    of file descriptors)."""
    clients = _Clients(redis_url)
    try:
        before, accepted = clients.open(), clients.accepted()
        limits = Limits(rpm=6000, backend=redis_url, namespace="one-shot")
        async with sim(time_scale=20, answer_tokens=2) as (_, client):
            for policy in ("split", "auto"):
                answers = await fanout.ask_many(
                    [f"q{i}?" for i in range(10)], client=client, model="m", limits=limits,
                    policy=policy, memory=False,
                )  # fmt: skip
                assert answers.report.answered == 10
                assert clients.accepted() > accepted  # it did talk to redis
                assert await clients.settle_at(before) == before
                accepted = clients.accepted()
    finally:
        clients.close()


async def test_a_fanout_closes_its_redis_connections_between_calls_and_reopens_them(
    sim: SimFactory, redis_url: str
) -> None:
    """A long-lived Fanout (ask_many, then as_completed) holds no redis connection
    between its calls, and each call connects again."""
    clients = _Clients(redis_url)
    try:
        before = clients.open()
        limits = Limits(rpm=6000, backend=redis_url, namespace="long-lived")
        async with sim(time_scale=20, answer_tokens=2) as (_, client):
            fo = fanout.Fanout(client, model="m", limits=limits, memory=False)
            assert (await fo.ask_many(["a?", "b?", "c?"])).report.answered == 3
            assert await clients.settle_at(before) == before
            accepted = clients.accepted()
            got = [a async for a in fo.as_completed(["d?", "e?"])]
            assert sorted(a.index for a in got) == [0, 1] and all(a.error is None for a in got)
            assert clients.accepted() > accepted
            assert await clients.settle_at(before) == before
    finally:
        clients.close()


async def test_a_limiter_the_user_passed_in_is_left_open_for_them(
    sim: SimFactory, redis_url: str
) -> None:
    """A RedisLimiter given to a Fanout is the user's: the call does not close it (it
    stays connected and usable); the user's aclose does."""
    clients = _Clients(redis_url)
    try:
        before = clients.open()
        limiter = RedisLimiter(Limits(rpm=6000), redis_url, namespace="users")
        async with sim(time_scale=20, answer_tokens=2) as (_, client):
            fo = fanout.Fanout(client, model="m", limiter=limiter, memory=False)
            assert (await fo.ask_many(["a?", "b?"])).report.answered == 2
            await asyncio.sleep(0.2)
            assert clients.open() > before
            assert await limiter.acquire(0) >= 0  # still usable
        await limiter.aclose()
        assert await clients.settle_at(before) == before
    finally:
        clients.close()


def test_a_backend_must_be_a_redis_url() -> None:
    """Anything else is a configuration error."""
    with pytest.raises(fanout.ConfigError, match="redis URL"):
        Limits(rpm=10, backend="http://example.invalid")


def test_without_the_redis_package_the_hint_works_as_written(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A redis backend without the redis package names install commands that work
    today: the package itself, or the extra from a checkout."""
    from importlib.metadata import metadata

    monkeypatch.setitem(sys.modules, "redis", None)
    monkeypatch.setitem(sys.modules, "redis.asyncio", None)
    with pytest.raises(fanout.ConfigError) as info:
        RedisLimiter(Limits(rpm=60), "redis://127.0.0.1:6379/0")
    assert "pip install redis (in a checkout of fanout: pip install -e '.[redis]')" in str(
        info.value
    )
    assert "redis" in (metadata("llm-fanout").get_all("Provides-Extra") or [])


# --- reservations given back: a call cancelled, a process killed, namespaces that disagree ---
RPM = 120  # one slot every 0.51 s
SLOT_S = 60 / RPM * 1.02
QUEUED = 16  # reservations a call leaves queued: 8 s of slots


async def _queue(limiter: RedisLimiter, n: int) -> list[asyncio.Task[float]]:
    """A first request answered, then ``n`` more waiting for their slots."""
    await limiter.acquire(0)
    limiter.observe({})
    limiter.attempt_done()
    tasks = [asyncio.ensure_future(limiter.acquire(0)) for _ in range(n)]
    await asyncio.sleep(0.3)  # every one has reserved its slot
    assert not any(t.done() for t in tasks[1:])
    return tasks


async def test_slots_of_a_cancelled_call_are_given_back(redis_url: str) -> None:
    """16 reservations queued, then cancelled: another process's request waits for a
    slot or so, not for the 16 (it did, 29 s at 60 rpm with 28 queued)."""
    a = RedisLimiter(Limits(rpm=RPM), redis_url, namespace="cancelled")
    b = RedisLimiter(Limits(rpm=RPM), redis_url, namespace="cancelled")
    tasks = await _queue(a, QUEUED)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    waited = await b.acquire(0)
    for lim in (a, b):
        await lim.aclose()
    assert waited < 3 * SLOT_S, waited  # 16 slots would be 8 s


async def test_slots_of_a_cancelled_fanout_call_are_given_back(
    sim: SimFactory, redis_url: str
) -> None:
    """The same through ``ask_many``: a call cancelled with its questions waiting for
    their shared slots leaves the next process's call no queue to wait behind."""
    limits = Limits(rpm=RPM, backend=redis_url, namespace="cancelled-call")
    async with sim(time_scale=20) as (_, client):
        first = fanout.Fanout(client, model="sim-1", limits=limits)
        with anyio.move_on_after(1.0):
            await first.ask_many([f"q{i}? {{{{tokens=2}}}}" for i in range(QUEUED)],
                                 policy="split")  # fmt: skip
        later = fanout.Fanout(client, model="sim-1", limits=limits)
        answers = await later.ask_many(["one more? {{tokens=2}}"], policy="split")
    for fo in (first, later):
        await fo.limiter.aclose()  # type: ignore[attr-defined]
    assert answers.report.limit_wait_s < 3 * SLOT_S, answers.report.limit_wait_s


_QUEUER = """
import asyncio, sys
from fanout import Limits
from fanout.limits import RedisLimiter

async def main():
    limiter = RedisLimiter(Limits(rpm=float(sys.argv[2])), sys.argv[1], namespace="killed",
                           lease_s=float(sys.argv[3]))
    await limiter.acquire(0)
    limiter.observe({})
    tasks = [asyncio.ensure_future(limiter.acquire(0)) for _ in range(int(sys.argv[4]))]
    await asyncio.sleep(0.5)
    print("queued", flush=True)
    await asyncio.gather(*tasks)

asyncio.run(main())
"""


async def test_slots_of_a_killed_process_expire_with_its_lease(redis_url: str) -> None:
    """A process killed (SIGKILL) with 16 reservations queued: another process's request,
    already waiting behind them, goes once the dead one's lease (1 s here) has run out
    instead of after the 16 slots."""
    lease = 1.0
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-c", _QUEUER, redis_url, str(RPM), str(lease), str(QUEUED),
        stdout=asyncio.subprocess.PIPE, env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )  # fmt: skip
    assert proc.stdout is not None
    assert (await proc.stdout.readline()).strip() == b"queued"
    proc.kill()
    await proc.wait()
    b = RedisLimiter(Limits(rpm=RPM), redis_url, namespace="killed", lease_s=lease)
    waited = await b.acquire(0)
    await b.aclose()
    assert waited < QUEUED * SLOT_S / 2, waited  # behind the 16: 8 s


async def test_processes_that_disagree_on_a_namespace_are_warned(
    redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """One process at 6000 rpm, another at 0.5 on the same namespace: a reservation the
    slow one waits for holds the fast one back (two minutes here), and each says so once."""
    fast = RedisLimiter(Limits(rpm=6000), redis_url, namespace="disagree")
    slow = RedisLimiter(Limits(rpm=0.5), redis_url, namespace="disagree")
    await fast.acquire(0)
    fast.observe({})
    await slow.acquire(0)
    slow.observe({})
    waiting = asyncio.ensure_future(slow.acquire(0))  # its next slot: 2 minutes on
    await asyncio.sleep(0.3)
    for _ in range(2):  # warned once only
        held = asyncio.ensure_future(fast.acquire(0))
        await asyncio.sleep(0.5)
        assert not held.done()  # queued behind the slow one's waiting reservation
        held.cancel()
        await asyncio.gather(held, return_exceptions=True)
    waiting.cancel()
    await asyncio.gather(waiting, return_exceptions=True)
    for lim in (fast, slow):
        await lim.aclose()
    warnings = _warnings(caplog, "disagree on its limits")
    assert len(warnings) == 2, warnings
    assert all("'disagree'" in w for w in warnings)
    assert any("6000" in w and "0.5" in w for w in warnings)


async def test_a_slow_process_cancelled_does_not_stall_a_fast_one(redis_url: str) -> None:
    """A process at rpm=0.5 sends one request, queues five more, and is cancelled; a
    process at rpm=6000 on the same namespace sends at once (it waited out the slow one's
    two-minute spacing of the request it sent: still waiting 20 s later), and then at its
    own pace, while the slow one, alone, still keeps its own."""
    slow = RedisLimiter(Limits(rpm=0.5), redis_url, namespace="slow-cancelled")
    fast = RedisLimiter(Limits(rpm=6000), redis_url, namespace="slow-cancelled")
    try:
        await slow.acquire(0)
        slow.observe({})
        queued = [asyncio.ensure_future(slow.acquire(0)) for _ in range(5)]
        await asyncio.sleep(0.3)
        for task in queued:
            task.cancel()
        await asyncio.gather(*queued, return_exceptions=True)
        waits = []
        for _ in range(5):
            waits.append(await asyncio.wait_for(fast.acquire(0), 20))
            fast.observe({})
        assert sum(waits) < 1.0, waits  # 5 sends at 100 a second: about 0.04 s
        alone = RedisLimiter(Limits(rpm=0.5), redis_url, namespace="slow-alone")
        try:
            await alone.acquire(0)
            alone.observe({})
            again = asyncio.ensure_future(alone.acquire(0))
            await asyncio.sleep(0.5)
            assert not again.done()  # its next slot is two minutes on
            again.cancel()
            await asyncio.gather(again, return_exceptions=True)
        finally:
            await alone.aclose()
    finally:
        for lim in (slow, fast):
            await lim.aclose()
