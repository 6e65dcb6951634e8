"""Measuring an endpoint: round trip, first token, decode speed, and parallel scaling.

``await fo.profile()`` (``fanout profile`` on the command line) spends a small,
capped number of requests to measure the endpoint behind a ``Fanout``:

1. the round trip of a one-token answer (three requests, the median);
2. the time to first token and the decode time per token of one stream;
3. for 1, 2, 4, 8 and 16 concurrent streams of the same length: how long the
   slowest of them takes, as a factor of one stream alone (about 1 on a server that
   decodes them together, about k on one that takes them one at a time).

The result, an :class:`EndpointProfile`, prints as a readable summary, saves to
JSON, seeds a ``Fanout``'s endpoint model (``EndpointModel.from_profile``), and
configures the simulator to imitate the endpoint (``fanout.sim.SimConfig.from_profile``).
"""

from __future__ import annotations

import asyncio
import json
import math
import statistics
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._engine import Fanout

__all__ = ["EndpointProfile", "profile_endpoint"]


@dataclass
class EndpointProfile:
    """What ``profile`` measured (seconds; no API key is ever stored)."""

    model: str
    base_url: str
    rtt_s: float
    """Latency of a one-token answer: network, scheduling, prefill of a tiny prompt."""
    ttft_s: float
    """Time to the first token of a streamed answer."""
    decode_s_per_token: float
    """Decode time per token of a single stream."""
    prefill_s_per_token: float
    """Extra time to first token per prompt token (from a long-prompt request)."""
    kv_s_per_token: float = 0.0
    """Extra decode time per token per token already in the context (attention reads)."""
    scaling: dict[int, float] = field(default_factory=dict)
    """Concurrent streams -> time of the slowest, as a factor of one stream alone."""
    requests_used: int = 0

    def _fit(self) -> tuple[int, float]:
        """(slots, slowdown): the model ``f(k) = ceil(k / slots) * (1 + slowdown *
        (min(k, slots) - 1))`` that best fits the measured scaling."""
        points = [(k, f) for k, f in self.scaling.items() if k > 1]
        if not points:
            return 1, 0.0
        fits: dict[int, tuple[float, float]] = {}  # slots -> (error, slowdown)
        for slots in range(1, max(k for k, _ in points) + 1):
            for step in range(0, 101):
                beta = step / 100
                err = sum(
                    (math.ceil(k / slots) * (1 + beta * (min(k, slots) - 1)) - f) ** 2
                    for k, f in points
                )
                if slots not in fits or err < fits[slots][0]:
                    fits[slots] = (err, beta)
        # A few points fit several models: take the fewest slots that fit about as
        # well as the best.
        best = min(err for err, _ in fits.values())
        for slots in sorted(fits):
            err, beta = fits[slots]
            if err <= 1.25 * best + 0.05:
                return slots, beta
        return 1, 0.0  # pragma: no cover

    @property
    def parallel_slots(self) -> int:
        """How many requests the endpoint runs at once (fitted to the scaling)."""
        return self._fit()[0]

    @property
    def batch_slowdown(self) -> float:
        """Slowdown of each running stream per extra stream in the batch."""
        return self._fit()[1]

    @property
    def slowdown_per_request(self) -> float:
        """Extra time per additional concurrent request, as a fraction of one alone
        (0: perfect batching; 1: one at a time): the least-squares slope of the
        measured scaling."""
        points = [(k, f) for k, f in self.scaling.items() if k > 1]
        if not points:
            return 0.0
        num = sum((f - 1) * (k - 1) for k, f in points)
        den = sum((k - 1) ** 2 for k, _ in points)
        return max(0.0, num / den)

    def summary(self) -> str:
        lines = [
            f"endpoint {self.base_url} model {self.model} ({self.requests_used} requests)",
            f"  round trip (1-token answer): {self.rtt_s * 1000:.0f} ms",
            f"  time to first token:         {self.ttft_s * 1000:.0f} ms",
            f"  decode, one stream:          {self.decode_s_per_token * 1000:.1f} ms/token "
            f"({1 / self.decode_s_per_token:.0f} tokens/s)",
            f"  prefill:                     {self.prefill_s_per_token * 1e6:.0f} us/prompt token",
            "  concurrent streams -> slowest takes (x one alone), aggregate tokens/s:",
        ]
        for k, f in sorted(self.scaling.items()):
            rate = k / (f * self.decode_s_per_token)
            lines.append(f"    {k:>3} -> {f:5.2f}x   {rate:8.0f} tokens/s")
        kind = (
            "runs concurrent requests in parallel"
            if self.slowdown_per_request < 0.5
            else "does not parallelise: requests take turns"
        )
        lines.append(f"  slowdown per extra request {self.slowdown_per_request:.2f}: the endpoint {kind} "
                     f"(fitted: {self.parallel_slots} at once, each {self.batch_slowdown:.2f} slower "
                     f"per extra one)")  # fmt: skip
        return "\n".join(lines)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> EndpointProfile:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        data["scaling"] = {int(k): float(v) for k, v in data.get("scaling", {}).items()}
        return cls(**data)


async def _stream_timing(fo: Fanout, params: dict[str, Any]) -> tuple[float, float, int, int]:
    """(time to first content, time from first to last content, completion tokens,
    prompt tokens); the times are from the moment the request was made."""
    start = time.monotonic()
    first = last = None
    tokens = prompt = 0
    async for chunk in fo._stream_chunks(params, fo.retry):
        now = time.monotonic()
        if chunk.usage is not None:
            tokens = chunk.usage.completion_tokens
            prompt = chunk.usage.prompt_tokens
        for choice in chunk.choices:
            # A token may arrive as an empty delta (bytes of a character not yet
            # complete): every chunk before the final one counts as a token.
            if choice.finish_reason is None and (
                choice.delta.content is not None or first is not None
            ):
                if first is None:
                    first = now
                last = now
    if first is None or last is None:
        raise RuntimeError("the endpoint streamed no tokens")
    return first - start, last - first, tokens, prompt


async def profile_endpoint(
    fo: Fanout,
    *,
    model: str | None = None,
    max_requests: int = 40,
    tokens: int = 64,
    levels: tuple[int, ...] = (1, 2, 4, 8, 16),
    extra_body: dict[str, Any] | None = None,
) -> EndpointProfile:
    """Measure the endpoint behind ``fo`` within ``max_requests`` requests (see the
    module docstring). ``extra_body`` is sent with every request (for example
    ``{"ignore_eos": True}`` so a local server writes exactly ``tokens`` tokens)."""
    model = model or fo.model
    if not model:
        raise ValueError("profile needs a model")
    budget = max_requests
    extra = {"extra_body": extra_body} if extra_body else {}

    def params(content: str, max_tokens: int) -> dict[str, Any]:
        return {"model": model, "messages": [{"role": "user", "content": content}],
                "max_tokens": max_tokens, **extra}  # fmt: skip

    # 1. Round trip of a one-token answer.
    rtts = []
    for i in range(min(3, budget)):
        start = time.monotonic()
        await fo._client.chat.completions.create(**params(f"Say one word ({i}).", 1))
        rtts.append(time.monotonic() - start)
    budget -= len(rtts)
    # 2. One stream: first token and decode speed; and a long prompt for prefill.
    ttft, span, got, short_prompt = await _stream_timing(fo, params("Write a long story.", tokens))
    decode = span / max(1, got - 1)
    # About 1,200 characters: a few hundred tokens for most tokenizers, and within the
    # context of a small local server even when every byte is a token.
    long_prompt = "Summarize this text. " + "The quick brown fox jumps over the lazy dog. " * 26
    ttft_long, span_long, got_long, long_tokens = await _stream_timing(
        fo, params(long_prompt, tokens)
    )
    budget -= 2
    extra_tokens = max(
        1, (long_tokens - short_prompt) if long_tokens > short_prompt else len(long_prompt) // 4
    )
    prefill = max(0.0, ttft_long - ttft) / extra_tokens
    kv = max(0.0, span_long / max(1, got_long - 1) - decode) / extra_tokens
    # 3. Scaling with concurrent streams, as far as the budget goes.
    alone = ttft + span
    scaling: dict[int, float] = {1: 1.0}
    for k in levels:
        if k == 1 or k > budget:
            continue
        results = await asyncio.gather(
            *[_stream_timing(fo, params(f"Story number {i}.", tokens)) for i in range(k)]
        )
        budget -= k
        slowest = max(first + rest for first, rest, _, _ in results)
        scaling[k] = slowest / alone if alone > 0 else 1.0
    base_url = str(getattr(fo.client, "base_url", ""))
    return EndpointProfile(
        model=model,
        base_url=base_url,
        rtt_s=statistics.median(rtts),
        ttft_s=ttft,
        decode_s_per_token=decode,
        prefill_s_per_token=prefill,
        kv_s_per_token=kv,
        scaling=scaling,
        requests_used=max_requests - budget,
    )
