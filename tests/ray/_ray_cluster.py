"""A local Ray for the tests of fanout.ray: 2 CPUs, its node on 127.0.0.1, and clients
that the actors make for a simulator on loopback (picklable by reference: the
workers import this module, the repository being on their PYTHONPATH)."""

from __future__ import annotations

import asyncio
import os
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")

__all__ = ["PidClient", "SimClient", "local_ray", "off_loop"]


def local_ray(env: dict[str, str]) -> Iterator[Any]:
    """``ray.init(num_cpus=2)`` on loopback, the workers' environment ``env`` (and the
    repository importable); shut down after. Skips without ray installed."""
    pytest.importorskip("ray.data")
    import ray
    import ray.data

    with warnings.catch_warnings():  # Ray's own deprecations, of settings it sets itself
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    # Ray reports no usage unless asked (Ray 2.60: off by default, and it reports from the
    # dashboard, which is off here); said explicitly all the same: the tests talk to
    # nothing but loopback.
    os.environ["RAY_USAGE_STATS_ENABLED"] = "0"
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        _node_ip_address="127.0.0.1",
        log_to_driver=False,
        configure_logging=False,
        runtime_env={"env_vars": {"PYTHONPATH": str(ROOT), **env}},
    )
    try:
        yield ray
    finally:
        ray.shutdown()


async def off_loop(fn: Callable[[], T]) -> T:
    """Run a blocking Ray call in a thread, so that the simulator on this loop serves."""
    return await asyncio.to_thread(fn)


@dataclass(frozen=True)
class SimClient:
    """Makes, in the actor, an ``AsyncOpenAI`` for the simulator at ``base_url``."""

    base_url: str

    def __call__(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(base_url=self.base_url, api_key="sim", timeout=30)


@dataclass(frozen=True)
class PidClient:
    """As :class:`SimClient`, and leaves the actor's pid as a file in ``pids``."""

    base_url: str
    pids: str

    def __call__(self) -> Any:
        from openai import AsyncOpenAI

        Path(self.pids, str(os.getpid())).touch()
        return AsyncOpenAI(base_url=self.base_url, api_key="sim", timeout=30)
