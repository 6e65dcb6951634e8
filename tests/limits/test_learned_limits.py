"""Limits fanout learns from an endpoint's headers or remembers from an earlier process:
one no endpoint can mean is ignored with a warning instead of holding a call for hours,
and a configured limit wins over a remembered one. Over real HTTP on 127.0.0.1 (the
simulator, or a scripted endpoint)."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from openai import AsyncOpenAI

import fanout
from fanout import Limits

from .._logs import _warnings
from .._scripted import scripted_server
from ..conftest import SimFactory

HANG_S = 30.0
"""Longer than any of these calls takes; the old code held them for years."""


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
