"""Measuring an endpoint: round trip, first token, decode speed, and parallel scaling.

``await fo.profile()`` (``fanout profile`` on the command line) spends a small,
capped number of requests to measure the endpoint behind a ``Fanout``:

1. the round trip of a one-token answer (three requests, the median);
2. the time to first token and the decode time per token of one stream (the
   faster of two);
3. prefill: a long prompt the endpoint has not seen, then the same prompt again
   (much sooner the second time: the endpoint caches prompt prefixes);
4. for 1, 2, 4, 8 and 16 concurrent streams of the same length: how long the
   slowest of them takes, as a factor of one stream alone (about 1 on a server that
   decodes them together, about k on one that takes them one at a time); how many
   of them got their first token before any had finished (the endpoint's slots,
   when some had to wait); and how much slower each token comes when that many
   decode together.

The result, an :class:`EndpointProfile`, prints as a readable summary, saves to
JSON, seeds a ``Fanout``'s endpoint model (``EndpointModel.from_profile``), and
configures the simulator to imitate the endpoint (``fanout.sim.SimConfig.from_profile``).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core import clock
from .model import EndpointModel

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["EndpointProfile", "profile_endpoint"]


#: The prompt of the round-trip probes (``{}`` is the probe's number).
RTT_PROBE = "Say one word ({})."


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
    """Extra time to first token per prompt token (from a long prompt seen for the
    first time)."""
    kv_s_per_token: float = 0.0
    """Extra decode time per token per token already in the context (attention reads)."""
    scaling: dict[int, float] = field(default_factory=dict)
    """Concurrent streams -> time of the slowest, as a factor of one stream alone."""
    decode_scaling: dict[int, float] = field(default_factory=dict)
    """Streams decoding together -> decode time per token of each, as a factor of one
    stream alone (measured on the requests that ran together from the start)."""
    slots: int | None = None
    """How many requests the endpoint ran at once when sent more: the others waited
    for a free slot before their first token. None when no request ever waited
    (the endpoint runs at least as many as the largest level measured)."""
    prefix_cache: bool | None = None
    """Whether a repeated prompt's first token came much sooner than the first time
    (the endpoint reuses the work of a prompt prefix it has seen); None when the
    prefill was too short to tell."""
    requests_used: int = 0

    @property
    def parallel_slots(self) -> int | None:
        """How many requests the endpoint runs at once (None: more than measured)."""
        return self.slots

    @property
    def parallel(self) -> bool:
        """Whether concurrent requests finish sooner than one after another: more
        than one slot, and each extra stream decoding alongside costs clearly less
        than a stream of its own."""
        if self.slots == 1:
            return False
        if any(k > 1 for k in self.decode_scaling):
            return self.batch_slowdown < 0.75
        return self.slowdown_per_request < 0.5

    @property
    def batch_slowdown(self) -> float:
        """Extra decode time per token of each running stream for every other stream
        decoding with it, as a fraction of one stream alone: the least-squares slope
        of ``decode_scaling`` through (1, 1)."""
        return _slope(self.decode_scaling)

    @property
    def slowdown_per_request(self) -> float:
        """Extra time per additional concurrent request, as a fraction of one alone
        (0: perfect batching; 1: one at a time): the least-squares slope of the
        measured scaling."""
        return _slope(self.scaling)

    def summary(self) -> str:
        cache = {
            True: "yes: a repeated prompt is not prefilled again",
            False: "no",
            None: "unknown (prefill too fast to tell)",
        }[self.prefix_cache]
        lines = [
            f"endpoint {self.base_url} model {self.model} ({self.requests_used} requests)",
            f"  round trip (1-token answer): {self.rtt_s * 1000:.0f} ms",
            f"  time to first token:         {self.ttft_s * 1000:.0f} ms",
            f"  decode, one stream:          {self.decode_s_per_token * 1000:.1f} ms/token "
            f"({1 / self.decode_s_per_token:.0f} tokens/s)",
            f"  prefill:                     {self.prefill_s_per_token * 1e6:.0f} us/prompt token",
            f"  prefix cache:                {cache}",
            "  concurrent streams -> slowest takes (x one alone), aggregate tokens/s:",
        ]
        for k, f in sorted(self.scaling.items()):
            rate = k / (f * self.decode_s_per_token)
            lines.append(f"    {k:>3} -> {f:5.2f}x   {rate:8.0f} tokens/s")
        if self.decode_scaling:
            points = ", ".join(f"{k}: {f:.2f}x" for k, f in sorted(self.decode_scaling.items()))
            lines.append(
                f"  decode time per token with k streams running together: {points} "
                f"(+{self.batch_slowdown:.2f} per extra stream)"
            )
        if self.slots is None:
            biggest = max(self.scaling, default=1)
            lines.append(f"  requests at once: at least {biggest} (none waited for a slot)")
        else:
            lines.append(f"  requests at once: {self.slots} (more waited for a free slot)")
        if self.parallel:
            kind = "runs concurrent requests in parallel"
        elif self.slots != 1 and any(k > 1 for k in self.decode_scaling):
            kind = (
                "runs requests at once, but each extra one slows the others almost as"
                " much as a turn of its own"
            )
        else:
            kind = "does not parallelise: requests take turns"
        lines.append(
            f"  slowdown per extra request {self.slowdown_per_request:.2f}: the endpoint {kind}"
        )
        return "\n".join(lines)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> EndpointProfile:
        """Read a profile written by :meth:`save` (``ValueError`` if it is not one)."""
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        try:
            for key in ("scaling", "decode_scaling"):
                data[key] = {int(k): float(v) for k, v in data.get(key, {}).items()}
            return cls(**data)
        except (TypeError, AttributeError) as exc:
            raise ValueError(f"{path} is not a fanout profile: {exc}") from exc


def _slope(factors: dict[int, float]) -> float:
    """The slope, through (1, 1) and not below 0, of factor against k: the median of
    each point's (a Theil-Sen estimate through the fixed point), so that one point a
    burst of load on the machine slowed (a factor of 6 at k = 2 among 0.6-0.7 slopes,
    seen on 2 cores) does not decide it, as it did a least-squares slope."""
    slopes = [(f - 1) / (k - 1) for k, f in factors.items() if k > 1]
    if not slopes:
        return 0.0
    return max(0.0, statistics.median(slopes))


@dataclass(frozen=True)
class _Stream:
    """Timings of one streamed request (seconds on ``clock.now``)."""

    sent: float
    """When its last attempt left (after this Fanout's own cap and rate limits)."""
    first: float
    """When its first content arrived."""
    last: float
    """When its last content arrived."""
    tokens: int
    prompt_tokens: int

    @property
    def ttft(self) -> float:
        return self.first - self.sent

    @property
    def total(self) -> float:
        return self.last - self.sent

    @property
    def per_token(self) -> float:
        return (self.last - self.first) / max(1, self.tokens - 1)


async def _stream_timing(fo: Fanout, params: dict[str, Any]) -> _Stream:
    # Timed from when the request leaves, so waiting for this Fanout's own
    # concurrency cap, rate limits or a retry's back-off is never taken for
    # waiting at the endpoint.
    sent = clock.now()

    def on_send() -> None:
        nonlocal sent
        sent = clock.now()

    first = last = None
    tokens = prompt = 0
    async for chunk in fo._transport.stream_chunks(params, fo.retry, on_send=on_send):
        now = clock.now()
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
    return _Stream(sent, first, last, tokens, prompt)


#: Requests spent before the concurrency levels: three round trips, two streams, a
#: long prompt and the same long prompt again.
MIN_REQUESTS = 7


async def profile_endpoint(
    fo: Fanout,
    *,
    model: str | None = None,
    max_requests: int = 40,
    tokens: int = 64,
    levels: tuple[int, ...] = (1, 2, 4, 8, 16),
    extra_body: dict[str, Any] | None = None,
    adopt: bool = True,
) -> EndpointProfile:
    """Measure the endpoint behind ``fo`` within ``max_requests`` requests (see the
    module docstring). ``extra_body`` is sent with every request (for example
    ``{"ignore_eos": True}`` so a local server writes exactly ``tokens`` tokens).
    With ``adopt``, ``fo`` starts its endpoint model from what was measured."""
    model = model or fo.model
    if not model:
        raise ValueError("profile needs a model")
    if max_requests < MIN_REQUESTS:
        raise ValueError(f"profile needs max_requests >= {MIN_REQUESTS}, got {max_requests}")
    if tokens < 2:
        raise ValueError(f"profile needs tokens >= 2 to time decoding, got {tokens}")
    probe = _Probe(fo, model, tokens, extra_body)
    rtts = await probe.round_trips()
    alone = await probe.alone()
    prefill, kv, prefix_cache = await probe.long_prompt(alone)
    levels_within = tuple(k for k in levels if k != 1 and k <= max_requests - MIN_REQUESTS)
    scaling, decode_scaling, slots, used = await probe.concurrent(
        alone, levels_within, max_requests - MIN_REQUESTS
    )
    result = EndpointProfile(
        model=model,
        base_url=str(getattr(fo.client, "base_url", "")),
        rtt_s=statistics.median(rtts),
        ttft_s=alone.ttft,
        decode_s_per_token=alone.per_token,
        prefill_s_per_token=prefill,
        kv_s_per_token=kv,
        scaling=scaling,
        decode_scaling=decode_scaling,
        slots=slots,
        prefix_cache=prefix_cache,
        requests_used=MIN_REQUESTS + used,
    )
    if adopt:
        fo.endpoint = EndpointModel.from_profile(result)
    return result


class _Probe:
    """The requests a profile sends, one kind of measure each."""

    def __init__(
        self, fo: Fanout, model: str, tokens: int, extra_body: dict[str, Any] | None
    ) -> None:
        self.fo = fo
        self.model = model
        self.tokens = tokens
        self.extra = {"extra_body": extra_body} if extra_body else {}

    def params(self, content: str, max_tokens: int) -> dict[str, Any]:
        return {
            "model": self.model,
            "messages": [{"role": "user", "content": content}],
            "max_tokens": max_tokens,
            **self.extra,
        }

    async def round_trips(self) -> list[float]:
        """1. Round trip of a one-token answer, three times."""
        rtts = []
        for i in range(3):
            start = clock.now()
            await self.fo._transport.client.chat.completions.create(
                **self.params(RTT_PROBE.format(i), 1)
            )
            rtts.append(clock.now() - start)
        return rtts

    async def alone(self) -> _Stream:
        """2. One stream, twice: first token and decode speed. Interference only ever
        slows a stream down, so the faster of the two counts."""
        runs = [await self.stream("Write a long story.") for _ in range(2)]
        return min(runs, key=lambda r: r.total)

    async def stream(self, content: str) -> _Stream:
        return await _stream_timing(self.fo, self.params(content, self.tokens))

    async def long_prompt(self, alone: _Stream) -> tuple[float, float, bool | None]:
        """3. A long prompt, new to the endpoint (a fresh tag at its start), for prefill
        and attention cost; then the same prompt again: an endpoint that caches prompt
        prefixes answers it much sooner. About 1,200 characters: a few hundred tokens
        for most tokenizers, within the context of a small local server even when
        every byte is a token. Returns (prefill s/token, KV s/token, prefix cache)."""
        long_prompt = (
            f"[{uuid.uuid4().hex[:12]}] Summarize this text. "
            + "The quick brown fox jumps over the lazy dog. " * 26
        )
        long = await self.stream(long_prompt)
        again = await self.stream(long_prompt)
        if long.prompt_tokens > alone.prompt_tokens:
            extra_tokens = long.prompt_tokens - alone.prompt_tokens
        else:  # the endpoint reported no usage
            extra_tokens = len(long_prompt) // 4
        prefill_s = max(0.0, long.ttft - alone.ttft)
        # Only a prefill several decode steps long can be told from noise.
        prefix_cache = (
            again.ttft - alone.ttft < 0.5 * prefill_s if prefill_s > 4 * alone.per_token else None
        )
        kv = max(0.0, min(long.per_token, again.per_token) - alone.per_token) / extra_tokens
        return prefill_s / extra_tokens, kv, prefix_cache

    async def concurrent(
        self, alone: _Stream, levels: tuple[int, ...], budget: int
    ) -> tuple[dict[int, float], dict[int, float], int | None, int]:
        """4. Concurrent streams, as far as the budget goes. Requests whose first token
        came before any request had finished ran at once; those sent by then whose
        first token came later waited for a slot. The ones that ran at once give the
        decode speed of that many together. Returns the scaling, the decode scaling,
        the slots seen (None: no request waited) and the requests used."""
        scaling: dict[int, float] = {1: 1.0}
        together: dict[int, list[float]] = {}
        slots: int | None = None
        used = 0
        for k in levels:
            if k > budget - used:
                continue
            results = await asyncio.gather(*[self.stream(f"Story number {i}.") for i in range(k)])
            used += k
            scaling[k] = max(r.total for r in results) / alone.total if alone.total > 0 else 1.0
            # On one clock: a request retried after the others finished ran neither
            # with them nor behind them, and counts as neither.
            first_done = min(r.last for r in results)
            at_once = [r for r in results if r.first < first_done]
            if any(r.sent < first_done <= r.first for r in results):  # some waited
                slots = max(slots or 0, len(at_once))
            if alone.per_token > 0:
                factor = statistics.median(r.per_token for r in at_once) / alone.per_token
                together.setdefault(len(at_once), []).append(factor)
        decode = {1: 1.0, **{k: statistics.median(v) for k, v in together.items() if k > 1}}
        return scaling, decode, slots, used
