"""Limits shared by every process (and host) that uses the same redis.

``Limits(rpm=..., tpm=..., backend="redis://host:6379/0")`` puts the request and
token schedules in redis, so N processes together stay within one API key's limits.
They pace as :class:`~fanout.limits.LocalLimiter` does, with the state shared:

* each schedule is a GCRA (one "theoretical arrival time" per key), its slots 2 %
  wider than the rate, updated by one atomic Lua script per acquisition that
  *reserves* the next slot and returns how long to wait for it, so waiters of every
  process queue in order instead of polling; evenly spaced sends overrun no
  policing window, whatever its length;
* the room the endpoint reports (``x-ratelimit-remaining-requests``, less what any
  process sent after the request it answers) lets requests go before their slot,
  which they still take: bursts happen only where the server said there is room;
  and from the reset it reports (``x-ratelimit-reset-requests``: when its window is
  empty again) its full capacity is free again, as in the local limiter;
* a send *claims* its time as it goes (``_redis_lua._CLAIM``): one slot's width after
  the last send any process claimed, never before now, so that the sends of a process
  whose waiters wake late (a loaded machine) keep the schedule's spacing instead of
  arriving bunched with the on-time sends of the others;
* a reset is counted on only once it has kept its word, as in the local limiter
  (``limits/_resets.py``), with what is learned shared by every process
  (``limits/_redis_trust.py``) and kept in the endpoint memory;
* a 429's cool-down is a key every process reads before sending, and it forgets
  the reported room;
* a reservation waiting for its slot is *held* (a sorted set of slots, by owner)
  until the slot comes: a call cancelled meanwhile gives it back, and the waiting
  reservations of a process that stopped renewing its lease (killed, frozen) expire
  ``lease_s`` after its last sign of life; either way the reservations queued behind
  move forward, and the waiters learn of it at their next check (every third of
  the lease). A slot borrowed on the endpoint's reported room is spent when taken;
* processes that share a namespace with different limits (one rpm=0.5, another
  rpm=6000) are warned of, once per process and schedule: a process spaces its send
  after the last one at its own rate, never at a slower process's (so a slow process
  whose call was cancelled leaves no minutes-long slot behind), but the slow one's
  waiting reservations still queue ahead of the fast one's.

Rates must be configured: a shared budget cannot be learned by one process from
its own responses.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import math
import uuid
from collections.abc import Callable, Mapping
from typing import Any

import anyio

from ..core import clock
from ..core.config import Limits
from ..core.exceptions import ConfigError, FanoutError
from ..core.plans import Budget
from ..core.redact import mask_url
from . import _redis_lua as lua
from ._local import _SLACK, LimitState, Ticket, current_ticket, parse_duration, reset_margin
from ._redis_trust import SharedResetTrust, promises
from ._resets import ResetTrust, judge

__all__ = ["RedisLimiter", "RedisUnavailableError"]

_LATE_S = 0.01
"""How late after its claimed time a send may still go (see ``RedisLimiter._claim``)."""

log = logging.getLogger("fanout")

LEASE_S = 10.0
"""How long a process's waiting reservations outlive its last sign of life (a
reservation or a check of one): a process killed while it waited frees its slots this
long after."""
_MAX_CONNECTIONS = 2**16
_RELEASE_TIMEOUT_S = 2.0  # giving slots back on cancel waits this long for redis at most


class RedisUnavailableError(FanoutError):
    """The redis holding the shared limits cannot be reached."""


class RedisLimiter:
    """A :class:`fanout.limits.RateLimiter` whose budgets live in redis (see the module docstring)."""

    def __init__(
        self, limits: Limits, url: str, *, namespace: str = "default", lease_s: float = LEASE_S
    ) -> None:
        try:
            import redis.asyncio as redis_asyncio
        except ImportError as exc:  # pragma: no cover - depends on the extra
            raise ConfigError(
                "shared limits need the redis package: pip install redis "
                "(in a checkout of fanout: pip install -e '.[redis]')"
            ) from exc
        if limits.rpm is None and limits.tpm is None:
            raise ConfigError(
                "a redis backend shares configured limits: give Limits(rpm=..., tpm=...)"
            )
        self._limits = limits
        self._url = url
        # One connection per call at once (every waiter's reservation, claim or check):
        # redis-py 8 caps a pool at 100 by default, which a few hundred waiters exceed.
        self._redis: Any = redis_asyncio.from_url(
            url, socket_connect_timeout=5, socket_timeout=10, max_connections=_MAX_CONNECTIONS
        )
        self._prefix = f"fanout:{namespace}"
        self._namespace = namespace
        self._owner = uuid.uuid4().hex  # this limiter, in the holders of reservations
        self._lease_s = lease_s
        self._held = itertools.count()
        self._warned: set[str] = set()  # the schedules whose disagreement was warned of
        self._rpm = limits.rpm * limits.headroom if limits.rpm else None
        self._tpm = limits.tpm * limits.headroom if limits.tpm else None
        self._req_interval = 60_000.0 / self._rpm * (1 + _SLACK) if self._rpm else 0.0
        self._tok_interval = 60_000.0 / self._tpm * (1 + _SLACK) if self._tpm else 0.0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._scripts: dict[str, Any] = {}
        self._paused_until = 0.0  # local view of the shared pause, for reports
        self._first_seen = False
        self._first_answered: anyio.Event | None = None
        self._sent_at: dict[int, float] = {}  # seq -> when it went, in redis's clock (ms)
        self.reset_trust = SharedResetTrust()
        """What every process sharing the namespace learned of the endpoint's resets
        (see ``limits/_redis_trust.py``); kept in the endpoint memory."""

    def __repr__(self) -> str:
        host = mask_url(self._url.split("@")[-1])  # never show a password
        return f"<RedisLimiter {host} rpm={self._rpm} tpm={self._tpm}>"

    async def _call(self, name: str, script: str, keys: list[str], args: list[Any]) -> Any:
        if name not in self._scripts:
            self._scripts[name] = self._redis.register_script(script)
        from redis import exceptions as redis_errors

        try:
            result = await self._scripts[name](keys=keys, args=args)
        except (OSError, redis_errors.ConnectionError, redis_errors.TimeoutError) as exc:
            raise RedisUnavailableError(f"cannot reach redis for the shared limits: {exc}") from exc
        except redis_errors.RedisError as exc:
            raise RedisUnavailableError(f"redis error in the shared limits: {exc}") from exc
        if isinstance(result, list):
            return [r.decode() if isinstance(r, bytes) else r for r in result]
        return float(result.decode() if isinstance(result, bytes) else result)

    async def check(self) -> None:
        """Fail now, with a clear error, if redis cannot be reached."""
        await self._call("pause_left", lua.PAUSE_LEFT, [f"{self._prefix}:pause"], [])

    # --- the RateLimiter interface -------------------------------------------------------
    async def acquire(self, tokens: int) -> float:
        start = clock.now()
        await self._wait_pause()
        if self._rpm and not self._first_seen:
            # This process's first request goes first; the others reserve their slots
            # once it is answered (at most 1 s on), when the schedule has been moved
            # by how late it may have reached the endpoint (see observe): slots
            # reserved before would keep their places and fill the window it arrived in.
            if self._first_answered is None:
                self._first_answered = anyio.Event()
            else:
                with anyio.move_on_after(1.0):
                    await self._first_answered.wait()
        seq, grant, early, on_reset, probe = -1, "", False, False, False
        tokens_too = bool(self._tpm and tokens > 0)
        if self._rpm:
            reply, member = await self._reserve(
                "requests", self._req_interval, 1, claim=not tokens_too
            )
            seq, early, grant = int(reply[1]), int(reply[4]) == 1, str(reply[5])
            on_reset, probe = int(reply[7]) == 1, int(reply[8]) == 1
            self.reset_trust.saw(str(reply[9]))
            if probe:  # it checks a reset's promise: streamed, its headers come sooner
                self.reset_trust.checks.add(seq)
            if grant:
                self._sent(seq, float(reply[6]) + float(grant))
        if tokens_too:
            await self._reserve("tokens", self._tok_interval, tokens)
        if self._rpm:
            try:
                await self._claim(seq, member, early=early, grant=grant)
            except BaseException:
                if probe:  # never sent: another send may check
                    self._spawn(self._update_trust(lambda trust: trust.ended(seq)))
                raise
        else:
            await self._wait_pause()  # (a claim waits out the pause)
        current_ticket.set(
            Ticket(seq=seq, tokens=tokens, probe=probe, at=clock.now(), on_reset=on_reset)
        )
        return clock.now() - start

    def _sent(self, seq: int, at: float) -> None:
        self._sent_at[seq] = at
        if len(self._sent_at) > 4096:  # a request never answered
            del self._sent_at[next(iter(self._sent_at))]

    def _keys(self, kind: str) -> list[str]:
        p = self._prefix
        return [
            f"{p}:{kind}",
            f"{p}:sent",
            f"{p}:credit",
            f"{p}:inflight",
            f"{p}:resets",
            f"{p}:{kind}:held",
            f"{p}:owners",
            f"{p}:{kind}:rate",
            f"{p}:{kind}:claimed",
            f"{p}:pause",
            f"{p}:{kind}:claiming",
            f"{p}:trust",
        ]

    async def _reserve(
        self, kind: str, interval: float, cost: int, *, claim: bool = False
    ) -> tuple[list[Any], str]:
        """Reserve the next slot of the ``kind`` schedule and wait for it; return the
        script's reply (see ``_redis_lua.RESERVE``: with ``claim``, the send is claimed
        if it may go at once) and the member that holds the slot. Cancelled while
        waiting: the slot is given back."""
        requests = kind == "requests"
        span = cost * interval
        member = f"{self._owner}|{next(self._held)}|{span:.3f}"
        reply = await self._call(
            "reserve",
            lua.RESERVE,
            self._keys(kind),
            [
                interval,
                cost,
                1 if requests else 0,
                self._owner,
                self._lease_s * 1000,
                member,
                1 if claim else 0,
                self.reset_trust.pending if requests else "",
            ],
        )
        wait, seq, held, other = float(reply[0]), int(reply[1]), int(reply[2]), reply[3]
        self._check_agreement(kind, interval, other)
        if wait > 0:
            try:
                await self._wait_slot(kind, member, span, wait / 1000, held=held == 1)
            except BaseException:
                if held == 1:
                    await self._release(kind, member, seq)
                raise
        return reply, member

    async def _claim(self, seq: int, member: str, *, early: bool, grant: str) -> None:
        """Claim the send (unless ``grant``, the ms until a send time claimed with the
        reservation, says it was) and wait for its time: while the last sends claimed are
        closer than the schedule's spacing (late senders of any process would otherwise
        arrive bunched: see ``_redis_lua._CLAIM``), and while the shared pause lasts. A
        claimer that wakes more than a quarter interval after its time, and more than
        ``_LATE_S``, claims again: a send later than its claimed time never crowds a
        window by more than its lateness over the interval, which the slots' ``_SLACK``
        (2 % of a window of a second or more) covers; re-claiming sooner than that would
        lose a slot for every event-loop hiccup at high rates (30 % of the rate at
        30,000 a minute)."""
        late_s = max(self._req_interval / 4000, _LATE_S)
        try:
            while True:
                if grant == "":
                    wait, paused, grant, now = await self._call(
                        "claim",
                        lua.CLAIM,
                        self._keys("requests")[8:11],
                        [self._req_interval, 1 if early else 0, member],
                    )
                    if float(wait) > 0:
                        if int(paused) == 1:
                            self._paused_until = clock.now() + float(wait) / 1000
                        await asyncio.sleep(float(wait) / 1000)
                        continue
                    self._sent(seq, float(now) + float(grant))
                due = clock.now() + float(grant) / 1000
                if float(grant) > 0:
                    await asyncio.sleep(float(grant) / 1000)
                if early or clock.now() - due <= late_s:
                    return
                grant = ""  # woke too late: that time is lost, not crowded into the next
        except BaseException:
            await self._release("requests", member, seq)  # never sent: not on its way
            raise

    async def _wait_slot(
        self, kind: str, member: str, span: float, wait: float, *, held: bool
    ) -> None:
        """Sleep until the slot; a held one is checked every third of the lease (which
        renews it, and brings the slot forward when reservations before it were given
        back or expired)."""
        check = self._lease_s / 3
        until = clock.now() + wait
        while (left := until - clock.now()) > 0:
            if not held or left <= check:
                await asyncio.sleep(left)
                return
            await asyncio.sleep(check)
            p = self._prefix
            ms = await self._call(
                "hold",
                lua.HOLD,
                [f"{p}:{kind}", f"{p}:{kind}:held", f"{p}:owners"],
                [member, self._owner, self._lease_s * 1000, span],
            )
            until = clock.now() + float(ms) / 1000

    async def _release(self, kind: str, member: str, seq: int) -> None:
        """Give a held slot back (the waiter was cancelled), shielded from the
        cancellation, and never for long: a redis that does not answer lets the slot
        expire with this process's lease instead."""
        p = self._prefix
        with anyio.move_on_after(_RELEASE_TIMEOUT_S, shield=True):
            try:
                await self._call(
                    "release",
                    lua.RELEASE,
                    [f"{p}:{kind}", f"{p}:{kind}:held", f"{p}:inflight", f"{p}:{kind}:claiming"],
                    [member, seq],
                )
            except RedisUnavailableError as exc:
                log.debug("a cancelled reservation was not given back: %s", exc)

    def _check_agreement(self, kind: str, interval: float, other: object) -> None:
        """Warn (once per schedule) when the last process to reserve on this namespace
        paced it at another rate: one schedule, two rates, the slower holds back all."""
        try:
            theirs = float(other)  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if theirs <= 0 or abs(theirs - interval) <= 1e-6 * interval or kind in self._warned:
            return
        self._warned.add(kind)
        unit = "requests" if kind == "requests" else "tokens"
        per_minute = 60_000.0 * (1 + _SLACK)
        log.warning(
            "processes sharing the redis namespace %r disagree on its limits: this one "
            "paces %s at %.6g a minute, another at %.6g; they share one schedule, so the "
            "slower one's waiting reservations hold the others back: give them the same Limits "
            "(rpm, tpm, headroom), or each its own namespace",
            self._namespace,
            unit,
            per_minute / interval,
            per_minute / theirs,
        )

    def attempt_done(self) -> None:
        """The current request finished: it is no longer in flight."""
        ticket = current_ticket.get()
        if ticket is not None and ticket.seq >= 0:
            self._spawn(self._call("done", lua.DONE, [f"{self._prefix}:inflight"], [ticket.seq]))
        if ticket is not None and ticket.seq in self.reset_trust.checks:
            self.reset_trust.checks.discard(ticket.seq)  # no headers came: another may check
            seq = ticket.seq
            self._spawn(self._update_trust(lambda trust: trust.ended(seq)))
        if self._first_answered is not None:
            self._first_answered.set()  # answered or failed: the others need not wait

    async def _wait_pause(self) -> None:
        while True:
            left = await self._call("pause_left", lua.PAUSE_LEFT, [f"{self._prefix}:pause"], [])
            if left <= 0:
                return
            self._paused_until = clock.now() + left / 1000
            await asyncio.sleep(left / 1000)

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def settle(self, reserved: int, used: int | None) -> None:
        if not self._tpm:
            return
        delta = -reserved if used is None else used - reserved
        if delta:
            self._spawn(
                self._call(
                    "adjust", lua.ADJUST, [f"{self._prefix}:tokens"], [self._tok_interval, delta]
                )
            )

    def observe(self, headers: Mapping[str, str]) -> None:
        ticket = current_ticket.get()
        if ticket is not None and self._rpm and not self._first_seen:
            # This process's first request may reach the endpoint well after it was let
            # go (a new connection, the client's first-call set-up): the shared schedule
            # counts its slot from the latest it can have arrived, its answer.
            self._first_seen = True
            lag = min(1.0, clock.now() - ticket.at)
            self._spawn(
                self._call(
                    "adjust",
                    lua.ADJUST,
                    [f"{self._prefix}:requests"],
                    [self._req_interval, lag * 1000 / self._req_interval],
                )
            )
            if self._first_answered is not None:
                self._first_answered.set()
        remaining = headers.get("x-ratelimit-remaining-requests")
        if remaining is None or ticket is None or ticket.seq < 0 or not self._rpm:
            return
        try:
            left = float(remaining) * self._limits.headroom
        except ValueError:
            return
        # The reset, counted from the send with the local limiter's margin, as time left
        # from now: redis keeps it in its own clock.
        reset = parse_duration(headers.get("x-ratelimit-reset-requests") or "")
        until = ""
        if reset is not None:
            elapsed = clock.now() - ticket.at
            until = f"{(reset + reset_margin(reset, elapsed) - elapsed) * 1000:.3f}"
        checking = ticket.seq in self.reset_trust.checks
        self.reset_trust.checks.discard(ticket.seq)
        self._spawn(
            self._report(
                ticket.seq, left, until, self._sent_at.pop(ticket.seq, None), checking=checking
            )
        )

    async def _report(
        self, seq: int, left: float, until: str, sent_at: float | None, *, checking: bool
    ) -> None:
        """Share the room a response reported; judge by it whether the resets due before
        its request went kept their word (``_resets.judge``), and tell every process if
        one did not, or how the check this request made went."""
        reply = await self._call("credit", lua.CREDIT, self._credit_keys(), [seq, left, until])
        if sent_at is None:
            return
        verdict = judge(promises(reply[1:]), left, float(reply[0]), seq + 1, sent_at, 1)
        if checking or (verdict == "broken" and self.reset_trust.state != "distrusted"):
            await self._update_trust(lambda trust: trust.heard(seq, {verdict}))

    async def _update_trust(self, change: Callable[[ResetTrust], object]) -> None:
        from redis import exceptions as redis_errors

        try:
            await self.reset_trust.update(self._redis, f"{self._prefix}:trust", change)
        except (OSError, redis_errors.RedisError) as exc:
            raise RedisUnavailableError(f"cannot share what was learned of resets: {exc}") from exc

    def cool_down(self, seconds: float) -> None:
        if seconds <= 0:
            return
        self._paused_until = max(self._paused_until, clock.now() + seconds)
        ticket = current_ticket.get()
        if ticket is not None and ticket.on_reset:  # refused in the room a reset promised
            self.reset_trust.checks.discard(ticket.seq)
            self._spawn(self._update_trust(lambda trust: trust.refused()))
        self._spawn(self._call("pause", lua.PAUSE, [f"{self._prefix}:pause"], [seconds * 1000]))
        self._spawn(self._call("credit", lua.CREDIT, self._credit_keys(), [-1, 0, ""]))

    def _credit_keys(self) -> list[str]:
        p = self._prefix
        return [f"{p}:credit", f"{p}:sent", f"{p}:inflight", f"{p}:resets"]

    def state(self) -> LimitState:
        return LimitState(
            rpm=self._rpm,
            tpm=self._tpm,
            rpm_learned=False,
            tpm_learned=False,
            window_s=0.0,
            paused_for_s=max(0.0, self._paused_until - clock.now()),
        )

    def budget(self) -> Budget:
        # Other processes share the schedule: assume one slot is free now.
        return Budget(
            requests_now=1.0 if self._rpm else math.inf,
            tokens_now=self._tpm / 60.0 if self._tpm else math.inf,
            rpm=self._rpm,
            tpm=self._tpm,
            paused_s=max(0.0, self._paused_until - clock.now()),
        )

    # --- the endpoint memory (fanout.endpoint.memory), kept beside the limits it shares -----------
    async def load_memory(self, name: str) -> bytes | None:
        """The endpoint memory document ``name``, as the last process saved it, or None."""
        from redis import exceptions as redis_errors

        try:
            data: bytes | None = await self._redis.get(f"{self._prefix}:memory:{name}")
        except (OSError, redis_errors.RedisError) as exc:
            raise RedisUnavailableError(f"cannot read the endpoint memory: {exc}") from exc
        return data

    async def save_memory(self, name: str, data: bytes, ttl_s: float) -> None:
        """Keep the endpoint memory document ``name`` for ``ttl_s`` seconds."""
        from redis import exceptions as redis_errors

        try:
            await self._redis.set(f"{self._prefix}:memory:{name}", data, px=int(ttl_s * 1000))
        except (OSError, redis_errors.RedisError) as exc:
            raise RedisUnavailableError(f"cannot save the endpoint memory: {exc}") from exc

    async def disconnect(self) -> None:
        """Close every connection this limiter opened, once the writes still on their
        way (a request done, the room or a pause reported) are made (at most
        ``_RELEASE_TIMEOUT_S``; the rest are dropped). The limiter stays usable: its next
        request connects again. A ``Fanout`` that made this limiter calls it when its
        last call ends, so that no connection outlives the calls that opened it."""
        await self.writes_done()
        with anyio.CancelScope(shield=True):
            await self._redis.connection_pool.disconnect()

    async def aclose(self) -> None:
        """Finish the writes on their way (see ``disconnect``) and close the connections."""
        await self.writes_done()
        with anyio.CancelScope(shield=True):
            await self._redis.aclose()

    async def writes_done(self) -> None:
        """Wait for the writes on their way (at most ``_RELEASE_TIMEOUT_S``; the rest are
        dropped), among them what a call learned of the endpoint's resets: the endpoint
        memory saved after a call keeps it."""
        tasks = list(self._tasks)
        if not tasks:
            return
        with anyio.CancelScope(shield=True):
            _, pending = await asyncio.wait(tasks, timeout=_RELEASE_TIMEOUT_S)
            for task in pending:
                task.cancel()
            # collected here, so that none is left pending or with an unread exception
            await asyncio.gather(*tasks, return_exceptions=True)
