"""``fanout.ray.answer``: a column of a Ray Dataset answered by a pool of actors.

Checked on the driver before anything runs: the question column and the parameter
columns exist, the question column holds strings, a redis named for the limits
answers, and more than one actor is never given one budget each (N × the limit).
"""

from __future__ import annotations

import dataclasses
import logging
import tempfile
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cache import Cache
from ..core.config import Limits, Policy, Retry
from ..core.exceptions import ConfigError
from ..core.redact import mask_url
from ..endpoint.memory import MemorySetting
from ..limits._redis import RedisUnavailableError
from ._actor import ActorSpec, Answerer, ClientFactory
from ._rows import ANSWER_COLUMNS

if TYPE_CHECKING:
    from ray.data import Dataset

__all__ = ["RaySummary", "answer", "summarize"]

log = logging.getLogger("fanout.ray")

RUN_CACHE_TTL_S = 7 * 86_400.0
"""How long a run's answers are kept for its retried batches (see :func:`answer`)."""


def answer(
    ds: Dataset,
    *,
    client: ClientFactory,
    column: str = "question",
    model: str | None = None,
    limits: Limits | None = None,
    redis_url: str | None = None,
    policy: Policy | str = "auto",
    retry: Retry | None = None,
    system: str | None = None,
    params: Sequence[str] = (),
    id_column: str | None = None,
    concurrency: int = 1,
    batch_size: int = 64,
    split_limits: bool = False,
    cache: Cache | bool | None = None,
    memory: MemorySetting = None,
    num_cpus: float = 0.25,
    **create_kwargs: Any,
) -> Dataset:
    """``ds`` with the questions of ``column`` answered, as new columns (see
    docs/ray.md): ``answer``, ``error`` (a row's answer or an error naming it),
    ``prompt_tokens``, ``completion_tokens``, ``attempts``, ``mode``,
    ``finish_reason``, ``cached``, and the batch's ``plan``, ``plan_reason``,
    ``plan_on_priors``,
    ``batch`` (an id), ``batch_requests``, ``batch_rate_limited``,
    ``batch_retries`` and ``batch_wall_s``.

    ``client``: a callable with no arguments that returns an ``AsyncOpenAI``, called in
    each actor (:class:`~fanout.ray.ClientSettings` reads the key from the actor's
    environment). ``params``: columns read as per-row parameters, as the keys of
    ``fanout run``'s JSONL (``system``, ``max_tokens``, ``model``, ...; a null leaves
    the row without it). ``concurrency``: actors. With more than one, the limits must
    live in redis (``redis_url``, or ``limits.backend``) so that they pace one budget;
    ``split_limits=True`` gives each actor 1/N of ``rpm`` and ``tpm`` instead.
    ``batch_size`` rows are one ``ask_many`` call (the plan — split, merge or groups —
    is made per batch).

    A batch that Ray retries (an actor died) is answered again; the answers its first
    try got are kept for it in a response cache for the run (in redis with
    ``redis_url``, else in a sqlite file under the temporary directory), so it pays
    only for what the first try had not stored yet. ``cache=False`` turns it off;
    ``cache=fanout.Cache(...)`` uses that cache instead.
    """
    import ray.data

    if not callable(client):
        raise ConfigError(
            "fanout.ray.answer: client must be a callable that makes the AsyncOpenAI client "
            "in the actor (a function, or fanout.ray.ClientSettings), not "
            f"{type(client).__name__}"
        )
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ConfigError(
            f"fanout.ray.answer: concurrency must be an int >= 1, not {concurrency!r}"
        )
    if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
        raise ConfigError(f"fanout.ray.answer: batch_size must be an int >= 1, not {batch_size!r}")
    _check_columns(ds, column, params, id_column)
    limits = _shared_limits(limits or Limits(), redis_url, concurrency, split_limits)
    if limits.backend is not None:
        _check_redis(limits.backend)
    run = uuid.uuid4().hex[:16]
    spec = ActorSpec(
        client=client,
        column=column,
        id_column=id_column,
        params=tuple(params),
        model=model,
        system=system,
        limits=limits,
        retry=retry,
        policy=policy,
        memory=memory,
        cache=_run_cache(cache, limits, run),
        create_kwargs=create_kwargs,
    )
    out: Dataset = ds.map_batches(
        Answerer,
        fn_constructor_kwargs={"spec": spec},
        batch_size=batch_size,
        batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=concurrency),
        num_cpus=num_cpus,
        zero_copy_batch=True,
    )
    return out


def _check_columns(ds: Dataset, column: str, params: Sequence[str], id_column: str | None) -> None:
    """The columns named exist, and the question column holds strings (when the
    dataset's schema says what it holds)."""
    schema = ds.schema()
    if schema is None:
        return  # an empty dataset, or one whose schema is not known: rows are checked
    names = list(schema.names)
    if isinstance(params, str):
        raise ConfigError(f"fanout.ray.answer: params must be a list of columns, not {params!r}")
    wanted = [("question", column), *(("parameter", p) for p in params)]
    if id_column is not None:
        wanted.append(("id", id_column))
    for role, name in wanted:
        if name not in names:
            raise ConfigError(
                f"fanout.ray.answer: the {role} column {name!r} is not in the dataset "
                f"(its columns: {', '.join(names)})"
            )
    clash = [c for c in ANSWER_COLUMNS if c in names]
    if clash:
        raise ConfigError(
            f"fanout.ray.answer: the dataset already has column(s) {', '.join(clash)}, "
            "which the answers would replace: rename or drop them first"
        )
    kind = schema.types[names.index(column)]
    text = str(kind)
    if text not in {"string", "large_string", "string_view", "null"} and "object" not in text:
        raise ConfigError(
            f"fanout.ray.answer: the question column {column!r} holds {text}, not strings"
        )


def _shared_limits(
    limits: Limits, redis_url: str | None, concurrency: int, split_limits: bool
) -> Limits:
    """The limits each actor runs under: in redis when there is one; with several
    actors and none, split evenly if asked to, else refused."""
    if redis_url is not None:
        limits = dataclasses.replace(limits, backend=redis_url)
    if limits.backend is not None:
        if limits.rpm is None and limits.tpm is None:
            raise ConfigError(
                "fanout.ray.answer: limits shared through redis must be configured: give "
                "Limits(rpm=..., tpm=...) (a budget cannot be learned by each actor alone)"
            )
        return limits
    if concurrency == 1:
        return limits
    if not split_limits:
        raise ConfigError(
            f"fanout.ray.answer: {concurrency} actors with no redis would each pace a "
            f"budget of their own ({concurrency} x the limit): pass redis_url= (or "
            "Limits(backend=...)) so that they share one, or split_limits=True to give "
            f"each actor 1/{concurrency} of it"
        )
    if limits.rpm is None and limits.tpm is None:
        raise ConfigError(
            "fanout.ray.answer: split_limits=True needs Limits(rpm=..., tpm=...) to split: "
            "limits learned from headers cannot be shared without redis"
        )
    each = dataclasses.replace(
        limits,
        rpm=None if limits.rpm is None else limits.rpm / concurrency,
        tpm=None if limits.tpm is None else limits.tpm / concurrency,
    )
    log.warning(
        "fanout.ray: no redis: each of the %d actors paces 1/%d of the limits (rpm=%s, "
        "tpm=%s); an actor idle or dead leaves its share unused",
        concurrency,
        concurrency,
        each.rpm,
        each.tpm,
    )
    return each


def _check_redis(url: str) -> None:
    """Fail on the driver, naming the redis, before any actor starts."""
    try:
        import redis
    except ImportError as exc:  # pragma: no cover - the ray extra installs it
        raise ConfigError("fanout.ray: limits in redis need `pip install redis`") from exc
    try:
        conn = redis.Redis.from_url(url, socket_connect_timeout=3, socket_timeout=3)
        try:
            conn.ping()
        finally:
            conn.close()
    except (redis.RedisError, OSError, ValueError) as exc:
        raise RedisUnavailableError(
            f"fanout.ray: the redis for the shared limits, {mask_url(url)}, cannot be "
            f"reached: {exc}"
        ) from None


def _run_cache(cache: Cache | bool | None, limits: Limits, run: str) -> Cache | None:
    """The response cache a retried batch finds its first try's answers in."""
    if cache is False:
        return None
    if isinstance(cache, Cache):
        return cache
    if limits.backend is not None:
        return Cache(
            redis=limits.backend, always=True, ttl_s=RUN_CACHE_TTL_S, namespace=f"ray-{run}"
        )
    path = Path(tempfile.gettempdir()) / f"fanout-ray-{run}.sqlite3"
    return Cache(path=path, always=True, ttl_s=RUN_CACHE_TTL_S)


@dataclass
class RaySummary:
    """What the rows of an answered dataset say, totalled (:func:`summarize`)."""

    rows: int = 0
    answered: int = 0
    failed: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    batches: int = 0
    requests: int = 0
    """Requests of the batches whose rows are in the output (a batch's try that died
    is not counted: what it sent is not in any row)."""
    rate_limited: int = 0
    retries: int = 0
    modes: Counter[str] = field(default_factory=Counter)
    plans: Counter[str] = field(default_factory=Counter)
    first_error: str | None = None

    def __str__(self) -> str:
        return (
            f"{self.rows} row(s): {self.answered} answered, {self.failed} failed "
            f"({self.cached} from the cache); {self.batches} batch(es), {self.requests} "
            f"request(s), {self.rate_limited} x 429, {self.retries} retries; "
            f"{self.prompt_tokens} + {self.completion_tokens} tokens; plans "
            f"{dict(self.plans)}"
        )


def summarize(rows: Dataset | Sequence[dict[str, Any]]) -> RaySummary:
    """The totals of an answered dataset (better a materialized one, or its output read
    back: a lazy dataset is run again to be read), or of its rows."""
    summary = RaySummary()
    seen: set[str] = set()
    it: Any = (
        rows
        if isinstance(rows, Sequence)
        else rows.select_columns(list(ANSWER_COLUMNS)).iter_rows()
    )
    for row in it:
        _add(summary, row, seen)
    return summary


def _add(summary: RaySummary, row: Any, seen: set[str]) -> None:
    summary.rows += 1
    if row["error"] is None:
        summary.answered += 1
    else:
        summary.failed += 1
        summary.first_error = summary.first_error or row["error"]
    summary.cached += bool(row["cached"])
    summary.prompt_tokens += row["prompt_tokens"] or 0
    summary.completion_tokens += row["completion_tokens"] or 0
    if row["mode"] is not None:
        summary.modes[row["mode"]] += 1
    batch = row["batch"]
    if batch not in seen:
        seen.add(batch)
        summary.batches += 1
        summary.requests += row["batch_requests"] or 0
        summary.rate_limited += row["batch_rate_limited"] or 0
        summary.retries += row["batch_retries"] or 0
        if row["plan"] is not None:
            summary.plans[row["plan"]] += 1
