"""The one clock fanout's async code reads: the running event loop's.

Pacing, timeouts, latencies and re-plan times are all measured on the loop's clock,
the one ``anyio.sleep`` and ``anyio.move_on_after`` already use. In a
process this is the monotonic clock (asyncio's loops read ``time.monotonic``), so
nothing changes for users; a test that runs the loop on a clock of its own (virtual
time, as ``looptime`` gives) runs fanout's pacing and timeouts on it too, instantly
and deterministically. Outside a running loop (a synchronous ``Fanout.plan``), it is
the monotonic clock the loop would read.
"""

from __future__ import annotations

import asyncio
import time

__all__ = ["now"]


def now() -> float:
    """Seconds on the running event loop's clock (the monotonic clock outside one)."""
    try:
        return asyncio.get_running_loop().time()
    except RuntimeError:
        return time.monotonic()
