"""Proactive rate limiting: requests per minute, tokens per minute, and shared cool-downs.

The engine talks to a :class:`RateLimiter` only, so another backend (limits
shared through redis, say) can stand in for :class:`LocalLimiter`.

How :class:`LocalLimiter` paces, so that no policing window is ever overrun, whatever
its length (a per-minute limit is often policed per second or per few seconds):

* **Even pacing.** Requests (and tokens) go at their own slots of a GCRA schedule
  (one "theoretical arrival time"), spaced a little wider than the rate (2 %, for the
  jitter between our clock and the server's). Evenly spaced sends fit any window
  longer than one slot: no window ever holds more than its share.
* **Bursts only where the server says there is room.** Each response's
  ``x-ratelimit-remaining-*`` says how much more the endpoint would take right then;
  that, less what was sent after the request it answers, may go at once. A request
  sent on that credit still takes its slot in the schedule (the slot is borrowed
  from the future), so the long-run rate never exceeds the limit.
* **Unknown limits are learned without hitting them.** With no limits configured,
  the first request goes alone (the transport streams it, so its headers arrive with
  the first token); the others wait for its headers, which say the limits, the room
  and the reset, and then go as they allow. An endpoint without such headers is not
  paced at all. With limits configured, the first request is streamed as well (the
  others keep to the schedule meanwhile): the room it reports comes sooner.
* **A 429 pauses everyone** for as long as the server asks (``retry-after``), and
  what the server said it had room for is forgotten.
* **Requests go in the order they asked.** Those waiting for room stand in a line;
  only its head waits for the schedule or the room, so a plan's requests leave in
  the order the planner costs them (a request of many tokens waiting for token room
  holds those behind it, as the planner assumes), and a merge check's question asked
  alone is not overtaken by groups started after it. (Each waiter used to sleep until
  the same slot, and whichever woke first went.)
* **A reset is believed once it has kept its word**: not all endpoints mean "until the
  window is empty" by it (see ``limits/_resets.py``).

``aiolimiter`` (a leaky bucket) was used here before; it cannot borrow a future slot
for a send the server has room for, so the schedule is our own: a few lines of GCRA.
"""

from __future__ import annotations

import contextvars
import logging
import math
import random
import re
from collections import deque
from dataclasses import dataclass
from itertools import takewhile
from typing import TYPE_CHECKING, Protocol

import anyio

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Mapping

    from ..core.config import Limits
from ..core.clock import now as clock_now
from ..core.plans import Budget
from ._resets import Promise, ResetTrust, judge

__all__ = [
    "RPM_RANGE",
    "TPM_RANGE",
    "LimitState",
    "LocalLimiter",
    "RateLimiter",
    "Ticket",
    "current_ticket",
    "parse_duration",
]

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|h|m|s)")
_UNIT = {"h": 3600.0, "m": 60.0, "s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}
_SLACK = 0.02
"""Slots are this much wider than the rate: room for jitter between client and server."""
_RESET_MARGIN_S = 0.05
"""Added to a reported reset, counted from when the request was sent."""
_PROBE_WAIT_S = 30.0
"""Longest the others wait for the first request's headers before going anyway."""
RPM_RANGE = (1.0, 1e9)
"""The requests per minute an endpoint's headers (or an endpoint memory) may teach: one
request a minute at the least (a retry-after is capped at a minute too), so that no
header can hold a call for hours (``x-ratelimit-limit-requests: 1e-9``); a limit outside
is ignored, with a warning. Configured limits are the user's, and not bounded."""
TPM_RANGE = (100.0, 1e12)
"""The tokens per minute they may teach: a short request a minute at the least."""

log = logging.getLogger("fanout")


def plausible_limit(kind: str, value: float | None) -> bool:
    """``value`` is a number of ``kind`` (``"rpm"`` or ``"tpm"``) a limiter may learn:
    finite and within ``RPM_RANGE`` / ``TPM_RANGE``."""
    low, high = RPM_RANGE if kind == "rpm" else TPM_RANGE
    return value is not None and math.isfinite(value) and low <= value <= high


def reset_margin(reset_s: float, elapsed_s: float) -> float:
    """Added to a reset reported ``elapsed_s`` after its request was sent, counted from
    the send. The endpoint counted it from when it took the request, which may be well
    after the send (a new connection, a busy client or server: a burst of nine requests
    reached the simulator 0.1 s after they left), and is no later than the headers'
    arrival: the reset is counted from there, up to 1 s on (a long answer's headers
    come with its last token), and never with less margin than the clock jitter's."""
    return max(_RESET_MARGIN_S, _SLACK * reset_s, min(1.0, elapsed_s))


def parse_duration(value: str) -> float | None:
    """Seconds in a Go-style duration (``1s``, ``6m0s``, ``12ms``, ``1m30.5s``), or None."""
    value = value.strip()
    if not value:
        return None
    try:
        return float(value)  # a bare number of seconds
    except ValueError:
        pass
    pos = 0
    total = 0.0
    for match in _DURATION_PART.finditer(value):
        if match.start() != pos:
            return None
        total += float(match.group(1)) * _UNIT[match.group(2)]
        pos = match.end()
    return total if pos == len(value) else None


@dataclass(frozen=True)
class Ticket:
    """What ``acquire`` let go: its place in the order of sends, and whether it is the
    first request to an endpoint whose limits are unknown (the probe)."""

    seq: int
    tokens: int
    probe: bool = False
    at: float = 0.0
    """When it was let go (the limiter's clock)."""
    on_reset: bool = False
    """It went into room only a reported reset promised (see ``limits/_resets.py``)."""
    open_before: int = 0
    """Requests sent before it and not done when it went: the endpoint may take any of
    them after it (concurrent requests need not arrive in the order sent), so the room
    its response reports may not count them, even if they are answered by then."""
    open_tokens_before: float = 0.0
    """Their tokens."""


current_ticket: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar(
    "fanout_ticket", default=None
)
"""The ticket of the request this task is sending (set by ``LocalLimiter.acquire``),
so that the response's headers are matched to it."""


@dataclass(frozen=True)
class LimitState:
    """A snapshot of a limiter, for reports and debugging."""

    rpm: float | None
    tpm: float | None
    rpm_learned: bool
    tpm_learned: bool
    window_s: float
    """The burst allowed beyond the schedule, in seconds of the rate: 0 for
    ``LocalLimiter``, which bursts only where the endpoint reports room."""
    paused_for_s: float


class RateLimiter(Protocol):
    """What the engine needs from a rate limiter."""

    async def acquire(self, tokens: int) -> float:
        """Wait until a request of ``tokens`` estimated tokens may go; return the seconds waited."""
        ...

    def settle(self, reserved: int, used: int | None) -> None:
        """Correct a reservation with the tokens actually used (None: the request was refused)."""
        ...

    def observe(self, headers: Mapping[str, str]) -> None:
        """Learn from a response's ``x-ratelimit-*`` headers."""
        ...

    def cool_down(self, seconds: float) -> None:
        """Pause every request on this limiter for ``seconds`` (after a 429)."""
        ...

    def state(self) -> LimitState: ...

    def budget(self) -> Budget:
        """Requests and tokens that may go now, and the rates after that (for the planner)."""
        ...


class _Schedule:
    """A GCRA schedule: each unit goes at its own slot, ``interval`` seconds apart."""

    def __init__(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self.interval = 60.0 / per_minute * (1 + _SLACK)
        self.tat = -math.inf  # the theoretical arrival time of the next unit

    def rescale(self, per_minute: float) -> None:
        self.per_minute = per_minute
        self.interval = 60.0 / per_minute * (1 + _SLACK)

    def wait(self, now: float) -> float:
        return max(0.0, self.tat - now)

    def take(self, units: float, now: float) -> None:
        self.tat = max(self.tat, now) + units * self.interval

    def give(self, units: float, now: float) -> None:
        """Give back slots taken (a reservation larger than the use, or refused)."""
        if self.tat > now:
            self.tat = max(now, self.tat - units * self.interval)


class _Turn:
    """An acquirer's place in the line: its tokens, and the event it waits on for its
    turn (None until it has had to wait)."""

    __slots__ = ("event", "tokens")

    def __init__(self, tokens: int) -> None:
        self.tokens = tokens
        self.event: anyio.Event | None = None


class _Credit:
    """The room responses reported: what the endpoint said it would still take, less
    what was in flight then (it may not have counted that yet); and, from their reset
    headers, when it will be back to its full capacity ("the time until the rate limit
    resets to its initial state"). What was sent after a report is taken off it.

    Every report is a lower bound on the room: the newest one for now, and each
    reset for from its moment on (a later report may show the window full again with
    a later reset, while the earlier reset still frees what was sent before it)."""

    __slots__ = ("base", "capacity", "mark", "resets", "seq")

    def __init__(self) -> None:
        self.seq = -1  # the request whose response reported it (newer requests win)
        self.base = 0.0
        self.mark = 0.0  # units sent when it was reported
        self.capacity = 0.0  # the most the endpoint ever said it had room for, plus one
        self.resets: list[Promise] = []  # what each reset promised

    def update(
        self, seq: int, remaining: float, reset_at: float, others_in_flight: float, sent: float
    ) -> None:
        self.capacity = max(self.capacity, remaining + 1)
        if seq <= self.seq:
            return
        self.seq = seq
        self.base = remaining - others_in_flight
        self.mark = sent
        if math.isfinite(reset_at):
            full = max(self.base, self.capacity - others_in_flight)
            self.resets.append((reset_at, full, sent, self.base))
            del self.resets[:-8]

    def available(self, sent: float, now: float, *, resets: bool = True) -> float:
        """The room now; with ``resets=False``, only what ``remaining`` reported."""
        if self.seq < 0:
            return 0.0
        room = self.base - (sent - self.mark)
        for at, full, mark, _ in self.resets if resets else ():
            if now >= at:
                room = max(room, full - (sent - mark))
        return room

    def until_room(self, amount: float, sent: float, now: float, *, resets: bool = True) -> float:
        """Seconds until ``amount`` fits the reported room (inf: not before a new report)."""
        if self.available(sent, now, resets=resets) >= amount:
            return 0.0
        waits = [
            at - now
            for at, full, mark, _ in self.resets
            if resets and at > now and full - (sent - mark) >= amount
        ]
        return min(waits, default=math.inf)

    def forget(self, last_seq: int, sent: float) -> None:
        """Nothing is available until a request sent after now reports room."""
        self.seq = last_seq
        self.base = 0.0
        self.mark = sent
        self.resets.clear()


class LocalLimiter:
    """Limits for one process (see the module docstring)."""

    def __init__(
        self,
        limits: Limits,
        *,
        clock: Callable[[], float] = clock_now,
        rng: Callable[[], float] = random.random,
        sleep: Callable[[float], Awaitable[None]] | None = None,
    ) -> None:
        self._limits = limits
        self._clock = clock
        self._rng = rng
        self._sleep = sleep
        self._requests: _Schedule | None = None
        self._tokens: _Schedule | None = None
        self._rpm_learned = False
        self._tpm_learned = False
        self._reported: dict[str, float] = {}  # the limits the endpoint's headers gave
        self._pause_until = 0.0
        self._jitter_s = 0.0
        self._sent = 0  # sends so far; a send's seq is the count before it
        self._sent_tokens = 0.0
        self._open: dict[int, float] = {}  # seq -> tokens, of requests not done yet
        self._open_tokens = 0.0  # their sum
        self._tokens_before: dict[int, float] = {}  # seq -> tokens sent before it
        self._req_credit = _Credit()
        self._tok_credit = _Credit()
        self._silent = False  # a response came without x-ratelimit-remaining-requests
        self._burst_seen = 0.0  # the room for requests an earlier process was told of
        self.reset_trust = ResetTrust()
        """Whether the reset headers mean what they say; kept in the endpoint memory."""
        self._warned: set[str] = set()  # the implausible limits already warned of
        self._changed: anyio.Event | None = None
        self._line: deque[_Turn] = deque()  # the acquirers, in the order they came
        # Nothing configured: the first request goes alone and its headers say the rest.
        self._probe = "waiting" if limits.rpm is None and limits.tpm is None else "done"
        if limits.rpm is not None:
            self._requests = _Schedule(limits.rpm * limits.headroom)
        if limits.tpm is not None:
            self._tokens = _Schedule(limits.tpm * limits.headroom)

    # --- waiting --------------------------------------------------------------------
    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def _wait(self, seconds: float) -> None:
        """Sleep up to ``seconds``, waking early when a response changes what is known."""
        if self._sleep is not None:
            await self._sleep(seconds)
            return
        if self._changed is None:
            self._changed = anyio.Event()
        with anyio.move_on_after(seconds):
            await self._changed.wait()

    def _room(self, tokens: int) -> float:
        """0 if a request of ``tokens`` may go now, else the seconds to wait at most:
        until its slot in the schedule, or until the reported room is back."""
        now = self._clock()
        waits = [0.0]
        resets = self.reset_trust.usable()
        if self._requests is not None:
            room = self._req_credit.until_room(1, self._sent, now, resets=resets)
            if room > 0:
                waits.append(min(room, self._requests.wait(now)))
        if self._tokens is not None:
            room = self._tok_credit.until_room(tokens, self._sent_tokens, now, resets=resets)
            if room > 0:
                waits.append(min(room, self._tokens.wait(now)))
        return max(waits)

    def _on_reset(self, tokens: int, now: float) -> bool:
        """Only the room a reset promised lets a send go now (not schedule nor remaining)."""
        kinds = (
            (self._requests, self._req_credit, 1.0, self._sent),
            (self._tokens, self._tok_credit, tokens, self._sent_tokens),
        )
        return any(
            schedule is not None
            and schedule.wait(now) > 0
            and credit.available(sent, now, resets=False) < amount
            for schedule, credit, amount, sent in kinds
        )

    async def acquire(self, tokens: int) -> float:
        start = self._clock()
        await self._wait_pause()
        line = self._line
        me = _Turn(tokens)
        line.append(me)
        try:
            while line[0] is not me:  # its turn comes when those ahead of it have gone
                me.event = anyio.Event()
                await me.event.wait()
            return await self._acquire_in_turn(tokens, start)
        finally:
            head = line[0] is me
            line.remove(me)
            if head and line:
                self._next_turn()

    def _next_turn(self) -> None:
        """The head of the line went: wake the next, or, when it could go at once, all
        of them (in order, in one turn of the event loop: each goes if it is the head by
        then and there is room, else waits again), so that a burst leaves together."""
        line = self._line
        if self._probe != "out" and self._room(line[0].tokens) <= 0:
            for turn in line:
                if turn.event is not None:
                    turn.event.set()
        elif (event := line[0].event) is not None:
            event.set()

    async def _acquire_in_turn(self, tokens: int, start: float) -> float:
        """``acquire`` at the head of the line (see the module doc)."""
        probe = False
        while True:
            if self._probe == "waiting":
                self._probe = "out"
                probe = True
                break
            if self._probe == "out":
                await self._wait(_PROBE_WAIT_S)
                if self._probe == "out" and self._clock() - start >= _PROBE_WAIT_S:
                    self._probe = "done"  # the first request says nothing for too long
                continue
            wait = self._room(tokens)
            if wait <= 0:
                break
            await self._wait(wait)
        now = self._clock()
        seq = self._sent
        # Limits configured, room not reported yet: the first request is streamed too (not
        # holding the others), so the burst its headers may allow comes with its first token.
        probe = probe or (seq == 0 and self._requests is not None and self._req_credit.seq < 0)
        on_reset = self._on_reset(tokens, now)
        if on_reset and self.reset_trust.sending(seq):
            probe = True  # checks the reset's promise: streamed, its headers come sooner
        open_before, open_tokens_before = len(self._open), self._open_tokens
        self._open[seq] = tokens
        self._open_tokens += tokens
        if len(self._open) > 4096:  # a user of this limiter that never says attempt_done
            self._open_tokens -= self._open.pop(next(iter(self._open)))
        self._tokens_before[seq] = self._sent_tokens
        if len(self._tokens_before) > 4096:  # only recent requests report room
            del self._tokens_before[next(iter(self._tokens_before))]
        self._sent += 1
        self._sent_tokens += tokens
        if self._requests is not None:
            self._requests.take(1, now)
        if self._tokens is not None:
            self._tokens.take(tokens, now)
        current_ticket.set(
            Ticket(
                seq=seq,
                tokens=tokens,
                probe=probe,
                at=now,
                on_reset=on_reset,
                open_before=open_before,
                open_tokens_before=open_tokens_before,
            )
        )
        await self._wait_pause()  # a cool-down may have begun meanwhile
        return self._clock() - start

    async def _wait_pause(self) -> None:
        while (left := self._pause_until - self._clock()) > 0:
            # Wake at the end of the pause plus a random share of the spread, so
            # the waiters come back one by one rather than all at once.
            seconds = left + self._rng() * self._jitter_s
            if self._sleep is not None:
                await self._sleep(seconds)
            else:
                await anyio.sleep(seconds)

    def attempt_done(self) -> None:
        """The current request finished (answered or not): if it was the first request
        to an endpoint of unknown limits, the others need not wait for it any longer."""
        ticket = current_ticket.get()
        if ticket is None:
            return
        self._open_tokens -= self._open.pop(ticket.seq, 0.0)
        if ticket.probe and self._probe == "out":
            self._probe = "done"
            self._notify()
        if self.reset_trust.ended(ticket.seq):  # no headers came: another send may check
            self._notify()

    # --- learning -------------------------------------------------------------------
    def settle(self, reserved: int, used: int | None) -> None:
        if self._tokens is None:
            return
        now = self._clock()
        if used is None:
            self._tokens.give(reserved, now)
        elif used < reserved:
            self._tokens.give(reserved - used, now)
        elif used > reserved:
            self._tokens.take(used - reserved, now)

    def cool_down(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        until = self._clock() + seconds
        if until > self._pause_until:
            self._pause_until = until
            self._jitter_s = min(1.0, 0.25 * seconds) if seconds > 0 else 0.0
        ticket = current_ticket.get()
        if ticket is not None and ticket.on_reset:
            self.reset_trust.refused()  # refused in the room a reset promised
        # The endpoint said no: whatever room it reported before is gone.
        self._req_credit.forget(self._sent - 1, self._sent)
        self._tok_credit.forget(self._sent - 1, self._sent_tokens)

    def observe(self, headers: Mapping[str, str]) -> None:
        """A response's rate-limit headers: the limits they give, and the room left and
        when it resets, as of the request the current ticket sent."""
        get = headers.get
        self._learn_limits(
            self._plausible("rpm", _number(get("x-ratelimit-limit-requests"))),
            self._plausible("tpm", _number(get("x-ratelimit-limit-tokens"))),
        )
        ticket = current_ticket.get()
        remaining_req = _number(get("x-ratelimit-remaining-requests"))
        remaining_tok = _number(get("x-ratelimit-remaining-tokens"))
        if ticket is not None and remaining_req is None:
            self._silent = True  # an endpoint that does not report its room: pacing it is
        if ticket is not None:
            if ticket.seq == 0:
                self._first_arrival(ticket)
            # The endpoint computed its reset when the request came in: after it was
            # sent, and before its headers came back (see reset_margin).
            elapsed = self._clock() - ticket.at
            reset_req = parse_duration(get("x-ratelimit-reset-requests") or "")
            reset_tok = parse_duration(get("x-ratelimit-reset-tokens") or "")
            if reset_req is not None:
                reset_req += reset_margin(reset_req, elapsed)
            if reset_tok is not None:
                reset_tok += reset_margin(reset_tok, elapsed)
            self._heard_room(ticket, remaining_req, remaining_tok, reset_req, reset_tok)
        if self._probe == "out" and ticket is not None and ticket.probe:
            self._probe = "done"
        self._notify()

    def _learn_limits(self, limit_req: float | None, limit_tok: float | None) -> None:
        """The limits the endpoint reports, paced at (with the headroom) where the
        ``Limits`` leave them unset."""
        headroom = self._limits.headroom
        if limit_req:
            self._reported["rpm"] = limit_req
        if limit_tok:
            self._reported["tpm"] = limit_tok
        if self._limits.rpm is None and limit_req:
            if self._requests is None:
                self._requests = _Schedule(limit_req * headroom)
                self._requests.take(self._sent, self._clock())  # what already went counts
            elif self._requests.per_minute != limit_req * headroom:
                self._requests.rescale(limit_req * headroom)
            self._rpm_learned = True
        if self._limits.tpm is None and limit_tok:
            if self._tokens is None:
                self._tokens = _Schedule(limit_tok * headroom)
                self._tokens.take(self._sent_tokens, self._clock())
            elif self._tokens.per_minute != limit_tok * headroom:
                self._tokens.rescale(limit_tok * headroom)
            self._tpm_learned = True

    def _first_arrival(self, ticket: Ticket) -> None:
        """The very first request may reach the endpoint well after it was let go (a
        new connection, the client's first-call set-up): the schedule counts its slot
        from the latest it can have arrived, its answer (at most 1 s on)."""
        lag = min(1.0, self._clock() - ticket.at)
        for schedule in (self._requests, self._tokens):
            if schedule is not None:
                schedule.tat += lag

    def _heard_room(
        self,
        ticket: Ticket,
        remaining_req: float | None,
        remaining_tok: float | None,
        reset_req: float | None,
        reset_tok: float | None,
    ) -> None:
        """The room ``ticket``'s response reported, and its resets: judged against the
        resets promised before it, and taken as credit less what it does not count."""
        headroom = self._limits.headroom
        # Not counted in what the endpoint reported, perhaps: what was sent after this
        # request, and what was sent before it and on its way when it went (the
        # endpoint may have taken those after it, even if they are answered by now: on
        # a clock with no jitter a burst's replies all come back at once, and the room
        # one reported was spent already). ``_open`` is in the order sent.
        earlier: list[tuple[int, float]] = []
        if remaining_req is not None or remaining_tok is not None:
            earlier = list(takewhile(lambda item: item[0] < ticket.seq, self._open.items()))
        earlier_n = max(len(earlier), ticket.open_before)
        earlier_tok = max(sum(t for _, t in earlier), ticket.open_tokens_before)
        self._judge_resets(ticket, remaining_req, remaining_tok)
        if remaining_req is not None:
            others = (self._sent - ticket.seq - 1) + earlier_n
            self._req_credit.update(
                ticket.seq,
                remaining_req * headroom,
                ticket.at + reset_req if reset_req is not None else math.inf,
                others,
                self._sent,
            )
        if remaining_tok is not None:
            after = self._sent_tokens - self._tokens_before.get(ticket.seq, 0.0) - ticket.tokens
            self._tok_credit.update(
                ticket.seq,
                remaining_tok * headroom,
                ticket.at + reset_tok if reset_tok is not None else math.inf,
                max(0.0, after) + earlier_tok,
                self._sent_tokens,
            )

    def _judge_resets(
        self, ticket: Ticket, remaining_req: float | None, remaining_tok: float | None
    ) -> None:
        """The resets due before ``ticket``'s request went: was the room they promised
        there (``limits/_resets.py``)?"""
        headroom = self._limits.headroom
        upto = self._tokens_before.get(ticket.seq, self._sent_tokens) + ticket.tokens
        request_verdict = None
        token_verdict = None
        if remaining_req is not None:
            request_verdict = judge(
                self._req_credit.resets,
                remaining_req * headroom,
                self._sent,
                ticket.seq + 1,
                ticket.at,
                1,
            )
        if remaining_tok is not None:
            token_verdict = judge(
                self._tok_credit.resets,
                remaining_tok * headroom,
                self._sent_tokens,
                upto,
                ticket.at,
                ticket.tokens,
            )
        self.reset_trust.heard(ticket.seq, {request_verdict, token_verdict})

    def _plausible(self, kind: str, value: float | None) -> float | None:
        """``value`` if a limit may be learned from it (see ``RPM_RANGE``), else None,
        with a warning (once per kind) when there was one."""
        if value is None or plausible_limit(kind, value):
            return value
        if kind not in self._warned:
            self._warned.add(kind)
            low, high = RPM_RANGE if kind == "rpm" else TPM_RANGE
            log.warning(
                "ignored the endpoint's x-ratelimit-limit-%s: %g is not a limit "
                "(outside %g..%g per minute); configure Limits(%s=...) if it is",
                "requests" if kind == "rpm" else "tokens",
                value,
                low,
                high,
                kind,
            )
        return None

    def reported_limits(self) -> dict[str, float]:
        """The limits the endpoint's headers reported (``rpm``, ``tpm``), whatever was
        configured, and the most requests it reported room for at once
        (``burst_requests``): what the next process may start from (``seed_limits``)."""
        reported = dict(self._reported)
        if self._burst() > 0:
            reported["burst_requests"] = self._burst()
        return reported

    def _burst(self) -> float:
        """The most requests the endpoint reported room for at once, here or before."""
        return max(self._req_credit.capacity, self._burst_seen)

    def seed_limits(
        self, *, rpm: float | None, tpm: float | None, burst_requests: float | None = None
    ) -> None:
        """Start from limits an earlier process was told, before any header says them
        here: a configured limit wins, and each response's headers correct them. The
        first request still goes alone (its headers say the room there is now); the
        planner expects the room for ``burst_requests`` it found then (see
        ``Budget.burst_seen``)."""
        if burst_requests is not None and burst_requests > 0:
            self._burst_seen = float(burst_requests)
        headroom = self._limits.headroom
        if plausible_limit("rpm", rpm) and self._limits.rpm is None and self._requests is None:
            assert rpm is not None
            self._requests = _Schedule(rpm * headroom)
            self._rpm_learned = True
        if plausible_limit("tpm", tpm) and self._limits.tpm is None and self._tokens is None:
            assert tpm is not None
            self._tokens = _Schedule(tpm * headroom)
            self._tpm_learned = True

    # --- reporting ------------------------------------------------------------------
    def budget(self) -> Budget:
        now = self._clock()
        requests_now = math.inf
        if self._requests is not None:
            credit = self._req_credit.available(self._sent, now)
            requests_now = max(0.0, credit) + (1.0 if self._requests.wait(now) <= 0 else 0.0)
        tokens_now = math.inf
        if self._tokens is not None:
            tokens_now = max(0.0, self._tok_credit.available(self._sent_tokens, now))
            if self._tokens.wait(now) <= 0:
                tokens_now = max(tokens_now, self._tokens.per_minute / 60.0)
        return Budget(
            requests_now=requests_now,
            tokens_now=tokens_now,
            rpm=self._requests.per_minute if self._requests is not None else None,
            tpm=self._tokens.per_minute if self._tokens is not None else None,
            paused_s=max(0.0, self._pause_until - now),
            room_known=self._requests is None or self._req_credit.seq >= 0 or self._silent,
            burst_seen=self._burst(),
            first_alone=self._probe == "waiting",
        )

    def state(self) -> LimitState:
        return LimitState(
            rpm=self._requests.per_minute if self._requests is not None else None,
            tpm=self._tokens.per_minute if self._tokens is not None else None,
            rpm_learned=self._rpm_learned,
            tpm_learned=self._tpm_learned,
            window_s=0.0,
            paused_for_s=max(0.0, self._pause_until - self._clock()),
        )


def _number(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = float(value)
    except ValueError:
        return None
    return number if math.isfinite(number) else None  # "nan" or "inf" is no count
