"""Every error fanout raises, in one tree::

    FanoutError
    ├── ConfigError                 (also ValueError) bad Limits / Retry / policy values
    ├── InvalidQuestionError        (also ValueError) a question that cannot be sent; names its index
    ├── QuestionError               one question's final failure; names its index, keeps the cause
    │   ├── QuotaExceededError      the key has no quota left (``insufficient_quota``); never retried
    │   └── QuestionTimeoutError    the call's ``timeout=`` ran out before the question was answered
    ├── PartialFailureError         raised by ``ask_many`` when any question failed; carries *every*
    │                               answer, the successful ones included
    ├── JobError                    a JSONL job cannot start or go on: its output is locked by
                                    another run, not writable, or the disk is full
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

from typing import TYPE_CHECKING

from .redact import redact

if TYPE_CHECKING:
    from collections.abc import Sequence

    from .models import Answers

__all__ = [
    "CallAbortedError",
    "ConfigError",
    "FanoutError",
    "InvalidQuestionError",
    "JobError",
    "PartialFailureError",
    "QuestionError",
    "QuestionTimeoutError",
    "QuotaExceededError",
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
