"""Fanout.profile / fanout profile: measuring an endpoint, and imitating it with the sim."""

from __future__ import annotations

from pathlib import Path

import pytest

import fanout
from fanout.endpoint.profile import RTT_PROBE
from fanout.engine import retrying
from fanout.profile import profile_endpoint
from fanout.sim import SimConfig
from fanout.sim._config import _RTT_PROBES

from .._virtual import on_virtual_time
from ..conftest import SimFactory


async def _profile(
    sim: SimFactory, max_requests: int = 13, **config: object
) -> fanout.profile.EndpointProfile:
    async with sim(time_scale=5, answer_tokens=32, **config) as (_, client):
        fo = fanout.Fanout(client, model="m")
        result = await profile_endpoint(fo, max_requests=max_requests, tokens=32)
        assert fo.endpoint.estimate().decode_s_per_token == pytest.approx(result.decode_s_per_token)
        return result


async def test_profiles_tell_a_batching_server_from_a_serial_one(sim: SimFactory) -> None:
    """Four streams finish together on a batching sim, one after another with slots=1."""
    batching = await _profile(sim)
    serial = await _profile(sim, slots=1)
    assert batching.requests_used <= 13
    assert batching.scaling[4] < 1.6
    assert serial.scaling[4] > 3.0
    assert batching.slowdown_per_request < 0.3 < 0.7 < serial.slowdown_per_request
    # The second of two concurrent requests waited for the only slot.
    assert serial.parallel_slots == 1
    assert batching.parallel_slots is None  # no request waited: at least 4 at once
    assert batching.parallel
    assert not serial.parallel
    assert "does not parallelise" in serial.summary()
    assert "runs concurrent requests in parallel" in batching.summary()
    # Decode speed: 15 ms per model step, 5x faster.
    assert batching.decode_s_per_token == pytest.approx(0.003, rel=0.35)


async def test_the_profile_counts_slots_and_the_cost_of_each_stream_in_the_batch(
    sim: SimFactory,
) -> None:
    """A sim with 3 slots whose steps grow by half a step per extra sequence: with 4
    and 8 streams sent, 3 start at once, and each token comes ~1 + 0.5 (k - 1) times
    slower with k decoding together."""
    profile = await _profile(sim, max_requests=21, slots=3, step_per_seq_s=0.0075)
    assert profile.requests_used == 21  # 7 + 2 + 4 + 8
    assert profile.parallel_slots == 3
    assert set(profile.decode_scaling) == {1, 2, 3}
    assert profile.decode_scaling[3] == pytest.approx(2.0, rel=0.25)
    assert profile.batch_slowdown == pytest.approx(0.5, rel=0.3)
    assert "requests at once: 3" in profile.summary()


async def test_the_profile_notices_a_prefix_cache(sim: SimFactory) -> None:
    """A repeated long prompt comes back much sooner from a server that caches
    prefixes; the profile says so, and a sim configured from it caches too."""
    cached = await _profile(sim, prefix_cache=True, prefill_tokens_per_s=1000.0, rtt_s=0.01)
    uncached = await _profile(sim, prefix_cache=False, prefill_tokens_per_s=1000.0, rtt_s=0.01)
    assert cached.prefix_cache is True
    assert uncached.prefix_cache is False
    assert SimConfig.from_profile(cached).prefix_cache
    assert not SimConfig.from_profile(uncached).prefix_cache
    # Prefill: 1 ms per prompt token at 5x.
    assert uncached.prefill_s_per_token == pytest.approx(0.0002, rel=0.35)


async def test_a_profile_round_trips_and_configures_the_sim(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Saved and loaded, a profile makes a SimConfig with the measured speeds."""
    serial = await _profile(sim, slots=1)
    path = tmp_path / "p.json"
    serial.save(path)
    loaded = fanout.profile.EndpointProfile.load(path)
    assert loaded == serial
    config = SimConfig.from_profile(loaded)
    assert config.slots == 1
    assert config.step_s == pytest.approx(serial.decode_s_per_token)
    assert config.rtt_s < serial.rtt_s
    assert "sk-" not in path.read_text()


async def test_a_profile_needs_enough_requests_to_measure(sim: SimFactory) -> None:
    """Fewer requests than the fixed measurements need is refused before any is sent."""
    async with sim() as (server, client):
        with pytest.raises(ValueError, match="max_requests >= 7"):
            await profile_endpoint(fanout.Fanout(client, model="m"), max_requests=6)
        assert server.stats.requests == []


def test_the_sim_knows_the_round_trip_probes_the_profile_sends() -> None:
    """from_profile takes the probes' own prefill out of the round trip; the sim
    keeps its copy of their text (it imports nothing from the library)."""
    assert tuple(RTT_PROBE.format(i) for i in range(3)) == _RTT_PROBES


def test_fanout_sim_imitates_a_saved_profile(tmp_path: Path) -> None:
    """`fanout sim --profile p.json` serves a sim built from the profile: with one
    slot measured, concurrent requests never run together; a file that is not a
    profile is a clear error."""
    import asyncio
    import json
    import socket
    import subprocess
    import sys
    import urllib.request

    from openai import AsyncOpenAI

    profile = fanout.profile.EndpointProfile(model="m", base_url="http://x/v1", rtt_s=0.02, ttft_s=0.03,
                                     decode_s_per_token=0.01, prefill_s_per_token=0.0001,
                                     scaling={1: 1.0, 2: 2.0}, slots=1)  # fmt: skip
    path = tmp_path / "p.json"
    profile.save(path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cmd = [sys.executable, "-m", "fanout", "sim", "--port", str(port), "--profile", str(path),
           "--time-scale", "10"]  # fmt: skip
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            assert f"127.0.0.1:{port}" in proc.stdout.readline()

            async def ask_three() -> None:
                client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sim")
                await asyncio.gather(*[client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": f"q{i} {{{{tokens=20}}}}"}]
                ) for i in range(3)])  # fmt: skip
                await client.close()

            asyncio.run(ask_three())
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/sim/stats", timeout=10) as r:
                stats = json.load(r)
            assert stats["completions"] == 3
            assert stats["peak_running"] == 1
        finally:
            proc.terminate()
            proc.wait(timeout=10)
    bad = tmp_path / "bad.json"
    bad.write_text('{"model": "m"}')
    result = subprocess.run([sys.executable, "-m", "fanout", "sim", "--profile", str(bad)],
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert result.returncode == 2
    assert "is not a fanout profile" in result.stderr


async def test_waiting_for_the_clients_own_concurrency_cap_is_not_taken_for_slots(
    sim: SimFactory,
) -> None:
    """A Fanout capped at 2 requests in flight profiles a 256-slot sim: requests held
    back by the cap are timed from when they leave, so none seems to have waited at
    the endpoint."""
    async with sim(time_scale=5) as (_, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=2))
        profile = await profile_endpoint(fo, max_requests=13, tokens=32)
    assert profile.parallel_slots is None
    assert profile.scaling[4] < 1.6


@on_virtual_time
async def test_a_request_retried_after_the_others_finished_is_not_taken_for_waiting(
    sim: SimFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One of the two concurrent streams fails with 503 and is retried after a
    back-off of 2 s, after the other has finished: it neither ran with the other nor
    waited at the endpoint, so no slot count comes out of it. On virtual time (on the
    wall clock a loaded machine could stretch the other request past the retry), and
    the back-off's jitter drawn at its top: drawn at random, some draw made a slot
    count come out (seen once in eight runs, in one clean-clone run of the suite); at
    its top the test is deterministic (30 of 30)."""
    defaults = retrying.build_retrying.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "rng", lambda: 1.0)
    async with sim(time_scale=5, fault_schedule={9: "503"}) as (server, client):
        # budget=0: no prompt retry, the back-off of initial_wait every time.
        fo = fanout.Fanout(client, model="m", retry=fanout.Retry(initial_wait=2.0, budget=0))
        profile = await profile_endpoint(fo, max_requests=9, tokens=32)  # 7 + the level of 2
    assert server.stats.faults["503"] == 1
    assert profile.parallel_slots is None
    assert set(profile.scaling) == {1, 2}
    other, retried = server.stats.requests[7], server.stats.requests[9]
    assert other.finished is not None
    if retried.arrival > other.finished:  # the usual case: the two never ran together
        assert 2 not in profile.decode_scaling
    else:  # a short back-off (full jitter): they did
        assert 2 in profile.decode_scaling
