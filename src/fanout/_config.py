"""Configuration objects: small, frozen, keyword-only, validated on creation."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._exceptions import ConfigError

__all__ = ["Limits", "Retry"]


def _check_positive(owner: str, name: str, value: float | None, *, allow_none: bool) -> None:
    if value is None:
        if not allow_none:
            raise ConfigError(f"{owner}.{name} is required")
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(f"{owner}.{name} must be a number, got {type(value).__name__}")
    if not math.isfinite(value) or value <= 0:
        raise ConfigError(f"{owner}.{name} must be a positive number, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Limits:
    """How fast fanout may talk to the endpoint.

    ``rpm`` and ``tpm`` are per minute of wall-clock time; ``None`` means
    "unknown": fanout then learns them from the ``x-ratelimit-*`` headers of the
    responses. ``max_concurrency`` caps the requests in flight on one ``Fanout``.
    """

    rpm: float | None = None
    tpm: float | None = None
    max_concurrency: int = 64
    smoothing_s: float | None = None
    """Longest window requests and tokens are spread over. Endpoints often police
    per-minute limits over shorter periods, so fanout never releases a minute's
    budget at once: it starts by pacing requests evenly, learns the endpoint's
    window from the first response's ``x-ratelimit-*`` headers, and then allows
    bursts of up to half of that window's budget. None: use the learned window
    (1 s if the endpoint reports none); a number caps it."""
    headroom: float = 1.0
    """Fraction of the limits to use (0.9 keeps 10 % spare for other clients)."""

    def __post_init__(self) -> None:
        _check_positive("Limits", "rpm", self.rpm, allow_none=True)
        _check_positive("Limits", "tpm", self.tpm, allow_none=True)
        _check_positive("Limits", "smoothing_s", self.smoothing_s, allow_none=True)
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int):
            raise ConfigError("Limits.max_concurrency must be an int")
        if self.max_concurrency < 1:
            raise ConfigError(f"Limits.max_concurrency must be >= 1, got {self.max_concurrency!r}")
        if not 0 < self.headroom <= 1:
            raise ConfigError(f"Limits.headroom must be in (0, 1], got {self.headroom!r}")


@dataclass(frozen=True, kw_only=True)
class Retry:
    """When and how long to retry a failed request.

    Retried: 408, 409, 429 ``rate_limit_exceeded``, 5xx, connection errors,
    timeouts and unreadable responses. Never retried: other 4xx, and 429
    ``insufficient_quota``. A server-given ``retry-after-ms`` / ``retry-after``
    is honoured (up to ``max_wait``); otherwise the wait grows exponentially
    from ``initial_wait`` with full jitter.
    """

    max_attempts: int = 6
    """Attempts per question, the first included."""
    max_wait: float = 60.0
    """Longest single wait between attempts, in seconds."""
    initial_wait: float = 0.5
    max_elapsed: float | None = None
    """Give up on a question after this many seconds of retrying (None: no bound)."""

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise ConfigError("Retry.max_attempts must be an int")
        if self.max_attempts < 1:
            raise ConfigError(f"Retry.max_attempts must be >= 1, got {self.max_attempts!r}")
        _check_positive("Retry", "max_wait", self.max_wait, allow_none=False)
        _check_positive("Retry", "initial_wait", self.initial_wait, allow_none=False)
        _check_positive("Retry", "max_elapsed", self.max_elapsed, allow_none=True)
