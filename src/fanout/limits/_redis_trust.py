"""Whether reset headers keep their word, learned once for every process sharing a redis.

:class:`~fanout.limits.RedisLimiter` uses the local limiter's rules
(``limits/_resets.py``: :func:`judge` and :class:`ResetTrust`) on a state kept in a
redis hash: one process finding a reset's promised room missing stops every process
using the namespace from counting on resets. The reservation script
(``_redis_lua.RESERVE``) reads the hash to decide whether a reset's room may be used
and which send checks it; a response's verdict, a 429 in a reset's room, or a check
that ended without headers change it through :meth:`SharedResetTrust.update`, a redis
transaction that applies :class:`ResetTrust`'s own method to the shared state.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._resets import RESET_STATES, Promise, ResetTrust

__all__ = ["SharedResetTrust", "promises"]

TRUST_TTL_MS = 3_600_000
"""How long the shared state outlives its last change (the endpoint memory keeps what
was learned for a week)."""


def promises(entries: list[str]) -> list[Promise]:
    """The resets a redis list keeps (``at|full|mark|base``), as :func:`judge` reads them."""
    out: list[Promise] = []
    for entry in entries:
        parts = [float(x) for x in entry.split("|")]
        if len(parts) >= 3:
            out.append((parts[0], parts[1], parts[2], parts[3] if len(parts) > 3 else 0.0))
    return out


class SharedResetTrust(ResetTrust):
    """This process's view of the shared state (what the endpoint memory saves and
    seeds), and the sends of this process that check a reset's promise."""

    __slots__ = ("checks", "pending")

    def __init__(self) -> None:
        super().__init__()
        self.pending = ""
        """What the endpoint memory said, for the next reservation to tell redis (it is
        taken there only while nothing is known)."""
        self.checks: set[int] = set()
        """Sends of this process checking a reset's promise, not answered yet."""

    def seed(self, value: str | None) -> None:
        before = self.state
        super().seed(value)
        if self.state != before:
            self.pending = self.state

    def saw(self, state: str) -> None:
        """What a reservation found in redis."""
        if state in (*RESET_STATES, "unknown"):
            self.state = state
            self.pending = ""

    async def update(self, client: Any, key: str, change: Callable[[ResetTrust], object]) -> None:
        """Apply ``change`` (a :class:`ResetTrust` method: ``heard``, ``refused``,
        ``ended``) to the state in redis, atomically (retried if another process changed
        it meanwhile)."""

        async def apply(pipe: Any) -> ResetTrust:
            fields = {k.decode(): v.decode() for k, v in (await pipe.hgetall(key)).items()}
            seconds, micros = await pipe.time()
            now = seconds * 1000 + micros / 1000
            trust = ResetTrust()
            trust.state = fields.get("state", "unknown")
            trust.kept = int(fields.get("kept", "0"))
            if "verifying" in fields and float(fields.get("vuntil", "0")) >= now:
                trust.verifying = int(fields["verifying"])
            change(trust)
            pipe.multi()
            pipe.hset(key, mapping={"state": trust.state, "kept": trust.kept})
            if trust.verifying is None:
                pipe.hdel(key, "verifying", "vuntil")
            pipe.pexpire(key, TRUST_TTL_MS)
            return trust

        trust: ResetTrust = await client.transaction(apply, key, value_from_callable=True)
        self.state, self.kept = trust.state, trust.kept
