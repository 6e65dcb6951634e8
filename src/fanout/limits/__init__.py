"""Rate limiters: the local one, the one shared through redis, and the interface both
implement (pass your own to ``Fanout(limiter=...)``). Configure them with
:class:`fanout.Limits`."""

from __future__ import annotations

from ..core.config import Limits as Limits
from ._local import LimitState as LimitState
from ._local import LocalLimiter as LocalLimiter
from ._local import RateLimiter as RateLimiter
from ._local import parse_duration as parse_duration
from ._redis import RedisLimiter as RedisLimiter
from ._redis import RedisUnavailableError as RedisUnavailableError

__all__ = [
    "LimitState",
    "Limits",
    "LocalLimiter",
    "RateLimiter",
    "RedisLimiter",
    "RedisUnavailableError",
    "parse_duration",
]
