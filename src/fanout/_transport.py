"""Transport: one request to the endpoint, under the limits, retried by the one retry layer.

Every request of a ``Fanout`` goes through its :class:`Transport`: it takes a place
under the concurrency cap and the rate limits, sends on the user's client copied
with ``max_retries=0`` (fanout's retry layer is the only one), reads the rate-limit
headers, settles the token estimate with the reported usage, backs everyone off
after a 429, and teaches the endpoint model from each response. What it learns of
the endpoint (its timing, whether it takes ``response_format``, which shared prompts
it has seen) lives here, shared by every call on the ``Fanout``.
"""

from __future__ import annotations

import logging
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import openai

from . import _telemetry as telemetry
from ._call import CallOptions, CallStats, Tally
from ._config import Limits, Retry
from ._endpoint import EndpointModel
from ._limiter import LocalLimiter, RateLimiter
from ._limiter_redis import RedisUnavailableError
from ._models import Usage
from ._retrying import build_retrying, is_quota_error, server_retry_after
from ._tokens import estimate_messages_tokens

if TYPE_CHECKING:
    from openai import AsyncOpenAI, AsyncStream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["Transport", "make_limiter"]

log = logging.getLogger("fanout")

_DEFAULT_COOL_DOWN_S = 1.0


def make_limiter(limits: Limits) -> RateLimiter:
    if limits.backend is None:
        return LocalLimiter(limits)
    from ._limiter_redis import RedisLimiter

    return RedisLimiter(limits, limits.backend, namespace=limits.namespace)


class Transport:
    """Sends requests for one ``Fanout``; see the module docstring."""

    def __init__(
        self,
        client: AsyncOpenAI,
        limits: Limits,
        *,
        limiter: RateLimiter | None = None,
        endpoint: EndpointModel | None = None,
    ) -> None:
        self.client = client.with_options(max_retries=0)
        self.limits = limits
        self.limiter: RateLimiter = limiter or make_limiter(limits)
        self._limiter_checked = limiter is not None or limits.backend is None
        self._slots = anyio.CapacityLimiter(limits.max_concurrency)
        self.endpoint = endpoint or EndpointModel()
        self.json_ok = True
        """Until the endpoint refuses ``response_format``."""
        self.in_flight = 0
        self.peak_in_flight = 0
        # Tokens of the requests answered so far: the work that finished during a
        # request's life is the difference, which teaches the endpoint model how
        # much requests delay each other.
        self._done_prompt_tokens = 0
        self._done_completion_tokens = 0
        self._sent_shared: OrderedDict[int, None] = OrderedDict()  # see remember_shared

    async def check_limiter(self) -> None:
        """Before the first request: a shared backend must be reachable (or, if the
        user allows it, local limits take over)."""
        if self._limiter_checked:
            return
        check = getattr(self.limiter, "check", None)
        if check is not None:
            try:
                await check()
            except RedisUnavailableError:
                if not self.limits.fallback_local:
                    raise
                log.warning("redis unreachable: falling back to limits local to this process")
                self.limiter = LocalLimiter(self.limits)
        self._limiter_checked = True

    def has_sent_shared(self, system: str) -> bool:
        """Was ``system`` the start of a request answered before?"""
        return hash(system) in self._sent_shared

    async def send(
        self, params: dict[str, Any], opts: CallOptions, stats: CallStats, tally: Tally
    ) -> ChatCompletion:
        """One request, retried by the one retry layer; raises the last failure."""
        retrying = build_retrying(opts.retry, sleep=anyio.sleep)
        async for attempt in retrying:
            with attempt:
                tally.attempts += 1
                return await self._attempt(params, opts, stats, tally)
        raise AssertionError("unreachable: tenacity either returns or raises")  # pragma: no cover

    def _rate_limited(self, exc: openai.APIStatusError, reserve: int, retry: Retry) -> None:
        """A 429: release the tokens reserved, and (unless the quota is gone) make
        every request of this ``Fanout`` wait as long as the server asked."""
        self.limiter.settle(reserve, None)
        if not is_quota_error(exc):
            asked = server_retry_after(exc.response.headers)
            wait = _DEFAULT_COOL_DOWN_S if asked is None else asked
            self.limiter.cool_down(min(wait, retry.max_wait))

    async def _attempt(
        self, params: dict[str, Any], opts: CallOptions, stats: CallStats, tally: Tally
    ) -> ChatCompletion:
        max_out = params.get("max_completion_tokens", params.get("max_tokens")) or 0
        n = params.get("n") or 1
        reserve = estimate_messages_tokens(params["messages"], opts.model) + int(max_out) * int(n)
        async with self._slots:
            waited = await self.limiter.acquire(reserve)
            stats.limit_wait_s += waited
            stats.requests += 1
            if tally.attempts > 1:
                stats.retries += 1
            done_before = (self._done_prompt_tokens, self._done_completion_tokens)
            stats.in_flight += 1
            stats.peak = max(stats.peak, stats.in_flight)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            sent = time.monotonic()
            log.debug("request sent", extra={"attempt": tally.attempts, "in_flight": self.in_flight,
                                             "model": params.get("model")})  # fmt: skip
            try:
                with telemetry.attempt_span(self.client, params, tally.attempts, waited) as span:
                    raw = await self.client.chat.completions.with_raw_response.create(**params)
                    self.limiter.observe(raw.headers)
                    request_id = raw.headers.get("x-request-id")
                    if request_id:
                        tally.request_ids.append(request_id)
                    completion: ChatCompletion = raw.parse()
                    span.done(completion)
            except openai.APIStatusError as exc:
                self.limiter.observe(exc.response.headers)
                log.info("request failed", extra={"status": exc.status_code, "attempt": tally.attempts,
                                                  "code": exc.code, "request_id": exc.request_id})  # fmt: skip
                if exc.request_id:
                    tally.request_ids.append(exc.request_id)
                if isinstance(exc, openai.RateLimitError):
                    stats.rate_limited += 1
                    self._rate_limited(exc, reserve, opts.retry)
                raise
            finally:
                stats.in_flight -= 1
                self.in_flight -= 1
        self._learn(completion, params, reserve, sent, done_before, tally)
        return completion

    def _learn(
        self,
        completion: ChatCompletion,
        params: dict[str, Any],
        reserve: int,
        sent: float,
        done_before: tuple[int, int],
        tally: Tally,
    ) -> None:
        """Settle the limits with the reported usage and teach the endpoint model."""
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
        self.limiter.settle(reserve, usage.total_tokens)
        self.endpoint.observe(
            prompt_tokens=usage.prompt_tokens,
            completion_tokens=usage.completion_tokens,
            latency_s=time.monotonic() - sent,
            others_prompt_tokens=self._done_prompt_tokens - done_before[0],
            others_completion_tokens=self._done_completion_tokens - done_before[1],
            cached_prompt_tokens=cached,
        )
        self._done_prompt_tokens += usage.prompt_tokens - cached
        self._done_completion_tokens += usage.completion_tokens
        self.remember_shared(params["messages"])

    def remember_shared(self, messages: Sequence[Any]) -> None:
        """Note the system prompt a request began with: an endpoint that caches
        prefixes has it now (the planner then leaves its prefill out)."""
        first = messages[0] if messages else None
        if isinstance(first, Mapping) and first.get("role") == "system":
            key = hash(str(first.get("content")))
            self._sent_shared[key] = None
            self._sent_shared.move_to_end(key)
            while len(self._sent_shared) > 64:
                self._sent_shared.popitem(last=False)

    async def stream_chunks(
        self,
        params: dict[str, Any],
        retry: Retry,
        *,
        on_send: Callable[[], object] | None = None,
    ) -> AsyncIterator[ChatCompletionChunk]:
        """Stream one request under the limits, retried until the stream opens (once
        chunks flow, a failure is the caller's to handle). ``on_send`` is called as
        each attempt leaves, after the limits let it go."""
        params = {**params, "stream": True, "stream_options": {"include_usage": True}}
        max_out = params.get("max_completion_tokens", params.get("max_tokens")) or 0
        reserve = estimate_messages_tokens(params["messages"], params.get("model")) + int(max_out)
        async with self._slots:
            retrying = build_retrying(retry, sleep=anyio.sleep)
            stream: AsyncStream[ChatCompletionChunk] | None = None
            async for attempt in retrying:
                with attempt:
                    waited = await self.limiter.acquire(reserve)
                    if on_send is not None:
                        on_send()
                    try:
                        with telemetry.attempt_span(self.client, params,
                                                    attempt.retry_state.attempt_number, waited,
                                                    stream=True) as span:  # fmt: skip
                            stream = span.watch(await self.client.chat.completions.create(**params))
                    except openai.APIStatusError as exc:
                        self.limiter.observe(exc.response.headers)
                        if isinstance(exc, openai.RateLimitError):
                            self._rate_limited(exc, reserve, retry)
                        raise
            assert stream is not None
            self.limiter.observe(stream.response.headers)
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                async for chunk in stream:
                    if chunk.usage is not None:
                        self.limiter.settle(reserve, chunk.usage.total_tokens)
                    yield chunk
            finally:
                self.in_flight -= 1
                await stream.close()
