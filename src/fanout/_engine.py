"""The engine: fan questions out as concurrent calls and hand back every answer in order."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
import openai

from ._config import Limits, Retry
from ._exceptions import (
    ConfigError,
    InvalidQuestionError,
    PartialFailureError,
    QuestionError,
    QuestionTimeoutError,
    QuotaExceededError,
)
from ._limiter import LocalLimiter, RateLimiter
from ._models import Answer, Answers, Question, Report, Usage
from ._progress import ProgressSink, make_progress
from ._retrying import build_retrying, is_quota_error, server_retry_after
from ._tokens import estimate_messages_tokens

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletion

__all__ = ["Fanout", "QuestionLike", "ask_many"]

log = logging.getLogger("fanout")

QuestionLike = str | Question
OnError = Literal["raise", "return"]
OnAnswer = Callable[[Answer], Awaitable[None] | None]

_POLICIES = frozenset({"split"})
_DEFAULT_COOL_DOWN_S = 1.0


# --- input handling -------------------------------------------------------------------
def _to_question(item: object, index: int) -> Question:
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


def _check_container(questions: object) -> None:
    if isinstance(questions, (str, bytes)):
        raise InvalidQuestionError(
            "questions must be a sequence of questions, not a single string "
            "(wrap it in a list: ask_many([question]))"
        )
    if not isinstance(questions, (Iterable, AsyncIterable)):
        raise InvalidQuestionError(
            f"questions must be a sequence or (async) iterable, not {type(questions).__name__}"
        )


async def _aiter(questions: Iterable[Any] | AsyncIterable[Any]) -> AsyncIterator[Any]:
    if isinstance(questions, AsyncIterable):
        async for item in questions:
            yield item
    else:
        for item in questions:
            yield item


def _preview(item: object) -> str:
    text = item.text if isinstance(item, Question) else str(item)
    return text if len(text) <= 200 else text[:197] + "..."


# --- per-call state ------------------------------------------------------------------------
@dataclass
class _Options:
    model: str
    system: str | None
    retry: Retry
    policy: str
    on_error: OnError
    timeout: float | None
    progress: bool
    on_answer: OnAnswer | None
    dedupe: bool
    create_kwargs: dict[str, Any]


@dataclass
class _CallStats:
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    in_flight: int = 0
    peak: int = 0
    limit_wait_s: float = 0.0
    deduplicated: int = 0
    done: int = 0


@dataclass
class _Job:
    index: int
    question: Question
    params: dict[str, Any]
    key: str
    duplicates: list[tuple[int, Question]] = field(default_factory=list)
    finished: bool = False


@dataclass
class _Tally:
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    request_ids: list[str] = field(default_factory=list)


Emit = Callable[[Answer], Awaitable[None]]


class Fanout:
    """Fans questions out over one ``AsyncOpenAI`` client, sharing limits across calls.

    ::

        fo = fanout.Fanout(client, model="gpt-4o-mini", limits=fanout.Limits(rpm=500))
        answers = await fo.ask_many(["What is X?", "Explain Y."])

    Every call on one ``Fanout`` shares its concurrency cap and its rate limits,
    however many tasks use it at once. The user's client is never changed: fanout
    works on ``client.with_options(max_retries=0)`` (a copy sharing its connection
    pool), because fanout's retry layer is the only one.
    """

    def __init__(
        self,
        client: AsyncOpenAI,
        *,
        model: str | None = None,
        system: str | None = None,
        limits: Limits | None = None,
        retry: Retry | None = None,
        policy: str = "split",
        on_error: OnError = "raise",
        limiter: RateLimiter | None = None,
        **create_kwargs: Any,
    ) -> None:
        if not hasattr(client, "with_options") or not hasattr(client, "chat"):
            raise ConfigError(f"client must be an openai.AsyncOpenAI, not {type(client).__name__}")
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigError(f"limits must be a fanout.Limits, not {type(limits).__name__}")
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError(f"retry must be a fanout.Retry, not {type(retry).__name__}")
        _check_policy(policy)
        _check_on_error(on_error)
        self.client = client
        self._client = client.with_options(max_retries=0)
        self.limits = limits or Limits()
        self.retry = retry or Retry()
        self.model = model
        self.system = system
        self.policy = policy
        self.on_error: OnError = on_error
        self.create_kwargs = dict(create_kwargs)
        self._limiter: RateLimiter = limiter or LocalLimiter(self.limits)
        self._slots = anyio.CapacityLimiter(self.limits.max_concurrency)
        self._in_flight = 0
        self.peak_in_flight = 0
        """Most requests in flight at once on this ``Fanout``, across all calls."""

    def __repr__(self) -> str:
        return f"<Fanout model={self.model!r} limits={self.limits!r}>"

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    # --- public calls -----------------------------------------------------------------
    async def ask_many(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        *,
        model: str | None = None,
        system: str | None = None,
        retry: Retry | None = None,
        policy: str | None = None,
        on_error: OnError | None = None,
        timeout: float | None = None,
        progress: bool = False,
        on_answer: OnAnswer | None = None,
        dedupe: bool = True,
        **create_kwargs: Any,
    ) -> Answers:
        """Answer every question; the answers come back in input order.

        Raises :class:`PartialFailureError` (carrying every answer) if any
        question failed, unless ``on_error="return"``. ``timeout`` bounds the
        whole call: questions not answered by then fail with
        :class:`QuestionTimeoutError`, and the finished answers are kept.
        """
        opts = self._options(model, system, retry, policy, on_error, timeout, progress,
                             on_answer, dedupe, create_kwargs)  # fmt: skip
        _check_container(questions)
        known: list[Question] | None = None
        if isinstance(questions, (list, tuple)):
            known = [_to_question(item, i) for i, item in enumerate(questions)]
            questions = known
        results: dict[int, Answer] = {}

        async def collect(answer: Answer) -> None:
            results[answer.index] = answer

        start = time.monotonic()
        stats = _CallStats()
        await self._drive(questions, opts, stats, collect, keep_finished=True)
        total = len(known) if known is not None else (max(results) + 1 if results else 0)
        for i in range(total):
            if i not in results:  # never started before the timeout
                q = known[i] if known is not None else Question(text="?")
                err = QuestionTimeoutError(
                    f"question {i} was not answered before the call's timeout",
                    index=i, question=q.text, attempts=0,
                )  # fmt: skip
                results[i] = Answer(index=i, question=q.text, id=q.id, error=err)
        ordered = [results[i] for i in range(total)]
        answers = Answers(ordered, self._report(ordered, stats, time.monotonic() - start, opts))
        failed = answers.report.failed
        if failed and opts.on_error == "raise":
            first = next(a for a in ordered if a.error is not None)
            raise PartialFailureError(
                f"{failed} of {total} questions failed; first: question {first.index}: {first.error}",
                answers=answers,
            )
        return answers

    async def as_completed(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        **overrides: Any,
    ) -> AsyncIterator[Answer]:
        """Yield answers as they finish (each carries its ``.index``).

        Failed questions are yielded too, with ``.error`` set. Memory stays
        bounded by the in-flight window whatever the size of the input.
        Takes the same keyword arguments as :meth:`ask_many`.
        """
        _check_container(questions)
        opts = self._options(
            overrides.pop("model", None), overrides.pop("system", None),
            overrides.pop("retry", None), overrides.pop("policy", None),
            overrides.pop("on_error", None), overrides.pop("timeout", None),
            overrides.pop("progress", False), overrides.pop("on_answer", None),
            overrides.pop("dedupe", True), overrides,
        )  # fmt: skip
        send, receive = anyio.create_memory_object_stream[Answer](max_buffer_size=64)
        stats = _CallStats()

        async def produce() -> None:
            async with send:
                await self._drive(questions, opts, stats, send.send, keep_finished=False)

        task = asyncio.get_running_loop().create_task(produce())
        try:
            async with receive:
                async for answer in receive:
                    yield answer
            await task  # re-raise a failure of the producer
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    # --- internals --------------------------------------------------------------------
    def _options(
        self,
        model: str | None,
        system: str | None,
        retry: Retry | None,
        policy: str | None,
        on_error: OnError | None,
        timeout: float | None,
        progress: bool,
        on_answer: OnAnswer | None,
        dedupe: bool,
        create_kwargs: dict[str, Any],
    ) -> _Options:
        resolved_model = model or self.model or create_kwargs.pop("model", None)
        if not resolved_model:
            raise ConfigError("no model: pass model= to Fanout(...) or to the call")
        if policy is not None:
            _check_policy(policy)
        if on_error is not None:
            _check_on_error(on_error)
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError(f"retry must be a fanout.Retry, not {type(retry).__name__}")
        if timeout is not None and not timeout > 0:
            raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
        for reserved in ("messages", "stream"):
            if reserved in create_kwargs:
                raise ConfigError(f"{reserved}= is built by fanout and cannot be passed")
        return _Options(
            model=resolved_model,
            system=system if system is not None else self.system,
            retry=retry or self.retry,
            policy=policy or self.policy,
            on_error=on_error or self.on_error,
            timeout=timeout,
            progress=progress,
            on_answer=on_answer,
            dedupe=dedupe,
            create_kwargs={**self.create_kwargs, **create_kwargs},
        )

    def _params(self, question: Question, opts: _Options) -> dict[str, Any]:
        messages: list[dict[str, str]] = []
        system = question.system if question.system is not None else opts.system
        if system:
            messages.append({"role": "system", "content": system})
        messages.append({"role": "user", "content": question.text})
        params: dict[str, Any] = {"model": opts.model, **opts.create_kwargs, **question.params}
        params["messages"] = messages
        return params

    async def _drive(
        self,
        questions: Iterable[Any] | AsyncIterable[Any],
        opts: _Options,
        stats: _CallStats,
        emit: Emit,
        *,
        keep_finished: bool,
    ) -> None:
        """Run every question, calling ``emit`` once per question index."""
        total = len(questions) if isinstance(questions, (list, tuple)) else None
        sink: ProgressSink | None = make_progress() if opts.progress else None
        pending: dict[str, _Job] = {}
        finished: dict[str, Answer] = {}
        window = anyio.Semaphore(max(2 * self.limits.max_concurrency, 16))

        async def deliver(answer: Answer) -> None:
            stats.done += 1
            await emit(answer)
            if opts.on_answer is not None:
                result = opts.on_answer(answer)
                if inspect.isawaitable(result):
                    await result
            if sink is not None:
                sink.update(done=stats.done, total=total, retries=stats.retries,
                            rate_limited=stats.rate_limited)  # fmt: skip

        async def run(job: _Job) -> None:
            try:
                answer = await self._ask_one(job, opts, stats)
            finally:
                window.release()
            job.finished = True
            pending.pop(job.key, None)
            if keep_finished:
                finished[job.key] = answer
            await deliver(answer)
            for index, q in job.duplicates:
                await deliver(_shared(answer, index, q))

        try:
            with anyio.move_on_after(opts.timeout):
                async with anyio.create_task_group() as tg:
                    index = -1
                    async for item in _aiter(questions):
                        index += 1
                        try:
                            question = _to_question(item, index)
                        except InvalidQuestionError as exc:
                            await deliver(Answer(index=index, question=_preview(item), error=exc))
                            continue
                        params = self._params(question, opts)
                        key = (
                            json.dumps(params, sort_keys=True, default=str)
                            if opts.dedupe
                            else str(index)
                        )
                        if key in finished:
                            stats.deduplicated += 1
                            await deliver(_shared(finished[key], index, question))
                            continue
                        if key in pending:
                            stats.deduplicated += 1
                            pending[key].duplicates.append((index, question))
                            continue
                        await window.acquire()
                        job = _Job(index=index, question=question, params=params, key=key)
                        pending[key] = job
                        tg.start_soon(run, job)
            # Timed out: whatever is still pending fails with a timeout, nothing is lost.
            for job in list(pending.values()):
                if job.finished:
                    continue
                for index, q in [(job.index, job.question), *job.duplicates]:
                    err = QuestionTimeoutError(
                        f"question {index} was not answered before the call's timeout",
                        index=index, question=q.text, attempts=0,
                    )  # fmt: skip
                    await deliver(Answer(index=index, question=q.text, id=q.id, error=err))
        finally:
            if sink is not None:
                sink.close()

    async def _ask_one(self, job: _Job, opts: _Options, stats: _CallStats) -> Answer:
        start = time.monotonic()
        tally = _Tally()
        retrying = build_retrying(opts.retry, sleep=anyio.sleep)
        q = job.question
        try:
            async for attempt in retrying:
                with attempt:
                    tally.attempts += 1
                    completion = await self._attempt(job, opts, stats, tally)
        except Exception as exc:
            error = self._question_error(exc, job, tally.attempts)
            log.debug("question %d failed after %d attempts: %r", job.index, tally.attempts, exc)
            return Answer(
                index=job.index, question=q.text, id=q.id, usage=tally.usage,
                attempts=tally.attempts, latency_s=time.monotonic() - start,
                request_ids=tally.request_ids, error=error,
            )  # fmt: skip
        choice = completion.choices[0] if completion.choices else None
        return Answer(
            index=job.index,
            question=q.text,
            id=q.id,
            text=(choice.message.content or "") if choice is not None else "",
            mode="split",
            finish_reason=choice.finish_reason if choice is not None else None,
            usage=tally.usage,
            attempts=tally.attempts,
            latency_s=time.monotonic() - start,
            request_ids=tally.request_ids,
        )

    async def _attempt(
        self, job: _Job, opts: _Options, stats: _CallStats, tally: _Tally
    ) -> ChatCompletion:
        params = job.params
        max_out = params.get("max_completion_tokens", params.get("max_tokens")) or 0
        n = params.get("n") or 1
        reserve = estimate_messages_tokens(params["messages"], opts.model) + int(max_out) * int(n)
        async with self._slots:
            stats.limit_wait_s += await self._limiter.acquire(reserve)
            stats.requests += 1
            if tally.attempts > 1:
                stats.retries += 1
            stats.in_flight += 1
            stats.peak = max(stats.peak, stats.in_flight)
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            try:
                raw = await self._client.chat.completions.with_raw_response.create(**params)
                self._limiter.observe(raw.headers)
                request_id = raw.headers.get("x-request-id")
                if request_id:
                    tally.request_ids.append(request_id)
                completion: ChatCompletion = raw.parse()
            except openai.APIStatusError as exc:
                headers = exc.response.headers
                self._limiter.observe(headers)
                if exc.request_id:
                    tally.request_ids.append(exc.request_id)
                if isinstance(exc, openai.RateLimitError):
                    stats.rate_limited += 1
                    self._limiter.settle(reserve, None)
                    if not is_quota_error(exc):
                        asked = server_retry_after(headers)
                        wait = _DEFAULT_COOL_DOWN_S if asked is None else asked
                        self._limiter.cool_down(min(wait, opts.retry.max_wait))
                raise
            finally:
                stats.in_flight -= 1
                self._in_flight -= 1
        usage = completion.usage
        if usage is not None:
            tally.usage = tally.usage + Usage(
                prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens
            )
            self._limiter.settle(reserve, usage.total_tokens)
        return completion

    @staticmethod
    def _question_error(exc: Exception, job: _Job, attempts: int) -> QuestionError:
        q = job.question
        if isinstance(exc, QuestionError):
            return exc
        if is_quota_error(exc):
            err: QuestionError = QuotaExceededError(
                f"question {job.index}: the API key has no quota left (insufficient_quota); "
                "not retried",
                index=job.index, question=q.text, attempts=attempts,
            )  # fmt: skip
        else:
            what = f"{type(exc).__name__}: {exc}"
            err = QuestionError(
                f"question {job.index} failed after {attempts} attempt(s): {what}",
                index=job.index, question=q.text, attempts=attempts,
            )  # fmt: skip
        err.__cause__ = exc
        return err

    @staticmethod
    def _report(answers: list[Answer], stats: _CallStats, wall: float, opts: _Options) -> Report:
        usage = Usage()
        for a in answers:
            usage = usage + a.usage
        failed = sum(1 for a in answers if a.error is not None)
        return Report(
            questions=len(answers),
            answered=len(answers) - failed,
            failed=failed,
            wall_s=wall,
            requests=stats.requests,
            retries=stats.retries,
            rate_limited=stats.rate_limited,
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            peak_concurrency=stats.peak,
            limit_wait_s=stats.limit_wait_s,
            deduplicated=stats.deduplicated,
            policy=opts.policy,
        )


def _shared(answer: Answer, index: int, question: Question) -> Answer:
    """A duplicate question's copy of an answer: its own index, no usage of its own."""
    error = answer.error
    if isinstance(error, QuestionError):
        copy = type(error)(str(error), index=index, question=question.text, attempts=error.attempts)
        copy.__cause__ = error.__cause__
        error = copy
    return answer.model_copy(
        update={
            "index": index,
            "question": question.text,
            "id": question.id,
            "usage": Usage(),
            "attempts": 0,
            "shared_with": answer.index,
            "error": error,
        }
    )


def _check_policy(policy: object) -> None:
    if not isinstance(policy, str) or policy not in _POLICIES:
        raise ConfigError(f"unknown policy {policy!r}; known: {', '.join(sorted(_POLICIES))}")


def _check_on_error(on_error: object) -> None:
    if on_error not in ("raise", "return"):
        raise ConfigError(f"on_error must be 'raise' or 'return', got {on_error!r}")


async def ask_many(
    questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
    *,
    client: AsyncOpenAI,
    model: str | None = None,
    system: str | None = None,
    limits: Limits | None = None,
    retry: Retry | None = None,
    policy: str = "split",
    on_error: OnError = "raise",
    timeout: float | None = None,
    progress: bool = False,
    on_answer: OnAnswer | None = None,
    dedupe: bool = True,
    **create_kwargs: Any,
) -> Answers:
    """Answer many independent questions concurrently; see :meth:`Fanout.ask_many`.

    ::

        answers = await fanout.ask_many(["What is X?", "Explain Y."],
                                        client=AsyncOpenAI(), model="gpt-4o-mini")
        answers.texts
    """
    fo = Fanout(client, model=model, system=system, limits=limits, retry=retry, policy=policy,
                on_error=on_error)  # fmt: skip
    return await fo.ask_many(
        questions, timeout=timeout, progress=progress, on_answer=on_answer, dedupe=dedupe,
        **create_kwargs,
    )  # fmt: skip
