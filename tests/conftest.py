"""Shared fixtures: a simulator on loopback and real openai clients pointed at it."""

from __future__ import annotations

import pytest

from fanout.testing import SimFactory, open_sim

__all__ = ["SimFactory"]

pytest_plugins = ["pytester"]  # tests/test_testing.py runs pytest on its own test files


@pytest.fixture
def sim() -> SimFactory:
    """``async with sim(time_scale=50, ...) as (server, client):`` — a fresh simulator
    and a real ``AsyncOpenAI`` client talking to it over HTTP on 127.0.0.1: the
    ``fanout.testing`` plugin's :func:`~fanout.testing.open_sim`, which users get as
    the ``fanout_sim_factory`` fixture."""
    return open_sim
