"""The one retry layer: which failures are worth another attempt, and how long to wait.

Built on tenacity. The SDK's own retries are switched off
(``client.with_options(max_retries=0)``) so attempts are never multiplied.

How long to wait depends on what the endpoint is doing, which a :class:`RetryBudget`
(one per ``Fanout``, fed every attempt's outcome) tells:

* **sporadic failures** — a stray 500 or reset while the endpoint otherwise answers:
  retry at once, after a few milliseconds of jitter (waiting would only add latency);
* **clustered failures** — most recent attempts failing (an overload, a storm of
  503s): exponential backoff with full jitter;
* **a retry budget** — prompt retries may be at most ``Retry.budget`` (40 %) of the
  recent attempts; past that, retries back off exponentially too, so a sick
  endpoint is not hammered (the gRPC / Envoy / Finagle idea; nothing is dropped);
* the server's own ``retry-after`` always wins, and a 429 waits on the limiter's
  shared cool-down instead.
"""

from __future__ import annotations

import email.utils
import json
import random
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

import openai
from tenacity import (
    AsyncRetrying,
    DoAttempt,
    DoSleep,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
)
from tenacity.wait import wait_base

from ..core.params import answer_cap
from .flex import is_flex_refusal

if TYPE_CHECKING:
    from tenacity.stop import stop_base

    from ..core.config import Retry
    from ..endpoint.model import EndpointModel

__all__ = [
    "MOST_DOUBLINGS",
    "PRIOR_ANSWER_CAP",
    "AttemptTimeoutError",
    "EmptyReplyError",
    "IncompleteResponseError",
    "RefusedReplyError",
    "RetryBudget",
    "UnreadableResponseError",
    "attempt_deadline",
    "build_retrying",
    "is_quota_error",
    "is_retryable",
    "retried",
    "server_retry_after",
]

T = TypeVar("T")

PRIOR_ANSWER_CAP = 1000
"""Tokens an answer may run to, before any was seen."""
MOST_DOUBLINGS = 2
"""An ``"auto"`` attempt deadline doubles after each abandoned attempt up to this many
times (4x): answers twice to four times longer than expected get their time; a hung
endpoint holds a question at most a few deadlines longer than before."""


def attempt_deadline(
    retry: Retry,
    params: Mapping[str, Any],
    prompt_tokens: int,
    endpoint: EndpointModel,
    others: int = 0,
    *,
    answer_tokens: int | None = None,
    abandoned: int = 0,
) -> float | None:
    """Seconds one attempt of a request may run (``Retry.attempt_timeout``); with
    ``"auto"``, ``attempt_timeout_factor`` times what the endpoint model expects of it
    sent with ``others`` requests in flight (on a server that queues them or shares its
    slots, as much of their work as the model says delays it; behind the slots it
    learned, the rounds of the others that go first), never under
    ``min_attempt_timeout``, and doubled for each attempt of the request ``abandoned``
    at its deadline before (the deadline is a guess, and that one was short), at most
    :data:`MOST_DOUBLINGS` times (a hung endpoint holds a question for a bounded
    multiple of the deadline, as a retransmission timeout backs off to its ceiling).

    Its reply is costed at its ``max_tokens``, or else at four times the longer of the
    answers seen on the endpoint and the reply's own expected length
    (``answer_tokens``: the answers its questions were told to expect, all of them for
    a merged request)."""
    timeout = retry.attempt_timeout
    if timeout is None:
        return None
    if timeout != "auto":
        return float(timeout)
    cap = answer_cap(params)
    if not isinstance(cap, int) or cap <= 0:
        longest = max(endpoint.answer_tokens or 0, answer_tokens or 0)
        cap = int(4 * longest) if longest else PRIOR_ANSWER_CAP
    estimate = endpoint.recent_estimate()
    slots = estimate.slots
    if slots and others >= slots:
        # Behind the endpoint's slots (learned): the request waits whole rounds of the
        # others before its own, each as long as a request beside ``slots - 1`` others.
        busy = slots - 1
        rounds = others // slots + 1
        expected = rounds * estimate.request_s(prompt_tokens, cap, busy * prompt_tokens, busy * cap)
    else:
        expected = estimate.request_s(prompt_tokens, cap, others * prompt_tokens, others * cap)
    longer = 2.0 ** min(abandoned, MOST_DOUBLINGS)
    return max(retry.min_attempt_timeout, retry.attempt_timeout_factor * expected) * longer


_RETRY_STATUS = frozenset({408, 409, 429})


def is_quota_error(exc: BaseException) -> bool:
    """429 ``insufficient_quota``: the key has no money left; retrying cannot help."""
    if not isinstance(exc, openai.RateLimitError):
        return False
    if exc.code == "insufficient_quota":
        return True
    body = exc.body
    if isinstance(body, Mapping):
        return body.get("code") == "insufficient_quota" or body.get("type") == "insufficient_quota"
    return False


class AttemptTimeoutError(TimeoutError):
    """An attempt ran past its deadline (``Retry.attempt_timeout``) and was abandoned."""


class IncompleteResponseError(Exception):
    """A streamed response ended before its answer did (the connection was cut)."""


class UnreadableResponseError(Exception):
    """A 200 whose body is no chat completion: an HTML page, an error object, no
    ``choices``, a choice without a message. Retried like a garbled body."""


class EmptyReplyError(Exception):
    """A reply that holds no answer (see ``replies.judge``). ``retry``: whether another
    attempt may differ (not when the reply was cut at ``max_tokens`` or filtered);
    ``tool_calls``: those the reply held although the request offered no tools."""

    def __init__(
        self, message: str, *, retry: bool = True, tool_calls: list[dict[str, object]] | None = None
    ) -> None:
        super().__init__(message)
        self.retry = retry
        self.tool_calls = tool_calls or []


class RefusedReplyError(Exception):
    """The model refused (``message.refusal``): never retried, the same question is
    refused again."""

    def __init__(self, refusal: str) -> None:
        super().__init__(f"the model refused: {refusal}")
        self.refusal = refusal


def is_retryable(exc: BaseException) -> bool:
    """408, 409, 429 (rate limit), 5xx, connection errors, timeouts, unreadable bodies,
    empty answers (unless cut at ``max_tokens``)."""
    if isinstance(exc, (AttemptTimeoutError, IncompleteResponseError, UnreadableResponseError)):
        return True
    if isinstance(exc, EmptyReplyError):
        return exc.retry
    if isinstance(exc, openai.APIStatusError):
        should = exc.response.headers.get("x-should-retry")
        if should == "false":
            return False
        if is_quota_error(exc) or is_flex_refusal(exc):  # flex: engine/flex.py retries it
            return False
        if should == "true":
            return True
        return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    if isinstance(exc, openai.APIResponseValidationError):
        return True
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    if _body_read_error(exc):
        return True
    # A 200 whose body is not the JSON it claims to be (cut short, garbled).
    return isinstance(exc, json.JSONDecodeError)


def _body_read_error(exc: BaseException) -> bool:
    """An error of the HTTP client (httpx, or the SDK's httpx2) while reading a response's
    body: the connection reset mid-body, a body that does not decompress. The SDK wraps
    errors of sending a request as ``APIConnectionError``, not those of reading its body."""
    kind = type(exc)
    return kind.__module__.split(".")[0] in ("httpx", "httpx2") and any(
        base.__name__ in _BODY_READ_ERRORS for base in kind.__mro__
    )


_BODY_READ_ERRORS = frozenset(
    {"NetworkError", "RemoteProtocolError", "DecodingError", "TimeoutException"}
)
"""httpx's errors of a connection or a body (not of the request itself: a bad URL or
protocol is the caller's)."""


def server_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds the server asks us to wait: ``retry-after-ms``, then ``retry-after``
    (seconds or an HTTP date)."""
    value = headers.get("retry-after-ms")
    if value is not None:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


_PROMPT_RETRY_JITTER_S = 0.05
_BUDGET_WINDOW = 100  # attempts remembered
_CLUSTER_SHARE = 0.5  # more than this share of recent attempts failing: a cluster
_MIN_PROMPT_RETRIES = 10  # prompt retries always allowed in the window, whatever the ratio


class RetryBudget:
    """What recent attempts say about the endpoint: how many failed, and how many of
    them were retries (see the module docstring). Shared by every call of a ``Fanout``."""

    def __init__(self) -> None:
        self._outcomes: deque[tuple[bool, bool]] = deque(maxlen=_BUDGET_WINDOW)  # (failed, retry)

    def record(self, *, failed: bool, retry: bool) -> None:
        self._outcomes.append((failed, retry))

    @property
    def failure_share(self) -> float:
        if not self._outcomes:
            return 0.0
        return sum(f for f, _ in self._outcomes) / len(self._outcomes)

    def clustered(self) -> bool:
        """Most recent attempts failed: the endpoint is sick, not unlucky."""
        return len(self._outcomes) >= 5 and self.failure_share > _CLUSTER_SHARE

    def allows_prompt_retry(self, ratio: float) -> bool:
        """Within a budget of ``ratio`` retries an attempt (a call's ``Retry.budget``;
        none at all with 0)."""
        if ratio <= 0:
            return False
        retries = sum(r for _, r in self._outcomes)
        return retries < max(_MIN_PROMPT_RETRIES, ratio * len(self._outcomes))


class _wait_server_or_backoff(wait_base):
    """What the server asked (capped); else at once while failures are sporadic and the
    budget allows; else exponential backoff with full jitter.

    A rate-limited attempt waits nothing here: the limiter's shared cool-down
    already holds it (and every other request) back.
    """

    def __init__(
        self, retry: Retry, rng: Callable[[], float], budget: RetryBudget | None = None
    ) -> None:
        self._retry = retry
        self._rng = rng
        self._budget = budget

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, openai.RateLimitError):
            return 0.0
        if isinstance(exc, openai.APIStatusError):
            asked = server_retry_after(exc.response.headers)
            if asked is not None:
                return min(asked, self._retry.max_wait)
        budget = self._budget
        if (
            budget is not None
            and not budget.clustered()
            and budget.allows_prompt_retry(self._retry.budget)
        ):
            return float(self._rng() * _PROMPT_RETRY_JITTER_S)
        ceiling = min(
            self._retry.max_wait,
            self._retry.initial_wait * 2.0 ** max(0, retry_state.attempt_number - 1),
        )
        return float(self._rng() * ceiling)


def build_retrying(
    retry: Retry,
    *,
    sleep: Callable[[float], Awaitable[None]],
    rng: Callable[[], float] = random.random,
    budget: RetryBudget | None = None,
) -> AsyncRetrying:
    """A tenacity controller for one question. With a ``budget``, a sporadic failure is
    retried at once (see the module docstring); without, always with backoff."""
    stop: stop_base = stop_after_attempt(retry.max_attempts)
    if retry.max_elapsed is not None:
        stop = stop | stop_after_delay(retry.max_elapsed)
    return AsyncRetrying(
        stop=stop,
        wait=_wait_server_or_backoff(retry, rng, budget),
        retry=retry_if_exception(is_retryable),
        sleep=sleep,
        reraise=True,
    )


async def retried(attempt: Callable[[], Awaitable[T]], retrying: Callable[[], AsyncRetrying]) -> T:
    """``attempt()`` under the retry layer: tenacity decides every retry (whether, how
    long to wait, when to stop), as ``await retrying()(attempt)`` would for a controller
    like :func:`build_retrying`'s — one that retries on exceptions only, with no
    ``before`` hook, enabled (the first attempt, made before it exists, passes through
    neither a ``before`` hook nor a result predicate).

    The first attempt is made before the controller is built: most requests succeed
    at once, and building and stepping tenacity's controller cost them about a tenth
    of the client's time per request (``benchmarks/overhead.py``). A first attempt that
    fails is handed to it as attempt 1, timed from when it started, and tenacity runs
    the rest as its ``__call__`` does."""
    started = time.monotonic()
    try:
        return await attempt()
    except Exception:
        failure = sys.exc_info()
    controller = retrying()
    controller.begin()
    state = RetryCallState(retry_object=controller, fn=None, args=(), kwargs={})
    state.start_time = started
    state.set_exception(failure)  # type: ignore[arg-type]
    while True:
        do = await controller.iter(retry_state=state)
        if isinstance(do, DoAttempt):
            try:
                result = await attempt()
            except BaseException:
                state.set_exception(sys.exc_info())  # type: ignore[arg-type]
            else:
                state.set_result(result)
        elif isinstance(do, DoSleep):
            state.prepare_for_next_attempt()
            await controller.sleep(do)  # type: ignore[misc]
        else:
            return do  # type: ignore[no-any-return]
