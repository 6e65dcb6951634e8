"""Fanout.profile / fanout profile: measuring an endpoint, and imitating it with the sim."""

from __future__ import annotations

from pathlib import Path

import pytest

import fanout
from fanout.sim import SimConfig

from .conftest import SimFactory


async def _profile(sim: SimFactory, **config: object) -> fanout.EndpointProfile:
    async with sim(time_scale=5, answer_tokens=32, **config) as (_, client):
        fo = fanout.Fanout(client, model="m")
        result = await fo.profile(max_requests=12, tokens=32)
        assert fo.endpoint.estimate().decode_s_per_token == pytest.approx(result.decode_s_per_token)
        return result


async def test_profiles_tell_a_batching_server_from_a_serial_one(sim: SimFactory) -> None:
    """Four streams finish together on a batching sim, one after another with slots=1."""
    batching = await _profile(sim)
    serial = await _profile(sim, slots=1)
    assert batching.requests_used <= 12
    assert batching.scaling[4] < 1.6
    assert serial.scaling[4] > 3.0
    assert batching.slowdown_per_request < 0.3 < 0.7 < serial.slowdown_per_request
    assert (
        serial.parallel_slots <= 2
    )  # overlapping round trips make "one at a time" look a bit parallel
    # Decode speed: 15 ms per model step, 5x faster.
    assert batching.decode_s_per_token == pytest.approx(0.003, rel=0.35)


async def test_a_profile_round_trips_and_configures_the_sim(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Saved and loaded, a profile makes a SimConfig with the measured speeds."""
    serial = await _profile(sim, slots=1)
    path = tmp_path / "p.json"
    serial.save(path)
    loaded = fanout.EndpointProfile.load(path)
    assert loaded == serial
    config = SimConfig.from_profile(loaded)
    assert config.slots == serial.parallel_slots
    assert config.step_s == pytest.approx(serial.decode_s_per_token)
    assert "sk-" not in path.read_text()
