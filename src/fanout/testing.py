"""``fanout.testing``: test your own code against fanout's simulator.

Installing llm-fanout installs this module as a pytest plugin (the ``pytest11`` entry
point ``fanout``; ``pytest -p no:fanout`` turns it off). It brings two fixtures:

``fanout_sim``
    A running simulator and a real ``AsyncOpenAI`` client for it, fresh for each test
    (a :class:`SimHandle`; it unpacks as ``server, client``). The ``fanout_sim``
    marker sets the simulator's :class:`~fanout.sim.SimConfig` fields::

        @pytest.mark.fanout_sim(time_scale=50, rpm=60)
        async def test_my_code(fanout_sim):
            reply = await my_code(fanout_sim.client)
            assert fanout_sim.stats.rate_limited == 0

``fanout_sim_factory``
    :func:`open_sim` itself, for several simulators in one test, or settings
    computed in it::

        async def test_a_wrong_key(fanout_sim_factory):
            async with fanout_sim_factory(api_key="sk-right") as sim:
                ...

``fanout_sim`` is an async fixture: with pytest-asyncio installed it is one of its
fixtures (``pytest_asyncio.fixture``), so it works in strict mode as in auto mode;
otherwise it is a plain ``pytest.fixture`` that anyio's pytest plugin runs for
tests marked ``anyio``. ``fanout_sim_factory`` is synchronous and works with any.

pytest imports this module at startup: it imports nothing of its own beyond fanout
(and pytest-asyncio, when installed, which pytest has loaded already); the simulator
is imported when a fixture starts one. Without pytest, :func:`open_sim` and
:class:`SimHandle` still work.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any, NamedTuple

from .endpoint.model import EndpointModel

if TYPE_CHECKING:
    from openai import AsyncOpenAI

    from .sim import SimConfig, SimServer, SimStats

try:
    import pytest
except ImportError:  # pragma: no cover - used outside pytest: the helpers only
    pytest = None  # type: ignore[assignment]

__all__ = ["SimFactory", "SimHandle", "cold_endpoint", "open_sim"]


class SimHandle(NamedTuple):
    """A running simulator and an ``AsyncOpenAI`` client for it."""

    server: SimServer
    client: AsyncOpenAI

    @property
    def base_url(self) -> str:
        """What to give your own ``AsyncOpenAI(base_url=...)``."""
        return self.server.base_url

    @property
    def stats(self) -> SimStats:
        """What the server saw (``server.stats``)."""
        return self.server.stats

    @property
    def model(self) -> str:
        """The model name the simulator lists (any name is accepted)."""
        return self.server.config.model


@contextlib.asynccontextmanager
async def open_sim(
    config: SimConfig | None = None, /, *, timeout: float = 30.0, **settings: Any
) -> AsyncIterator[SimHandle]:
    """Run a simulator and a client for it for the duration of the block.

    The simulator is ``SimConfig(**settings)``, or ``config`` with ``settings``
    replacing its fields. The client sends the key the simulator accepts
    (``api_key``; any key is accepted by default, and the client sends ``"sim"``),
    keeps the SDK's default retries and has ``timeout`` seconds per request.
    """
    from openai import AsyncOpenAI

    from .sim import SimConfig, serve

    resolved = SimConfig(**settings) if config is None else dataclasses.replace(config, **settings)
    async with serve(resolved) as server:
        client = AsyncOpenAI(
            base_url=server.base_url, api_key=resolved.api_key or "sim", timeout=timeout
        )
        try:
            yield SimHandle(server, client)
        finally:
            await client.close()


SimFactory = Callable[..., AbstractAsyncContextManager[SimHandle]]
"""The type of :func:`open_sim` (and of the ``fanout_sim_factory`` fixture)."""

FIXTURE_TIME_SCALE = 50.0
"""The time scale the ``fanout_sim`` fixtures run the simulator at unless told
otherwise (a ``time_scale`` setting, or a whole ``config``): model time runs 50 times
faster than the clock, so a test of a few requests takes a fraction of a second
instead of seconds. Pass ``time_scale=1`` to run in real time."""


def _fast_sim(
    config: SimConfig | None = None, /, *, timeout: float = 30.0, **settings: Any
) -> AbstractAsyncContextManager[SimHandle]:
    if config is None:
        settings.setdefault("time_scale", FIXTURE_TIME_SCALE)
    return open_sim(config, timeout=timeout, **settings)


def _async_fixture(name: str) -> Callable[[Callable[..., Any]], Any]:
    """pytest-asyncio's fixture decorator if it is installed (strict mode needs it),
    else pytest's (for anyio's plugin, or another that runs async fixtures)."""
    try:
        import pytest_asyncio
    except ImportError:
        return pytest.fixture(name=name)
    return pytest_asyncio.fixture(name=name)


if pytest is not None:

    def pytest_configure(config: pytest.Config) -> None:
        config.addinivalue_line(
            "markers",
            "fanout_sim(config=None, *, timeout=30.0, **settings): the simulator the "
            "fanout_sim fixture runs (fanout.sim.SimConfig fields)",
        )

    @pytest.fixture(name="fanout_sim_factory")
    def _fanout_sim_factory() -> SimFactory:
        """``async with fanout_sim_factory(**settings) as sim:`` — :func:`open_sim`,
        at :data:`FIXTURE_TIME_SCALE` unless a ``config`` or ``time_scale`` is given."""
        return _fast_sim

    @_async_fixture(name="fanout_sim")
    async def _fanout_sim(request: pytest.FixtureRequest) -> AsyncIterator[SimHandle]:
        """A running simulator and a client for it, set by the ``fanout_sim`` marker."""
        marker = request.node.get_closest_marker("fanout_sim")
        args, kwargs = (marker.args, marker.kwargs) if marker is not None else ((), {})
        async with _fast_sim(*args, **kwargs) as sim:
            yield sim


def cold_endpoint(time_scale: float) -> EndpointModel:
    """An endpoint model that knows nothing yet, as a new ``Fanout`` starts with, but in
    a simulator's time: fanout's priors (round trip, prefill and decode speeds) divided
    by its ``time_scale``, as if the simulator ran in real time. Pass it as
    ``Fanout(..., endpoint=cold_endpoint(scale))`` to see first contact at speed."""
    est = EndpointModel().estimate()
    return EndpointModel(
        rtt_s=est.rtt_s / time_scale,
        prefill_s_per_token=est.prefill_s_per_token / time_scale,
        decode_s_per_token=est.decode_s_per_token / time_scale,
    )
