"""Transport: one request to the endpoint, under the limits, retried by the one retry layer.

Every request of a ``Fanout`` goes through its :class:`Transport`: it takes a place
under the concurrency cap and the rate limits, sends on the user's client copied
with ``max_retries=0`` (fanout's retry layer is the only one), reads the rate-limit
headers, settles the token estimate with the reported usage, backs everyone off
after a 429, and hands each response to the ``Fanout``'s learner (``learning``), which
keeps what it teaches of the endpoint. It sends and paces; it learns nothing itself.
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
import openai

from .. import telemetry as telemetry
from ..core import clock
from ..core.config import Limits, Retry
from ..core.exceptions import FanoutError
from ..core.models import Usage
from ..core.params import answer_cap
from ..core.redact import register_headers, register_secret
from ..endpoint.tokens import estimate_messages_tokens, estimate_request_tokens
from ..limits._local import LocalLimiter, RateLimiter, current_ticket
from ..limits._redis import RedisUnavailableError
from .call import CallOptions, CallStats, Tally
from .flex import is_flex, is_flex_refusal, send_flex
from .learning import FirstTokenSeen, Learner
from .queueing import QueueClock
from .replies import checked_completion, clean_usage, completion_from_json
from .responses import ResponsesStream, completion_of, to_responses
from .retrying import (
    PRIOR_ANSWER_CAP,
    AttemptTimeoutError,
    IncompleteResponseError,
    RetryBudget,
    attempt_deadline,
    build_retrying,
    is_quota_error,
    retried,
    server_retry_after,
)
from .spending import spend_on

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["QuotaGoneError", "Transport", "make_limiter", "stream_for_headers"]

stream_for_headers: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "fanout_stream_for_headers", default=False
)
"""Set in a task whose requests should be streamed so that their headers (the limits'
room) arrive with the first token: a call's first wave, which the rest waits on."""

log = logging.getLogger("fanout")

_DEFAULT_COOL_DOWN_S = 1.0
_LEAST_ATTEMPT_S = 1.0
"""The shortest deadline ``Retry.max_elapsed`` leaves an attempt (one sent with less
would be abandoned before its answer could come)."""

# A request with these is not rebuilt from streamed chunks (tool calls, several
# choices, log probabilities): if it is the first request, it is sent whole.
_NOT_STREAMED = frozenset({"tools", "functions", "n", "logprobs", "top_logprobs", "audio"})


class QuotaGoneError(FanoutError):
    """Not sent: an earlier request of this ``Fanout`` got ``insufficient_quota``, and
    quota is account-wide."""


class KeyRefusedError(FanoutError):
    """Not sent: an earlier request of the same call was refused with 401 or 403
    (the API key, or its access to the model); the rest of the call would be too."""


def make_limiter(limits: Limits) -> RateLimiter:
    if limits.backend is None:
        return LocalLimiter(limits)
    from ..limits._redis import RedisLimiter

    return RedisLimiter(limits, limits.backend, namespace=limits.namespace)


class Transport:
    """Sends requests for one ``Fanout``; see the module docstring."""

    def __init__(
        self,
        client: AsyncOpenAI,
        limits: Limits,
        *,
        limiter: RateLimiter | None = None,
        learner: Learner | None = None,
    ) -> None:
        self.client = client.with_options(max_retries=0)
        # A server may echo the request's headers in an error: credentials there are masked.
        register_headers(getattr(client, "_custom_headers", None))
        self.limits = limits
        self.limiter: RateLimiter = limiter or make_limiter(limits)
        self._limiter_checked = False
        self._own_limiter = limiter is None  # a limiter the user passed is theirs to check
        self._calls = 0  # calls running (see open_call)
        self._slots = anyio.CapacityLimiter(limits.max_concurrency)
        self._queue_clock = QueueClock()  # attempt deadlines, not counting a queue's wait
        self.learner = learner or Learner()
        """Where every response goes to teach what it tells of the endpoint."""
        self.in_flight = 0
        self.peak_in_flight = 0
        self.budget = RetryBudget()
        self._stream_first = True  # stream the first request (see _exchange)
        self.quota_error: BaseException | None = None
        """The ``insufficient_quota`` an earlier request got: nothing more is sent."""
        self.reached = False
        """A response of any status came from the endpoint (``engine/reach.py``)."""
        self.header_listeners: set[Callable[[], None]] = set()
        """Called when a response's headers arrive (before its body, if streamed)."""
        self.outcome_listeners: set[Callable[[BaseException | None], None]] = set()
        """Called as each attempt ends: None when it was answered, else its exception
        (several endpoints behind one ``Fanout`` cool a failing one down: ``pool``)."""

    @contextlib.asynccontextmanager
    async def open_call(self) -> AsyncIterator[None]:
        """Around each call: as the last one ends, a limiter of its own closes its connections."""
        self._calls += 1
        try:
            yield
        finally:
            self._calls -= 1
            if self._calls == 0 and self._own_limiter and hasattr(self.limiter, "disconnect"):
                await self.limiter.disconnect()

    async def check_limiter(self) -> None:
        """Before the first request: a shared backend must be reachable (or, if the
        user allows it, local limits take over)."""
        if self._limiter_checked:
            return
        # The SDK imports its resources on first use (about 0.15 s here): done now, not
        # between a request's slot in the rate schedule and its leaving.
        _ = self.client.chat.completions.with_raw_response
        check = getattr(self.limiter, "check", None)
        if check is not None and self._own_limiter and self.limits.backend is not None:
            try:
                await check()
            except RedisUnavailableError:
                if not self.limits.fallback_local:
                    raise
                log.warning("redis unreachable: falling back to limits local to this process")
                self.limiter = LocalLimiter(self.limits)
        self._limiter_checked = True

    async def send(
        self,
        params: dict[str, Any],
        opts: CallOptions,
        stats: CallStats,
        tally: Tally,
        check: Callable[[ChatCompletion], None] | None = None,
    ) -> ChatCompletion:
        """One request, retried by the one retry layer; raises the last failure.

        Every reply is a chat completion with choices, its usage clean
        (``replies.checked_completion``), or the attempt failed; ``check`` may refuse
        it too (an empty answer): its exception is retried or not like any other."""
        if is_flex(params):  # refusals retried later, or sent standard (engine/flex.py)
            prompt = estimate_messages_tokens(params["messages"], opts.model)
            endpoint = self.learner.endpoint
            seen = max(endpoint.answer_tokens or 0, tally.answer_tokens or 0)
            answer = answer_cap(params) or seen or PRIOR_ANSWER_CAP
            expected = endpoint.recent_estimate().request_s(prompt, answer)
            return await send_flex(
                lambda p: self._send(p, opts, stats, tally, check), params, opts.retry, expected
            )
        return await self._send(params, opts, stats, tally, check)

    async def _send(
        self,
        params: dict[str, Any],
        opts: CallOptions,
        stats: CallStats,
        tally: Tally,
        check: Callable[[ChatCompletion], None] | None,
    ) -> ChatCompletion:
        try:
            return await retried(
                lambda: self._checked_attempt(params, opts, stats, tally, check),
                lambda: build_retrying(opts.retry, sleep=anyio.sleep, budget=self.budget),
            )
        except Exception as exc:
            stats.reach.gave_up(tally, exc)
            raise
        finally:
            stats.reach.gave_up(tally, None)  # cancelled, or answered: nobody waits on it

    async def _checked_attempt(
        self,
        params: dict[str, Any],
        opts: CallOptions,
        stats: CallStats,
        tally: Tally,
        check: Callable[[ChatCompletion], None] | None,
    ) -> ChatCompletion:
        """One attempt under the spend caps, its reply checked."""
        if not opts.caps or opts.pricer is None:  # no caps: nothing to reserve or settle
            completion = await self._attempt(params, opts, stats, tally)
        else:
            completion = await spend_on(
                opts.caps,
                opts.pricer,
                params,
                opts.model,
                # The reply's length: the longer of the answers seen and its own
                # expected one (every answer of a merged request).
                max(self.learner.endpoint.answer_tokens or 0, tally.answer_tokens or 0) or None,
                lambda: tally.usage,
                lambda: tally.attempts,
                lambda: self._attempt(params, opts, stats, tally),
            )
        if check is not None:
            check(completion)
        return completion

    def _rate_limited(self, exc: openai.APIStatusError, reserve: int, retry: Retry) -> None:
        """A 429: release the tokens reserved, and (unless the quota is gone) make
        every request of this ``Fanout`` wait as long as the server asked."""
        self.limiter.settle(reserve, None)
        if is_flex_refusal(exc):
            return  # no room for flex work: not a rate limit, nothing to cool down
        if is_quota_error(exc):
            self.quota_error = exc
            return
        asked = server_retry_after(exc.response.headers)
        wait = _DEFAULT_COOL_DOWN_S if asked is None else asked
        self.limiter.cool_down(min(wait, retry.max_wait))

    def _check_quota(self, stats: CallStats | None = None) -> None:
        if self.quota_error is not None:
            raise QuotaGoneError(
                "not sent: an earlier request got insufficient_quota (the API key has no "
                "quota left, for every request)"
            ) from self.quota_error
        refused = stats.refused if stats is not None else None
        if isinstance(refused, openai.APIStatusError):
            raise KeyRefusedError(
                f"not sent: an earlier request of this call was refused with "
                f"{refused.status_code}" + (f" {refused.code}" if refused.code else "")
            ) from refused

    def deadline(
        self,
        params: dict[str, Any],
        prompt_tokens: int,
        retry: Retry,
        others: int = 0,
        tally: Tally | None = None,
    ) -> float | None:
        """Seconds one attempt of this request may run (``retrying.attempt_deadline``;
        ``tally``: the request's, with its expected reply and abandoned attempts), and
        never past the question's ``Retry.max_elapsed`` counted from its first attempt
        (an attempt then abandoned is not retried: the retry layer's bound is spent)."""
        deadline = attempt_deadline(
            retry,
            params,
            prompt_tokens,
            self.learner.endpoint,
            others,
            answer_tokens=None if tally is None else tally.answer_tokens,
            abandoned=0 if tally is None else tally.abandoned,
        )
        if retry.max_elapsed is None or tally is None:
            return deadline
        now = clock.now()
        first = now if tally.first_sent is None else tally.first_sent
        left = max(_LEAST_ATTEMPT_S, retry.max_elapsed - (now - first))
        return left if deadline is None else min(deadline, left)

    async def _attempt(
        self, params: dict[str, Any], opts: CallOptions, stats: CallStats, tally: Tally
    ) -> ChatCompletion:
        self._check_quota(stats)
        await stats.reach.enter(tally)  # another request may be probing a dead address
        max_out = answer_cap(params) or 0
        n = params.get("n") or 1
        prompt = estimate_request_tokens(params, opts.model)
        reserve = prompt + int(max_out) * int(n)
        async with self._slots:
            waited = await self.limiter.acquire(reserve)
            stats.limit_wait_s += waited
            self._check_quota(stats)  # it may have gone while this one waited
            tally.attempts += 1  # counted when sent: a request never sent is no attempt
            stats.requests += 1
            retry = tally.attempts > 1
            if retry:
                stats.retries += 1
            done_before = self.learner.done_tokens()
            stats.in_flight += 1
            stats.peak = max(stats.peak, stats.in_flight)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            deadline = self.deadline(params, prompt, opts.retry, self.in_flight - 1, tally)
            sent = clock.now()
            if tally.first_sent is None:
                tally.first_sent = sent
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "request sent",
                    extra={
                        "attempt": tally.attempts,
                        "in_flight": self.in_flight,
                        "model": params.get("model"),
                    },
                )
            try:
                completion: ChatCompletion | None = None
                first_token: _FirstToken | None = None
                with telemetry.attempt_span(self.client, params, tally.attempts, waited) as span:
                    with self._queue_clock.attempt(deadline) as queued_at:
                        completion, first_token = await self._exchange(params, tally, opts.api)
                    if completion is None:
                        tally.abandoned += 1
                        raise AttemptTimeoutError(
                            f"no answer within the attempt's deadline of {deadline:.1f}s; abandoned"
                        )
                    self._queue_clock.answered(queued_at)  # those behind it were queued
                    completion = checked_completion(completion)
                    span.done(completion)
            except openai.APIStatusError as exc:
                self._reached(stats)
                self.budget.record(failed=True, retry=retry)
                self.limiter.observe(exc.response.headers)
                log.info(
                    "request failed",
                    extra={
                        "status": exc.status_code,
                        "attempt": tally.attempts,
                        "code": exc.code,
                        "request_id": exc.request_id,
                    },
                )
                if exc.request_id:
                    tally.request_ids.append(exc.request_id)
                if isinstance(exc, openai.RateLimitError):
                    stats.rate_limited += 1
                    self._rate_limited(exc, reserve, opts.retry)
                if isinstance(exc, (openai.AuthenticationError, openai.PermissionDeniedError)):
                    stats.refused = stats.refused or exc
                self._outcome(exc)
                raise
            except Exception as exc:
                self.budget.record(failed=True, retry=retry)
                stats.reach.failed(exc, tally, reached=self.reached)
                self._outcome(exc)
                raise
            finally:
                stats.in_flight -= 1
                self.in_flight -= 1
                attempt_done = getattr(self.limiter, "attempt_done", None)
                if attempt_done is not None:
                    attempt_done()
        self._reached(stats)
        self.budget.record(failed=False, retry=retry)
        self._outcome(None)
        self._learn(completion, params, reserve, sent, done_before, tally, first_token)
        return completion

    def _outcome(self, exc: BaseException | None) -> None:
        for listener in list(self.outcome_listeners):
            listener(exc)

    def _reached(self, stats: CallStats) -> None:
        """A response came: the endpoint is there (``engine/reach.py``)."""
        self.reached = True
        stats.reach.answered()

    async def _exchange(
        self, params: dict[str, Any], tally: Tally, api: str = "chat"
    ) -> tuple[ChatCompletion, _FirstToken | None]:
        """Send, read the headers, and return the completion, and when its first token
        came if it was streamed. The first request to an endpoint whose limits are
        unknown is streamed: its headers, which the other requests wait for, then come
        with its first token instead of its last. With ``api="responses"`` the request
        goes through ``responses.create``, whole, and its reply is read as a completion
        (``engine/responses.py``)."""
        completions = self.client.chat.completions
        register_headers(params.get("extra_headers"))
        ticket = current_ticket.get()
        wanted = (ticket is not None and ticket.probe) or stream_for_headers.get()
        streamed = wanted and api == "chat" and not (_NOT_STREAMED & params.keys())
        raw: Any = None
        if api == "responses":
            raw = await self.client.responses.with_raw_response.create(**to_responses(params))
            self._heard(raw.headers, tally)
            return completion_of(raw.parse()), None
        if streamed and self._stream_first:
            try:
                raw = await completions.with_raw_response.create(
                    **params, stream=True, stream_options={"include_usage": True}
                )
            except openai.BadRequestError as exc:
                if "stream" not in str(exc.message).lower():
                    raise
                self._stream_first = False  # an endpoint that will not stream so: send it whole
        if raw is None:
            streamed = False
            raw = await completions.with_raw_response.create(**params)
        self._heard(raw.headers, tally)
        if not streamed:
            completion: ChatCompletion = raw.parse()
            return completion, None
        if "text/event-stream" not in raw.headers.get("content-type", "text/event-stream"):
            # An endpoint that ignores stream=True and answers whole.
            body = await raw.http_response.aread()
            return completion_from_json(body), None
        stream: AsyncStream[ChatCompletionChunk] = raw.parse()
        chunks = []
        first: _FirstToken | None = None
        hidden = False  # something came before the first content (reasoning, a tool call)
        try:
            async with stream:
                async for chunk in stream:
                    chunks.append(chunk)
                    text = "".join(c.delta.content or "" for c in chunk.choices or ())
                    if not text:
                        hidden = hidden or (
                            first is None
                            and any(_other_delta(c.delta) for c in chunk.choices or ())
                        )
                        continue
                    now = clock.now()
                    if first is None and not hidden:
                        first = _FirstToken(now, now, self.learner.done_tokens(), len(text))
                    if first is not None:
                        first.last = now
        except openai.APIError:
            raise
        except Exception as exc:  # the connection broke mid-stream (httpx's errors)
            raise IncompleteResponseError(f"the stream broke off: {exc}") from exc
        return _assemble(chunks), first

    def _heard(self, headers: Mapping[str, str], tally: Tally) -> None:
        """A response's headers came: the limits' room, and its request id."""
        # A key from a callable is known only once the SDK has called it.
        register_secret(getattr(self.client, "api_key", None))
        self.limiter.observe(headers)
        for listener in list(self.header_listeners):
            listener()
        request_id = headers.get("x-request-id")
        if request_id:
            tally.request_ids.append(request_id)

    async def _open_stream(self, params: dict[str, Any], api: str) -> Any:
        if api != "responses":
            return await self.client.chat.completions.create(**params)
        args = to_responses({k: v for k, v in params.items() if k != "stream_options"})
        return ResponsesStream(await self.client.responses.create(**args))

    def _learn(
        self,
        completion: ChatCompletion,
        params: dict[str, Any],
        reserve: int,
        sent: float,
        done_before: tuple[int, int],
        tally: Tally,
        first_token: _FirstToken | None = None,
    ) -> None:
        """Settle the limits with the reported usage, count it, and hand the response
        to the learner: for a streamed one also its first chunk, unless reasoning or a
        tool call came before the first text (the tokens before it are unseen) or the
        rest came all at once."""
        usage = completion.usage
        if usage is None:
            return
        details = usage.prompt_tokens_details
        cached = min(usage.prompt_tokens, (details.cached_tokens or 0) if details else 0)
        tally.usage = tally.usage + Usage(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            cached_prompt_tokens=cached,
        )
        self.limiter.settle(reserve, _charged(params, usage.prompt_tokens, usage.completion_tokens))
        seen = None
        reasoning = usage.completion_tokens_details
        if first_token is not None and not (reasoning and reasoning.reasoning_tokens):
            written = sum(len(choice.message.content or "") for choice in completion.choices)
            first_tokens = first_token.tokens_of(usage.completion_tokens, written)
            if first_token.spread(usage.completion_tokens, first_tokens):
                seen = FirstTokenSeen(first_token.at, first_token.done, first_tokens)
        self.learner.response(
            completion,
            params["messages"],
            sent=sent,
            done_before=done_before,
            cached=cached,
            first_token=seen,
        )

    async def stream_chunks(
        self,
        params: dict[str, Any],
        retry: Retry,
        *,
        on_send: Callable[[], object] | None = None,
        api: str = "chat",
    ) -> AsyncGenerator[ChatCompletionChunk, None]:
        """Stream one request under the limits, retried until the stream opens (once
        chunks flow, a failure is the caller's to handle). ``on_send`` is called as
        each attempt leaves, after the limits let it go. With ``api="responses"`` it
        goes through ``responses.create``, its events read as chunks."""
        params = {**params, "stream": True, "stream_options": {"include_usage": True}}
        register_headers(params.get("extra_headers"))
        max_out = answer_cap(params) or 0
        reserve = estimate_request_tokens(params, params.get("model")) + int(max_out)
        # The slot is held by the stream, not by a task: whoever reads it (each step may
        # run in a task of its own, as under ``asyncio.wait_for``), and whoever closes it
        # (the task that gives up on it, the loop's finalizer if it is dropped), the slot
        # taken for it is the one given back.
        borrower = _StreamSlot()
        await self._slots.acquire_on_behalf_of(borrower)
        try:
            retrying = build_retrying(retry, sleep=anyio.sleep)
            stream: AsyncStream[ChatCompletionChunk] | None = None
            async for attempt in retrying:
                with attempt:
                    self._check_quota()
                    waited = await self.limiter.acquire(reserve)
                    if on_send is not None:
                        on_send()
                    try:
                        with telemetry.attempt_span(
                            self.client,
                            params,
                            attempt.retry_state.attempt_number,
                            waited,
                            stream=True,
                        ) as span:
                            stream = span.watch(await self._open_stream(params, api))
                    except openai.APIStatusError as exc:
                        self.limiter.observe(exc.response.headers)
                        if isinstance(exc, openai.RateLimitError):
                            self._rate_limited(exc, reserve, retry)
                        raise
                    finally:
                        attempt_done = getattr(self.limiter, "attempt_done", None)
                        if attempt_done is not None:
                            attempt_done()
            assert stream is not None
            self.limiter.observe(stream.response.headers)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                async for chunk in stream:
                    chunk.usage = clean_usage(chunk.usage)
                    if chunk.usage is not None:
                        charged = _charged(
                            params, chunk.usage.prompt_tokens, chunk.usage.completion_tokens
                        )
                        self.limiter.settle(reserve, charged)
                    yield chunk
            finally:
                self.in_flight -= 1
                await stream.close()
        finally:
            self._slots.release_on_behalf_of(borrower)


class _StreamSlot:
    """The borrower of one stream's concurrency slot (see ``Transport.stream_chunks``)."""

    __slots__ = ()


_MIN_DECODE_S = 2.5e-4  # a stream faster than 4,000 tokens/s came whole, buffered


@dataclass
class _FirstToken:
    """When a streamed response's first token came (and its last), and the tokens
    the transport had had answered by the first."""

    at: float
    last: float
    done: tuple[int, int]
    chars: int
    """Characters of text in the first chunk (some servers send several tokens at once)."""

    def tokens_of(self, tokens: int, chars: int) -> int:
        """The first chunk's share of a response of ``tokens`` tokens and ``chars``
        characters of text."""
        return max(1, round(tokens * self.chars / chars)) if chars > 0 else 1

    def spread(self, tokens: int, first_tokens: int) -> bool:
        """Did the ``tokens`` after the first chunk's come one after another, not all at
        once (a proxy that buffers the stream makes its first token as late as its last)?"""
        rest = tokens - first_tokens
        return rest > 0 and self.last - self.at >= rest * _MIN_DECODE_S


def _other_delta(delta: Any) -> bool:
    """Does a chunk carry something other than answer text: a tool call, or reasoning
    (``reasoning_content`` and the like, outside the SDK's fields)?"""
    if delta.tool_calls or delta.function_call:
        return True
    extra = getattr(delta, "model_extra", None) or {}
    return any(extra.values())


def _charged(params: Mapping[str, Any], prompt_tokens: int, completion_tokens: int) -> int:
    """The tokens a hosted API counts against its limit for this request: the prompt,
    and ``max_tokens`` (times ``n``) when given, whatever was written — the limit is
    charged when the request comes in; else what was written."""
    cap = answer_cap(params)
    if isinstance(cap, int) and cap > 0:
        return prompt_tokens + max(completion_tokens, cap * int(params.get("n") or 1))
    return prompt_tokens + completion_tokens


def _assemble(chunks: list[ChatCompletionChunk]) -> ChatCompletion:
    """The completion a streamed request of one text choice adds up to."""
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice

    parts: list[str] = []
    refused: list[str] = []
    finish: str | None = None
    usage = None
    for chunk in chunks:
        if chunk.usage is not None:
            usage = clean_usage(chunk.usage) or usage
        for choice in chunk.choices or ():
            if choice.delta.content:
                parts.append(choice.delta.content)
            if getattr(choice.delta, "refusal", None):
                refused.append(str(choice.delta.refusal))
            if choice.finish_reason is not None:
                finish = choice.finish_reason
    if finish is None or not chunks:
        raise IncompleteResponseError("the stream ended before the answer did")
    first = chunks[0]
    return ChatCompletion(
        id=first.id,
        object="chat.completion",
        created=first.created,
        model=first.model,
        system_fingerprint=first.system_fingerprint,
        choices=[
            Choice(
                index=0,
                finish_reason=finish,  # type: ignore[arg-type]
                message=ChatCompletionMessage(
                    role="assistant", content="".join(parts), refusal="".join(refused) or None
                ),
            )
        ],
        usage=usage,
    )
