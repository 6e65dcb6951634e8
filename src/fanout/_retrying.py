"""The one retry layer: which failures are worth another attempt, and how long to wait.

Built on tenacity. The SDK's own retries are switched off
(``client.with_options(max_retries=0)``) so attempts are never multiplied.
"""

from __future__ import annotations

import email.utils
import json
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING

import openai
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
)
from tenacity.wait import wait_base

if TYPE_CHECKING:
    from tenacity.stop import stop_base

    from ._config import Retry

__all__ = ["build_retrying", "is_quota_error", "is_retryable", "server_retry_after"]

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


def is_retryable(exc: BaseException) -> bool:
    """408, 409, 429 (rate limit), 5xx, connection errors, timeouts, unreadable bodies."""
    if isinstance(exc, openai.APIStatusError):
        should = exc.response.headers.get("x-should-retry")
        if should == "false":
            return False
        if is_quota_error(exc):
            return False
        if should == "true":
            return True
        return exc.status_code in _RETRY_STATUS or exc.status_code >= 500
    if isinstance(exc, openai.APIResponseValidationError):
        return True
    if isinstance(exc, openai.APIConnectionError):  # includes APITimeoutError
        return True
    # A 200 whose body is not the JSON it claims to be (cut short, garbled).
    return isinstance(exc, json.JSONDecodeError)


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


class _wait_server_or_backoff(wait_base):
    """Wait what the server asked (capped), else exponential backoff with full jitter.

    A rate-limited attempt waits nothing here: the limiter's shared cool-down
    already holds it (and every other request) back.
    """

    def __init__(self, retry: Retry, rng: Callable[[], float]) -> None:
        self._retry = retry
        self._rng = rng

    def __call__(self, retry_state: RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, openai.RateLimitError):
            return 0.0
        if isinstance(exc, openai.APIStatusError):
            asked = server_retry_after(exc.response.headers)
            if asked is not None:
                return min(asked, self._retry.max_wait)
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
) -> AsyncRetrying:
    """A tenacity controller for one question."""
    stop: stop_base = stop_after_attempt(retry.max_attempts)
    if retry.max_elapsed is not None:
        stop = stop | stop_after_delay(retry.max_elapsed)
    return AsyncRetrying(
        stop=stop,
        wait=_wait_server_or_backoff(retry, rng),
        retry=retry_if_exception(is_retryable),
        sleep=sleep,
        reraise=True,
    )
