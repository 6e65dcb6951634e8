"""The response cache (``Fanout(cache=...)``): answers kept by the request that got them.

Opt-in. A question whose request is deterministic (``temperature=0`` or a ``seed``;
any request with ``Cache(always=True)``) is looked up before the call plans, by a
key that is the sha256 of the canonical JSON of the endpoint, the API and every
``create()`` parameter that shapes the reply (``_key``); a hit is answered from the
cache, sends nothing and costs nothing. Its answer, once it arrives, is stored.

Where: a sqlite file on disk (``_disk``: ``<user cache dir>/responses.sqlite3`` by
default, shared safely by concurrent processes), or, when the limits use redis (or
``Cache(redis=...)`` names one), that redis (``_redis``), with an optional TTL. A
corrupt or unreadable entry is a miss; a store that cannot be used is a warning and
no cache, never a failed call. See docs/cache.md.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

from ..core.exceptions import ConfigError
from ._key import CLIENT_SIDE, is_deterministic, request_key

if TYPE_CHECKING:
    from ._entry import Entry, decode, encode

__all__ = [
    "CLIENT_SIDE",
    "ENV_DIR",
    "FILE_NAME",
    "Cache",
    "CacheSetting",
    "Entry",
    "coerce_cache",
    "decode",
    "default_path",
    "encode",
    "is_deterministic",
    "request_key",
]

ENV_DIR = "FANOUT_CACHE_DIR"
"""A directory for the cache file instead of the user cache directory."""
FILE_NAME = "responses.sqlite3"


@dataclass(frozen=True, kw_only=True)
class Cache:
    """A response cache: ``Fanout(client, cache=fanout.Cache(...))``, or ``cache=True``
    for the defaults (see docs/cache.md).

    ::

        fo = fanout.Fanout(client, model="gpt-4o-mini", temperature=0, cache=True)
        await fo.ask_many(questions)  # asks the endpoint
        await fo.ask_many(questions)  # sends nothing: every answer from the cache
    """

    path: str | os.PathLike[str] | None = None
    """The sqlite file. None: ``$FANOUT_CACHE_DIR/responses.sqlite3``, else the user
    cache directory's (``~/.cache/fanout/responses.sqlite3`` on Linux)."""
    redis: str | None = None
    """A redis URL to keep the entries in. None: the limits' redis when they use one
    (``Limits(backend="redis://...")``), else the sqlite file."""
    ttl_s: float | None = None
    """Seconds an entry is served; older ones are misses (redis expires them). None:
    for ever."""
    always: bool = False
    """Cache every request, deterministic or not (``temperature`` above 0 and no
    ``seed``: the same question would get another answer if asked again)."""
    namespace: str = "default"
    """Separates entries in a shared redis (with the limits' redis: their namespace)."""

    def __post_init__(self) -> None:
        if self.path is not None and not (
            isinstance(self.path, (str, os.PathLike)) and str(self.path).strip()
        ):
            raise ConfigError(f"Cache.path must be a file path, got {self.path!r}")
        if self.redis is not None and not (
            isinstance(self.redis, str)
            and self.redis.startswith(("redis://", "rediss://", "unix://"))
        ):
            raise ConfigError(f"Cache.redis must be a redis URL (redis://...), got {self.redis!r}")
        ttl = self.ttl_s
        if ttl is not None and (
            isinstance(ttl, bool)
            or not isinstance(ttl, (int, float))
            or not math.isfinite(ttl)
            or ttl <= 0
        ):
            raise ConfigError(f"Cache.ttl_s must be a positive number of seconds, got {ttl!r}")
        if not isinstance(self.always, bool):
            raise ConfigError(f"Cache.always must be True or False, got {self.always!r}")
        if not isinstance(self.namespace, str) or not self.namespace:
            raise ConfigError(f"Cache.namespace must be a non-empty str, got {self.namespace!r}")

    def __repr__(self) -> str:
        from ..core.redact import mask_url

        shown = mask_url(self.redis) if self.redis else None
        return (
            f"Cache(path={self.path!r}, redis={shown!r}, ttl_s={self.ttl_s!r}, "
            f"always={self.always!r}, namespace={self.namespace!r})"
        )


CacheSetting: TypeAlias = "Cache | bool | str | os.PathLike[str] | None"
"""What ``cache=`` takes: a :class:`Cache`; True (``Cache()``); a path (``Cache(path=...)``);
False or None (no cache)."""


def coerce_cache(setting: object) -> Cache | None:
    """The :class:`Cache` a ``cache=`` setting means, or None for no cache."""
    if setting is None or setting is False:
        return None
    if setting is True:
        return Cache()
    if isinstance(setting, Cache):
        return setting
    if isinstance(setting, (str, os.PathLike)) and str(setting).strip():
        return Cache(path=setting)
    raise ConfigError(
        f"cache must be a fanout.Cache, True, False, None or a file path, not {setting!r}"
    )


def default_path() -> Path:
    """Where ``Cache(path=None)`` keeps its file."""
    chosen = os.environ.get(ENV_DIR, "").strip()
    if chosen:
        return Path(chosen).expanduser() / FILE_NAME
    import platformdirs

    return Path(platformdirs.user_cache_dir("fanout")) / FILE_NAME


def __getattr__(name: str) -> Any:
    # The entry's model and codec load when first used (a call with a cache), not
    # with fanout.
    if name in ("Entry", "decode", "encode"):
        from . import _entry

        return getattr(_entry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
