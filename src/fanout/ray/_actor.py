"""The actor that answers batches: one ``Fanout`` per actor, made in the actor.

Ray Data builds one :class:`Answerer` per actor of the pool from an :class:`ActorSpec`
(plain, picklable settings: no client, no connection, no key) and calls it with each
batch. Its ``__call__`` is a coroutine, so Ray Data runs it on the actor's own event
loop (a thread it keeps for the actor's life) and up to
``RAY_DATA_DEFAULT_ASYNC_BATCH_UDF_MAX_CONCURRENCY`` (4) batches at once: every batch
is one ``Fanout.ask_many`` call, and the calls of one actor share its ``Fanout``
(its limits, concurrency cap and what it learned).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..cache import Cache
from ..core.config import Limits, Policy, Retry
from ..core.exceptions import ConfigError
from ..core.redact import redact
from ..endpoint.memory import MemorySetting
from ..engine.facade import Fanout
from ..limits._local import RateLimiter
from ..limits._redis import RedisLimiter
from ._rows import ANSWER_COLUMNS, answer_columns, read_rows

if TYPE_CHECKING:
    import pyarrow as pa
    from openai import AsyncOpenAI

__all__ = ["ActorSpec", "Answerer", "ClientSettings"]


@dataclass(frozen=True, kw_only=True)
class ClientSettings:
    """How each actor makes its ``AsyncOpenAI`` client, with the API key read from the
    actor's environment (``api_key_env``): the key never travels in a task.

    ::

        fanout.ray.ClientSettings(base_url="https://api.openai.com/v1")  # OPENAI_API_KEY
    """

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the key, read in the actor (on a cluster: set
    it on every node, or in ``ray.init(runtime_env={"env_vars": ...})``)."""
    timeout: float = 600.0
    organization: str | None = None

    def __call__(self) -> AsyncOpenAI:
        from openai import AsyncOpenAI

        key = os.environ.get(self.api_key_env)
        if not key:
            raise ConfigError(
                f"fanout.ray: the environment variable {self.api_key_env} (the API key) "
                f"is not set in the actor's process (pid {os.getpid()})"
            )
        return AsyncOpenAI(
            base_url=self.base_url,
            api_key=key,
            timeout=self.timeout,
            organization=self.organization,
        )


ClientFactory = Callable[[], "AsyncOpenAI"]


@dataclass(frozen=True, kw_only=True)
class ActorSpec:
    """What every actor needs to answer batches (picklable, secret-free settings)."""

    client: ClientFactory
    column: str
    id_column: str | None
    params: tuple[str, ...]
    model: str | None
    system: str | None
    limits: Limits
    retry: Retry | None
    policy: Policy | str
    memory: MemorySetting
    cache: Cache | None
    create_kwargs: Mapping[str, Any] = field(default_factory=dict)

    def __repr__(self) -> str:
        shown = (
            f"column={self.column!r}, model={self.model!r}, limits={self.limits!r}, "
            f"policy={self.policy!r}, params={self.params!r}, client={self.client!r}"
        )
        return redact(f"ActorSpec({shown})")


class Answerer:
    """``map_batches``' callable class: answers the question column of each batch."""

    def __init__(self, spec: ActorSpec) -> None:
        self.spec = spec
        self._fanout: Fanout | None = None

    def __repr__(self) -> str:
        return f"Answerer({self.spec!r})"

    def fanout(self) -> Fanout:
        """The actor's ``Fanout``, made (with its client) on first use, in the actor."""
        if self._fanout is None:
            spec = self.spec
            client = spec.client()
            self._fanout = Fanout(
                client,
                model=spec.model,
                system=spec.system,
                limits=spec.limits,
                limiter=_actor_limiter(spec.limits),
                retry=spec.retry,
                policy=spec.policy,
                on_error="return",
                memory=spec.memory,
                cache=spec.cache,
                **dict(spec.create_kwargs),
            )
        return self._fanout

    async def __call__(self, batch: pa.Table) -> pa.Table:
        spec = self.spec
        rows: Sequence[Mapping[str, Any]] = batch.to_pylist()
        read = read_rows(rows, column=spec.column, params=spec.params, id_column=spec.id_column)
        answers = None
        if read.questions:
            answers = await self.fanout().ask_many(read.questions, on_error="return")
        columns = answer_columns(read, answers, uuid.uuid4().hex[:16])
        return _with_columns(batch, columns)


def _actor_limiter(limits: Limits) -> RateLimiter | None:
    """The redis limiter of the actor's life, or None (the ``Fanout`` makes a local one).
    Made by the ``Fanout``, it would close its connections whenever no call runs (between
    two batches) and open them again for the next: 1,617 connections for 2,000 requests
    in ``benchmarks/ray_data.py``'s ceiling run. The actor's stay open until it ends."""
    if limits.backend is None:
        return None
    return RedisLimiter(limits, limits.backend, namespace=limits.namespace)


def _with_columns(batch: pa.Table, columns: Mapping[str, list[Any]]) -> pa.Table:
    import pyarrow as pa

    types = {
        "prompt_tokens": pa.int64(),
        "completion_tokens": pa.int64(),
        "attempts": pa.int64(),
        "cached": pa.bool_(),
        "plan_on_priors": pa.bool_(),
        "batch_requests": pa.int64(),
        "batch_rate_limited": pa.int64(),
        "batch_retries": pa.int64(),
        "batch_wall_s": pa.float64(),
    }
    for name in ANSWER_COLUMNS:
        batch = batch.append_column(
            name, pa.array(columns[name], type=types.get(name, pa.string()))
        )
    return batch
