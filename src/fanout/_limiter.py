"""Proactive rate limiting: requests per minute, tokens per minute, and shared cool-downs.

The engine talks to a :class:`RateLimiter` only, so another backend (limits
shared through redis, say) can stand in for :class:`LocalLimiter`.

``LocalLimiter`` uses ``aiolimiter`` for requests. Tokens use a small bucket of
our own because a reservation has to be corrected afterwards with the usage the
API reports (``settle``), which ``aiolimiter`` has no way to do. Both budgets are
released evenly (``Limits.smoothing_s``) instead of a minute's worth at once.
"""

from __future__ import annotations

import math
import random
import re
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import anyio
from aiolimiter import AsyncLimiter

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

    from ._config import Limits
from ._plans import Budget

__all__ = ["LimitState", "LocalLimiter", "RateLimiter", "parse_duration"]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_DEFAULT_WINDOW_S = 1.0
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}


def parse_duration(value: str) -> float | None:
    """Seconds in a Go-style duration (``1s``, ``6m0s``, ``12ms``, ``1m30.5s``), or None."""
    value = value.strip()
    if not value:
        return None
    try:
        return float(value)  # a bare number of seconds
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for match in _DURATION_PART.finditer(value):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNIT[match.group(2)]
        pos = match.end()
    return total if pos == len(value) else None


@dataclass(frozen=True)
class LimitState:
    """A snapshot of a limiter, for reports and debugging."""

    rpm: float | None
    tpm: float | None
    rpm_learned: bool
    tpm_learned: bool
    window_s: float
    """The window requests and tokens are spread over (learned if smaller than configured)."""
    paused_for_s: float


class RateLimiter(Protocol):
    """What the engine needs from a rate limiter."""

    async def acquire(self, tokens: int) -> float:
        """Wait until a request of ``tokens`` estimated tokens may go; return the seconds waited."""
        ...

    def settle(self, reserved: int, used: int | None) -> None:
        """Correct a reservation with the tokens actually used (None: the request was refused)."""
        ...

    def observe(self, headers: Mapping[str, str]) -> None:
        """Learn from a response's ``x-ratelimit-*`` headers."""
        ...

    def cool_down(self, seconds: float) -> None:
        """Pause every request on this limiter for ``seconds`` (after a 429)."""
        ...

    def state(self) -> LimitState: ...

    def budget(self) -> Budget:
        """Requests and tokens that may go now, and the rates after that (for the planner)."""
        ...


class _TokenBucket:
    """Holds at most half of ``per_minute * window / 60`` tokens and refills continuously.

    A request larger than the bucket waits for a full bucket and then drives the
    level negative, so it is paid for by the time that follows.
    """

    def __init__(self, per_minute: float, window_s: float, clock: Callable[[], float]) -> None:
        self.per_minute = per_minute
        self.capacity = max(1.0, per_minute * window_s / 60.0 / 2)  # half: see _smoothed_limiter
        self.rate = per_minute / 60.0
        self._clock = clock
        self._level = self.capacity
        self._stamp = clock()

    def _refill(self) -> None:
        now = self._clock()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now

    def resize(self, window_s: float) -> None:
        self._refill()
        self.capacity = max(1.0, self.per_minute * window_s / 60.0 / 2)
        self._level = min(self._level, self.capacity)

    def wait_for(self, amount: float) -> float:
        self._refill()
        need = min(amount, self.capacity)
        if self._level >= need:
            return 0.0
        return (need - self._level) / self.rate

    def take(self, amount: float) -> None:
        self._refill()
        self._level -= amount

    def give(self, amount: float) -> None:
        self._refill()
        self._level = min(self.capacity, self._level + amount)

    def drain_to(self, remaining: float) -> None:
        """The server says fewer tokens are left than we think: believe it."""
        self._refill()
        self._level = min(self._level, remaining)


def _smoothed_limiter(per_minute: float, window_s: float) -> AsyncLimiter:
    """Release ``per_minute`` evenly, with a burst of at most half of one window's
    budget: the other half absorbs the jitter between when we send and when the
    server counts, so a server policing the same window never sees too many."""
    window = max(window_s, 60.0 / per_minute)  # at least one request per window
    burst = max(1.0, per_minute * window / 60.0 / 2)
    return AsyncLimiter(max_rate=burst, time_period=burst * 60.0 / per_minute)


class LocalLimiter:
    """Limits for one process (see the module docstring)."""

    def __init__(
        self,
        limits: Limits,
        *,
        clock: Callable[[], float] = time.monotonic,
        rng: Callable[[], float] = random.random,
    ) -> None:
        self._limits = limits
        self._clock = clock
        self._rng = rng
        self._rpm: float | None = None
        self._requests: AsyncLimiter | None = None
        self._tokens: _TokenBucket | None = None
        self._rpm_learned = False
        self._tpm_learned = False
        self._pause_until = 0.0
        self._jitter_s = 0.0
        # Until the endpoint shows how it polices its limits, release requests
        # evenly (a window of 0 means "no burst"): a cautious start that costs at
        # most one round trip.
        self._window_s = 0.0
        self._window_known = False
        self._drain_new_limiter = False
        if limits.rpm is not None:
            self._set_rpm(limits.rpm)
        if limits.tpm is not None:
            self._set_tpm(limits.tpm)

    # --- configuration ------------------------------------------------------------
    def _set_rpm(self, rpm: float) -> None:
        self._rpm = rpm * self._limits.headroom
        self._requests = _smoothed_limiter(self._rpm, self._window_s)

    def _set_tpm(self, tpm: float) -> None:
        self._tokens = _TokenBucket(tpm * self._limits.headroom, self._window_s, self._clock)

    def _set_window(self, window: float) -> None:
        """Spread requests and tokens over ``window`` seconds from now on."""
        cap = self._limits.smoothing_s
        if cap is not None:
            window = min(window, cap)
        if self._window_known and not window < self._window_s * 0.8:
            return  # once known, only shrink, and only for a real difference
        if not self._window_known or window != self._window_s:
            self._window_s = window
            self._window_known = True
            if self._rpm is not None:
                # The new limiter starts empty: no fresh burst on top of what was sent.
                self._drain_new_limiter = True
                self._requests = _smoothed_limiter(self._rpm, window)
            if self._tokens is not None:
                self._tokens.resize(window)

    @staticmethod
    def _server_window(limit: float, remaining: float, reset_s: float) -> float:
        """The server's policing window, inferred from one response.

        A server bucket refilling at ``limit`` per minute that reports
        ``remaining`` now and full again in ``reset_s`` holds
        ``remaining + reset_s * limit / 60``: that many sixtieths of a minute
        is its window. Releasing no more than half of it at once never overruns it.
        """
        capacity = remaining + 1 + reset_s * limit / 60.0  # +1: remaining is rounded down
        return capacity * 60.0 / limit

    # --- the interface -----------------------------------------------------------
    async def acquire(self, tokens: int) -> float:
        start = self._clock()
        await self._wait_pause()
        while (requests := self._requests) is not None:
            if self._drain_new_limiter:
                self._drain_new_limiter = False
                await requests.acquire(requests.max_rate)  # takes no time
            await requests.acquire()
            if requests is self._requests:
                break
            # The limiter was replaced (a limit or window was learned) while we
            # waited: queue again on the current one, or two would release at once.
        if self._tokens is not None:
            while (wait := self._tokens.wait_for(tokens)) > 0:
                await anyio.sleep(wait)
            self._tokens.take(tokens)
        await self._wait_pause()  # a cool-down may have begun meanwhile
        return self._clock() - start

    async def _wait_pause(self) -> None:
        while (left := self._pause_until - self._clock()) > 0:
            # Wake at the end of the pause plus a random share of the spread, so
            # the waiters come back one by one rather than all at once.
            await anyio.sleep(left + self._rng() * self._jitter_s)

    def settle(self, reserved: int, used: int | None) -> None:
        if self._tokens is None:
            return
        if used is None:
            self._tokens.give(reserved)
        elif used < reserved:
            self._tokens.give(reserved - used)
        elif used > reserved:
            self._tokens.take(used - reserved)

    def cool_down(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        until = self._clock() + seconds
        if until > self._pause_until:
            self._pause_until = until
            self._jitter_s = min(1.0, 0.25 * seconds) if seconds > 0 else 0.0

    def observe(self, headers: Mapping[str, str]) -> None:
        get = headers.get
        limit_req = _number(get("x-ratelimit-limit-requests"))
        limit_tok = _number(get("x-ratelimit-limit-tokens"))
        if self._limits.rpm is None and limit_req and limit_req != self._learned_rpm_value():
            self._set_rpm(limit_req)
            self._rpm_learned = True
            self._drain_new_limiter = True  # what is in flight already spent the burst
        if (
            self._limits.tpm is None
            and limit_tok
            and (
                self._tokens is None or self._tokens.per_minute != limit_tok * self._limits.headroom
            )
        ):
            self._set_tpm(limit_tok)
            self._tpm_learned = True
        remaining_req = _number(get("x-ratelimit-remaining-requests"))
        reset_req = parse_duration(get("x-ratelimit-reset-requests") or "")
        if limit_req and remaining_req is not None and reset_req is not None:
            self._set_window(self._server_window(limit_req, remaining_req, reset_req))
        elif not self._window_known:
            # The endpoint says nothing about how it polices: use the configured window.
            self._set_window(self._limits.smoothing_s or _DEFAULT_WINDOW_S)
        if limit_req and remaining_req is not None and reset_req is not None and remaining_req < 1:
            # Slow down before the endpoint says no: with nothing left, wait for
            # the time it takes to win back one request.
            self.cool_down(min(reset_req, 60.0 / limit_req))
        remaining_tok = _number(get("x-ratelimit-remaining-tokens"))
        if remaining_tok is not None and self._tokens is not None:
            self._tokens.drain_to(remaining_tok)

    def _learned_rpm_value(self) -> float | None:
        if self._rpm is None:
            return None
        return self._rpm / self._limits.headroom

    def budget(self) -> Budget:
        requests_now = math.inf
        if self._requests is not None:
            lim = self._requests
            if self._drain_new_limiter:
                requests_now = 0.0
            else:
                lo, hi = 0, int(lim.max_rate)  # largest whole amount it would let through now
                try:
                    while lo < hi:
                        mid = (lo + hi + 1) // 2
                        if lim.has_capacity(mid):
                            lo = mid
                        else:
                            hi = mid - 1
                except RuntimeError:  # no running event loop (a dry run): assume it is full
                    lo = int(lim.max_rate)
                requests_now = float(lo)
        tokens_now = math.inf
        if self._tokens is not None:
            self._tokens._refill()
            tokens_now = max(0.0, self._tokens._level)
        return Budget(
            requests_now=requests_now,
            tokens_now=tokens_now,
            rpm=self._rpm,
            tpm=self._tokens.per_minute if self._tokens is not None else None,
            paused_s=max(0.0, self._pause_until - self._clock()),
        )

    def state(self) -> LimitState:
        return LimitState(
            rpm=self._rpm,
            tpm=self._tokens.per_minute if self._tokens is not None else None,
            rpm_learned=self._rpm_learned,
            tpm_learned=self._tpm_learned,
            window_s=self._window_s,
            paused_for_s=max(0.0, self._pause_until - self._clock()),
        )


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        return None
