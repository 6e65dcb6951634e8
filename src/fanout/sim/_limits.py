"""Per-key request and token budgets, policed like the hosted API."""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from ..core.clock import now as clock_now

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["Bucket", "SlidingWindow", "go_duration"]


def go_duration(seconds: float) -> str:
    """Format like Go's ``time.Duration``: ``1s``, ``6m0s``, ``120ms``, ``1m30.5s``."""
    if seconds <= 0:
        return "0s"
    if seconds < 1:
        ms = seconds * 1000
        return f"{ms:.0f}ms" if ms >= 1 else "1ms"
    minutes, rest = divmod(seconds, 60)
    secs = f"{rest:.3f}".rstrip("0").rstrip(".")
    if minutes >= 1:
        hours, minutes = divmod(int(minutes), 60)
        head = f"{hours}h" if hours else ""
        return f"{head}{minutes}m{secs}s"
    return f"{secs}s"


class Bucket:
    """A token bucket holding ``limit * period / 60`` that refills at ``limit`` per minute.

    Times are wall seconds; ``time_scale`` makes a model minute pass faster.
    ``reset="oldest"`` reports in ``reset_s`` when the next unit is free again (the
    first unit taken has left) instead of when the bucket is full.
    """

    __slots__ = ("_clock", "_level", "_stamp", "capacity", "limit", "rate", "reset", "wall_limit")

    def __init__(
        self,
        limit: int,
        *,
        period_s: float,
        time_scale: float,
        reset: str = "empty",
        clock: Callable[[], float] = clock_now,
    ) -> None:
        self.limit = limit
        self.reset = reset
        self.wall_limit = max(1, round(limit * time_scale))
        """The limit per wall-clock minute: what a client sees in the headers."""
        self.capacity = max(1.0, limit * period_s / 60.0)
        self.rate = limit / 60.0 * time_scale  # units per wall second
        self._clock = clock
        self._level = self.capacity
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def try_take(self, amount: float) -> float:
        """Take ``amount`` and return 0, or take nothing and return the wall seconds
        until it would fit."""
        self._refill()
        amount = min(amount, self.capacity)  # an oversized request waits for a full bucket
        if self._level >= amount:
            self._level -= amount
            return 0.0
        return (amount - self._level) / self.rate

    def give_back(self, amount: float) -> None:
        self._refill()
        self._level = min(self.capacity, self._level + amount)

    @property
    def remaining(self) -> int:
        self._refill()
        return max(0, int(self._level))

    @property
    def reset_s(self) -> float:
        """Wall seconds until the bucket is full again (``reset="oldest"``: until one
        more unit is free, or it is full)."""
        self._refill()
        missing = self.capacity - self._level
        if self.reset == "oldest":
            missing = min(missing, 1.0)
        return missing / self.rate


class SlidingWindow:
    """At most ``limit * period / 60`` in any ``period`` (a sliding log), the way many
    hosted APIs police a per-minute limit over a shorter window: stricter than a
    bucket, which lets a full bucket go and then refill during the same period.

    The headers report what this window has room for now (``remaining``) and when it
    will be empty again (``reset_s``: the newest entry leaves); with ``reset="oldest"``,
    as some gateways and proxies report it, when the *oldest* entry leaves instead
    (which frees only that entry's share). Times are wall seconds; ``time_scale``
    makes the period pass faster.
    """

    __slots__ = (
        "_clock", "_log", "_used", "capacity", "limit", "reset", "wall_limit", "wall_period",
    )  # fmt: skip

    def __init__(
        self,
        limit: int,
        *,
        period_s: float,
        time_scale: float,
        reset: str = "empty",
        clock: Callable[[], float] = clock_now,
    ) -> None:
        self.limit = limit
        self.reset = reset
        self.wall_limit = max(1, round(limit * time_scale))
        self.capacity = max(1.0, limit * period_s / 60.0)
        self.wall_period = period_s / time_scale
        self._clock = clock
        self._log: deque[tuple[float, float]] = deque()
        self._used = 0.0

    def _expire(self, now: float) -> None:
        while self._log and self._log[0][0] <= now - self.wall_period:
            self._used -= self._log.popleft()[1]

    def try_take(self, amount: float) -> float:
        """Take ``amount`` and return 0, or take nothing and return the wall seconds
        until it would fit."""
        now = self._clock()
        self._expire(now)
        amount = min(amount, self.capacity)
        if self._used + amount <= self.capacity + 1e-9:
            self._log.append((now, amount))
            self._used += amount
            return 0.0
        freed = self.capacity - self._used
        for stamp, taken in self._log:
            freed += taken
            if freed >= amount:
                return max(1e-3, stamp + self.wall_period - now)
        return self.wall_period  # pragma: no cover - amount is capped at capacity

    def give_back(self, amount: float) -> None:
        for i in range(len(self._log) - 1, -1, -1):
            if self._log[i][1] == amount:
                del self._log[i]
                self._used -= amount
                return

    @property
    def remaining(self) -> int:
        self._expire(self._clock())
        return max(0, int(self.capacity - self._used + 1e-9))

    @property
    def reset_s(self) -> float:
        """Wall seconds until the window is empty again (``reset="oldest"``: until its
        oldest entry leaves)."""
        now = self._clock()
        self._expire(now)
        if not self._log:
            return 0.0
        stamp = self._log[0][0] if self.reset == "oldest" else self._log[-1][0]
        return max(0.0, stamp + self.wall_period - now)
