"""Dispatch: the runner. A call's groups are started under the in-flight window, as its
``Replanner`` decides.

``drive`` runs one call: intake reads the questions into batches; for each, the call's
:class:`~fanout.engine.replanning.Replanner` decides the plan (split, merged, or groups
in between), when sending it stops for a re-plan, and how each merged group goes; the
runner starts each group as soon as the window has room for it (so memory follows the
window), sends it (``execution``, ``canaries``), and tells the replanner what came
back. It decides nothing itself. Every input position is answered exactly once
through ``emit`` — by execution, by intake (a bad item, a duplicate), or, when the
call's ``timeout`` ends it, with a timeout error.

If code of the caller's raises — its input iterator, or its ``on_answer`` — the
call is aborted: the exception is kept in ``stats.aborted`` (as raised, never in an
``ExceptionGroup``), the requests in flight are cancelled, and ``drive`` returns;
the caller raises :class:`~fanout.CallAbortedError` with what finished.
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel

from ..core import clock
from ..core.models import Answer
from ..core.plans import Plan
from ..core.progress import ProgressSink, make_progress
from .call import CallOptions, CallStats
from .canaries import check_with_canary, judge_canary, with_rider
from .execution import (
    ask_merged,
    ask_one,
    check_merged,
    check_reply,
    deliver_merged,
    group_tally,
    send_merged,
)
from .intake import Intake, Job
from .replanning import Due, GroupSend, Replanner
from .results import timed_out
from .transport import Transport, stream_for_headers

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

    from .caching import CallCache

__all__ = ["drive"]

Emit = Callable[[Answer], Awaitable[None]]


class _Run:
    """One call (see ``drive``): what is in flight, the window, and the answers
    delivered; ``replan`` takes the decisions."""

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
        self.replan = Replanner(transport, opts, stats)
        self.in_flight: dict[object, tuple[float, list[Job]]] = {}  # started: when, and what
        self.intake: Intake

    # --- answers ---------------------------------------------------------------------
    def abort(self, exc: BaseException, by: str) -> None:
        """Stop the call: keep the first exception that stopped it, cancel the rest."""
        if self.stats.aborted is None:
            self.stats.aborted, self.stats.aborted_by = exc, by
        self.scope.cancel()

    async def deliver(self, answer: Answer, out: Callable[[], None] | None = None) -> None:
        """Hand ``answer`` on; ``out`` is called once it is emitted (see ``Intake``)."""
        stats = self.stats
        await self.emit(answer)
        stats.done += 1
        if out is not None:
            out()
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
        self.replan.finished(job, answer)
        await self.intake.finish(job, answer)

    # --- groups ----------------------------------------------------------------------
    async def _take_window(self) -> None:
        """A place in the window: at once when it has room (no turn of the event loop
        per group, so a plan's groups leave together, as ``asyncio.gather`` sends), else
        when a started group is back. A call already cancelled (aborted, or its
        timeout) takes none, as ``acquire`` would not: a check, not a turn of the loop."""
        await anyio.lowlevel.checkpoint_if_cancelled()
        try:
            self.window.acquire_nowait()
        except anyio.WouldBlock:
            await self.window.acquire()

    def _done(self, *, wave: bool = False) -> None:
        """A started group is back (answered, failed or cancelled)."""
        self.window.release()
        self.replan.group_back(wave=wave)

    async def first_check(self, group: list[Job], sample: int) -> None:
        """The call's first merge check, beside the groups after it."""
        key = object()
        self.in_flight[key] = (clock.now() - self.replan.started, group)
        result = None
        try:
            result = await check_merged(
                self.transport,
                group,
                sample,
                self.opts,
                self.stats,
                self.finish,
                on_alone=self.replan.sampled,
            )
        except Exception as exc:  # a bug of fanout's: kept, the finished answers not lost
            self.abort(exc, "fanout")
        finally:
            del self.in_flight[key]
            self.replan.first_check_back(result)
            self._done()

    async def run_group(self, group: list[Job], stream: bool = False, wave: bool = False) -> None:
        key = object()
        self.in_flight[key] = (clock.now() - self.replan.started, group)
        if stream:  # a first wave's first request: its headers come with its first token
            stream_for_headers.set(True)
        try:
            if len(group) == 1:
                answer = await ask_one(self.transport, group[0], self.opts, self.stats)
                await self.finish(group[0], answer)
            else:
                await self.run_merged(group, await self.replan.send_for(group))
        except Exception as exc:  # on_answer's is kept already; anything else is a bug of
            self.abort(exc, "fanout")  # fanout's, kept so that the finished answers are not lost
        finally:
            del self.in_flight[key]
            self._done(wave=wave)

    async def run_merged(self, group: list[Job], send: GroupSend) -> None:
        """Send one merged group as the replanner decided: each of its questions alone,
        merged, merged and checked, or merged and held until the replanner decides how
        its reply is taken."""
        transport, opts, stats = self.transport, self.opts, self.stats
        if send.how == "held":
            await self.run_held(group, send)
        elif send.how == "alone":
            stats.merge_checks.append(send.note)

            async def one(job: Job) -> None:
                await self.finish(job, await ask_one(transport, job, opts, stats))

            async with anyio.create_task_group() as tg:
                for job in group:
                    tg.start_soon(one, job)
        elif send.how == "merged":
            await ask_merged(transport, group, opts, stats, self.finish)
        else:
            try:
                if send.canary is not None:
                    await check_with_canary(transport, group, send.canary, opts, stats, self.finish)
                else:
                    await check_merged(transport, group, 1, opts, stats, self.finish)
            finally:
                self.replan.spot_check_back()

    async def run_held(self, group: list[Job], held: GroupSend) -> None:
        """A merged group sent while the spot checks it waits for are out (its canary
        riding it, if it has one): the rate limit's room is not left idle, and its answers
        wait for those checks instead. Once its reply is back and they are, it goes as
        the replanner decides then: delivered, checked (by the canary, or by its last
        question asked alone now), or asked alone, the reply unused. A canary that rode
        it is compared whenever its merged answers would be taken: as its check, and
        when none is due (for no request: one that disagrees keeps them out)."""
        transport, opts, stats = self.transport, self.opts, self.stats
        start = clock.now()
        tally = group_tally(group)
        canary = held.canary
        jobs = group if canary is None else with_rider(group, canary)
        reply = await send_merged(transport, jobs, opts, stats, tally)
        send = await self.replan.after_held(held, group)
        checked = send.how == "checked"
        judge = send.canary if checked else canary if send.how == "merged" else None
        try:
            if judge is not None:
                await judge_canary(
                    transport, group, judge, reply, tally, opts, stats, self.finish, start
                )
            elif checked:
                await check_reply(
                    transport,
                    group,
                    reply,
                    tally,
                    opts,
                    stats,
                    self.finish,
                    start,
                    rider=None if canary is None else (canary.job.question.text, canary.answer),
                )
            else:
                if send.how == "alone":
                    stats.merge_checks.append(send.note)
                await deliver_merged(
                    transport,
                    group,
                    reply,
                    tally,
                    opts,
                    stats,
                    self.finish,
                    start,
                    trusted=send.how == "merged",
                    riders=len(jobs) - len(group),
                )
        finally:
            if checked:
                self.replan.spot_check_back()

    async def start(
        self, tg: TaskGroup, group: list[Job], stream: bool = False, wave: bool = False
    ) -> None:
        """Start a group once the window has room for it."""
        await self._take_window()
        self.replan.group_started()
        tg.start_soon(self.run_group, group, stream, wave)

    # --- plans -----------------------------------------------------------------------
    def revise(self, plan: Plan, trigger: str, questions: int) -> int:
        return self.replan.revise(plan, trigger, questions, self.in_flight.values())

    async def dispatch(self, tg: TaskGroup, batch: list[Job]) -> None:
        """Send the batch as the replanner plans it; while its answer lengths (or the
        limits' room) are unknown, the groups not yet started are planned again as
        responses come in (after a first wave's first answer, then each time the
        responses double), until they are known. Nothing started is sent again: a
        re-plan covers only the questions still waiting."""
        replan = self.replan
        opening = replan.open_batch(batch)
        adaptive = opening.uncertain
        pending = batch
        if opening.wave:
            wave, pending = batch[: opening.wave], batch[opening.wave :]
            self.revise(opening.plan, replan.wave_trigger(), len(wave))
            for n, job in enumerate(wave):
                # The wave's first request is streamed: its headers come with its first token.
                await self.start(tg, [job], stream=n == 0, wave=True)
            plan, trigger, adaptive = await replan.after_wave(pending, len(wave))
        else:
            plan, trigger = opening.plan, replan.batch_trigger()
        while pending:
            check = replan.first_check_of(plan)
            if check is not None:
                pending = await self.send_first_check(tg, plan, trigger, pending, check)
                if not pending:
                    break
                trigger = await replan.first_check_back_yet()
                plan, adaptive = replan.next_plan(pending)
                continue
            revision = self.revise(plan, trigger, len(pending))
            due = replan.due_for(plan, adaptive)
            pending = await self.send_groups(tg, plan, pending, revision, due)
            if pending:
                plan, adaptive = replan.next_plan(pending)
                trigger = replan.replan_trigger(due)

    async def send_first_check(
        self,
        tg: TaskGroup,
        plan: Plan,
        trigger: str,
        pending: list[Job],
        check: tuple[list[int], int],
    ) -> list[Job]:
        """Merged answers not yet known to agree with split ones here: the first merged
        group is sent merged, a sample of it alone as well, and the rest wait for the
        comparison and are planned with what it shows. (They once went on beside it,
        checked by canaries: on a real model a canary that agreed vouched for groups
        whose other answers were wrong, see ``canaries``.) Returns the questions left."""
        positions, sample = check
        revision = self.revise(plan, trigger, len(pending))
        self.replan.sent(revision, sample + 1)  # alone, and once merged
        group = [pending[i] for i in positions]
        taken = set(positions)
        await self.window.acquire()
        self.replan.group_started()
        self.replan.first_check_sent()
        tg.start_soon(self.first_check, group, sample)
        return [job for i, job in enumerate(pending) if i not in taken]

    async def send_groups(
        self, tg: TaskGroup, plan: Plan, pending: list[Job], revision: int, due: Due
    ) -> list[Job]:
        """Start the plan's groups, in order; returns the questions of those not started
        when a re-plan came due. While merged groups are checked as they go, each is
        started only as it can be sent, and goes as the replanner decides then."""
        replan = self.replan
        held = replan.holds(plan, due)
        for n, positions in enumerate(plan.groups):
            if held:
                await replan.hold_until_sendable(due)
            await self._take_window()
            if held and replan.reached(due):
                self.window.release()
                replan.sent(revision, n)
                return [pending[i] for group in plan.groups[n:] for i in group]
            replan.group_started()
            tg.start_soon(self.run_group, [pending[i] for i in positions])
            if held:
                await anyio.lowlevel.checkpoint()  # let it take its place with the limiter
        return []

    # --- the call --------------------------------------------------------------------
    async def run(self, questions: Iterable[Any] | AsyncIterable[Any], keep_finished: bool) -> None:
        await self.transport.check_limiter()
        self.replan.started = clock.now()
        intake = self.intake = Intake(
            questions, self.opts, self.stats, self.deliver, keep_finished=keep_finished
        )
        self.transport.header_listeners.add(self.replan.evidence.report)
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
            self.transport.header_listeners.discard(self.replan.evidence.report)
            if self.sink is not None:
                self.sink.close()

    async def time_out_unfinished(self) -> None:
        """Timed out: whatever is still pending fails with a timeout, nothing is lost; a
        question a merge check asked alone has its answer, whatever the merged reply it
        waited for would have said."""
        for job in self.intake.unfinished():
            answer = job.answer or job.answered_alone  # answered, its handing over cut short
            if answer is not None:
                await self.intake.finish(job, answer)
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
