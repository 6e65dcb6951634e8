"""Every error fanout raises, in one tree::

    FanoutError
    ├── ConfigError                 (also ValueError) bad Limits / Retry / policy values
    ├── InvalidQuestionError        (also ValueError) a question that cannot be sent; names its index
    ├── QuestionError               one question's final failure; names its index, keeps the cause
    │   ├── QuotaExceededError      the key has no quota left (``insufficient_quota``); never retried
    │   ├── QuestionTimeoutError    the call's ``timeout=`` ran out before the question was answered
    │   ├── MalformedResponseError  every reply was no chat completion (an HTML page, an error
    │   │                           object or no choices at status 200); retried before
    │   ├── EmptyAnswerError        the reply held no answer: no text, no tool call asked for, no
    │   │                           refusal (retried, unless it was cut at ``max_tokens``)
    │   ├── RefusalError            the model refused (``message.refusal``); carries the refusal
    │   └── BudgetExceededError     not sent: its request would have passed the spend cap
    │                               (``max_cost=``); names the question and the cap
    ├── PartialFailureError         raised by ``ask_many`` when any question failed; carries *every*
    │                               answer, the successful ones included
    ├── JobError                    a JSONL job cannot start or go on: its output is locked by
    │                               another run, not writable, or the disk is full
    ├── LoopDeadlockError           (also RuntimeError) ``ask_many_sync`` was called from the
    │                               event loop that serves its endpoint: it would wait forever
    └── CallAbortedError            the caller's input iterator or ``on_answer`` raised: the call
                                    stopped, its requests in flight cancelled; carries the answers
                                    finished before, and that exception as ``__cause__``

The SDK's own exception (``openai.APIStatusError`` and friends) is kept as the
``__cause__`` of a :class:`QuestionError`.

No message holds a secret: every error redacts its arguments when it is made (see
:mod:`fanout.core.redact`), and an :class:`~fanout.Answer` redacts the chain of the error
it carries, ``__cause__`` included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .redact import redact

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from decimal import Decimal

    from .models import Answers

__all__ = [
    "BudgetExceededError",
    "CallAbortedError",
    "ConfigError",
    "EmptyAnswerError",
    "FanoutError",
    "InvalidQuestionError",
    "JobError",
    "LoopDeadlockError",
    "MalformedResponseError",
    "PartialFailureError",
    "QuestionError",
    "QuestionTimeoutError",
    "QuotaExceededError",
    "RefusalError",
    "StructuredOutputError",
]


class FanoutError(Exception):
    """Base class of every error fanout raises."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact(a) if isinstance(a, str) else a for a in args))


class ConfigError(FanoutError, ValueError):
    """A configuration value is out of range or of the wrong kind."""


class InvalidQuestionError(FanoutError, ValueError):
    """A question cannot be sent (empty, not a string, ...)."""

    def __init__(self, message: str, *, index: int | None = None) -> None:
        super().__init__(message)
        self.index = index


class QuestionError(FanoutError):
    """One question failed for good. ``__cause__`` is the last underlying exception."""

    def __init__(self, message: str, *, index: int, question: str, attempts: int) -> None:
        super().__init__(message)
        self.index = index
        self.question = question
        self.attempts = attempts


class QuotaExceededError(QuestionError):
    """The API key has no quota left (429 ``insufficient_quota``). Not retried."""


class QuestionTimeoutError(QuestionError):
    """The call's overall ``timeout=`` ran out before this question was answered."""


class MalformedResponseError(QuestionError):
    """Every attempt's reply was no chat completion: a 200 with an HTML page, a proxy's
    ``{"error": ...}``, ``choices: null``, a choice with no message. Such replies are
    retried like any unreadable body; this is the last one's story."""


class EmptyAnswerError(QuestionError):
    """The reply held no answer: no choices, or a first choice with no text, no refusal,
    and no tool call the request asked for (``tools=``). Retried, unless the reply was
    cut at ``max_tokens`` or filtered (it would come back the same). ``tool_calls``:
    the tool calls the reply held although the request offered no tools."""

    def __init__(
        self,
        message: str,
        *,
        index: int,
        question: str,
        attempts: int,
        tool_calls: Sequence[Mapping[str, Any]] = (),
    ) -> None:
        super().__init__(message, index=index, question=question, attempts=attempts)
        self.tool_calls = [dict(call) for call in tool_calls]


class StructuredOutputError(QuestionError):
    """The reply did not fit the call's structured ``response_format`` (a JSON schema or
    a pydantic model) on any attempt: not JSON, or not valid against it. Retried,
    unless the reply was cut at ``max_tokens``. ``reply`` is the last reply's text,
    ``reason`` why it does not fit."""

    def __init__(
        self, message: str, *, index: int, question: str, attempts: int, reply: str, reason: str
    ) -> None:
        super().__init__(message, index=index, question=question, attempts=attempts)
        self.reply = reply
        self.reason = reason


class RefusalError(QuestionError):
    """The model refused to answer (the reply's ``message.refusal``). Not retried: the
    same question is refused again. ``refusal`` is the model's text."""

    def __init__(
        self, message: str, *, index: int, question: str, attempts: int, refusal: str
    ) -> None:
        super().__init__(message, index=index, question=question, attempts=attempts)
        self.refusal = refusal


class BudgetExceededError(QuestionError):
    """The question was not sent: its request's worst-case cost (its prompt and its
    ``max_tokens`` at the model's price) did not fit under the spend cap
    (``max_cost=``) once the requests in flight had settled. Nothing was spent on it;
    ``cap`` and ``spent`` are US dollars. Not retried."""

    def __init__(
        self,
        message: str,
        *,
        index: int,
        question: str,
        attempts: int,
        cap: Decimal | None = None,
        spent: Decimal | None = None,
    ) -> None:
        super().__init__(message, index=index, question=question, attempts=attempts)
        self.cap = cap
        self.spent = spent


class PartialFailureError(FanoutError):
    """Some questions failed. ``answers`` holds every answer, in input order;
    the failed ones have ``.error`` set."""

    def __init__(self, message: str, *, answers: Answers) -> None:
        super().__init__(message)
        self.answers = answers

    @property
    def errors(self) -> Sequence[QuestionError]:
        """The failures, in input order."""
        return [a.error for a in self.answers if isinstance(a.error, QuestionError)]


class JobError(FanoutError):
    """A JSONL job (``run_jsonl``, ``fanout run``) cannot start or go on: the input
    cannot be read, or the output is locked by another run, is not a writable file,
    or cannot be written to (a full disk). The message names the file; what was
    written before the error is kept, and running the job again resumes it."""


class LoopDeadlockError(FanoutError, RuntimeError):
    """``ask_many_sync`` was called from inside the running event loop that serves the
    endpoint (a notebook cell that started ``fanout.sim.serve()``): it blocks that loop
    until the call ends, so no request could ever be answered. Raised at once, before
    anything is sent; ``await fanout.ask_many(...)`` there instead."""


class CallAbortedError(FanoutError):
    """The call stopped before every question was answered, because code of the
    caller's raised: the input iterator, or the ``on_answer`` callback.

    ``__cause__`` is that exception, as it was raised (not wrapped in an
    ``ExceptionGroup``). The requests still in flight were cancelled: with a broken
    input or callback the call cannot deliver what it promised. ``answers`` holds
    the answers finished before the abort, ordered by index; only those (match them
    to the input by their ``.index``), with a report of what the call did. From
    ``as_completed``, every finished answer has been yielded already and ``answers``
    is empty."""

    def __init__(self, message: str, *, answers: Answers) -> None:
        super().__init__(message)
        self.answers = answers
