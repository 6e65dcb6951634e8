"""The response cache in a call: hits answered before planning, answers kept as they come.

Per question, keyed by the question's own request (as it would be sent alone: see
``fanout.cache._key``). Before a batch is planned, its cacheable jobs are looked up
in one round trip; a hit is answered at once from the cache (``Answer.cached``, no
usage, no attempts, counted in ``Report.cache_hits``) and never reaches the plan.
Every other cacheable job's answer is kept when it arrives, whether it came from a
request of its own or a share of a merged one (``Entry.mode`` says which: a call
with ``policy="split"`` takes only entries of split requests). Failures are never
kept, nor answers the endpoint's content filter cut (``finish_reason
"content_filter"``: what it withheld may come next time), and an entry that holds one
is a miss. Writes are batched: every ``FLUSH_AT`` answers or ``FLUSH_EVERY_S`` seconds,
and at the end of the call (even a cancelled one).

A store that fails (a file that is not a sqlite database, a redis that went away)
warns once and the call goes on without the cache: the cache never fails a call.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import anyio

from ..cache import Cache, is_deterministic, request_key
from ..cache import default_path as default_cache_path
from ..core import clock
from ..core.exceptions import ConfigError
from ..core.models import Answer, Usage
from ..endpoint.memory import endpoint_key
from .call import CallOptions, CallStats
from .intake import Job
from .transport import Transport

if TYPE_CHECKING:
    from ..cache._entry import Entry

# The entries' codec and the stores are imported when a call uses a cache, not with
# fanout: most calls have none (pydantic's model and sqlite3 cost the import ~40 ms).

__all__ = ["FLUSH_AT", "FLUSH_EVERY_S", "CallCache", "cached_answer", "call_cache"]

log = logging.getLogger("fanout")

FLUSH_AT = 64
FLUSH_EVERY_S = 1.0
_CLOSE_WITHIN_S = 10.0
_NEVER_KEPT = "content_filter"
"""The ``finish_reason`` of an answer the cache never keeps (nor takes)."""

Finish = Callable[[Job, Answer], Awaitable[None]]


class Store(Protocol):
    where: str

    async def get_many(self, keys: list[str]) -> dict[str, bytes]: ...
    async def put_many(self, items: dict[str, bytes]) -> None: ...
    async def aclose(self) -> None: ...


def cached_answer(entry: Entry, job: Job) -> Answer:
    """``job``'s answer from a cache entry: it cost nothing now (no usage, no attempts)."""
    q = job.question
    return Answer(
        index=job.index,
        question=q.text,
        id=q.id,
        text=entry.text,
        choices=list(entry.choices) or [entry.text],
        mode=entry.mode,
        finish_reason=entry.finish_reason,
        usage=Usage(),
        attempts=0,
        latency_s=0.0,
        request_ids=list(entry.request_ids),
        tool_calls=list(entry.tool_calls),
        cached=True,
    )


def _entry_of(answer: Answer) -> Entry:
    from ..cache._entry import Entry

    assert answer.text is not None
    return Entry(
        text=answer.text,
        choices=list(answer.choices),
        finish_reason=answer.finish_reason,
        tool_calls=list(answer.tool_calls),
        mode=answer.mode,
        prompt_tokens=answer.usage.prompt_tokens,
        completion_tokens=answer.usage.completion_tokens,
        request_ids=list(answer.request_ids),
    )


class CallCache:
    """One call's use of the response cache (see the module docstring)."""

    def __init__(
        self, cache: Cache, store: Store, endpoint: str, opts: CallOptions, stats: CallStats
    ) -> None:
        self.cache = cache
        self.store = store
        self._endpoint = endpoint
        self._opts = opts
        self._stats = stats
        self._waiting: dict[int, str] = {}  # a looked-up job's index -> its key
        self._buffer: dict[str, bytes] = {}
        self._flushed_at = clock.now()
        self._broken = False

    def _failed(self, doing: str, exc: BaseException) -> None:
        if not self._broken:
            log.warning(
                "response cache %s not used (%s failed), this call goes on without it: %s: %s",
                self.store.where,
                doing,
                type(exc).__name__,
                exc,
            )
        self._broken = True

    def key_of(self, job: Job) -> str | None:
        """The job's cache key; None if it is not to be cached."""
        if not (self.cache.always or is_deterministic(job.params)):
            return None
        return request_key(self._endpoint, self._opts.api, job.params)

    async def take_hits(self, batch: list[Job], finish: Finish) -> list[Job]:
        """Answer the jobs of ``batch`` the cache holds (through ``finish``); the rest,
        to be planned and sent."""
        from ..cache._entry import decode

        keys = {job.index: key for job in batch if (key := self.key_of(job)) is not None}
        found: dict[str, bytes] = {}
        if keys and not self._broken:
            try:
                found = await self.store.get_many(sorted(set(keys.values())))
            except Exception as exc:
                self._failed("reading", exc)
        split_only = self._opts.policy.mode == "split"
        rest = []
        for job in batch:
            key = keys.get(job.index)
            if key is None:
                rest.append(job)
                continue
            data = found.get(key)
            entry = decode(data, ttl_s=self.cache.ttl_s) if data is not None else None
            if data is not None and entry is None:
                log.debug(
                    "response cache: entry %s of question %d unreadable or expired: a miss",
                    key[:12],
                    job.index,
                )
            if entry is not None and entry.finish_reason == _NEVER_KEPT:
                entry = None  # kept before filtered answers were left out: asked again
            if entry is not None and not (split_only and entry.mode != "split"):
                self._stats.cache_hits += 1
                await finish(job, cached_answer(entry, job))
                continue
            self._waiting[job.index] = key
            rest.append(job)
        return rest

    async def keep(self, answer: Answer) -> None:
        """An answer was delivered: keep it if it is a looked-up job's, and answered
        whole or at ``max_tokens`` (not one the content filter cut)."""
        key = self._waiting.pop(answer.index, None)
        if key is None or answer.error is not None or answer.text is None or answer.cached:
            return
        if answer.finish_reason == _NEVER_KEPT:
            return
        from ..cache._entry import encode

        self._buffer[key] = encode(_entry_of(answer))
        due = clock.now() - self._flushed_at >= FLUSH_EVERY_S
        if len(self._buffer) >= FLUSH_AT or due:
            await self.flush()

    async def flush(self) -> None:
        """Write the answers kept so far."""
        items, self._buffer = self._buffer, {}
        self._flushed_at = clock.now()
        if items and not self._broken:
            try:
                await self.store.put_many(items)
            except Exception as exc:
                self._failed("writing", exc)


def _store_for(cache: Cache, transport: Transport) -> Store:
    """Where ``cache`` keeps its entries for calls over ``transport``: its own redis,
    the limits' redis (when the limiter uses it: not when it fell back to local
    limits), else its sqlite file."""
    url, namespace = cache.redis, cache.namespace
    limits = transport.limits
    if url is None and limits.backend is not None and hasattr(transport.limiter, "load_memory"):
        url, namespace = limits.backend, limits.namespace
    if url is not None:
        try:
            from ..cache._redis import RedisStore
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ConfigError(
                "a response cache in redis needs the redis package: pip install redis"
            ) from exc
        return RedisStore(url, namespace=namespace, ttl_s=cache.ttl_s)
    from ..cache._disk import DiskStore

    path = default_cache_path() if cache.path is None else cache.path
    return DiskStore(Path(path).expanduser(), ttl_s=cache.ttl_s)


@contextlib.asynccontextmanager
async def call_cache(
    transport: Transport, opts: CallOptions, stats: CallStats, cache: Cache | None
) -> AsyncIterator[CallCache | None]:
    """The call's :class:`CallCache` (None without a cache); its last answers are
    written and its store closed at the end, even of a cancelled call."""
    if cache is None:
        yield None
        return
    await transport.check_limiter()  # redis, or the local limits it fell back to
    store = _store_for(cache, transport)
    endpoint = endpoint_key(str(transport.client.base_url), "").strip()
    call = CallCache(cache, store, endpoint, opts, stats)
    try:
        yield call
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_CLOSE_WITHIN_S):
            await call.flush()
            try:
                await store.aclose()
            except Exception as exc:  # closing what failed may fail too
                log.debug("response cache %s: closing failed: %r", store.where, exc)
