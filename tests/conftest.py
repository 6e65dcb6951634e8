"""Shared fixtures: a simulator on loopback and real openai clients pointed at it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

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
