"""Shared fixtures: a simulator on loopback and real openai clients pointed at it."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from fanout.testing import SimFactory, open_sim

from ._redis_server import redis_server

__all__ = ["SimFactory"]

pytest_plugins = ["pytester"]  # tests/test_testing.py runs pytest on its own test files


@pytest.fixture(autouse=True)
def _no_endpoint_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test writes to the user's cache, nor starts warm from an earlier test: the
    endpoint memory is off (``FANOUT_MEMORY=0``, inherited by the subprocesses tests
    start), and a test that turns it on with ``memory=True`` gets a directory of its
    own. Tests of the memory pass ``memory=<a tmp dir>`` or set the variables."""
    monkeypatch.setenv("FANOUT_MEMORY", "0")
    monkeypatch.setenv("FANOUT_MEMORY_DIR", str(tmp_path_factory.mktemp("fanout-memory")))


@pytest.fixture
def sim() -> SimFactory:
    """``async with sim(time_scale=50, ...) as (server, client):`` — a fresh simulator
    and a real ``AsyncOpenAI`` client talking to it over HTTP on 127.0.0.1: the
    ``fanout.testing`` plugin's :func:`~fanout.testing.open_sim`, which users get as
    the ``fanout_sim_factory`` fixture."""
    return open_sim


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A redis-server of our own on 127.0.0.1, one for each test module that asks for
    it (CI installs the binary; see .ci/run; the tests are skipped without it)."""
    yield from redis_server(tmp_path_factory.mktemp("redis"))


def pytest_collection_finish(session: pytest.Session) -> None:
    """Build llama-server once, before any test runs, when real-engine tests are
    selected: outside every per-test timeout, with its progress on the terminal."""
    if os.environ.get("FANOUT_SKIP_LLAMA") == "1" or session.config.option.collectonly:
        return
    names = {item.path.name for item in session.items}
    if not names & {"test_llama.py", "test_real_model.py"}:
        return
    if hasattr(session.config, "workerinput"):  # a pytest-xdist worker, beside another
        alone = pytest.mark.skip(
            reason="the real-engine tests time llama-server on every core: run them on "
            "their own, as README.md's test command does (pytest -m llama)"
        )
        for item in session.items:
            if item.get_closest_marker("llama"):
                item.add_marker(alone)
        return
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import llama_engine

    capture = session.config.pluginmanager.getplugin("capturemanager")
    start = time.monotonic()
    with capture.global_and_fixture_disabled():
        binary = llama_engine.ensure_server_binary()
        if "test_real_model.py" in names:
            llama_engine.ensure_instruct_model()  # the real model, fetched and converted once
    took = time.monotonic() - start
    if took > 5:
        print(f"\nllama-server ready in {took:.0f} s: {binary}", file=sys.stderr)
