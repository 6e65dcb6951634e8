"""The simulated inference engine: continuous batching on a virtual step clock.

Each decode step gives one token to every running sequence and lasts

    step_s + step_per_seq_s * (running - 1) + step_per_kv_token_s * kv_tokens

(model seconds), where ``kv_tokens`` is every token (prompt and generated) held
by the running sequences. A sequence admitted at a step boundary first pays
its prefill (``(prompt_tokens - cached_tokens) / prefill_tokens_per_s``), which stalls the batch
for that step as it does in an engine without chunked prefill.

The engine does not wake up for every step: it computes how many steps fit
before the next sequence finishes (a closed form, since the step time grows
linearly with the tokens generated) and sleeps once; a new arrival interrupts
the sleep, the steps already completed are credited, and the newcomer joins the
batch at the next step boundary.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..core.clock import now as clock_now
from ._prompt import PrefixCache, Prompt

if TYPE_CHECKING:
    from collections.abc import Callable

    from ._config import SimConfig

__all__ = ["Engine", "Sequence"]


@dataclass(eq=False)
class Sequence:
    """One request inside the engine."""

    prompt_tokens: int
    target_tokens: int
    prompt: Prompt = ()
    """The conversation, for the prefix cache."""
    cached_tokens: int = 0
    """Prompt tokens found in the prefix cache at admission: not prefilled."""
    on_tokens: Callable[[int], None] | None = None
    """Called with the number of tokens generated so far whenever it grows."""
    generated: int = 0
    admitted_at: float | None = None
    first_token_at: float | None = None
    finished_at: float | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    admitted: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: bool = False

    @property
    def reserved(self) -> int:
        return self.prompt_tokens + self.target_tokens


class Engine:
    """Schedules sequences on a virtual step clock; see the module docstring."""

    def __init__(self, config: SimConfig, *, clock: Callable[[], float] = clock_now) -> None:
        self._cfg = config
        self._clock = clock
        self._waiting: deque[Sequence] = deque()
        self._running: list[Sequence] = []
        self._kv_reserved = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._prefix = PrefixCache() if config.prefix_cache else None
        self.peak_running = 0
        self.peak_kv_reserved = 0

    # --- public -----------------------------------------------------------------
    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop(), name="sim-engine")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def fits_ever(self, seq: Sequence) -> bool:
        """Whether the sequence could ever be admitted (KV capacity)."""
        return seq.reserved <= self._cfg.kv_capacity_tokens

    def submit(self, seq: Sequence) -> None:
        """Queue a sequence; ``seq.done`` is set when its last token is out."""
        if seq.target_tokens <= 0:
            now = self._clock()
            seq.admitted_at = seq.first_token_at = seq.finished_at = now
            seq.admitted.set()
            seq.done.set()
            return
        self._waiting.append(seq)
        self._wake.set()

    def cancel(self, seq: Sequence) -> None:
        """Drop a sequence whose client went away."""
        if seq.done.is_set():
            return
        seq.cancelled = True
        if seq in self._running:
            self._running.remove(seq)
            self._kv_reserved -= seq.reserved
        elif seq in self._waiting:
            self._waiting.remove(seq)
        seq.done.set()
        self._wake.set()

    @property
    def running(self) -> int:
        return len(self._running)

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    # --- the loop -------------------------------------------------------------------
    def _admit(self) -> int:
        """Admit waiting sequences that fit; return the prompt tokens to prefill."""
        prefill = 0
        cfg = self._cfg
        while self._waiting and len(self._running) < cfg.slots:
            seq = self._waiting[0]
            if self._kv_reserved + seq.reserved > cfg.kv_capacity_tokens and self._running:
                break  # FIFO admission: wait until enough of the cache is free
            self._waiting.popleft()
            self._running.append(seq)
            self._kv_reserved += seq.reserved
            seq.admitted_at = self._clock()
            seq.admitted.set()
            if self._prefix is not None:
                # Only prompts already prefilled are in the cache (see _advance):
                # requests admitted together each compute a prefix they share.
                seq.cached_tokens = self._prefix.cached(seq.prompt, seq.prompt_tokens)
            prefill += seq.prompt_tokens - seq.cached_tokens
        self.peak_running = max(self.peak_running, len(self._running))
        self.peak_kv_reserved = max(self.peak_kv_reserved, self._kv_reserved)
        return prefill

    def _step_terms(self) -> tuple[float, float]:
        """(a, c): step i from now lasts ``a + c * i`` model seconds."""
        cfg = self._cfg
        n = len(self._running)
        kv = sum(s.prompt_tokens + s.generated for s in self._running)
        a = cfg.step_s + cfg.step_per_seq_s * max(0, n - 1) + cfg.step_per_kv_token_s * kv
        c = cfg.step_per_kv_token_s * n
        return a, c

    @staticmethod
    def _duration(k: int, a: float, c: float) -> float:
        return k * a + c * k * (k - 1) / 2

    @staticmethod
    def _steps_within(t: float, a: float, c: float) -> int:
        """Largest k with ``_duration(k) <= t``."""
        if t <= 0:
            return 0
        if c <= 0:
            k = math.floor(t / a)
        else:
            # c/2 k^2 + (a - c/2) k - t = 0
            b = a - c / 2
            k = math.floor((-b + math.sqrt(b * b + 2 * c * t)) / c)
        while k > 0 and Engine._duration(k, a, c) > t + 1e-12:
            k -= 1
        while Engine._duration(k + 1, a, c) <= t:
            k += 1
        return k

    def _advance(self, k: int, start: float, prefill: float, a: float, c: float) -> None:
        """Credit ``k`` steps that began at wall time ``start`` after ``prefill``
        model seconds; first-token and finish times are those of their own step."""
        if k <= 0:
            return
        scale = self._cfg.time_scale

        def at(steps: int) -> float:
            return start + (prefill + self._duration(steps, a, c)) / scale

        finished: list[Sequence] = []
        for seq in self._running:
            before = seq.generated
            seq.generated = min(seq.target_tokens, seq.generated + k)
            if before == 0 and seq.generated > 0:
                seq.first_token_at = at(1)
                if self._prefix is not None:
                    self._prefix.remember(seq.prompt)  # its prefill is done
            if seq.on_tokens is not None and seq.generated != before:
                # One chunk per stream_chunk_tokens, also when a late loop credits
                # several chunks' steps at once (a stream keeps its granularity).
                chunk = max(1, self._cfg.stream_chunk_tokens)
                for tokens in range(before + chunk, seq.generated, chunk):
                    seq.on_tokens(tokens)
                seq.on_tokens(seq.generated)
            if seq.generated >= seq.target_tokens:
                seq.finished_at = at(seq.target_tokens - before)
                finished.append(seq)
        for seq in finished:
            self._running.remove(seq)
            self._kv_reserved -= seq.reserved
            seq.done.set()

    async def _loop(self) -> None:
        cfg = self._cfg
        scale = cfg.time_scale
        boundary: float | None = None  # wall time of the last step boundary
        prefill_debt = 0.0  # model seconds of prefill still to pay before the next step
        while True:
            prefill_debt += self._admit() / cfg.prefill_tokens_per_s
            if not self._running:
                boundary, prefill_debt = None, 0.0
                self._wake.clear()
                await self._wake.wait()
                continue
            now = self._clock()
            if boundary is None:
                boundary = now
            a, c = self._step_terms()
            k = min(s.target_tokens - s.generated for s in self._running)
            if any(s.on_tokens is not None for s in self._running):
                # Wake up often enough to stream; a loop that fell behind (a busy CPU,
                # a high time_scale) credits every step due by now at once, or the
                # model clock would run at the loop's pace, not at its own.
                due = self._steps_within((now - boundary) * scale - prefill_debt, a, c)
                k = min(k, max(cfg.stream_chunk_tokens, due))
            end = boundary + (prefill_debt + self._duration(k, a, c)) / scale
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout=max(0.0, end - now))
            except asyncio.TimeoutError:
                self._advance(
                    k, boundary, prefill_debt, a, c
                )  # the next span starts where they ended
                boundary, prefill_debt = end, 0.0
                continue
            # Interrupted by an arrival or a cancellation: credit what was done and
            # carry the rest, so no model time is lost or invented.
            elapsed = (self._clock() - boundary) * scale
            if elapsed < prefill_debt:
                prefill_debt -= elapsed
                boundary = self._clock()
                continue
            elapsed -= prefill_debt
            done = min(k, self._steps_within(elapsed, a, c))
            self._advance(done, boundary, prefill_debt, a, c)
            boundary += (prefill_debt + self._duration(done, a, c)) / scale
            prefill_debt = 0.0
