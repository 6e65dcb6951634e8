"""Limits no endpoint can mean: learned from headers or remembered from an earlier
process, they are bounded and ignored with a warning instead of holding a call for
hours. Over real HTTP on 127.0.0.1 (the simulator, or a scripted endpoint)."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from openai import AsyncOpenAI

import fanout
from fanout import Limits
from fanout.limits import RedisLimiter

from ._redis_server import redis_server
from ._scripted import scripted_server
from .conftest import SimFactory

HANG_S = 30.0
"""Longer than any of these calls takes; the old code held them for years."""


def _warnings(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and text in r.getMessage()]  # fmt: skip


@pytest.mark.parametrize("header", ["x-ratelimit-limit-requests", "x-ratelimit-limit-tokens"])
@pytest.mark.parametrize("value", ["1e-9", "0.5", "nan"])
async def test_an_absurd_limit_header_is_ignored_with_one_warning(
    caplog: pytest.LogCaptureFixture, header: str, value: str
) -> None:
    """A server saying ``1e-9`` (or half a request, or ``nan``) per minute: the call is
    not held after its first request; one warning names the header; nothing is learned."""
    async with scripted_server(lambda body: "ok", {header: value}) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", memory=False)
        with anyio.fail_after(HANG_S):
            answers = await fo.ask_many([f"q{i}?" for i in range(4)], policy="split")
            again = await fo.ask_many([f"r{i}?" for i in range(2)], policy="split")
        await client.close()
    assert answers.texts == ["ok"] * 4 and again.texts == ["ok"] * 2
    state = fo.limiter.state()
    assert state.rpm is None and state.tpm is None
    if value == "nan":
        return  # no number at all: ignored like any unreadable header
    (warning,) = _warnings(caplog, header)
    assert f"{float(value):g}" in warning


def _remembered(directory: Path, **limits: object) -> None:
    (path,) = sorted(directory.iterdir())
    doc = json.loads(path.read_bytes())
    doc["limits"].update(limits)
    path.write_text(json.dumps(doc))


@pytest.mark.parametrize(
    "limits", [{"rpm": 1e-9}, {"tpm": 1e-9}, {"rpm": True}, {"rpm": "600"}, {"rpm": 1e300}]
)
async def test_an_absurd_remembered_limit_is_ignored_with_one_warning(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture, limits: dict[str, object]
) -> None:
    """A memory document saying ``rpm: 1e-9`` (or ``tpm: 1e-9``, or ``rpm: true``, read
    as one a minute before): one warning, the document ignored, the call not held."""
    async with sim(time_scale=20) as (_, client):
        first = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        await first.ask_many(["a? {{tokens=3}}"], policy="split")
        _remembered(tmp_path, **limits)
        caplog.clear()
        fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        with anyio.fail_after(HANG_S):
            answers = await fo.ask_many([f"q{i}? {{{{tokens=3}}}}" for i in range(4)])
    assert len(answers.texts) == 4
    assert len(_warnings(caplog, "endpoint memory")) == 1
    assert fo.limiter.state().rpm is None and fo.limiter.state().tpm is None


async def test_a_configured_limit_wins_over_a_remembered_one(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Remembered 60 rpm, configured 6000 (and no tpm configured, remembered 1000): the
    configured rpm paces, the remembered tpm is taken, never the remembered rpm."""
    async with sim(time_scale=20) as (_, client):
        first = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        await first.ask_many(["a? {{tokens=3}}"], policy="split")
        _remembered(tmp_path, rpm=60.0, tpm=100_000.0)
        fo = fanout.Fanout(client, model="sim-1", memory=tmp_path, limits=Limits(rpm=6000))
        with anyio.fail_after(HANG_S):
            await fo.ask_many([f"q{i}? {{{{tokens=3}}}}" for i in range(3)], policy="split")
    assert fo.limiter.state().rpm == 6000
    assert not fo.limiter.state().rpm_learned
    assert fo.limiter.state().tpm == 100_000


# --- limits shared through redis -------------------------------------------------------
@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from redis_server(tmp_path_factory.mktemp("redis"))


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
