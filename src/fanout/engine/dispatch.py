"""Dispatch: batches of jobs are planned and their groups sent under the in-flight window.

``drive`` runs one call: intake reads the questions into batches, each batch is
planned (split, merged, or groups in between), and each group is started as soon
as the window has room, so memory follows the window. Every input position is
answered exactly once through ``emit`` — by execution, by intake (a bad item, a
duplicate), or, when the call's ``timeout`` ends it, with a timeout error.

If code of the caller's raises — its input iterator, or its ``on_answer`` — the
call is aborted: the exception is kept in ``stats.aborted`` (as raised, never in an
``ExceptionGroup``), the requests in flight are cancelled, and ``drive`` returns;
the caller raises :class:`~fanout.CallAbortedError` with what finished.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from .. import telemetry as telemetry
from ..core import clock
from ..core.models import Answer
from ..core.plans import Budget, Plan, PlanRevision
from ..core.progress import ProgressSink, make_progress
from .agreement import CheckResult, check_sample
from .call import CallOptions, CallStats
from .execution import ask_one, check_merged, merge_format_for
from .intake import Intake, Job
from .opening import Opening, answer_lengths_known, open_batch, planning_room, room_in_doubt
from .planning import (
    PRIOR_ANSWER_TOKENS,
    estimate_groups,
    expected_answer_tokens,
    plan_jobs,
    question_tokens,
)
from .results import timed_out
from .spotting import SpotChecks
from .transport import Transport, stream_for_headers

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .caching import CallCache

__all__ = ["commit_plan", "drive", "open_plan", "plan_batch"]

Emit = Callable[[Answer], Awaitable[None]]


def plan_batch(
    transport: Transport, batch: list[Job], opts: CallOptions, budget: Budget | None = None
) -> Plan:
    """Plan a batch with what the transport knows: the endpoint model, the limits'
    room now (or ``budget``), and whether the call's system prompt was sent before."""
    return plan_jobs(
        batch,
        opts,
        endpoint=transport.endpoint,
        budget=transport.limiter.budget() if budget is None else budget,
        max_concurrency=transport.limits.max_concurrency,
        shared_prompt_cached=transport.has_sent_shared(opts.system),
        merge_format=merge_format_for(transport, opts.policy),
    )


def open_plan(transport: Transport, batch: list[Job], opts: CallOptions) -> Opening:
    """The first plan of a batch: at once when its answer lengths and the limits' room
    are known (or the policy is not auto), else weighed under hypotheses of them
    (``_opening``)."""
    budget = planning_room(transport.limiter.budget(), len(batch))
    known = answer_lengths_known(batch, opts, transport.endpoint.answer_tokens)
    if opts.policy.mode != "auto" or (known and not room_in_doubt(budget, len(batch))):
        plan = plan_batch(transport, batch, opts, budget)
        return Opening(wave=0, plan=plan, uncertain=False)
    return open_batch(
        batch, opts, budget, lambda j, o, b: plan_batch(transport, j, o, b), lengths_known=known
    )


def plan_to_price(transport: Transport, batch: list[Job], opts: CallOptions, plan: Plan) -> Plan:
    """``plan`` as its cost is estimated before anything is sent (``Fanout.plan``): with
    the answer lengths unknown, its candidates at the documented assumption (200 tokens,
    at most ``max_tokens``) rather than at the short answers an opening may commit to:
    an estimate before spending should not be the cheapest case."""
    if answer_lengths_known(batch, opts, transport.endpoint.answer_tokens):
        return plan
    priced = plan_batch(transport, batch, opts)
    same = [c for c in priced.candidates if c.label == plan.chosen.label]
    return dataclasses.replace(priced, chosen=same[0] if same else priced.chosen)


def commit_plan(opening: Opening) -> Plan:
    """The plan for all of an opening's questions: its own, or, if it would send a first
    wave, the best one to commit to instead."""
    if opening.wave and opening.fallback is not None:
        return opening.fallback
    return opening.plan


def sent_until(plan: Plan, in_flight: Iterable[tuple[float, list[Job]]]) -> float | None:
    """When the groups already sent (each with when it started) are expected back, by
    the estimate ``plan`` was made with: its endpoint model and the answer length it
    assumed, each group costed as the planner costs one (a merged one's overheads, and
    its questions asked again). None if there are none."""
    inputs = plan.inputs
    assumed = (
        sum(inputs.answer_tokens) / len(inputs.answer_tokens)
        if inputs.answer_tokens
        else PRIOR_ANSWER_TOKENS
    )
    ends = []
    ep = inputs.endpoint
    for at, group in in_flight:
        if len(group) == 1:  # what estimate_groups says of one request alone, directly
            prompt = inputs.shared_prompt_tokens + question_tokens(group[0])
            answer = expected_answer_tokens(group[0], assumed)
            ends.append(at + ep.request_s(max(1, prompt - inputs.cached_prompt_tokens), answer))
            continue
        alone = dataclasses.replace(
            inputs,
            question_tokens=[question_tokens(job) for job in group],
            answer_tokens=[expected_answer_tokens(job, assumed) for job in group],
            budget=Budget(),
            mergeable=[True] * len(group),
        )
        ends.append(at + estimate_groups([list(range(len(group)))], alone)[0])
    return max(ends, default=None)


def _alike(last: PlanRevision, new: PlanRevision) -> bool:
    """``new`` plans the next batch of an iterator as ``last`` planned the one before."""
    return (
        new.trigger == last.trigger == "next batch"
        and new.plan.chosen.label == last.plan.chosen.label
    )


def _checked(result: CheckResult | None) -> str:
    """The trigger of the plan made when the call's first merge check came back."""
    if result is None:
        return "merge check: failed"
    return (
        f"merge check: {result.agreed} of {result.compared} merged answers agreed with split ones"
    )


def _heard(answers: int, reports: int) -> str:
    return f"after the first wave: {answers} answer(s), {reports} header report(s)"


class _Evidence:
    """Responses this call has had back, and a way to wait for more."""

    def __init__(self) -> None:
        self.count = 0
        self.reports = 0  # responses whose headers came (before their body, if streamed)
        self.running = 0  # groups started and not finished
        self.wave_back = 0  # requests of the current first wave that are back
        self._event = anyio.Event()
        self._waiting = 0  # tasks in changed(): with none, a response wakes nobody

    def _wake(self) -> None:
        if not self._waiting:  # no new Event per response when nobody waits (hot path)
            return
        self._event.set()
        self._event = anyio.Event()

    def add(self) -> None:
        self.count += 1
        self._wake()

    def poke(self) -> None:
        """Wake the waiters without counting a response (a canary learned)."""
        self._wake()

    def report(self) -> None:
        self.reports += 1
        self._wake()

    async def changed(self) -> None:
        self._waiting += 1
        try:
            await self._event.wait()
        finally:
            self._waiting -= 1


@dataclasses.dataclass
class _FirstCheck:
    """The call's first merge checks: whether one is out (the groups after it are held
    until it is back), how many came back, and what the last one found."""

    out: bool = False
    back: int = 0
    result: CheckResult | None = None


@dataclasses.dataclass(frozen=True)
class _Due:
    """When the groups of a plan stop being sent and the rest is planned again: the
    responses reached ``responses`` (answer lengths unknown: after a first wave's first
    answer, then each time they double), the endpoint reported its room after
    ``reports`` reports, or the first merge check came back after ``checks``."""

    responses: int | None = None
    reports: int | None = None
    checks: int | None = None

    @property
    def held(self) -> bool:
        """Whether any re-plan may come while the plan's groups are sent."""
        return self.responses is not None or self.checks is not None

    def reached(self, evidence: _Evidence, check: _FirstCheck) -> bool:
        return (
            (self.responses is not None and evidence.count >= self.responses)
            or (self.reports is not None and evidence.reports > self.reports)
            or (self.checks is not None and check.back > self.checks)
        )


class _Run:
    """One call (see ``drive``): its state is what the groups it starts report back
    (``evidence``, ``check``) and what is in flight; ``dispatch`` plans each batch and
    starts its groups under the window, re-planning as evidence comes in."""

    def __init__(
        self,
        transport: Transport,
        opts: CallOptions,
        stats: CallStats,
        emit: Emit,
        *,
        cache: CallCache | None,
    ) -> None:
        self.transport = transport
        self.opts = opts
        self.stats = stats
        self.emit = emit
        self.cache = cache
        self.sink: ProgressSink | None = make_progress() if opts.progress else None
        self.window = anyio.Semaphore(max(2 * transport.limits.max_concurrency, 16))
        self.scope = anyio.CancelScope()
        self.evidence = _Evidence()
        self.check = _FirstCheck()
        self.started = 0.0  # the call's start on the engine's clock (set by run)
        self.in_flight: dict[object, tuple[float, list[Job]]] = {}  # started: when, and what
        self.spots = SpotChecks(transport, opts, stats)  # merged groups after the first check
        self.intake: Intake

    # --- answers ---------------------------------------------------------------------
    def abort(self, exc: BaseException, by: str) -> None:
        """Stop the call: keep the first exception that stopped it, cancel the rest."""
        if self.stats.aborted is None:
            self.stats.aborted, self.stats.aborted_by = exc, by
        self.scope.cancel()

    async def deliver(self, answer: Answer) -> None:
        stats = self.stats
        stats.done += 1
        await self.emit(answer)
        if self.cache is not None:
            await self.cache.keep(answer)
        if self.opts.on_answer is not None:
            try:
                result = self.opts.on_answer(answer)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                self.abort(exc, "on_answer")
                raise
        if self.sink is not None:
            self.sink.update(
                done=stats.done,
                total=self.intake.total,
                retries=stats.retries,
                rate_limited=stats.rate_limited,
            )

    async def finish(self, job: Job, answer: Answer) -> None:
        if self.spots.learn(job, answer) and self.check.out:  # asked alone: a canary
            self.evidence.poke()
        await self.intake.finish(job, answer)

    def sampled(self, job: Job, answer: Answer) -> None:
        """A first check's question answered alone, back before its merged reply."""
        if self.spots.learn(job, answer):
            self.evidence.poke()

    # --- groups ----------------------------------------------------------------------
    def _done(self) -> None:
        """A started group is back (answered, failed or cancelled)."""
        self.window.release()
        self.evidence.running -= 1
        self.evidence.add()

    async def first_check(self, group: list[Job], sample: int) -> None:
        """The call's first merge check, beside the groups after it."""
        try:
            self.check.result = await check_merged(
                self.transport,
                group,
                sample,
                self.opts,
                self.stats,
                self.finish,
                on_alone=self.sampled,
            )
        except Exception as exc:  # a bug of fanout's: kept, the finished answers not lost
            self.abort(exc, "fanout")
        finally:
            self.check.out = False
            self.check.back += 1
            self._done()

    async def run_group(self, group: list[Job], stream: bool = False, wave: bool = False) -> None:
        key = object()
        self.in_flight[key] = (clock.now() - self.started, group)
        if stream:  # a first wave's first request: its headers come with its first token
            stream_for_headers.set(True)
        try:
            if len(group) == 1:
                answer = await ask_one(self.transport, group[0], self.opts, self.stats)
                await self.finish(group[0], answer)
            else:
                await self.spots.run(group, self.finish)
        except Exception as exc:  # on_answer's is kept already; anything else is a bug of
            self.abort(exc, "fanout")  # fanout's, kept so that the finished answers are not lost
        finally:
            del self.in_flight[key]
            if wave:
                self.evidence.wave_back += 1
            self._done()

    async def start(
        self, tg: TaskGroup, group: list[Job], stream: bool = False, wave: bool = False
    ) -> None:
        """Start a group once the window has room for it."""
        await self.window.acquire()
        self.evidence.running += 1
        tg.start_soon(self.run_group, group, stream, wave)

    # --- plans -----------------------------------------------------------------------
    def revise(self, plan: Plan, trigger: str, questions: int, *, first_batch: bool) -> int:
        """Record a decision (``Report.revisions``); return its place there."""
        stats, endpoint = self.stats, self.transport.endpoint
        revision = PlanRevision(
            at_s=clock.now() - self.started,
            trigger=trigger,
            questions=questions,
            plan=plan,
            observations=endpoint.estimate().observations,
            answer_tokens=endpoint.answer_tokens,
            sent_until_s=sent_until(plan, self.in_flight.values()),
        )
        last = stats.revisions[-1] if stats.revisions else None
        if last is not None and _alike(last, revision):
            # One decision for one more batch: a streamed call's report stays the size
            # of its decisions, not of its input (a revision per batch held each plan).
            stats.revisions[-1] = dataclasses.replace(
                revision,
                questions=last.questions + questions,
                batches=last.batches + 1,
                earlier_requests=last.requests,
            )
        else:
            stats.revisions.append(revision)
        if (first_batch and not trigger.startswith("first wave")) or stats.plan is None:
            stats.plan = plan
        telemetry.planned(plan)
        return len(stats.revisions) - 1

    def _sent(self, revision: int, requests: int) -> None:
        """Record how many requests a revision sent before the next one replaced it."""
        revisions = self.stats.revisions
        revisions[revision] = dataclasses.replace(revisions[revision], requests_sent=requests)

    async def dispatch(self, tg: TaskGroup, batch: list[Job]) -> None:
        """Plan the batch and start its groups; while its answer lengths (or the limits'
        room) are unknown, re-plan the groups not yet started as responses come in
        (after a first wave's first answer, then each time the responses double), until
        they are known. Nothing started is sent again: a re-plan covers only the
        questions still waiting."""
        first_batch = not self.stats.revisions
        opening = open_plan(self.transport, batch, self.opts)
        adaptive = opening.uncertain
        pending = batch
        if opening.wave:
            wave, pending = batch[: opening.wave], batch[opening.wave :]
            self.evidence.wave_back = 0
            self.revise(
                opening.plan,
                "first wave: answer lengths unknown",
                len(wave),
                first_batch=first_batch,
            )
            for n, job in enumerate(wave):
                await self.start(tg, [job], stream=n == 0, wave=True)
            plan, trigger, adaptive = await self.after_wave(pending, len(wave))
        else:
            plan, trigger = opening.plan, "the call's questions" if first_batch else "next batch"
        while pending:
            if plan.merge_check and not self.check.out:
                pending = await self.send_first_check(tg, plan, trigger, pending, first_batch)
                if not pending:
                    break
                while self.check.out:
                    await self.evidence.changed()
                reopened = open_plan(self.transport, pending, self.opts)
                plan, adaptive = commit_plan(reopened), reopened.uncertain
                trigger = _checked(self.check.result)
                continue
            revision = self.revise(plan, trigger, len(pending), first_batch=first_batch)
            due = self.due_for(plan, adaptive)
            pending = await self.send_groups(tg, plan, pending, revision, due)
            if pending:
                reopened = open_plan(self.transport, pending, self.opts)
                plan = commit_plan(reopened)  # no second wave
                adaptive = reopened.uncertain
                trigger = self.replan_trigger(due)

    async def send_first_check(
        self, tg: TaskGroup, plan: Plan, trigger: str, pending: list[Job], first_batch: bool
    ) -> list[Job]:
        """Merged answers not yet known to agree with split ones here: the first merged
        group is sent merged, a sample of it alone as well, and the rest wait for the
        comparison and are planned with what it shows. (They once went on beside it,
        checked by canaries: on a real model a canary that agreed vouched for groups
        whose other answers were wrong, see ``canaries``.) Returns the questions left."""
        merged_groups = [g for g in plan.groups if len(g) > 1]
        positions = merged_groups[0]
        sample = check_sample(len(positions), more=len(merged_groups) > 1)
        revision = self.revise(plan, trigger, len(pending), first_batch=first_batch)
        self._sent(revision, sample + 1)  # alone, and once merged
        group = [pending[i] for i in positions]
        taken = set(positions)
        await self.window.acquire()
        self.evidence.running += 1
        self.check.out = True
        tg.start_soon(self.first_check, group, sample)
        return [job for i, job in enumerate(pending) if i not in taken]

    def due_for(self, plan: Plan, adaptive: bool) -> _Due:
        """When sending ``plan`` stops for a re-plan: a plan made before the endpoint
        reported its room is redone once it has; one made while the first merge check is
        out, once it is back."""
        evidence = self.evidence
        return _Due(
            responses=max(2 * evidence.count, evidence.count + 2) if adaptive else None,
            reports=evidence.reports if not self.transport.limiter.budget().room_known else None,
            checks=self.check.back if self.check.out else None,
        )

    def replan_trigger(self, due: _Due) -> str:
        if due.checks is not None and not self.check.out:
            return _checked(self.check.result)
        learned = self.transport.endpoint.answer_tokens
        known = (
            f"answers ~{learned:.0f} tokens"
            if learned is not None
            else "the limits' room reported, answer lengths not yet known"
        )
        return f"{self.evidence.count} responses in: {known}"

    async def send_groups(
        self, tg: TaskGroup, plan: Plan, pending: list[Job], revision: int, due: _Due
    ) -> list[Job]:
        """Start the plan's groups, in order; returns the questions of those not started
        when a re-plan came due. While merged groups are checked as they go, each decides
        how it is checked as it can be sent, with the checks that came back by then."""
        held = due.held or self.spots.checks_as_sent(plan)
        for n, positions in enumerate(plan.groups):
            if held:
                await self.hold_until_sendable(due)
            await self.window.acquire()
            if held and due.reached(self.evidence, self.check):
                self.window.release()
                self._sent(revision, n)
                return [pending[i] for group in plan.groups[n:] for i in group]
            self.evidence.running += 1
            tg.start_soon(self.run_group, [pending[i] for i in positions])
            if held:
                await anyio.lowlevel.checkpoint()  # let it take its place with the limiter
        return []

    async def after_wave(self, pending: list[Job], wave: int) -> tuple[Plan, str, bool]:
        """Wait for what the first wave tells (its first headers: the limits' room; its
        first answer: how long answers run), re-weighing the opening of the rest each
        time, until one plan is worth committing to; when the whole wave is back having
        taught nothing (it failed), or nothing comes in time, the best plan then."""
        transport, evidence = self.transport, self.evidence
        wait = transport.endpoint.estimate().request_s(100, PRIOR_ANSWER_TOKENS)
        trigger = "no answer from the first wave in time"
        with anyio.move_on_after(max(5.0, 2 * wait)):
            while True:
                await evidence.changed()
                trigger = _heard(evidence.count, evidence.reports)
                reopened = open_plan(transport, pending, self.opts)
                if reopened.wave == 0:
                    return reopened.plan, trigger, reopened.uncertain
                if evidence.wave_back >= wave:  # all back, and still in doubt: no re-weighing
                    return commit_plan(reopened), trigger, True
        return commit_plan(open_plan(transport, pending, self.opts)), trigger, True

    async def hold_until_sendable(self, due: _Due) -> None:
        """While re-planning, a group starts only when it could be sent now (a request
        slot free, the request limit's room): one started would wait committed to its
        plan. Returns early when the next re-plan is due."""
        transport, evidence = self.transport, self.evidence
        while not due.reached(evidence, self.check) and evidence.running > 0:
            budget = transport.limiter.budget()
            busy = evidence.running >= transport.limits.max_concurrency
            if not busy and (budget.rpm is None or budget.requests_now > 0):
                return
            # Looked at again within a tenth of the request pacing: a request slot
            # opens at most that late.
            pace = 6.0 / budget.rpm if budget.rpm and not busy else 1.0
            with anyio.move_on_after(max(0.005, min(pace, 1.0))):
                await evidence.changed()

    # --- the call --------------------------------------------------------------------
    async def run(self, questions: Iterable[Any] | AsyncIterable[Any], keep_finished: bool) -> None:
        await self.transport.check_limiter()
        self.started = clock.now()
        intake = self.intake = Intake(
            questions, self.opts, self.stats, self.deliver, keep_finished=keep_finished
        )
        self.transport.header_listeners.add(self.evidence.report)
        try:
            with self.scope:
                with anyio.move_on_after(self.opts.timeout):
                    async with anyio.create_task_group() as tg:
                        try:
                            async for batch in intake.batches():
                                if self.cache is not None:
                                    batch = await self.cache.take_hits(batch, intake.finish)
                                if batch:
                                    await self.dispatch(tg, batch)
                        except Exception as exc:
                            by = "the input" if exc is intake.input_error else "fanout"
                            self.abort(exc, by)
                if self.stats.aborted is None:
                    await self.time_out_unfinished()
        except Exception as exc:  # from on_answer (kept already), while delivering timeouts
            self.abort(exc, "fanout")
        finally:
            self.transport.header_listeners.discard(self.evidence.report)
            if self.sink is not None:
                self.sink.close()

    async def time_out_unfinished(self) -> None:
        """Timed out: whatever is still pending fails with a timeout, nothing is lost; a
        question a merge check asked alone has its answer, whatever the merged reply it
        waited for would have said."""
        for job in self.intake.unfinished():
            if job.answered_alone is not None:
                await self.intake.finish(job, job.answered_alone)
                continue
            await self.deliver(timed_out(job.index, job.question, job.attempts))
            for index, q in job.duplicates:
                await self.deliver(timed_out(index, q))


async def drive(
    transport: Transport,
    questions: Iterable[Any] | AsyncIterable[Any],
    opts: CallOptions,
    stats: CallStats,
    emit: Emit,
    *,
    keep_finished: bool,
    cache: CallCache | None = None,
) -> None:
    """Answer every question of one call, calling ``emit`` once per input position.

    ``keep_finished``: remember finished answers for later duplicates (``ask_many``
    keeps every answer anyway; ``as_completed`` keeps memory bounded instead).
    ``cache``: the call's response cache: its hits are answered before planning, and
    the other answers kept in it as they are delivered."""
    await _Run(transport, opts, stats, emit, cache=cache).run(questions, keep_finished)
