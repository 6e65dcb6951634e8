"""Shared fixtures: a simulator on loopback and real openai clients pointed at it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from fanout.sim import SimConfig, SimServer, serve

SimFactory = Callable[..., AbstractAsyncContextManager[tuple[SimServer, AsyncOpenAI]]]


@pytest.fixture
def sim() -> SimFactory:
    """``async with sim(time_scale=50, ...) as (server, client):`` — a fresh simulator
    and a real ``AsyncOpenAI`` client talking to it over HTTP on 127.0.0.1."""

    @asynccontextmanager
    async def factory(
        *, api_key: str = "sim-key", timeout: float = 30.0, **config: object
    ) -> AsyncIterator[tuple[SimServer, AsyncOpenAI]]:
        async with serve(SimConfig(**config)) as server:  # type: ignore[arg-type]
            client = AsyncOpenAI(base_url=server.base_url, api_key=api_key, timeout=timeout)
            try:
                yield server, client
            finally:
                await client.close()

    return factory


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build llama-server once, before any test runs, when real-engine tests are
    selected: outside every per-test timeout, with its progress on the terminal."""
    if os.environ.get("FANOUT_SKIP_LLAMA") == "1" or session.config.option.collectonly:
        return
    if not any(item.path.name == "test_llama.py" for item in session.items):
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import llama_engine

    capture = session.config.pluginmanager.getplugin("capturemanager")
    start = time.monotonic()
    with capture.global_and_fixture_disabled():
        binary = llama_engine.ensure_server_binary()
    took = time.monotonic() - start
    if took > 5:
        print(f"\nllama-server ready in {took:.0f} s: {binary}", file=sys.stderr)
