"""Limits shared by every process (and host) that uses the same redis.

``Limits(rpm=..., tpm=..., backend="redis://host:6379/0")`` puts the request and
token budgets in redis, so N processes together stay within one API key's limits.
Each budget is a GCRA bucket (the generic cell rate algorithm: one "theoretical
arrival time" per key), updated by one atomic Lua script per acquisition that
*reserves* a place and returns how long to wait for it, so waiters queue in order
instead of polling. A 429's cool-down is a key every process reads before sending.

The bucket releases ``rpm`` per minute with a burst of half of one smoothing window
(``Limits.smoothing_s``, 1 s by default), as the local limiter does once it knows
the endpoint's window. Rates must be configured: a shared budget cannot be learned
by one process from its own responses.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Mapping
from typing import Any

from ._config import Limits
from ._exceptions import ConfigError, FanoutError
from ._limiter import LimitState, parse_duration
from ._plans import Budget

__all__ = ["RedisLimiter", "RedisUnavailableError"]

# KEYS[1]: bucket. ARGV: interval_ms per unit, burst units, cost units.
# Returns the milliseconds to wait before the reserved place comes (as a string:
# redis would truncate a Lua number to an integer).
_RESERVE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local interval = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + cost * interval
local wait = new_tat - burst * interval - now
if wait < 0 then wait = 0 end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now + burst * interval) + 1000)
return string.format('%.3f', wait)
"""

# KEYS[1]: bucket. ARGV: interval_ms, delta units (negative gives back).
_ADJUST = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local tat = tonumber(redis.call('GET', KEYS[1]) or '0')
if tat < now then tat = now end
local new_tat = tat + tonumber(ARGV[2]) * tonumber(ARGV[1])
if new_tat < now then new_tat = now end
redis.call('SET', KEYS[1], string.format('%.3f', new_tat), 'PX', math.ceil(new_tat - now) + 60000)
return 1
"""

# KEYS[1]: pause key. ARGV: pause ms. Extends, never shortens. Returns ms left.
_PAUSE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local untl = now + tonumber(ARGV[1])
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if cur > untl then untl = cur end
redis.call('SET', KEYS[1], string.format('%.3f', untl), 'PX', math.ceil(untl - now) + 1000)
return string.format('%.3f', untl - now)
"""

# KEYS[1]: pause key. Returns ms left of the shared pause (0 if none).
_PAUSE_LEFT = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + tonumber(t[2]) / 1000
local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
local left = cur - now
if left < 0 then left = 0 end
return string.format('%.3f', left)
"""


class RedisUnavailableError(FanoutError):
    """The redis holding the shared limits cannot be reached."""


class RedisLimiter:
    """A :class:`fanout.limits.RateLimiter` whose budgets live in redis (see the module docstring)."""

    def __init__(self, limits: Limits, url: str, *, namespace: str = "default") -> None:
        try:
            import redis.asyncio as redis_asyncio
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ConfigError(
                "shared limits need the redis package: pip install redis "
                "(in a checkout of fanout: pip install -e '.[redis]')"
            ) from exc
        if limits.rpm is None and limits.tpm is None:
            raise ConfigError(
                "a redis backend shares configured limits: give Limits(rpm=..., tpm=...)"
            )
        self._limits = limits
        self._url = url
        self._redis: Any = redis_asyncio.from_url(url, socket_connect_timeout=5, socket_timeout=10)
        self._prefix = f"fanout:{namespace}"
        window = limits.smoothing_s or 1.0
        self._rpm = limits.rpm * limits.headroom if limits.rpm else None
        self._tpm = limits.tpm * limits.headroom if limits.tpm else None
        self._req_interval = 60_000.0 / self._rpm if self._rpm else 0.0
        self._tok_interval = 60_000.0 / self._tpm if self._tpm else 0.0
        self._req_burst = max(1.0, self._rpm * window / 60 / 2) if self._rpm else 0.0
        self._tok_burst = max(1.0, self._tpm * window / 60 / 2) if self._tpm else 0.0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._scripts: dict[str, Any] = {}
        self._paused_until = 0.0  # local view of the shared pause, for reports

    def __repr__(self) -> str:
        host = self._url.split("@")[-1]  # never show a password
        return f"<RedisLimiter {host} rpm={self._rpm} tpm={self._tpm}>"

    async def _call(self, name: str, script: str, keys: list[str], args: list[Any]) -> float:
        if name not in self._scripts:
            self._scripts[name] = self._redis.register_script(script)
        from redis import exceptions as redis_errors

        try:
            result = await self._scripts[name](keys=keys, args=args)
        except (OSError, redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
            raise RedisUnavailableError(f"cannot reach redis for the shared limits: {exc}") from exc
        except redis_errors.RedisError as exc:
            raise RedisUnavailableError(f"redis error in the shared limits: {exc}") from exc
        return float(result.decode() if isinstance(result, bytes) else result)

    async def check(self) -> None:
        """Fail now, with a clear error, if redis cannot be reached."""
        await self._call("pause_left", _PAUSE_LEFT, [f"{self._prefix}:pause"], [])

    # --- the RateLimiter interface -------------------------------------------------------
    async def acquire(self, tokens: int) -> float:
        start = time.monotonic()
        await self._wait_pause()
        if self._rpm:
            wait = await self._call("reserve", _RESERVE, [f"{self._prefix}:requests"],
                                    [self._req_interval, self._req_burst, 1])  # fmt: skip
            if wait > 0:
                await asyncio.sleep(wait / 1000)
        if self._tpm and tokens > 0:
            cost = min(float(tokens), self._tok_burst)  # a large request waits for a full bucket
            wait = await self._call("reserve", _RESERVE, [f"{self._prefix}:tokens"],
                                    [self._tok_interval, self._tok_burst, cost])  # fmt: skip
            if tokens > cost:
                self._spawn(self._call("adjust", _ADJUST, [f"{self._prefix}:tokens"],
                                       [self._tok_interval, tokens - cost]))  # fmt: skip
            if wait > 0:
                await asyncio.sleep(wait / 1000)
        await self._wait_pause()
        return time.monotonic() - start

    async def _wait_pause(self) -> None:
        while True:
            left = await self._call("pause_left", _PAUSE_LEFT, [f"{self._prefix}:pause"], [])
            if left <= 0:
                return
            self._paused_until = time.monotonic() + left / 1000
            await asyncio.sleep(left / 1000)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def settle(self, reserved: int, used: int | None) -> None:
        if not self._tpm:
            return
        delta = -reserved if used is None else used - reserved
        if delta:
            self._spawn(
                self._call(
                    "adjust", _ADJUST, [f"{self._prefix}:tokens"], [self._tok_interval, delta]
                )
            )

    def observe(self, headers: Mapping[str, str]) -> None:
        remaining = headers.get("x-ratelimit-remaining-requests")
        limit = headers.get("x-ratelimit-limit-requests")
        if remaining is not None and limit:
            try:
                left, per_minute = float(remaining), float(limit)
            except ValueError:
                return
            if left < 1 and per_minute > 0:
                reset = parse_duration(headers.get("x-ratelimit-reset-requests") or "") or 0.0
                self.cool_down(min(reset, 60.0 / per_minute))

    def cool_down(self, seconds: float) -> None:
        if seconds <= 0:
            return
        self._paused_until = max(self._paused_until, time.monotonic() + seconds)
        self._spawn(self._call("pause", _PAUSE, [f"{self._prefix}:pause"], [seconds * 1000]))

    def state(self) -> LimitState:
        return LimitState(
            rpm=self._rpm,
            tpm=self._tpm,
            rpm_learned=False,
            tpm_learned=False,
            window_s=self._limits.smoothing_s or 1.0,
            paused_for_s=max(0.0, self._paused_until - time.monotonic()),
        )

    def budget(self) -> Budget:
        # Other processes share the budget: assume one burst is free now.
        return Budget(
            requests_now=self._req_burst if self._rpm else math.inf,
            tokens_now=self._tok_burst if self._tpm else math.inf,
            rpm=self._rpm,
            tpm=self._tpm,
            paused_s=max(0.0, self._paused_until - time.monotonic()),
        )

    async def aclose(self) -> None:
        for task in list(self._tasks):
            task.cancel()
        await self._redis.aclose()
