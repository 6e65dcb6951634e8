"""What the simulated server saw."""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["RequestRecord", "SimStats"]


@dataclass
class RequestRecord:
    """One request, as the server saw it. Times are wall seconds since the server started."""

    number: int
    arrival: float
    api_key: str = ""
    stream: bool = False
    admitted: float | None = None
    first_token: float | None = None
    finished: float | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    questions: int = 1
    status: int | None = None
    error_code: str | None = None
    fault: str | None = None
    api: str = "chat"
    """The API it came through: ``"chat"`` (``/v1/chat/completions``) or ``"responses"``."""
    disconnected: bool = False
    service_tier: str | None = None
    """The ``service_tier`` the request asked for (``"flex"``), None if it named none."""


@dataclass
class SimStats:
    """Counters and per-request records; ``GET /sim/stats`` serves the same data."""

    requests: list[RequestRecord] = field(default_factory=list)
    in_flight: int = 0
    peak_in_flight: int = 0
    peak_running: int = 0
    peak_kv_tokens: int = 0
    rate_limited: int = 0
    quota_exceeded: int = 0
    faults: Counter[str] = field(default_factory=Counter)
    unknown_params: Counter[str] = field(default_factory=Counter)

    @property
    def completions(self) -> int:
        """Requests answered with 200."""
        return sum(1 for r in self.requests if r.status == 200)

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": [asdict(r) for r in self.requests],
            "in_flight": self.in_flight,
            "peak_in_flight": self.peak_in_flight,
            "peak_running": self.peak_running,
            "peak_kv_tokens": self.peak_kv_tokens,
            "rate_limited": self.rate_limited,
            "quota_exceeded": self.quota_exceeded,
            "faults": dict(self.faults),
            "unknown_params": dict(self.unknown_params),
            "completions": self.completions,
        }
