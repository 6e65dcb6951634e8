"""Rate limiters: the local one, the one shared through redis, and the interface both
implement (pass your own to ``Fanout(limiter=...)``). Configure them with
:class:`fanout.Limits`."""

from __future__ import annotations

from ._config import Limits as Limits
from ._limiter import LimitState as LimitState
from ._limiter import LocalLimiter as LocalLimiter
from ._limiter import RateLimiter as RateLimiter
from ._limiter import parse_duration as parse_duration
from ._limiter_redis import RedisLimiter as RedisLimiter
from ._limiter_redis import RedisUnavailableError as RedisUnavailableError

__all__ = [
    "LimitState",
    "Limits",
    "LocalLimiter",
    "RateLimiter",
    "RedisLimiter",
    "RedisUnavailableError",
    "parse_duration",
]
