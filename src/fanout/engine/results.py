"""Results: answers put in input order, the report of a call, and the failure that
carries them all.

Nothing here sends anything: it turns what the other rooms produced into what the
caller gets back, making sure every input position has exactly one answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal

from ..core.exceptions import (
    CallAbortedError,
    PartialFailureError,
    QuestionError,
    QuestionTimeoutError,
)
from ..core.models import Answer, Answers, Question, Report, Usage
from .call import CallOptions, CallStats

__all__ = ["aborted", "assemble", "build_report", "shared_copy", "timed_out"]


def shared_copy(answer: Answer, index: int, question: Question) -> Answer:
    """A duplicate question's copy of an answer: its own index, no usage of its own."""
    error = answer.error
    if isinstance(error, QuestionError):
        message = str(error)
        said = f"question {answer.index}"
        if message.startswith(said):  # the message names this question, not the first
            rest = message[len(said) :]
            message = f"question {index}{rest} (asked once, as question {answer.index})"
        # Same class and fields (a refusal, tool calls), its own message and position.
        copy = BaseException.__new__(type(error), message)
        copy.__dict__.update(vars(error))
        copy.index, copy.question = index, question.text
        copy.__cause__ = error.__cause__
        error = copy
    return answer.model_copy(
        update={
            "index": index,
            "question": question.text,
            "id": question.id,
            "usage": Usage(),
            "cost": None if answer.cost is None else Decimal(0),
            "attempts": 0,
            "shared_with": answer.index,
            "error": error,
        }
    )


def timed_out(index: int, question: Question, attempts: int = 0) -> Answer:
    """The answer of a question the call's ``timeout`` ended before it was answered;
    ``attempts``: the requests already made for it."""
    made = f" ({attempts} attempt(s) made)" if attempts else ""
    err = QuestionTimeoutError(
        f"question {index} was not answered before the call's timeout{made}",
        index=index,
        question=question.text,
        attempts=attempts,
    )
    return Answer(index=index, question=question.text, id=question.id, attempts=attempts, error=err)


def build_report(
    answers: Sequence[Answer], stats: CallStats, wall: float, opts: CallOptions
) -> Report:
    usage = Usage()
    cost: Decimal | None = Decimal(0)
    for a in answers:
        usage = usage + a.usage
        if a.cost is not None and cost is not None:
            cost += a.cost
        elif a.usage.total_tokens:  # tokens of no known price: the total is unknown
            cost = None
    failed = sum(1 for a in answers if a.error is not None)
    finished = [a.finish_reason for a in answers if a.error is None]
    return Report(
        questions=len(answers),
        answered=len(answers) - failed,
        failed=failed,
        cut_short=finished.count("length"),
        filtered=finished.count("content_filter"),
        wall_s=wall,
        requests=stats.requests,
        retries=stats.retries,
        rate_limited=stats.rate_limited,
        prompt_tokens=usage.prompt_tokens,
        completion_tokens=usage.completion_tokens,
        cached_prompt_tokens=usage.cached_prompt_tokens,
        peak_concurrency=stats.peak,
        limit_wait_s=stats.limit_wait_s,
        deduplicated=stats.deduplicated,
        cost=cost,
        cache_hits=stats.cache_hits,
        policy=opts.policy.mode,
        plan=stats.plan,
        revisions=list(stats.revisions),
        reasked=sorted(stats.reasked),
        merge_checks=list(stats.merge_checks),
        questions_read=stats.read,
        input_exhausted=stats.exhausted,
        endpoints=dict(stats.endpoints),
        placements=list(stats.placements),
        cooldowns=list(stats.cooldowns),
        fallbacks=stats.fallbacks,
    )


def assemble(
    results: dict[int, Answer],
    known: Sequence[Question] | None,
    stats: CallStats,
    wall: float,
    opts: CallOptions,
) -> Answers:
    """Every input position's answer, in order, with the call's report; raises
    :class:`PartialFailureError` (carrying them all) if any failed, or an iterator
    was not read to its end, and the call said ``on_error="raise"``; raises
    :class:`CallAbortedError` if the call was aborted.

    ``known`` is the input when it was a list: a position the call's timeout ended
    before it was even read still gets its error answer."""
    if stats.aborted is not None:
        raise aborted(results, stats, wall, opts)
    total = len(known) if known is not None else (max(results) + 1 if results else 0)
    for i in range(total):
        if i not in results:  # never started before the timeout
            results[i] = timed_out(i, known[i] if known is not None else Question(text="?"))
    ordered = [results[i] for i in range(total)]
    answers = Answers(ordered, build_report(ordered, stats, wall, opts))
    if opts.on_error != "raise":
        return answers
    failed = answers.report.failed
    unread = ""
    if known is None and not stats.exhausted:
        unread = (
            f"the call's timeout ended before the input was read to its end "
            f"({stats.read} questions read; the rest have no answer)"
        )
    if failed:
        first = next(a for a in ordered if a.error is not None)
        # Each error names its own question.
        raise PartialFailureError(
            f"{failed} of {total} questions failed; first: {first.error}"
            + (f"; and {unread}" if unread else ""),
            answers=answers,
        ) from first.error
    if unread:
        raise PartialFailureError(unread[0].upper() + unread[1:], answers=answers)
    return answers


def aborted(
    results: Mapping[int, Answer],
    stats: CallStats,
    wall: float,
    opts: CallOptions,
    *,
    yielded: bool = False,
) -> CallAbortedError:
    """The error of a call that code of the caller's stopped (``stats.aborted``),
    carrying the answers finished before it, ordered by index, and that code's
    exception as its cause. ``yielded``: the answers went to the caller as they
    finished (``as_completed``), so none are kept."""
    finished = [results[i] for i in sorted(results)]
    answers = Answers(finished, build_report(finished, stats, wall, opts))
    cause = stats.aborted
    what = {"the input": "reading the input raised", "on_answer": "on_answer raised"}.get(
        stats.aborted_by, "fanout failed unexpectedly with"
    )
    kept = (
        "every answer finished before it was yielded"
        if yielded
        else f"the {len(finished)} answer(s) finished before it are in .answers"
    )
    err = CallAbortedError(
        f"the call stopped: {what} {type(cause).__name__}: {cause}; {kept}; the requests "
        "in flight were cancelled",
        answers=answers,
    )
    err.__cause__ = cause
    return err
