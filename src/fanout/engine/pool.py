"""Several endpoints behind one ``Fanout``: placement, cool-downs and fallbacks.

A ``Fanout(endpoints=[...])`` holds one single-endpoint engine per endpoint (its own
transport, limits, learner and memory: they are different servers) and a
:class:`Pool` over them. A call's questions wait in the pool; :func:`placement.place`
(pure) says, from each endpoint's learned slots and speed and its limits' room, how
many each should take so that all are answered soonest, and each endpoint is handed
its share a window at a time (two rounds of its slots), as a call of its own engine
(which plans it: split, merged or groups, with what it knows of that endpoint). As
answers come back the rest is placed again with what was learned meanwhile, so the
endpoint that turns out faster takes more, and a slower one still gets work once the
faster one would answer later than it.

An endpoint whose attempts fail ``STREAK`` times in a row with nothing answered
between (connection refused or broken, 5xx, an attempt past its deadline) is cooled
down: its running questions are cancelled and placed again on the others, it gets no
more for ``COOL_DOWN_S`` (doubling while it keeps failing, up to ``MAX_COOL_DOWN_S``),
then one question to see whether it is back. ``insufficient_quota`` takes an endpoint
out for good. A question whose own request failed on an endpoint's account is placed
again too, at most ``max(3, 2 × endpoints)`` times; every question is answered once,
by whichever endpoint answered it first (``Answer.endpoint``).
"""

from __future__ import annotations

import heapq
import math
import statistics
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import openai

from ..core import clock
from ..core.endpoints import Endpoint
from ..core.exceptions import QuestionError, QuotaExceededError
from ..core.models import Answer, Question
from ..endpoint.tokens import estimate_messages_tokens
from .call import CallStats
from .placement import Capacity, Placement, place
from .reach import UnreachableError
from .retrying import AttemptTimeoutError, IncompleteResponseError, is_quota_error
from .transport import QuotaGoneError, Transport

__all__ = [
    "ALL_DOWN",
    "COOL_DOWN_S",
    "MAX_COOL_DOWN_S",
    "STREAK",
    "Pool",
    "Seat",
    "endpoint_failure",
]

STREAK = 3
"""Failed attempts in a row, none answered between, that cool an endpoint down."""
COOL_DOWN_S = 5.0
"""How long a failing endpoint gets no questions, the first time."""
MAX_COOL_DOWN_S = 60.0
ALL_DOWN = 3
"""Times every endpoint may be cooled down at once, nothing answered between, before
the questions waiting fail with their last errors."""
_FIRST_SLOTS = 8  # requests an endpoint of unknown slots is first given at once
_WAVE = 1.5  # answers within this many times the first one's time came in its wave
_QUEUED = 0.75  # a first wave of at most this share of a window: the rest was queued
_GROWTH = 2  # ... times more each time one comes back with no queue seen
_PRIOR_ANSWER_TOKENS = 200.0

RunChunk = Callable[
    [list[Question], CallStats, Callable[[Answer], Awaitable[None]]], Awaitable[None]
]
"""One endpoint's engine asked a chunk of questions (a call of its own): each answer
to the callback, the call's counters in the ``CallStats``."""


def endpoint_failure(exc: BaseException | None) -> bool:
    """Is this the endpoint's failure (another endpoint may answer), rather than the
    question's own (a 400, a refusal, a structured answer that does not fit)?"""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, openai.APIStatusError):
            return exc.status_code >= 500 or is_quota_error(exc)
        if isinstance(
            exc,
            (
                openai.APIConnectionError,
                AttemptTimeoutError,
                IncompleteResponseError,
                QuotaGoneError,
                QuotaExceededError,
                UnreachableError,
            ),
        ):
            return True
        exc = exc.__cause__
    return False


def _quota(exc: BaseException | None) -> bool:
    while exc is not None:
        if isinstance(exc, (QuotaGoneError, QuotaExceededError)) or is_quota_error(exc):
            return True
        exc = exc.__cause__
    return False


@dataclass(eq=False)
class Seat:
    """One endpoint of a pool, and what the pool knows of its health (kept across calls)."""

    config: Endpoint
    transport: Transport
    name: str
    grown: int = _FIRST_SLOTS
    """Slots assumed while none were found: more each time a window comes back with no
    queue seen (``_GROWTH``), up to ``Limits.max_concurrency``."""
    ran: int = 0
    """The most it was given at once on a cold start."""
    found: int | None = None
    """The slots last found there: by the endpoint model, or by a window's answers coming
    back in waves (a later fit may lose them again: they are kept)."""
    load: int = 0
    cooled_until: float = -math.inf
    cool_down_s: float = COOL_DOWN_S
    probing: bool = False
    """Back from a cool-down: one question at a time until one is answered."""
    out: BaseException | None = None
    """``insufficient_quota``: never asked again."""
    streak: int = 0
    scopes: set[anyio.CancelScope] = field(default_factory=set)
    on_change: Callable[[str], None] | None = None
    on_answered: Callable[[], None] | None = None

    def available(self, now: float) -> bool:
        return self.out is None and now >= self.cooled_until

    def slots(self) -> int:
        cap = self.transport.limits.max_concurrency
        learned = self.transport.learner.endpoint.recent_estimate().slots
        if learned is not None:
            self.found = learned
        return max(1, min(cap, self.found if self.found is not None else self.grown))

    def window_back(self, took: Sequence[float]) -> None:
        """A window came back whole. Sent at once, alone: if its answers came in waves
        (a first wave answered in about the time of its second-quickest answer, the first
        request of a cold call going ahead alone; the rest much later on average), the
        endpoint queued the rest behind its slots, as many as the first wave; else it may
        run more at once."""
        if len(took) >= 4:
            ranked = sorted(took)
            first = ranked[1]
            wave = sum(1 for t in ranked if t <= _WAVE * first)
            queued = statistics.fmean(ranked) >= _WAVE * first
            if queued and wave <= _QUEUED * len(took):
                self.found = wave
                return
        self.grow()

    def grow(self) -> None:
        """A window came back and no queue was seen there: it may run more at once."""
        if self.found is None and self.transport.learner.endpoint.recent_estimate().slots is None:
            grown = max(_GROWTH * self.grown, self.ran)
            self.grown = min(grown, self.transport.limits.max_concurrency)

    def cold(self) -> bool:
        """Nothing asked of it yet, nothing learned of it."""
        model = self.transport.learner.endpoint
        return self.load == 0 and not self.probing and model.recent_latency_s() is None

    def window(self) -> int:
        """Questions it may hold at once: two rounds of its slots (one when probing)."""
        return 1 if self.probing else 2 * self.slots()

    def outcome(self, exc: BaseException | None) -> None:
        """Each attempt's end (``Transport.outcome_listeners``)."""
        if exc is None:
            self.streak = 0
            if self.on_answered is not None:
                self.on_answered()
            if self.probing:
                self.probing = False
                self.cool_down_s = COOL_DOWN_S
                self._changed(f"{self.name} answered again")
            return
        if not endpoint_failure(exc) or self.out is not None:
            return
        if _quota(exc):
            self.out = exc
            self._cancel()
            self._changed(f"{self.name} out: insufficient_quota (not asked again)")
            return
        self.streak += 1
        now = clock.now()
        if self.streak >= STREAK and now >= self.cooled_until:
            self.cooled_until = now + self.cool_down_s
            what = f"{type(exc).__name__}: {exc}"[:120]
            self._changed(
                f"{self.name} cooled down for {self.cool_down_s:.0f} s after {self.streak} "
                f"failed attempts in a row ({what})"
            )
            self.cool_down_s = min(2 * self.cool_down_s, MAX_COOL_DOWN_S)
            self.probing = True
            self.streak = 0
            self._cancel()

    def _cancel(self) -> None:
        for scope in list(self.scopes):
            scope.cancel()

    def _changed(self, note: str) -> None:
        if self.on_change is not None:
            self.on_change(note)


@dataclass(frozen=True)
class PoolCall:
    """What one call asks of the pool."""

    questions: Sequence[Question]
    runs: Sequence[RunChunk]
    """Each seat's engine, with the call's options (``Fanout._chunk_runner``)."""
    deliver: Callable[[Answer], Awaitable[None]]
    objective: str = "latency"
    timeout: float | None = None


@dataclass
class _State:
    call: PoolCall
    stats: CallStats
    pending: list[int]
    tries: Counter[int] = field(default_factory=Counter)
    last_error: dict[int, Answer] = field(default_factory=dict)
    answered: set[int] = field(default_factory=set)
    held: int = 0
    started: float = 0.0
    changed: anyio.Event = field(default_factory=anyio.Event)
    running: list[CallStats] = field(default_factory=list)
    given_up: list[int] = field(default_factory=list)


class Pool:
    """The seats of a ``Fanout(endpoints=[...])``; :meth:`run` answers one call."""

    def __init__(self, seats: Sequence[Seat]) -> None:
        self.seats = list(seats)
        self._notes: list[str] = []
        self.down_rounds = 0
        """Times every endpoint was cooled down or out at once, with nothing answered
        since: at ``ALL_DOWN``, the questions waiting fail (as one endpoint's would)."""
        for seat in self.seats:
            seat.transport.outcome_listeners.add(seat.outcome)
            seat.on_change = self._note
            seat.on_answered = self._answered
        self._states: set[int] = set()
        self._wake: list[anyio.Event] = []

    def _note(self, note: str) -> None:
        self._notes.append(note)
        now = clock.now()
        if not any(s.available(now) for s in self.seats):
            self.down_rounds += 1  # every endpoint cooled down or out at once
        for event in self._wake:
            event.set()

    def _answered(self) -> None:
        self.down_rounds = 0

    async def run(self, call: PoolCall, stats: CallStats) -> dict[int, Answer]:
        """Answer every question of ``call`` once (``call.deliver`` as each is); the
        counters of every endpoint's requests add up in ``stats``."""
        st = _State(call, stats, list(range(len(call.questions))), started=clock.now())
        heapq.heapify(st.pending)
        results: dict[int, Answer] = {}
        notes_from = len(self._notes)
        stats.read = len(call.questions)
        stats.exhausted = True
        for seat in self.seats:  # each endpoint in the report, in order, those idle too
            stats.endpoints.setdefault(seat.name, 0)
        wake = st.changed
        self._wake.append(wake)
        try:
            with anyio.move_on_after(call.timeout):
                async with anyio.create_task_group() as tg:
                    while st.pending or st.held or st.given_up:
                        self._fill(tg, st, results)
                        if stats.aborted is not None:
                            tg.cancel_scope.cancel()
                            break
                        if st.given_up:
                            gone, st.given_up = st.given_up, []
                            await self._fail(gone, st, results)
                        if st.pending and not st.held and self._all_down():
                            gone, st.pending = sorted(st.pending), []
                            await self._fail(gone, st, results)
                            break
                        st.changed = anyio.Event()
                        self._wake[self._wake.index(wake)] = wake = st.changed
                        with anyio.move_on_after(self._next_wake(st)):
                            await st.changed.wait()
        finally:
            self._wake.remove(wake)
            stats.cooldowns.extend(self._notes[notes_from:])
        return results

    def _all_down(self) -> bool:
        """No endpoint is left: each out of quota, or all of them cooled down
        ``ALL_DOWN`` times in a row with nothing answered between."""
        if all(s.out for s in self.seats):
            return True
        now = clock.now()
        return self.down_rounds >= ALL_DOWN and not any(s.available(now) for s in self.seats)

    def _next_wake(self, st: _State) -> float:
        """Seconds until a cooled endpoint may be asked again (when questions wait)."""
        now = clock.now()
        later = [s.cooled_until - now for s in self.seats if s.out is None and s.cooled_until > now]
        return max(0.0, min(later)) + 1e-3 if later and st.pending else math.inf

    def _fill(self, tg: Any, st: _State, results: dict[int, Answer]) -> None:
        """Place the waiting questions, and hand each endpoint what its window has room for."""
        now = clock.now()
        seats = [s for s in self.seats if s.available(now)]
        if not st.pending or not seats:
            return
        prompt, answer = self._sizes([st.call.questions[i] for i in st.pending[:16]])
        caps = [self._capacity(s, prompt, answer) for s in seats]
        placed = place(len(st.pending), caps, st.call.objective)
        handed = []
        for seat, cap, k in zip(seats, caps, placed.counts, strict=True):
            window = seat.window()
            if seat.cold():
                # Nothing known of it yet: a quarter of its share on the priors, at most
                # the requests fanout sends it at once, so that no round of it is lost
                # while it is learned, and not much is committed on a guess.
                window = max(window, min(k // 4, seat.transport.limits.max_concurrency))
            if cap.rate_per_s is not None:  # no more than its rate sends in two requests' time
                window = min(window, max(1, math.ceil(2 * cap.rate_per_s * cap.request_s)))
            room = window - seat.load
            give = min(k, room)
            # Not a dribble of one question at a time: a half window, or all it is to get.
            if give <= 0 or (give < k and room < max(1, window // 2)):
                continue
            if seat.cold():
                seat.ran = max(seat.ran, give)
            chunk = [heapq.heappop(st.pending) for _ in range(give)]
            seat.load += give
            st.held += give
            handed.append(f"{give} to {seat.name}")
            tg.start_soon(self._chunk, seat, chunk, st, results)
        if handed:
            st.stats.placements.append(
                f"{now - st.started:.2f} s: {', '.join(handed)}. Placement of "
                f"{placed.reason[0].lower()}{placed.reason[1:]}"
            )

    def placement(self, questions: Sequence[Question], objective: str = "latency") -> Placement:
        """How these questions would be placed now, over the endpoints available (a dry
        run: ``Fanout.plan``)."""
        now = clock.now()
        seats = [s for s in self.seats if s.available(now)] or self.seats
        prompt, answer = self._sizes(questions[:16])
        caps = [self._capacity(s, prompt, answer) for s in seats]
        placed = place(len(questions), caps, objective)
        counts = dict(zip((s.name for s in seats), placed.counts, strict=True))
        return Placement(
            tuple(counts.get(s.name, 0) for s in self.seats),
            placed.finish_s,
            placed.reason,
        )

    def pick(self) -> Seat:
        """The endpoint one question would go to now (a stream of one request)."""
        placed = self.placement([Question(text="?")])
        return self.seats[placed.counts.index(1)] if 1 in placed.counts else self.seats[0]

    def _sizes(self, head: Sequence[Question]) -> tuple[float, float]:
        """A waiting question's prompt tokens, and its answer's (learned on any endpoint:
        they serve one model)."""
        prompt = sum(
            estimate_messages_tokens([{"role": "user", "content": q.text}], None) for q in head
        )
        learned = [
            s.transport.learner.endpoint.answer_tokens
            for s in self.seats
            if s.transport.learner.endpoint.answer_tokens
        ]
        answer = max(learned) if learned else _PRIOR_ANSWER_TOKENS
        return prompt / max(1, len(head)), float(answer)

    def _capacity(self, seat: Seat, prompt: float, answer: float) -> Capacity:
        model = seat.transport.learner.endpoint
        est = model.recent_estimate()
        slots = seat.slots()
        if model.recent_latency_s() is None:
            request_s = est.request_s(prompt, answer)  # the priors
        elif seat.found is None:  # no queue seen: what its requests took is their service
            request_s = model.recent_latency_s() or 0.0
        else:  # queued behind its slots: the quickest quarter were served at once
            request_s = model.recent_latency_s(64, 0.25) or 0.0
        budget = seat.transport.limiter.budget()
        rate = None
        if budget.rpm:
            rate = budget.rpm / 60
        if budget.tpm:
            by_tokens = budget.tpm / 60 / max(1.0, prompt + answer)
            rate = by_tokens if rate is None else min(rate, by_tokens)
        price = seat.config.price
        cost = 0.0 if price is None else float(price.cost(round(prompt), 0, round(answer)))
        return Capacity(
            name=seat.name,
            slots=slots,
            request_s=max(request_s, 1e-3),
            rate_per_s=rate,
            load=seat.load,
            price=cost,
            priority=seat.config.priority,
        )

    async def _chunk(
        self, seat: Seat, chunk: list[int], st: _State, results: dict[int, Answer]
    ) -> None:
        """One window of questions asked of one endpoint's engine."""
        got: set[int] = set()
        stats = CallStats()
        st.running.append(stats)
        sent = clock.now()
        probe = seat.probing  # one question, to see whether it is back
        alone = seat.load == len(chunk)  # nothing else of it in flight: its waves show
        took: list[float] = []

        async def back(answer: Answer) -> None:
            got.add(answer.index)
            took.append(clock.now() - sent)
            if len(got) == len(chunk):  # the window is back: what it showed, before placing
                seat.window_back(took if alone else [])
            index = chunk[answer.index]
            seat.load -= 1
            st.held -= 1
            st.stats.peak = max(st.stats.peak, sum(s.in_flight for s in st.running))
            if answer.error is not None and endpoint_failure(answer.error):
                self._again(index, answer, st)
            else:
                await self._deliver(index, answer, seat, chunk, st, results)
            st.changed.set()

        questions = [st.call.questions[i] for i in chunk]
        ended = False  # the endpoint's call returned, or was cancelled for its cool-down
        try:
            with anyio.CancelScope() as scope:
                seat.scopes.add(scope)
                try:
                    await st.call.runs[self.seats.index(seat)](questions, stats, back)
                except Exception as exc:  # a bug, or the caller's on_answer: keep it
                    if st.stats.aborted is None:
                        st.stats.aborted, st.stats.aborted_by = exc, "fanout"
                finally:
                    seat.scopes.discard(scope)
            ended = True
        finally:
            st.running.remove(stats)
            _add(st.stats, stats, chunk)
            for n, index in enumerate(chunk):
                if n not in got:
                    seat.load -= 1
                    st.held -= 1
                    if ended:  # its endpoint cooled down under it (else the call ended)
                        self._again(index, None, st, counted=not probe)
            st.changed.set()

    def _again(
        self, index: int, answer: Answer | None, st: _State, *, counted: bool = True
    ) -> None:
        """A question its endpoint failed (or whose endpoint was cooled down under it):
        placed again, unless it was placed too often; then it fails with its last error
        (``_fail``). A question that only served to see whether an endpoint is back
        (``counted=False``) is not held against it."""
        if index in st.answered:
            return
        st.tries[index] += counted
        if answer is not None:
            st.last_error[index] = answer
        if st.tries[index] > max(3, 2 * len(self.seats)):
            st.given_up.append(index)
            return
        st.stats.fallbacks += 1
        heapq.heappush(st.pending, index)

    async def _deliver(
        self,
        index: int,
        answer: Answer,
        seat: Seat,
        chunk: list[int],
        st: _State,
        results: dict[int, Answer],
    ) -> None:
        if index in st.answered:
            return
        st.answered.add(index)
        shared = None if answer.shared_with is None else chunk[answer.shared_with]
        error = answer.error
        if isinstance(error, QuestionError) and error.index != index:
            error = _renumbered(error, index)
        placed = answer.model_copy(
            update={"index": index, "endpoint": seat.name, "shared_with": shared, "error": error}
        )
        st.stats.endpoints[seat.name] = st.stats.endpoints.get(seat.name, 0) + 1
        results[index] = placed
        await st.call.deliver(placed)

    async def _fail(self, indices: Sequence[int], st: _State, results: dict[int, Answer]) -> None:
        """Questions no endpoint answered: each fails with the last error it got."""
        for index in indices:
            if index in st.answered:
                continue
            st.answered.add(index)
            q = st.call.questions[index]
            last = st.last_error.get(index)
            error = last.error if last is not None else None
            if isinstance(error, QuestionError) and last is not None and error.index != index:
                error = _renumbered(error, index)
            if error is None:
                error = QuestionError(
                    f"question {index}: no endpoint could answer it (each cooled down or out)",
                    index=index,
                    question=q.text,
                    attempts=0,
                )
            answer = Answer(index=index, question=q.text, id=q.id, error=error)
            results[index] = answer
            await st.call.deliver(answer)


def _renumbered(error: QuestionError, index: int) -> QuestionError:
    """The error of a question asked as position ``error.index`` of a chunk, told as
    question ``index`` of the call."""
    message = str(error)
    said = f"question {error.index}"
    if message.startswith(said):
        message = f"question {index}{message[len(said) :]}"
    copy = BaseException.__new__(type(error), message)
    copy.__dict__.update(vars(error))
    copy.args = (message,)
    copy.index = index
    copy.__cause__ = error.__cause__
    return copy


def _add(total: CallStats, part: CallStats, chunk: Sequence[int]) -> None:
    """One chunk's counters added to the call's."""
    total.requests += part.requests
    total.retries += part.retries
    total.rate_limited += part.rate_limited
    total.limit_wait_s += part.limit_wait_s
    total.deduplicated += part.deduplicated
    total.cache_hits += part.cache_hits
    total.reasked.extend(chunk[i] for i in part.reasked if i < len(chunk))
    total.merge_checks.extend(part.merge_checks)
    if total.plan is None:
        total.plan = part.plan
