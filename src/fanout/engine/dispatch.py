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
    return open_batch(batch, opts, budget, lambda j, o, b: plan_batch(transport, j, o, b),
                      lengths_known=known)  # fmt: skip


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
    await transport.check_limiter()
    sink: ProgressSink | None = make_progress() if opts.progress else None
    window = anyio.Semaphore(max(2 * transport.limits.max_concurrency, 16))
    call = anyio.CancelScope()

    def abort(exc: BaseException, by: str) -> None:
        """Stop the call: keep the first exception that stopped it, cancel the rest."""
        if stats.aborted is None:
            stats.aborted, stats.aborted_by = exc, by
        call.cancel()

    async def deliver(answer: Answer) -> None:
        stats.done += 1
        await emit(answer)
        if cache is not None:
            await cache.keep(answer)
        if opts.on_answer is not None:
            try:
                result = opts.on_answer(answer)
                if inspect.isawaitable(result):
                    await result
            except Exception as exc:
                abort(exc, "on_answer")
                raise
        if sink is not None:
            sink.update(done=stats.done, total=intake.total, retries=stats.retries,
                        rate_limited=stats.rate_limited)  # fmt: skip

    intake = Intake(questions, opts, stats, deliver, keep_finished=keep_finished)

    evidence = _Evidence()
    started = anyio.current_time()
    transport.header_listeners.add(evidence.report)

    in_flight: dict[object, tuple[float, list[Job]]] = {}  # groups started: when, and what
    spots = SpotChecks(transport, opts, stats)  # merged groups after the first check

    checks_back = 0  # first merge checks of the call that came back
    checked: CheckResult | None = None  # what the last one found
    checking = False  # a first merge check is out: the groups after it are held

    async def finish(job: Job, answer: Answer) -> None:
        if spots.learn(job, answer) and checking:  # asked alone: a canary for later checks
            evidence.poke()
        await intake.finish(job, answer)

    def sampled(job: Job, answer: Answer) -> None:
        """A first check's question answered alone, back before its merged reply."""
        if spots.learn(job, answer):
            evidence.poke()

    async def first_check(group: list[Job], sample: int) -> None:
        """The call's first merge check, beside the groups after it."""
        nonlocal checks_back, checking, checked
        try:
            checked = await check_merged(transport, group, sample, opts, stats, finish,
                                         on_alone=sampled)  # fmt: skip
        except Exception as exc:  # a bug of fanout's: kept, the finished answers not lost
            abort(exc, "fanout")
        finally:
            checking = False
            checks_back += 1
            window.release()
            evidence.running -= 1
            evidence.add()

    async def run_group(group: list[Job], stream: bool = False, wave: bool = False) -> None:
        key = object()
        in_flight[key] = (anyio.current_time() - started, group)
        if stream:  # a first wave's first request: its headers come with its first token
            stream_for_headers.set(True)
        try:
            if len(group) == 1:
                await finish(group[0], await ask_one(transport, group[0], opts, stats))
            else:
                await spots.run(group, finish)
        except Exception as exc:  # on_answer's is kept already; anything else is a bug of
            abort(exc, "fanout")  # fanout's, kept so that the finished answers are not lost
        finally:
            del in_flight[key]
            window.release()
            evidence.running -= 1
            if wave:
                evidence.wave_back += 1
            evidence.add()

    def revise(plan: Plan, trigger: str, questions: int, *, first_batch: bool) -> int:
        endpoint = transport.endpoint
        stats.revisions.append(PlanRevision(
            at_s=anyio.current_time() - started, trigger=trigger, questions=questions, plan=plan,
            observations=endpoint.estimate().observations, answer_tokens=endpoint.answer_tokens,
            sent_until_s=sent_until(plan, in_flight.values()),
        ))  # fmt: skip
        if (first_batch and not trigger.startswith("first wave")) or stats.plan is None:
            stats.plan = plan
        telemetry.planned(plan)
        return len(stats.revisions) - 1

    async def dispatch(tg: TaskGroup, batch: list[Job]) -> None:
        """Plan the batch and start its groups; while its answer lengths (or the limits'
        room) are unknown, re-plan the groups not yet started as responses come in
        (after a first wave's first answer, then each time the responses double), until
        they are known. Nothing started is sent again: a re-plan covers only the
        questions still waiting."""
        first_batch = not stats.revisions
        opening = open_plan(transport, batch, opts)
        adaptive = opening.uncertain
        pending = batch
        if opening.wave:
            wave, pending = batch[: opening.wave], batch[opening.wave :]
            evidence.wave_back = 0
            revise(opening.plan, "first wave: answer lengths unknown", len(wave),
                   first_batch=first_batch)  # fmt: skip
            for n, job in enumerate(wave):
                await window.acquire()
                evidence.running += 1
                tg.start_soon(run_group, [job], n == 0, True)
            plan, trigger, adaptive = await after_wave(pending, len(wave))
        else:
            plan, trigger = opening.plan, "the call's questions" if first_batch else "next batch"
        nonlocal checking
        while pending:
            if plan.merge_check and not checking:
                # Merged answers not yet known to agree with split ones here: the first
                # merged group is sent merged, a sample of it alone as well, and the
                # rest wait for the comparison and are planned with what it shows. (They
                # once went on beside it, checked by canaries: on a real model a canary
                # that agreed vouched for groups whose other answers were wrong, see
                # ``canaries``.)
                merged_groups = [g for g in plan.groups if len(g) > 1]
                positions = merged_groups[0]
                sample = check_sample(len(positions), more=len(merged_groups) > 1)
                revision = revise(plan, trigger, len(pending), first_batch=first_batch)
                group = [pending[i] for i in positions]
                stats.revisions[revision] = dataclasses.replace(  # alone, and once merged
                    stats.revisions[revision], requests_sent=sample + 1
                )
                taken = set(positions)
                pending = [job for i, job in enumerate(pending) if i not in taken]
                await window.acquire()
                evidence.running += 1
                checking = True
                tg.start_soon(first_check, group, sample)
                if not pending:
                    break
                while checking:
                    await evidence.changed()
                reopened = open_plan(transport, pending, opts)
                plan, adaptive = commit_plan(reopened), reopened.uncertain
                trigger = _checked(checked)
                continue
            revision = revise(plan, trigger, len(pending), first_batch=first_batch)
            replan_at = max(2 * evidence.count, evidence.count + 2) if adaptive else None
            # A plan made before the endpoint reported its room is redone once it has;
            # one made while the first merge check is out, once it is back.
            room_at = evidence.reports if not transport.limiter.budget().room_known else None
            check_at = checks_back if checking else None
            # While merged groups are checked as they go, each decides how it is checked
            # as it can be sent, with the checks that came back by then.
            held = replan_at is not None or check_at is not None or spots.checks_as_sent(plan)
            left: list[Job] = []
            for n, positions in enumerate(plan.groups):
                if held:
                    await hold_until_sendable(replan_at, room_at, check_at)
                await window.acquire()
                if held and due(replan_at, room_at, check_at):
                    window.release()
                    left = [pending[i] for group in plan.groups[n:] for i in group]
                    stats.revisions[revision] = dataclasses.replace(
                        stats.revisions[revision], requests_sent=n
                    )
                    break
                evidence.running += 1
                tg.start_soon(run_group, [pending[i] for i in positions])
                if held:
                    await anyio.lowlevel.checkpoint()  # let it take its place with the limiter
            pending = left
            if pending:
                reopened = open_plan(transport, pending, opts)
                plan = commit_plan(reopened)  # no second wave
                adaptive = reopened.uncertain
                learned = transport.endpoint.answer_tokens
                trigger = _checked(checked) if check_at is not None and not checking else (
                    f"{evidence.count} responses in: " + (
                        f"answers ~{learned:.0f} tokens" if learned is not None
                        else "the limits' room reported, answer lengths not yet known"
                    )
                )  # fmt: skip

    async def after_wave(pending: list[Job], wave: int) -> tuple[Plan, str, bool]:
        """Wait for what the first wave tells (its first headers: the limits' room; its
        first answer: how long answers run), re-weighing the opening of the rest each
        time, until one plan is worth committing to; when the whole wave is back having
        taught nothing (it failed), or nothing comes in time, the best plan then."""
        wait = transport.endpoint.estimate().request_s(100, PRIOR_ANSWER_TOKENS)
        trigger = "no answer from the first wave in time"
        with anyio.move_on_after(max(5.0, 2 * wait)):
            while True:
                await evidence.changed()
                trigger = _heard(evidence.count, evidence.reports)
                reopened = open_plan(transport, pending, opts)
                if reopened.wave == 0:
                    return reopened.plan, trigger, reopened.uncertain
                if evidence.wave_back >= wave:  # all back, and still in doubt: no re-weighing
                    return commit_plan(reopened), trigger, True
        return commit_plan(open_plan(transport, pending, opts)), trigger, True

    def due(replan_at: int | None, room_at: int | None, check_at: int | None) -> bool:
        """Is a re-plan due: the responses doubled, the room reported at last, or the
        first merge check back?"""
        return (
            (replan_at is not None and evidence.count >= replan_at)
            or (room_at is not None and evidence.reports > room_at)
            or (check_at is not None and checks_back > check_at)
        )

    async def hold_until_sendable(
        replan_at: int | None, room_at: int | None, check_at: int | None
    ) -> None:
        """While re-planning, a group starts only when it could be sent now (a request
        slot free, the request limit's room): one started would wait committed to its
        plan. Returns early when the next re-plan is due."""
        while not due(replan_at, room_at, check_at) and evidence.running > 0:
            budget = transport.limiter.budget()
            busy = evidence.running >= transport.limits.max_concurrency
            if not busy and (budget.rpm is None or budget.requests_now > 0):
                return
            # Looked at again within a tenth of the request pacing: a request slot
            # opens at most that late.
            pace = 6.0 / budget.rpm if budget.rpm and not busy else 1.0
            with anyio.move_on_after(max(0.005, min(pace, 1.0))):
                await evidence.changed()

    try:
        with call:
            with anyio.move_on_after(opts.timeout):
                async with anyio.create_task_group() as tg:
                    try:
                        async for batch in intake.batches():
                            if cache is not None:
                                batch = await cache.take_hits(batch, intake.finish)
                            if batch:
                                await dispatch(tg, batch)
                    except Exception as exc:
                        abort(exc, "the input" if exc is intake.input_error else "fanout")
            # Timed out: whatever is still pending fails with a timeout, nothing is lost;
            # a question a merge check asked alone has its answer, whatever the merged
            # reply it waited for would have said.
            for job in intake.unfinished() if stats.aborted is None else []:
                if job.answered_alone is not None:
                    await intake.finish(job, job.answered_alone)
                    continue
                await deliver(timed_out(job.index, job.question, job.attempts))
                for index, q in job.duplicates:
                    await deliver(timed_out(index, q))
    except Exception as exc:  # from on_answer (kept already), while delivering timeouts
        abort(exc, "fanout")
    finally:
        transport.header_listeners.discard(evidence.report)
        if sink is not None:
            sink.close()
