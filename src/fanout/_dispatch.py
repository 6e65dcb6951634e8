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

import inspect
from collections.abc import AsyncIterable, Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any

import anyio

from . import _telemetry as telemetry
from ._call import CallOptions, CallStats
from ._execution import ask_merged, ask_one
from ._intake import Intake, Job
from ._models import Answer
from ._planning import plan_jobs
from ._plans import Plan
from ._progress import ProgressSink, make_progress
from ._results import timed_out
from ._transport import Transport

if TYPE_CHECKING:
    from anyio.abc import TaskGroup

__all__ = ["drive", "plan_batch"]

Emit = Callable[[Answer], Awaitable[None]]


def plan_batch(transport: Transport, batch: list[Job], opts: CallOptions) -> Plan:
    """Plan a batch with what the transport knows: the endpoint model, the limits'
    room now, and whether the call's system prompt was sent before."""
    return plan_jobs(
        batch,
        opts,
        endpoint=transport.endpoint,
        budget=transport.limiter.budget(),
        max_concurrency=transport.limits.max_concurrency,
        shared_prompt_cached=transport.has_sent_shared(opts.system),
    )


async def drive(
    transport: Transport,
    questions: Iterable[Any] | AsyncIterable[Any],
    opts: CallOptions,
    stats: CallStats,
    emit: Emit,
    *,
    keep_finished: bool,
) -> None:
    """Answer every question of one call, calling ``emit`` once per input position.

    ``keep_finished``: remember finished answers for later duplicates (``ask_many``
    keeps every answer anyway; ``as_completed`` keeps memory bounded instead)."""
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

    async def run_group(group: list[Job]) -> None:
        try:
            if len(group) == 1:
                await intake.finish(group[0], await ask_one(transport, group[0], opts, stats))
            else:
                await ask_merged(transport, group, opts, stats, intake.finish)
        except Exception as exc:  # on_answer's is kept already; anything else is a bug of
            abort(exc, "fanout")  # fanout's, kept so that the finished answers are not lost
        finally:
            window.release()

    async def dispatch(tg: TaskGroup, batch: list[Job]) -> None:
        plan = plan_batch(transport, batch, opts)
        if stats.plan is None:
            stats.plan = plan
        telemetry.planned(plan)
        for positions in plan.groups:
            await window.acquire()
            tg.start_soon(run_group, [batch[i] for i in positions])

    try:
        with call:
            with anyio.move_on_after(opts.timeout):
                async with anyio.create_task_group() as tg:
                    try:
                        async for batch in intake.batches():
                            await dispatch(tg, batch)
                    except Exception as exc:
                        abort(exc, "the input" if exc is intake.input_error else "fanout")
            # Timed out: whatever is still pending fails with a timeout, nothing is lost.
            for job in intake.unfinished() if stats.aborted is None else []:
                await deliver(timed_out(job.index, job.question, job.attempts))
                for index, q in job.duplicates:
                    await deliver(timed_out(index, q))
    except Exception as exc:  # from on_answer (kept already), while delivering timeouts
        abort(exc, "fanout")
    finally:
        if sink is not None:
            sink.close()
