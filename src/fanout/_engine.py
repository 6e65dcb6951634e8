"""The engine: fan questions out as concurrent calls and hand back every answer in order."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import logging
import os
import time
from collections import OrderedDict
from collections.abc import (
    AsyncIterable,
    AsyncIterator,
    Awaitable,
    Callable,
    Iterable,
    Mapping,
    Sequence,
)
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

import anyio
import openai

from ._config import Limits, Policy, Retry
from ._exceptions import (
    ConfigError,
    InvalidQuestionError,
    PartialFailureError,
    QuestionError,
    QuestionTimeoutError,
    QuotaExceededError,
)
from ._jobs import JobSummary, run_jsonl
from ._limiter import LocalLimiter, RateLimiter
from ._limiter_redis import RedisUnavailableError
from ._logging import redact, register_secret
from ._merging import MergedRequest, apportion, build_merged, parse_merged
from ._models import Answer, Answers, Question, Report, Usage
from ._planning import (
    MERGE_ANSWER_OVERHEAD,
    PRIOR_ANSWER_TOKENS,
    EndpointModel,
    Plan,
    PlanInputs,
    make_plan,
)
from ._profile import EndpointProfile, profile_endpoint
from ._progress import ProgressSink, make_progress
from ._retrying import build_retrying, is_quota_error, server_retry_after
from ._tokens import estimate_messages_tokens, estimate_text_tokens

if TYPE_CHECKING:
    from anyio.abc import TaskGroup
    from openai import AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["Fanout", "QuestionLike", "ask_many", "plan"]

log = logging.getLogger("fanout")

QuestionLike = str | Question
OnError = Literal["raise", "return"]
OnAnswer = Callable[[Answer], Awaitable[None] | None]

_DEFAULT_COOL_DOWN_S = 1.0
_SEQUENCE_CHUNK = 1024  # questions planned together from a list
_STREAM_CHUNK = 256  # ... and from an iterator
# create() parameters that change what one reply holds: with them, never merge.
_UNMERGEABLE_PARAMS = frozenset(
    {
        "response_format",
        "tools",
        "functions",
        "tool_choice",
        "n",
        "logprobs",
        "top_logprobs",
        "stop",
    }
)


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
    policy: Policy
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
    plan: Plan | None = None
    reasked: list[int] = field(default_factory=list)


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
        policy: Policy | str = "auto",
        on_error: OnError = "raise",
        limiter: RateLimiter | None = None,
        endpoint: EndpointModel | None = None,
        **create_kwargs: Any,
    ) -> None:
        if not hasattr(client, "with_options") or not hasattr(client, "chat"):
            raise ConfigError(f"client must be an openai.AsyncOpenAI, not {type(client).__name__}")
        if limits is not None and not isinstance(limits, Limits):
            raise ConfigError(f"limits must be a fanout.Limits, not {type(limits).__name__}")
        if retry is not None and not isinstance(retry, Retry):
            raise ConfigError(f"retry must be a fanout.Retry, not {type(retry).__name__}")
        _check_on_error(on_error)
        self.client = client
        register_secret(getattr(client, "api_key", None))
        self._client = client.with_options(max_retries=0)
        self.limits = limits or Limits()
        self.retry = retry or Retry()
        self.model = model
        self.system = system
        self.policy = Policy.coerce(policy)
        self.on_error: OnError = on_error
        self.create_kwargs = dict(create_kwargs)
        self._limiter: RateLimiter = limiter or _make_limiter(self.limits)
        self._limiter_checked = limiter is not None or self.limits.backend is None
        self._slots = anyio.CapacityLimiter(self.limits.max_concurrency)
        self._endpoint = endpoint or EndpointModel()
        self._json_ok = True  # until the endpoint refuses response_format
        self._in_flight = 0
        # Tokens of the requests answered so far: the work that finished during a
        # request's life is the difference, which teaches the endpoint model how
        # much requests delay each other.
        self._done_prompt_tokens = 0
        self._done_completion_tokens = 0
        self._sent_shared: OrderedDict[int, None] = OrderedDict()  # see _remember_shared
        self.peak_in_flight = 0
        """Most requests in flight at once on this ``Fanout``, across all calls."""

    def __repr__(self) -> str:
        return f"<Fanout model={self.model!r} limits={self.limits!r}>"

    @property
    def limiter(self) -> RateLimiter:
        return self._limiter

    @property
    def endpoint(self) -> EndpointModel:
        """What this ``Fanout`` has learned about the endpoint's timing."""
        return self._endpoint

    def plan(
        self,
        questions: Iterable[QuestionLike],
        *,
        model: str | None = None,
        system: str | None = None,
        policy: Policy | str | None = None,
        **create_kwargs: Any,
    ) -> Plan:
        """What would ``ask_many`` do with these questions, and why? Sends nothing."""
        _check_container(questions)
        opts = self._options(model or self.model or "dry-run", system, None, policy, None,
                             None, False, None, True, create_kwargs)  # fmt: skip
        jobs = []
        for i, item in enumerate(questions):
            q = _to_question(item, i)
            jobs.append(_Job(index=i, question=q, params=self._params(q, opts), key=str(i)))
        return self._plan(jobs, opts)

    # --- public calls -----------------------------------------------------------------
    async def ask_many(
        self,
        questions: Iterable[QuestionLike] | AsyncIterable[QuestionLike],
        *,
        model: str | None = None,
        system: str | None = None,
        retry: Retry | None = None,
        policy: Policy | str | None = None,
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

    async def profile(
        self,
        *,
        max_requests: int = 40,
        tokens: int = 64,
        extra_body: dict[str, Any] | None = None,
        adopt: bool = True,
    ) -> EndpointProfile:
        """Measure this Fanout's endpoint (see ``fanout._profile``) within
        ``max_requests`` requests; with ``adopt``, start the endpoint model from it."""
        result = await profile_endpoint(
            self, max_requests=max_requests, tokens=tokens, extra_body=extra_body
        )
        if adopt:
            self._endpoint = EndpointModel.from_profile(result)
        return result

    async def run_jsonl(
        self,
        input_path: str | os.PathLike[str],
        output_path: str | os.PathLike[str],
        *,
        resume: bool = True,
        progress: bool = False,
        **overrides: Any,
    ) -> JobSummary:
        """Answer a JSONL file of questions into a JSONL file of answers, resumably.

        See ``fanout._jobs`` for the formats. Every answer is appended and flushed
        as soon as it is known; re-running skips the ids already answered."""
        return await run_jsonl(
            self, input_path, output_path, resume=resume, progress=progress, **overrides
        )

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
        policy: Policy | str | None,
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
        resolved_policy = Policy.coerce(policy) if policy is not None else self.policy
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
            policy=resolved_policy,
            on_error=on_error or self.on_error,
            timeout=timeout,
            progress=progress,
            on_answer=on_answer,
            dedupe=dedupe,
            create_kwargs={**self.create_kwargs, **create_kwargs},
        )

    def _messages(self, question: Question, system: str | None) -> list[Any]:
        """What is sent for ``question``: its system prompt (else ``system``), its
        context, then its text."""
        messages: list[Any] = []
        system = question.system if question.system is not None else system
        if system:
            messages.append({"role": "system", "content": system})
        messages.extend(dict(m) for m in question.context)
        messages.append({"role": "user", "content": question.text})
        return messages

    def _params(self, question: Question, opts: _Options) -> dict[str, Any]:
        params: dict[str, Any] = {"model": opts.model, **opts.create_kwargs, **question.params}
        params["messages"] = self._messages(question, opts.system)
        return params

    def _plan(self, jobs: list[_Job], opts: _Options) -> Plan:
        """Plan a batch of distinct questions (pure, apart from reading what was learned)."""
        policy = opts.policy
        call_mergeable = not (_UNMERGEABLE_PARAMS & opts.create_kwargs.keys())
        learned = self._endpoint.answer_tokens
        answer_tokens = []
        for job in jobs:
            q = job.question
            expected = q.expected_tokens or policy.expected_tokens or learned or PRIOR_ANSWER_TOKENS
            cap = job.params.get("max_completion_tokens", job.params.get("max_tokens"))
            if isinstance(cap, int) and cap > 0:
                expected = min(expected, cap)
            answer_tokens.append(max(1, int(expected)))
        shared = 3 + (3 + estimate_text_tokens(opts.system) if opts.system else 0)
        endpoint = self._endpoint.estimate()
        cached = 0
        if endpoint.prefix_cache and opts.system and hash(opts.system) in self._sent_shared:
            cached = shared
        inputs = PlanInputs(
            question_tokens=[3 + estimate_text_tokens(job.question.text) for job in jobs],
            shared_prompt_tokens=shared,
            answer_tokens=answer_tokens,
            endpoint=endpoint,
            budget=self._limiter.budget(),
            max_concurrency=self.limits.max_concurrency,
            mergeable=[
                call_mergeable
                and job.question.mergeable
                and job.question.context == jobs[0].question.context
                for job in jobs
            ],
            cached_prompt_tokens=cached,
        )
        plan = make_plan(inputs, policy)
        log.debug("plan for %d questions: %s", len(jobs), plan.reason)
        return plan

    async def _check_limiter(self) -> None:
        """Before the first request: a shared backend must be reachable (or, if the
        user allows it, local limits take over)."""
        if self._limiter_checked:
            return
        check = getattr(self._limiter, "check", None)
        if check is not None:
            try:
                await check()
            except RedisUnavailableError:
                if not self.limits.fallback_local:
                    raise
                log.warning("redis unreachable: falling back to limits local to this process")
                self._limiter = LocalLimiter(self.limits)
        self._limiter_checked = True

    async def _drive(
        self,
        questions: Iterable[Any] | AsyncIterable[Any],
        opts: _Options,
        stats: _CallStats,
        emit: Emit,
        *,
        keep_finished: bool,
    ) -> None:
        """Run every question, calling ``emit`` once per question index.

        Questions are read in chunks; each chunk's distinct questions are planned
        together (split, merged, or groups) and their groups dispatched under the
        in-flight window, so memory follows the window, not the input.
        """
        await self._check_limiter()
        is_sequence = isinstance(questions, (list, tuple))
        total = len(questions) if isinstance(questions, (list, tuple)) else None
        if is_sequence:
            chunk_size = _SEQUENCE_CHUNK
        elif opts.policy.mode == "split":
            chunk_size = 1  # nothing to plan: send each question as it arrives
        else:
            chunk_size = _STREAM_CHUNK
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

        async def finish(job: _Job, answer: Answer) -> None:
            job.finished = True
            pending.pop(job.key, None)
            if keep_finished:
                finished[job.key] = answer
            await deliver(answer)
            for index, q in job.duplicates:
                await deliver(_shared(answer, index, q))

        async def run_group(group: list[_Job]) -> None:
            try:
                if len(group) == 1:
                    await finish(group[0], await self._ask_one(group[0], opts, stats))
                else:
                    await self._ask_merged(group, opts, stats, finish)
            finally:
                window.release()

        async def dispatch(tg: TaskGroup, batch: list[_Job]) -> None:
            if not batch:
                return
            plan = self._plan(batch, opts)
            if stats.plan is None:
                stats.plan = plan
            for positions in plan.groups:
                await window.acquire()
                tg.start_soon(run_group, [batch[i] for i in positions])

        try:
            with anyio.move_on_after(opts.timeout):
                async with anyio.create_task_group() as tg:
                    index = -1
                    batch: list[_Job] = []
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
                        job = _Job(index=index, question=question, params=params, key=key)
                        pending[key] = job
                        batch.append(job)
                        if len(batch) >= chunk_size:
                            await dispatch(tg, batch)
                            batch = []
                    await dispatch(tg, batch)
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

    async def _with_retries(
        self, params: dict[str, Any], opts: _Options, stats: _CallStats, tally: _Tally
    ) -> ChatCompletion:
        """One request, retried by the one retry layer; raises the last failure."""
        retrying = build_retrying(opts.retry, sleep=anyio.sleep)
        async for attempt in retrying:
            with attempt:
                tally.attempts += 1
                return await self._attempt(params, opts, stats, tally)
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    async def _ask_one(self, job: _Job, opts: _Options, stats: _CallStats) -> Answer:
        start = time.monotonic()
        tally = _Tally()
        q = job.question
        try:
            completion = await self._with_retries(job.params, opts, stats, tally)
        except Exception as exc:
            error = self._question_error(exc, job, tally.attempts)
            log.debug("question %d failed after %d attempts: %r", job.index, tally.attempts, exc)
            return Answer(
                index=job.index, question=q.text, id=q.id, usage=tally.usage,
                attempts=tally.attempts, latency_s=time.monotonic() - start,
                request_ids=tally.request_ids, error=error,
            )  # fmt: skip
        choice = completion.choices[0] if completion.choices else None
        if completion.usage is not None:
            self._endpoint.observe_answer(completion.usage.completion_tokens)
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

    def _merged_params(
        self, request: MergedRequest, opts: _Options, k: int, context: tuple[Any, ...] = ()
    ) -> dict[str, Any]:
        messages: list[Any] = []
        if opts.system:
            messages.append({"role": "system", "content": opts.system})
        messages.extend(dict(m) for m in context)
        messages.append({"role": "user", "content": request.user_message})
        params: dict[str, Any] = {"model": opts.model, **opts.create_kwargs, "messages": messages}
        for name in ("max_tokens", "max_completion_tokens"):
            if isinstance(params.get(name), int):
                # The cap was per answer: the merged reply may hold k of them.
                params[name] = params[name] * k + MERGE_ANSWER_OVERHEAD * k
        if request.response_format is not None:
            params["response_format"] = request.response_format
        return params

    async def _ask_merged(
        self,
        group: list[_Job],
        opts: _Options,
        stats: _CallStats,
        finish: Callable[[_Job, Answer], Awaitable[None]],
    ) -> None:
        """Ask a group in one request; re-ask on their own the questions whose
        answer did not come back whole. Every question of the group is finished."""
        start = time.monotonic()
        policy = opts.policy
        fmt = (
            policy.merge_format
            if policy.merge_format != "auto"
            else ("json" if self._json_ok else "text")
        )
        texts = [job.question.text for job in group]
        tally = _Tally()
        completion: ChatCompletion | None = None
        request = build_merged(texts, fmt)
        while True:
            try:
                params = self._merged_params(request, opts, len(group), group[0].question.context)
                completion = await self._with_retries(params, opts, stats, tally)
            except Exception as exc:
                if (
                    request.format == "json"
                    and policy.merge_format == "auto"
                    and _refuses_response_format(exc)
                ):
                    log.info(
                        "endpoint refuses response_format; merging with tagged text from now on"
                    )
                    self._json_ok = False
                    request = build_merged(texts, "text")
                    continue
                log.debug(
                    "merged request for %d questions failed (%r); asking each alone",
                    len(group),
                    exc,
                )
            break

        found: dict[str, str] = {}
        prompt_shares = [0] * len(group)
        cached_shares = [0] * len(group)
        completion_shares = [0] * len(group)
        if completion is not None:
            choice = completion.choices[0] if completion.choices else None
            content = choice.message.content if choice is not None else None
            truncated = choice is not None and choice.finish_reason == "length"
            found = parse_merged(content, request, truncated=truncated)
            prompt_shares = apportion(tally.usage.prompt_tokens, [1] * len(group))
            cached_shares = apportion(tally.usage.cached_prompt_tokens, [1] * len(group))
            completion_shares = apportion(
                tally.usage.completion_tokens, [len(found.get(tag, "")) for tag in request.tags]
            )
        latency = time.monotonic() - start
        reask: list[tuple[_Job, Usage]] = []
        for i, (job, tag) in enumerate(zip(group, request.tags, strict=True)):
            share = Usage(prompt_tokens=prompt_shares[i], completion_tokens=completion_shares[i],
                          cached_prompt_tokens=cached_shares[i])  # fmt: skip
            text = found.get(tag)
            if text is None:
                reask.append((job, share))
                continue
            self._endpoint.observe_answer(completion_shares[i])
            q = job.question
            await finish(job, Answer(
                index=job.index, question=q.text, id=q.id, text=text, mode="merged",
                finish_reason="stop", usage=share, attempts=tally.attempts, latency_s=latency,
                request_ids=list(tally.request_ids),
            ))  # fmt: skip
        if not reask:
            return
        stats.reasked.extend(job.index for job, _ in reask)

        async def again(job: _Job, share: Usage) -> None:
            answer = await self._ask_one(job, opts, stats)
            await finish(job, answer.model_copy(update={
                "usage": answer.usage + share,
                "attempts": answer.attempts + tally.attempts,
                "request_ids": [*tally.request_ids, *answer.request_ids],
                "latency_s": time.monotonic() - start,
            }))  # fmt: skip

        async with anyio.create_task_group() as tg:
            for job, share in reask:
                tg.start_soon(again, job, share)

    async def _attempt(
        self, params: dict[str, Any], opts: _Options, stats: _CallStats, tally: _Tally
    ) -> ChatCompletion:
        max_out = params.get("max_completion_tokens", params.get("max_tokens")) or 0
        n = params.get("n") or 1
        reserve = estimate_messages_tokens(params["messages"], opts.model) + int(max_out) * int(n)
        async with self._slots:
            stats.limit_wait_s += await self._limiter.acquire(reserve)
            stats.requests += 1
            if tally.attempts > 1:
                stats.retries += 1
            done_before = (self._done_prompt_tokens, self._done_completion_tokens)
            stats.in_flight += 1
            stats.peak = max(stats.peak, stats.in_flight)
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            sent = time.monotonic()
            log.debug("request sent", extra={"attempt": tally.attempts, "in_flight": self._in_flight,
                                             "model": params.get("model")})  # fmt: skip
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
                log.info("request failed", extra={"status": exc.status_code, "attempt": tally.attempts,
                                                  "code": exc.code, "request_id": exc.request_id})  # fmt: skip
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
            details = usage.prompt_tokens_details
            cached = min(usage.prompt_tokens, (details.cached_tokens or 0) if details else 0)
            tally.usage = tally.usage + Usage(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                cached_prompt_tokens=cached,
            )
            self._limiter.settle(reserve, usage.total_tokens)
            self._endpoint.observe(
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                latency_s=time.monotonic() - sent,
                others_prompt_tokens=self._done_prompt_tokens - done_before[0],
                others_completion_tokens=self._done_completion_tokens - done_before[1],
                cached_prompt_tokens=cached,
            )
            self._done_prompt_tokens += usage.prompt_tokens - cached
            self._done_completion_tokens += usage.completion_tokens
            self._remember_shared(params["messages"])
        return completion

    def _remember_shared(self, messages: Sequence[Any]) -> None:
        """Note the system prompt a request began with: an endpoint that caches
        prefixes has it now (the planner then leaves its prefill out)."""
        first = messages[0] if messages else None
        if isinstance(first, Mapping) and first.get("role") == "system":
            key = hash(str(first.get("content")))
            self._sent_shared[key] = None
            self._sent_shared.move_to_end(key)
            while len(self._sent_shared) > 64:
                self._sent_shared.popitem(last=False)

    async def _stream_chunks(
        self,
        params: dict[str, Any],
        retry: Retry,
        *,
        on_send: Callable[[], object] | None = None,
    ) -> AsyncIterator[ChatCompletionChunk]:
        """Stream one request under this Fanout's limits, retried until the stream
        opens (once chunks flow, a failure is the caller's to handle). ``on_send``
        is called as each attempt leaves, after the limits let it go."""
        params = {**params, "stream": True, "stream_options": {"include_usage": True}}
        max_out = params.get("max_completion_tokens", params.get("max_tokens")) or 0
        reserve = estimate_messages_tokens(params["messages"], params.get("model")) + int(max_out)
        async with self._slots:
            retrying = build_retrying(retry, sleep=anyio.sleep)
            stream: AsyncStream[ChatCompletionChunk] | None = None
            async for attempt in retrying:
                with attempt:
                    await self._limiter.acquire(reserve)
                    if on_send is not None:
                        on_send()
                    try:
                        stream = await self._client.chat.completions.create(**params)
                    except openai.APIStatusError as exc:
                        self._limiter.observe(exc.response.headers)
                        if isinstance(exc, openai.RateLimitError):
                            self._limiter.settle(reserve, None)
                            if not is_quota_error(exc):
                                asked = server_retry_after(exc.response.headers)
                                wait = _DEFAULT_COOL_DOWN_S if asked is None else asked
                                self._limiter.cool_down(min(wait, retry.max_wait))
                        raise
            assert stream is not None
            self._limiter.observe(stream.response.headers)
            self._in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self._in_flight)
            try:
                async for chunk in stream:
                    if chunk.usage is not None:
                        self._limiter.settle(reserve, chunk.usage.total_tokens)
                    yield chunk
            finally:
                self._in_flight -= 1
                await stream.close()

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
            what = redact(f"{type(exc).__name__}: {exc}")
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
            cached_prompt_tokens=usage.cached_prompt_tokens,
            peak_concurrency=stats.peak,
            limit_wait_s=stats.limit_wait_s,
            deduplicated=stats.deduplicated,
            policy=opts.policy.mode,
            plan=stats.plan,
            reasked=sorted(stats.reasked),
        )


def _make_limiter(limits: Limits) -> RateLimiter:
    if limits.backend is None:
        return LocalLimiter(limits)
    from ._limiter_redis import RedisLimiter

    return RedisLimiter(limits, limits.backend, namespace=limits.namespace)


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
    policy: Policy | str = "auto",
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


def _refuses_response_format(exc: BaseException) -> bool:
    """A 400/422 that is about ``response_format`` (structured outputs unsupported)."""
    if not isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)):
        return False
    text = f"{exc.param or ''} {exc.message}".lower()
    return "response_format" in text or "json_schema" in text


def plan(
    questions: Iterable[QuestionLike],
    *,
    model: str = "dry-run",
    system: str | None = None,
    policy: Policy | str = "auto",
    limits: Limits | None = None,
    fanout: Fanout | None = None,
    **create_kwargs: Any,
) -> Plan:
    """A dry run: the plan ``ask_many`` would follow for these questions, with every
    candidate's estimated time and tokens and the reason for the choice. Sends
    nothing. Pass ``fanout=`` to plan with what an existing ``Fanout`` has learned
    about its endpoint; otherwise the priors and ``limits`` are used."""
    if fanout is None:
        from openai import AsyncOpenAI

        fanout = Fanout(AsyncOpenAI(api_key="dry-run", base_url="http://127.0.0.1:9/v1"),
                        model=model, limits=limits)  # fmt: skip
    return fanout.plan(questions, model=model, system=system, policy=policy, **create_kwargs)
