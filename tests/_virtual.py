"""Run an async test on virtual time: a loop whose clock only the test moves.

``looptime`` gives an event loop whose clock advances when nothing else can happen:
sleeps and timeouts take no real time, I/O (loopback sockets included) takes no loop
time. Only for servers on the test's own loop (the simulator, a scripted server): while
the loop waits for another process (redis-server, a threaded or subprocess server) with
nothing of its own to run, looptime moves its clock to the next timer, which is often
the client's socket timeout; tests of those stay on the wall clock. fanout and its simulator read time from the running loop (``fanout.core.clock``),
so their pacing, retries and timeouts run on that clock, the same way on every run.
Its pytest plugin is off (``-p no:looptime_plugin``: it patches every test's loop and
left unclosed loops behind); a test opts in with ``@on_virtual_time``.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

import looptime

P = ParamSpec("P")
R = TypeVar("R")


def loop_time() -> float:
    """The running loop's clock (virtual inside an ``@on_virtual_time`` test)."""
    return asyncio.get_running_loop().time()


def on_a_virtual_loop() -> bool:
    """Whether the running loop (if any) is on virtual time: a server in a thread or
    another process cannot be used there (see the module docstring)."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    return isinstance(loop, looptime.LoopTimeEventLoop)


def on_virtual_time(test: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, R]:
    """Run ``test`` on a fresh loop of virtual time starting at 0, closed after it."""

    @functools.wraps(test)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        loop = looptime.new_event_loop(start=0)  # its virtual clock on
        try:
            return loop.run_until_complete(test(*args, **kwargs))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    return run
