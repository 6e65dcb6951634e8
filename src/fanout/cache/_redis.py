"""The response cache in redis: one string per entry, beside the shared limits.

``<prefix>:cache:<key>`` holds the entry's JSON, with the cache's TTL as its expiry
(none: kept until redis evicts it, by its own ``maxmemory-policy``). A batch is read
with one ``MGET`` and written with one pipelined round trip.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RedisStore"]


class RedisStore:
    """Cache entries in the redis at ``url``, under ``fanout:<namespace>:cache:``."""

    def __init__(self, url: str, *, namespace: str = "default", ttl_s: float | None = None) -> None:
        import redis.asyncio as redis_asyncio

        from ..core.redact import mask_url

        self.where = f"redis {mask_url(url)}"
        self._redis: Any = redis_asyncio.from_url(url, socket_connect_timeout=5, socket_timeout=10)
        self._prefix = f"fanout:{namespace}:cache:"
        self._ttl_ms = int(ttl_s * 1000) if ttl_s is not None else None

    async def get_many(self, keys: list[str]) -> dict[str, bytes]:
        """The stored values of those of ``keys`` that have one."""
        if not keys:
            return {}
        values = await self._redis.mget([self._prefix + k for k in keys])
        return {k: v for k, v in zip(keys, values, strict=True) if v is not None}

    async def put_many(self, items: dict[str, bytes]) -> None:
        """Store every value under its key (with the TTL), replacing what was there."""
        if not items:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for key, value in items.items():
                pipe.set(self._prefix + key, value, px=self._ttl_ms)
            await pipe.execute()

    async def aclose(self) -> None:
        await self._redis.aclose()
