"""A clock the test moves and a local limiter on it: each ``sleep`` only advances it, so
a limiter's send times are computed, not waited for (test_limiter.py,
test_reset_headers.py)."""

from __future__ import annotations

from fanout import Limits
from fanout.limits import LocalLimiter


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds


def _limiter(limits: Limits, clock: FakeClock) -> LocalLimiter:
    return LocalLimiter(limits, clock=clock, sleep=clock.sleep, rng=lambda: 0.0)


async def _send_times(
    limiter: LocalLimiter, clock: FakeClock, n: int, tokens: int = 0
) -> list[float]:
    """Send ``n`` requests, each answered (attempt_done) before the next goes, but the
    last, whose headers the test may then report."""
    times = []
    for i in range(n):
        if i:
            limiter.attempt_done()
        await limiter.acquire(tokens)
        times.append(clock.now)
    return times
