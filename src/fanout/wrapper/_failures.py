"""How a streamed split prompt fails: every part's answer in one ``PartialFailureError``.

A wrapped stream asks its first part live and the others as one call beside it. When
a part fails for good, the stream raises :class:`~fanout.PartialFailureError` carrying
the answer of *every* part, in the prompt's order: the first part's (its streamed
text, or the error that stopped it) and the others', numbered as in the prompt.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..core.exceptions import PartialFailureError, QuestionError
from ..core.models import Answer, Answers, Question, Report, Usage
from ..core.redact import redact
from ..engine.execution import question_error
from ..engine.intake import Job

__all__ = ["first_answer", "first_failed", "raise_for_parts"]


def first_failed(
    exc: Exception, question: Question, params: dict[str, Any], *, shown: int, base_url: str
) -> Answer:
    """The first part's answer when its live stream failed for good: before it opened
    (the transport retried it already), or after ``shown`` characters of its text went
    out to the caller (it cannot be asked again: the caller has read them)."""
    if shown:
        error = QuestionError(
            redact(
                f"question 0 failed: its stream broke after {shown} characters of the answer "
                f"were sent, so it was not asked again: {type(exc).__name__}: {exc}"
            ),
            index=0,
            question=question.text,
            attempts=1,
        )
        error.__cause__ = exc
    else:
        job = Job(index=0, question=question, params=params, key="0")
        error = question_error(exc, job, 1, base_url=base_url)
    return Answer(index=0, question=question.text, id=question.id, error=error)


def first_answer(
    question: Question, text: str, finish: str, prompt_tokens: int, completion_tokens: int
) -> Answer:
    """The first part's answer, as its live stream brought it."""
    usage = Usage(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens)
    return Answer(
        index=0,
        question=question.text,
        id=question.id,
        text=text,
        choices=[text],
        finish_reason=finish,
        usage=usage,
        attempts=1,
    )


def raise_for_parts(first: Answer, rest: Answers | None) -> None:
    """Raise ``PartialFailureError`` with every part's answer if any part failed. The
    others were asked as a call of their own: their answers (and errors) are numbered
    from 1 here, as in the prompt."""
    others: Sequence[Answer] = list(rest) if rest is not None else []
    if first.error is None and all(a.error is None for a in others):
        return
    answers = [first]
    for answer in others:
        if isinstance(answer.error, QuestionError):
            _renumber(answer.error, answer.index, answer.index + 1)
        answers.append(answer.model_copy(update={"index": answer.index + 1}))
    failed = [a for a in answers if a.error is not None]
    finished = [a.finish_reason for a in answers if a.error is None]
    base = rest.report if rest is not None else Report()
    report = base.model_copy(
        update={
            "questions": len(answers),
            "answered": len(answers) - len(failed),
            "failed": len(failed),
            "cut_short": finished.count("length"),
            "filtered": finished.count("content_filter"),
            "prompt_tokens": base.prompt_tokens + first.usage.prompt_tokens,
            "completion_tokens": base.completion_tokens + first.usage.completion_tokens,
        }
    )
    error = PartialFailureError(
        f"{len(failed)} of {len(answers)} parts failed; first: part {failed[0].index}: "
        f"{failed[0].error}",
        answers=Answers(answers, report),
    )
    raise error from failed[0].error


def _renumber(error: QuestionError, old: int, new: int) -> None:
    """The error of the others' call's question ``old``, as the prompt's question ``new``
    (its index, and its message's "question N", as a call over every part would say)."""
    error.index = new
    if error.args and isinstance(error.args[0], str):
        message = re.sub(rf"^question {old}\b", f"question {new}", error.args[0])
        error.args = (message, *error.args[1:])
