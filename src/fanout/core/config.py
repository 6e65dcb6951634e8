"""Configuration objects: small, frozen, keyword-only, validated on creation."""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from datetime import timedelta

from .exceptions import ConfigError
from .redact import mask_url

__all__ = ["DEFAULT_MAX_GROUP_SIZE", "Limits", "Policy", "Retry"]

DEFAULT_MAX_GROUP_SIZE = 6
"""Questions per merged request unless a ``Policy`` says otherwise. Nothing in fanout
measures answer quality, so the default is the safe one: research on batch prompting
kept accuracy at about six questions per prompt (Cheng et al., 2023) and saw it fall
as batches grow (Lin et al., BatchPrompt, 2023)."""


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _check_positive(owner: str, name: str, value: float | None, *, allow_none: bool) -> None:
    if value is None:
        if not allow_none:
            raise ConfigError(f"{owner}.{name} is required")
        return
    if not _is_number(value):
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
    """Deprecated, no effect: fanout paces requests evenly and bursts only where the
    endpoint's headers report room (see docs/limits.md). Setting it warns."""
    headroom: float = 1.0
    """Fraction of the limits to use (0.9 keeps 10 % spare for other clients)."""
    backend: str | None = None
    """Where the budgets live: None for this process only, or a redis URL
    (``redis://host:6379/0``) to share them with every process using it."""
    namespace: str = "default"
    """Separates budgets in a shared backend (one per API key, say)."""
    fallback_local: bool = False
    """With a redis backend that cannot be reached: fall back to local limits
    (with a warning) instead of failing."""

    def __post_init__(self) -> None:
        _check_positive("Limits", "rpm", self.rpm, allow_none=True)
        _check_positive("Limits", "tpm", self.tpm, allow_none=True)
        _check_positive("Limits", "smoothing_s", self.smoothing_s, allow_none=True)
        if self.smoothing_s is not None:
            warnings.warn(
                "Limits(smoothing_s=...) has no effect any more and will be removed: fanout "
                "paces evenly and bursts only where the endpoint reports room",
                DeprecationWarning,
                stacklevel=3,
            )
        if isinstance(self.max_concurrency, bool) or not isinstance(self.max_concurrency, int):
            raise ConfigError("Limits.max_concurrency must be an int")
        if self.max_concurrency < 1:
            raise ConfigError(f"Limits.max_concurrency must be >= 1, got {self.max_concurrency!r}")
        if not (_is_number(self.headroom) and 0 < self.headroom <= 1):
            raise ConfigError(f"Limits.headroom must be a number in (0, 1], got {self.headroom!r}")
        if not isinstance(self.namespace, str) or not self.namespace:
            raise ConfigError(f"Limits.namespace must be a non-empty str, got {self.namespace!r}")
        if not isinstance(self.fallback_local, bool):
            raise ConfigError(
                f"Limits.fallback_local must be True or False, got {self.fallback_local!r}"
            )
        if self.backend is not None and not str(self.backend).startswith(
            ("redis://", "rediss://", "unix://")
        ):
            raise ConfigError(
                f"Limits.backend must be a redis URL (redis://...), got {self.backend!r}"
            )

    def __repr__(self) -> str:
        """The dataclass repr, with the backend's password masked (``redis://:***@host``)."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if isinstance(self.backend, str):
            values["backend"] = mask_url(self.backend)
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in values.items())})"


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
    attempt_timeout: float | str | None = "auto"
    """How long one attempt may run before it is abandoned and retried: seconds;
    ``"auto"``: ``attempt_timeout_factor`` times what the endpoint model expects for
    the request (its prompt, and ``max_tokens`` or else four times the longer of the
    answers seen so far and the reply's expected length), never less than
    ``min_attempt_timeout``, doubled after each abandoned attempt of the request (at
    most twice); None: only the client's own timeout (the SDK's default is 600 s).
    Never past ``max_elapsed``."""
    min_attempt_timeout: float = 30.0
    """The floor of the ``"auto"`` deadline: a hosted API's slow first token is no hang."""
    attempt_timeout_factor: float = 4.0
    budget: float = 0.4
    """Share of recent attempts that may be prompt retries (sent again at once, while
    failures are sporadic); past it, and when failures cluster, retries back off
    exponentially. 0: every retry backs off."""

    def __post_init__(self) -> None:
        if isinstance(self.max_attempts, bool) or not isinstance(self.max_attempts, int):
            raise ConfigError("Retry.max_attempts must be an int")
        if self.max_attempts < 1:
            raise ConfigError(f"Retry.max_attempts must be >= 1, got {self.max_attempts!r}")
        _check_positive("Retry", "max_wait", self.max_wait, allow_none=False)
        _check_positive("Retry", "initial_wait", self.initial_wait, allow_none=False)
        _check_positive("Retry", "max_elapsed", self.max_elapsed, allow_none=True)
        if self.attempt_timeout != "auto":
            _check_positive("Retry", "attempt_timeout", self.attempt_timeout, allow_none=True)  # type: ignore[arg-type]
        _check_positive("Retry", "min_attempt_timeout", self.min_attempt_timeout, allow_none=False)
        _check_positive(
            "Retry", "attempt_timeout_factor", self.attempt_timeout_factor, allow_none=False
        )
        if not (isinstance(self.budget, (int, float)) and 0 <= self.budget <= 1):
            raise ConfigError(f"Retry.budget must be in [0, 1], got {self.budget!r}")


MODES = ("auto", "split", "merge")
OBJECTIVES = ("latency", "cost")
MERGE_FORMATS = ("auto", "json", "text")


DEFAULT_MERGE_AGREEMENT = 0.75
"""How often merged answers must agree with split ones for auto to merge (see
``Policy.merge_agreement``)."""

MERGE_CHECK_SAMPLE = 4
"""Questions a merge check asks both alone and merged."""

MERGE_CHECK_MIN = 4
"""Answers compared before the agreement counts as known."""

SPOT_CHECK_EVERY = 4
"""Once the merge checks have established that merged answers agree (at 95 %
confidence, ``engine.agreement.established``), auto spot-checks one merged group in
this many instead of every one."""


@dataclass(frozen=True, kw_only=True)
class Policy:
    """How to turn questions into requests: one each (split), one for all (merge),
    or groups in between, chosen per call by a cost model (auto).

    ``mode``: ``"auto"`` (default) estimates the wall time and the token cost of
    candidate plans and picks one; ``"split"`` sends every question alone;
    ``"merge"`` sends them in merged requests of at most ``max_group_size``
    questions.

    ``max_group_size``: most questions in one merged request, 6 by default
    (:data:`DEFAULT_MAX_GROUP_SIZE`: large merges cost answer accuracy, and fanout
    cannot see accuracy); ``None`` lifts the cap. When the cap makes the chosen plan
    much slower than an uncapped one would be, the plan's reason says so.

    ``objective`` (auto only): ``"latency"`` picks the fastest plan, breaking
    near-ties (within ``latency_slack``, default 5 %) by cost; ``"cost"`` picks the
    cheapest plan whose estimated time is within ``latency_slack`` (default 25 %)
    of the fastest.

    ``expected_tokens``: the expected length of one answer, when you know it
    better than the history of this ``Fanout`` does (a per-question
    ``Question.expected_tokens`` wins over it).

    ``merge_format``: how a merged request asks for its answers: ``"json"`` (a
    JSON-schema structured output), ``"text"`` (tagged sections), or ``"auto"``:
    JSON, falling back to text for good on an endpoint that refuses
    ``response_format``.

    ``merge_agreement`` (auto only): merge only where merged answers have been seen to
    say what split answers of the same questions say, at least this often (0.75 by
    default). Before auto first relies on merging for an endpoint and model (and
    format), it checks: up to four questions of the first merged group are asked alone
    (those answers are the ones returned) and merged, once, and the answers compared
    (``fanout.engine.agreement``: a lexical judge for short answers). The result is kept
    in the endpoint memory; below the threshold auto splits, and the plan's reason says
    why. ``None`` turns the check off (auto merges on the clock alone). A forced
    ``mode="merge"`` still merges, and warns when the known agreement is below it.
    """

    mode: str = "auto"
    objective: str = "latency"
    latency_slack: float | None = None
    max_group_size: int | None = DEFAULT_MAX_GROUP_SIZE
    expected_tokens: int | None = None
    merge_format: str = "auto"
    merge_agreement: float | None = DEFAULT_MERGE_AGREEMENT
    deadline: float | timedelta | None = None
    batch_expected_s: float = 3600.0
    flex_slowdown: float = 2.0
    flex_fallback_share: float = 0.05

    def __post_init__(self) -> None:
        if self.deadline is not None and not isinstance(self.deadline, timedelta):
            _check_positive("Policy", "deadline", self.deadline, allow_none=False)
        if isinstance(self.deadline, timedelta) and self.deadline.total_seconds() <= 0:
            raise ConfigError(f"Policy.deadline must be positive, got {self.deadline!r}")
        _check_positive("Policy", "batch_expected_s", self.batch_expected_s, allow_none=False)
        _check_positive("Policy", "flex_slowdown", self.flex_slowdown, allow_none=False)
        if not (_is_number(self.flex_fallback_share) and 0 <= self.flex_fallback_share <= 1):
            raise ConfigError(
                f"Policy.flex_fallback_share must be in [0, 1], got {self.flex_fallback_share!r}"
            )
        if self.mode not in MODES:
            raise ConfigError(f"unknown policy {self.mode!r}; known: {', '.join(MODES)}")
        if self.objective not in OBJECTIVES:
            raise ConfigError(
                f"unknown objective {self.objective!r}; known: {', '.join(OBJECTIVES)}"
            )
        if self.merge_format not in MERGE_FORMATS:
            raise ConfigError(
                f"unknown merge_format {self.merge_format!r}; known: {', '.join(MERGE_FORMATS)}"
            )
        if self.latency_slack is not None and not (
            isinstance(self.latency_slack, (int, float)) and 0 <= self.latency_slack <= 10
        ):
            raise ConfigError(
                f"Policy.latency_slack must be in [0, 10], got {self.latency_slack!r}"
            )
        if self.merge_agreement is not None and not (
            isinstance(self.merge_agreement, (int, float))
            and not isinstance(self.merge_agreement, bool)
            and 0 <= self.merge_agreement <= 1
        ):
            raise ConfigError(
                f"Policy.merge_agreement must be in [0, 1] or None, got {self.merge_agreement!r}"
            )
        for name in ("max_group_size", "expected_tokens"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int) or value < 1
            ):
                raise ConfigError(f"Policy.{name} must be a positive int or None, got {value!r}")

    @property
    def deadline_s(self) -> float | None:
        """The deadline in seconds (None: none)."""
        if isinstance(self.deadline, timedelta):
            return self.deadline.total_seconds()
        return None if self.deadline is None else float(self.deadline)

    @property
    def slack(self) -> float:
        """The latency slack in force for this objective."""
        if self.latency_slack is not None:
            return float(self.latency_slack)
        return 0.05 if self.objective == "latency" else 0.25

    @classmethod
    def coerce(cls, value: Policy | str) -> Policy:
        """A Policy from a Policy or a mode string."""
        if isinstance(value, Policy):
            return value
        if isinstance(value, str):
            return cls(mode=value)
        raise ConfigError(
            f"policy must be a fanout.Policy or a mode string, not {type(value).__name__}"
        )
