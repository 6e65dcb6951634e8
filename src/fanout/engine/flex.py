"""Flex processing (``service_tier="flex"``): half price, slower, and refused with 429
``resource_unavailable`` when the provider has no room for flex work.

A refusal is no rate limit (the limiter does not cool down for it, nothing was
charged) and the retry layer does not retry it: :func:`send_flex` does. It waits and
asks at the flex tier again (exponential backoff from ``Retry.initial_wait`` up to
``Retry.max_wait``, with full jitter), until either ``Retry.max_attempts`` refusals
were seen or the deadline (:data:`flex_until`) would no longer leave time for the wait
and the request: then the request is sent at the standard tier (``service_tier``
left out), once more through the retry layer.
"""

from __future__ import annotations

import random
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any, TypeVar

import anyio
import openai

from ..core import clock
from ..core.config import Retry
from ..core.logs import get_logger

__all__ = ["flex_until", "is_flex", "is_flex_refusal", "send_flex"]

log = get_logger("fanout.flex")

T = TypeVar("T")

flex_until: ContextVar[float | None] = ContextVar("fanout_flex_until", default=None)
"""The ``clock.now()`` by which flex requests must be answered (a job's deadline);
None: no deadline."""


def is_flex(params: Mapping[str, Any]) -> bool:
    """The request asks for the flex tier."""
    return params.get("service_tier") == "flex"


def is_flex_refusal(exc: BaseException) -> bool:
    """A 429 ``resource_unavailable``: no room for flex work now (not a rate limit)."""
    if not isinstance(exc, openai.RateLimitError):
        return False
    body = exc.body if isinstance(exc.body, Mapping) else {}
    return "resource_unavailable" in (exc.code, body.get("code"), body.get("type"))


async def send_flex(
    send: Callable[[dict[str, Any]], Awaitable[T]],
    params: dict[str, Any],
    retry: Retry,
    expected_s: float,
    *,
    on_fallback: Callable[[], None] | None = None,
) -> T:
    """``send(params)`` at the flex tier; after refusals, at the standard tier when
    the deadline needs it (see the module docstring). ``expected_s``: how long the
    request is expected to take once accepted."""
    wait = retry.initial_wait
    refusals = 0
    while True:
        try:
            return await send(params)
        except openai.RateLimitError as exc:
            if not is_flex_refusal(exc):
                raise
            refusals += 1
        pause = random.uniform(0, wait)
        until = flex_until.get()
        late = until is not None and clock.now() + pause + expected_s > until
        if late or refusals >= retry.max_attempts:
            why = "the deadline is near" if late else f"{refusals} refusals"
            log.info("flex refused: sending at the standard tier (%s)", why)
            if on_fallback is not None:
                on_fallback()
            return await send({k: v for k, v in params.items() if k != "service_tier"})
        log.debug("flex refused (%d): trying again in %.2fs", refusals, pause)
        await anyio.sleep(pause)
        wait = min(wait * 2, retry.max_wait)
