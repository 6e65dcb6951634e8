"""Configuration of the simulated server."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core.money import SIMULATOR_MODEL

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping

__all__ = ["BATCH_LINE_DAMAGE", "FAULT_KINDS", "SimConfig"]

#: The round-trip probes ``fanout profile`` sends (kept equal to
#: ``fanout.endpoint.profile.RTT_PROBE`` by a test; the simulator imports nothing from the library).
_RTT_PROBES = ("Say one word (0).", "Say one word (1).", "Say one word (2).")

#: Every fault the simulator can inject, by name.
FAULT_KINDS: tuple[str, ...] = (
    "500",  # internal server error
    "502",  # bad gateway
    "503",  # service unavailable
    "408",  # request timeout
    "429",  # rate_limit_exceeded with retry-after 1 s (model time), whatever the limits
    "reset",  # TCP connection reset after the request was read
    "hang",  # never answer; the client has to give up
    "malformed",  # 200 with a body that is not JSON
    "stream_cut",  # SSE stream closed before `[DONE]` (non-streaming: body cut short)
)

#: How a line of a batch's output file can be damaged (``SimConfig.batch_damaged_lines``).
BATCH_LINE_DAMAGE: tuple[str, ...] = (
    "torn",  # cut short after its custom_id: {"id":...,"custom_id":"...","response"
    "array",  # [1, 2]
    "string",  # "str"
    "null",  # null
)


@dataclass(frozen=True, kw_only=True)
class SimConfig:
    """Everything the simulated server does, with defaults calibrated to a hosted
    mid-size model behind a continuous-batching engine.

    Times are in seconds of *model time*; the server runs them ``time_scale``
    times faster (rate-limit windows and ``retry-after`` headers included).
    """

    # --- timing model -------------------------------------------------------
    step_s: float = 0.015
    """Decode step time at batch size 1 (reading the weights once)."""
    step_per_seq_s: float = 0.0004
    """Extra step time for every running sequence beyond the first (~2.7 %)."""
    step_per_kv_token_s: float = 1e-6
    """Extra step time per token held in the KV cache (attention reads)."""
    prefill_tokens_per_s: float = 5000.0
    """Prefill speed: prompt tokens processed per second before the first token."""
    prefix_cache: bool = False
    """Reuse the work of a prompt's start that matches one of the last 64 prompts
    prefilled in an earlier step (llama.cpp's slots, vLLM's automatic prefix caching
    and hosted prompt caching do): only the rest is prefilled, and
    ``usage.prompt_tokens_details.cached_tokens`` says how much was reused."""
    slots: int = 256
    """Maximum running sequences. ``slots=1`` models a server that does not batch."""
    kv_capacity_tokens: int = 2_000_000
    """KV-cache capacity. A request reserves prompt + answer tokens at admission."""
    rtt_s: float = 0.15
    """Network round trip added to every request (half before, half after)."""
    stream_chunk_tokens: int = 1
    """While a streaming request runs, the engine wakes at least every this many steps."""
    time_scale: float = 1.0
    """Run everything this many times faster."""

    # --- content --------------------------------------------------------------
    answer_tokens: int | Callable[[str], int] = 200
    """Answer length in tokens: a number, or a function of the question text.
    A hint in the question, ``{{tokens=N}}``, overrides both."""
    model: str = SIMULATOR_MODEL
    """Model name listed by ``GET /v1/models`` (any name is accepted in requests)."""
    supports_response_format: bool = True
    """False: refuse ``response_format`` with 400, like an endpoint without
    structured outputs."""
    max_context_tokens: int = 128_000
    """Requests whose prompt exceeds this are refused with 400 ``context_length_exceeded``."""

    # --- access -------------------------------------------------------------------
    api_key: str | None = None
    """The only API key accepted, or None to accept any. Another key (or none) gets
    401 ``invalid_api_key``, with the hosted API's error body."""

    # --- limits (per API key) ---------------------------------------------------
    rpm: int | None = None
    """Requests per minute, or None for no limit. With ``time_scale`` the minute is a
    model minute; the ``x-ratelimit-limit-*`` headers report the limit per *wall*
    minute (``rpm * time_scale``), which is what a client has to pace itself to."""
    tpm: int | None = None
    """Tokens per minute (prompt + ``max_tokens`` x ``n`` charged at admission), or None."""
    limit_period_s: float = 60.0
    """Length of the window the per-minute limits are policed over. 60 lets a whole
    minute's budget go in one burst; 1 polices ``rpm/60`` per second."""
    limit_policing: str = "bucket"
    """How a window is policed: ``"bucket"`` (a token bucket holding one window's
    budget, refilled continuously) or ``"sliding"`` (at most one window's budget in
    any window: a sliding log, stricter, as many hosted APIs do)."""
    reset_header: str = "empty"
    """What ``x-ratelimit-reset-*`` reports: ``"empty"`` (OpenAI's documented meaning:
    the time until the limit is back to its initial state, the window empty) or
    ``"oldest"`` (the time until the *oldest* entry leaves the window, as some gateways
    and proxies report it: only that entry's share is free then; with a bucket, the
    time until one more unit is free)."""
    quota_tokens: int | None = None
    """Total tokens the key may ever use; beyond it every request gets 429
    ``insufficient_quota``."""

    # --- flex processing (``service_tier="flex"``) ------------------------------------
    flex_refusal_rate: float = 0.0
    """Probability that a ``service_tier="flex"`` request is refused with 429
    ``resource_unavailable`` (no capacity for flex now; nothing is charged)."""
    flex_extra_latency_s: float = 0.0
    """Extra time a flex request waits before it is answered (flex is slower)."""

    # --- files and batches (``/v1/files``, ``/v1/batches``; see ``_batches.py``) -------
    file_upload_s: float = 0.0
    """Time an upload takes once its bytes are in, before the file object is returned."""
    file_download_s: float = 0.0
    """Time a file's content takes to come back."""
    batch_validate_s: float = 1.0
    """A batch is ``validating`` this long after its creation."""
    batch_completion_s: float = 1800.0
    """A batch's requests are answered this long after its creation (``in_progress``
    until then)."""
    batch_finalize_s: float = 2.0
    """Then ``finalizing`` this long, then ``completed``."""
    batch_window_s: float = 86_400.0
    """The completion window (24 h): a batch not done by then expires."""
    batch_expiries: int = 0
    """The first this many batches created expire at ``batch_window_s``, half of their
    requests answered, the others in the error file as ``batch_expired``."""
    batch_failure_rate: float = 0.0
    """Probability that one request of a batch fails (a 500 in the error file)."""
    batch_max_requests: int = 50_000
    """Most requests in one batch input file (a batch with more fails validation)."""
    batch_max_bytes: int = 200 * 1024 * 1024
    """Largest batch input file (bytes)."""
    batch_damaged_lines: Mapping[int, str] = field(default_factory=dict)
    """Lines of the first batch's output file (by line number, 1-based) written damaged,
    each as its kind in ``BATCH_LINE_DAMAGE`` says: ``{4: "torn"}`` cuts the fourth line
    short (a request answered, its line unreadable)."""

    # --- faults -------------------------------------------------------------------
    fault_rates: Mapping[str, float] = field(default_factory=dict)
    """Probability of each fault kind (see ``FAULT_KINDS``) per request."""
    fault_schedule: Mapping[int, str] = field(default_factory=dict)
    """Faults on given request numbers (1-based, in arrival order)."""
    seed: int = 0
    """Seed of the fault dice."""

    def __post_init__(self) -> None:
        positive = {
            "step_s": self.step_s,
            "prefill_tokens_per_s": self.prefill_tokens_per_s,
            "time_scale": self.time_scale,
            "limit_period_s": self.limit_period_s,
        }
        for name, value in positive.items():
            if not value > 0:
                raise ValueError(f"SimConfig.{name} must be > 0, got {value!r}")
        non_negative = {
            "flex_extra_latency_s": self.flex_extra_latency_s,
            "file_upload_s": self.file_upload_s,
            "file_download_s": self.file_download_s,
            "batch_validate_s": self.batch_validate_s,
            "batch_completion_s": self.batch_completion_s,
            "batch_finalize_s": self.batch_finalize_s,
            "batch_window_s": self.batch_window_s,
            "step_per_seq_s": self.step_per_seq_s,
            "step_per_kv_token_s": self.step_per_kv_token_s,
            "rtt_s": self.rtt_s,
        }
        for name, value in non_negative.items():
            if value < 0:
                raise ValueError(f"SimConfig.{name} must be >= 0, got {value!r}")
        if self.api_key is not None and (not isinstance(self.api_key, str) or not self.api_key):
            raise ValueError("SimConfig.api_key must be a non-empty string or None")
        if self.stream_chunk_tokens < 1:
            raise ValueError("SimConfig.stream_chunk_tokens must be >= 1")
        if self.slots < 1:
            raise ValueError(f"SimConfig.slots must be >= 1, got {self.slots!r}")
        if self.kv_capacity_tokens < 1:
            raise ValueError("SimConfig.kv_capacity_tokens must be >= 1")
        if self.limit_policing not in ("bucket", "sliding"):
            raise ValueError(
                f"SimConfig.limit_policing must be 'bucket' or 'sliding', got {self.limit_policing!r}"
            )
        if self.reset_header not in ("empty", "oldest"):
            raise ValueError(
                f"SimConfig.reset_header must be 'empty' or 'oldest', got {self.reset_header!r}"
            )
        for name, limit in (("rpm", self.rpm), ("tpm", self.tpm)):
            if limit is not None and limit < 1:
                raise ValueError(f"SimConfig.{name} must be >= 1 or None, got {limit!r}")
        for name, rate in (
            ("flex_refusal_rate", self.flex_refusal_rate),
            ("batch_failure_rate", self.batch_failure_rate),
        ):
            if not 0 <= rate <= 1:
                raise ValueError(f"SimConfig.{name} must be in [0, 1], got {rate!r}")
        if self.batch_expiries < 0 or self.batch_max_requests < 1 or self.batch_max_bytes < 1:
            raise ValueError("SimConfig.batch_expiries must be >= 0, batch_max_* >= 1")
        for number, damage in self.batch_damaged_lines.items():
            if isinstance(number, bool) or not isinstance(number, int) or number < 1:
                raise ValueError(
                    f"SimConfig.batch_damaged_lines: line {number!r} must be an int >= 1"
                )
            if damage not in BATCH_LINE_DAMAGE:
                raise ValueError(
                    f"unknown batch line damage {damage!r} for line {number}; "
                    f"known: {', '.join(BATCH_LINE_DAMAGE)}"
                )
        for kind, rate in self.fault_rates.items():
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(FAULT_KINDS)}")
            if not 0 <= rate <= 1:
                raise ValueError(f"fault rate for {kind!r} must be in [0, 1], got {rate!r}")
        if sum(self.fault_rates.values()) > 1:
            raise ValueError("fault rates add up to more than 1")
        for number, kind in self.fault_schedule.items():
            if kind not in FAULT_KINDS:
                raise ValueError(f"unknown fault kind {kind!r} scheduled for request {number}")

    @classmethod
    def from_profile(cls, profile: Any, **overrides: Any) -> SimConfig:
        """A simulator that imitates a profiled endpoint (``fanout profile``): its
        decode speed, slots and slowdown per stream decoding together, prefill and
        prefix caching, attention cost and round trip."""
        from ._prompt import PrefixCache, read_prompt

        step = profile.decode_s_per_token
        prefill_s = profile.prefill_s_per_token
        values: dict[str, Any] = {
            "step_s": step,
            "step_per_seq_s": step * profile.batch_slowdown,
            "step_per_kv_token_s": getattr(profile, "kv_s_per_token", 0.0),
            "prefill_tokens_per_s": 1.0 / prefill_s if prefill_s > 0 else 1e9,
            "prefix_cache": bool(getattr(profile, "prefix_cache", False)),
            "model": profile.model,
        }
        if profile.parallel_slots is not None:
            values["slots"] = profile.parallel_slots
        # The measured round trip is overhead + prefill of the probe + one step; the
        # simulator adds its own prefill and step to ``rtt_s``, so take them out.
        cache = PrefixCache() if values["prefix_cache"] else None
        uncached = []
        for probe in _RTT_PROBES:
            prompt, _, tokens = read_prompt([{"role": "user", "content": probe}])
            uncached.append(tokens - (cache.lookup(prompt, tokens) if cache else 0))
        probe_prefill = sorted(uncached)[1] * prefill_s
        values["rtt_s"] = max(0.0, profile.rtt_s - step - probe_prefill)
        values.update(overrides)
        return cls(**values)

    def scaled(self, seconds: float) -> float:
        """Model seconds to wall-clock seconds."""
        return seconds / self.time_scale
