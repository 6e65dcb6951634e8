"""Intake: the caller's questions become jobs.

Each item is checked (a bad one becomes an error answer naming it, and the call goes
on), turned into the exact ``create()`` parameters it will be sent with, and
deduplicated on them (identical requests are sent once; the copies get the answer
under their own index). Jobs come out in batches that are planned together: large
from a list, smaller from an iterator, one at a time when there is nothing to plan —
so memory follows the in-flight window, not the input.
"""

from __future__ import annotations

import json
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    KeysView,
    Mapping,
    Set,
)
from dataclasses import dataclass, field
from typing import Any

from ..core.exceptions import ConfigError, InvalidQuestionError
from ..core.models import Answer, Question
from .call import CallOptions, CallStats, Tally
from .responses import check_responses_kwargs
from .results import shared_copy
from .structured import Structured, structured_of

__all__ = [
    "Intake",
    "Job",
    "QuestionLike",
    "check_container",
    "dedupe_key",
    "messages_for",
    "params_for",
    "preview",
    "structured_for",
    "to_question",
]

QuestionLike = str | Question
Deliver = Callable[[Answer, Callable[[], None] | None], Awaitable[None]]
"""Hands one answer on; the callable, if given, is called once the answer is out (the
rest of the handing over, ``on_answer`` say, may still be cut short)."""

SEQUENCE_BATCH = 1024  # questions planned together from a list
STREAM_BATCH = 256  # ... and from an iterator


@dataclass
class Job:
    """One distinct request to answer, and the input positions waiting for it."""

    index: int
    question: Question
    params: dict[str, Any]
    key: str
    duplicates: list[tuple[int, Question]] = field(default_factory=list)
    finished: bool = False
    tallies: list[Tally] = field(default_factory=list)
    """The counters of the requests made for it so far (a merged request's is shared
    by its group), so that a job the call's timeout ends knows what it cost."""
    structured: Structured | None = None
    """The structured ``response_format`` its answer is checked against, if any."""
    answered_alone: Answer | None = None
    """Its answer asked alone by a merge check, kept from when it came back until the
    merged reply it is compared with: the answer if the call's timeout ends first."""
    answer: Answer | None = None
    """Its answer, kept from when it is known until every position waiting for it has
    it (``Intake.finish``)."""
    handed: int = 0
    """Positions that have it so far: its own (``index``), then its duplicates'."""

    @property
    def attempts(self) -> int:
        """Requests made for this job so far, retries included."""
        return sum(t.attempts for t in self.tallies)


def to_question(item: object, index: int) -> Question:
    if isinstance(item, Question):
        return item
    if isinstance(item, str):
        if not item.strip():
            raise InvalidQuestionError(f"question {index} is empty", index=index)
        return Question(text=item)
    raise InvalidQuestionError(
        f"question {index} must be a str or fanout.Question, not {type(item).__name__}",
        index=index,
    )


def check_container(questions: object) -> None:
    if isinstance(questions, (str, bytes)):
        raise InvalidQuestionError(
            "questions must be a sequence of questions, not a single string "
            "(wrap it in a list: ask_many([question]))"
        )
    if isinstance(questions, Mapping):
        raise InvalidQuestionError(
            f"questions must be a sequence of questions, not a {type(questions).__name__}: its "
            "keys would be asked. Pass list(d.values()), or "
            "[fanout.Question(text=q, id=k) for k, q in d.items()] to keep the keys as ids"
        )
    if isinstance(questions, Set) and not isinstance(questions, KeysView):
        raise InvalidQuestionError(
            f"questions must be a sequence of questions, not a {type(questions).__name__}: a set "
            "has no order, so answers could not be matched to positions. Pass a list "
            "(sorted(s), say)"
        )
    if not isinstance(questions, (Iterable, AsyncIterable)):
        raise InvalidQuestionError(
            f"questions must be a sequence or (async) iterable, not {type(questions).__name__}"
        )


def preview(item: object) -> str:
    text = item.text if isinstance(item, Question) else str(item)
    return text if len(text) <= 200 else text[:197] + "..."


def messages_for(question: Question, system: str | None) -> list[Any]:
    """What is sent for ``question``: its system prompt (else ``system``), its
    context, then its text."""
    messages: list[Any] = []
    system = question.system if question.system is not None else system
    if system:
        messages.append({"role": "system", "content": system})
    messages.extend(dict(m) for m in question.context)
    messages.append({"role": "user", "content": question.text})
    return messages


def dedupe_key(question: Question, params: dict[str, Any], opts: CallOptions, index: int) -> str:
    """The key items share when one request answers them all: the request's parameters
    (each item its own with ``dedupe=False``); an untrusted question is never answered
    by a trusted copy's (merged) request."""
    key = json.dumps(params, sort_keys=True, default=str) if opts.dedupe else str(index)
    return key if question.trusted else key + " untrusted"


def params_for(question: Question, opts: CallOptions) -> dict[str, Any]:
    """The ``create()`` parameters ``question`` is sent with on its own."""
    params: dict[str, Any] = {"model": opts.model, **opts.create_kwargs, **question.params}
    params["messages"] = messages_for(question, opts.system)
    return params


def structured_for(
    question: Question, opts: CallOptions, params: dict[str, Any]
) -> Structured | None:
    """The structured format ``question``'s answer is checked against: its own
    ``response_format`` (put in ``params`` as it is sent), else the call's. Raises
    ConfigError for a ``json_schema`` format that has no JSON schema."""
    if "response_format" not in question.params:
        return opts.structured
    structured = structured_of(question.params["response_format"])
    if structured is not None:
        params["response_format"] = structured.response_format
    return structured


async def _items(questions: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(questions, AsyncIterable):
        async for item in questions:
            yield item
    else:
        for item in questions:
            yield item


class Intake:
    """Reads one call's questions into batches of distinct jobs.

    ``deliver`` receives the answers that need no request: an invalid item's error,
    and a copy of an already finished answer for a duplicate. ``finish`` hands a
    job's answer to ``deliver``, then a copy to each duplicate that waited for it.
    """

    def __init__(
        self,
        questions: Iterable[Any] | AsyncIterable[Any],
        opts: CallOptions,
        stats: CallStats,
        deliver: Deliver,
        *,
        keep_finished: bool,
    ) -> None:
        self._questions = questions
        self._opts = opts
        self._stats = stats
        self._deliver = deliver
        self._keep_finished = keep_finished
        self._pending: dict[str, Job] = {}
        self._finished: dict[str, Answer] = {}
        self.input_error: Exception | None = None
        """What the caller's input raised, if it did."""
        self.total = len(questions) if isinstance(questions, (list, tuple)) else None
        """How many questions there are, when known up front."""
        if self.total is not None:
            self._batch_size = SEQUENCE_BATCH
        elif opts.policy.mode == "split":
            self._batch_size = 1  # nothing to plan: send each question as it arrives
        else:
            self._batch_size = STREAM_BATCH

    async def batches(self) -> AsyncIterator[list[Job]]:
        """Distinct new jobs, a batch at a time (the last one may be short).

        Counts the items read (``stats.read``) and notes when the input is read to
        its end (``stats.exhausted``); an exception of the caller's iterator is kept
        as ``input_error`` before it propagates."""
        index = -1
        batch: list[Job] = []
        items = _items(self._questions)
        while True:
            try:
                item = await anext(items)
            except StopAsyncIteration:
                self._stats.exhausted = True
                break
            except Exception as exc:
                self.input_error = exc
                raise
            self._stats.read += 1
            index += 1
            try:
                question = to_question(item, index)
            except InvalidQuestionError as exc:
                await self._deliver(Answer(index=index, question=preview(item), error=exc), None)
                continue
            params = params_for(question, self._opts)
            try:
                if self._opts.api == "responses":  # its own parameters, as the call's are
                    check_responses_kwargs(question.params)
                structured = structured_for(question, self._opts, params)
            except ConfigError as exc:
                await self._deliver(
                    Answer(
                        index=index,
                        question=preview(item),
                        error=(InvalidQuestionError(f"question {index}: {exc}", index=index)),
                    ),
                    None,
                )
                continue
            key = dedupe_key(question, params, self._opts, index)
            if key in self._finished:
                self._stats.deduplicated += 1
                await self._deliver(shared_copy(self._finished[key], index, question), None)
                continue
            if key in self._pending:
                self._stats.deduplicated += 1
                self._pending[key].duplicates.append((index, question))
                continue
            job = Job(index=index, question=question, params=params, key=key, structured=structured)
            self._pending[key] = job
            batch.append(job)
            if len(batch) >= self._batch_size:
                yield batch
                batch = []
        if batch:
            yield batch

    async def finish(self, job: Job, answer: Answer) -> None:
        """``job`` is answered: deliver it, and a copy to each of its duplicates.

        The answer stays on the job, and the job pending, until every position has it:
        a handing over the call's timeout cuts short (a slow consumer of
        ``as_completed`` holding the stream) is taken up again where it stopped
        (``unfinished``, then this again with the same job), so no answer is lost and
        none is handed over twice."""
        if job.answer is None:
            pricer = self._opts.pricer
            if pricer is not None and answer.cost is None:  # priced at its request's model
                cost = pricer.of_params(answer.usage, job.params, self._opts.model)
                answer = answer.model_copy(update={"cost": cost})
            job.answer = answer
            if self._keep_finished:
                self._finished[job.key] = answer
        answer = job.answer

        def out() -> None:
            job.handed += 1

        while job.handed <= len(job.duplicates):  # duplicates may come while it is handed
            if job.handed == 0:
                await self._deliver(answer, out)
            else:
                index, q = job.duplicates[job.handed - 1]
                await self._deliver(shared_copy(answer, index, q), out)
        job.finished = True
        self._pending.pop(job.key, None)

    def unfinished(self) -> list[Job]:
        """Jobs read but not answered, or answered but not yet handed to every position
        waiting for it (the call ran out of time)."""
        return [job for job in self._pending.values() if not job.finished]
