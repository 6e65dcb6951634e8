"""Whether an endpoint's ``x-ratelimit-reset-*`` headers mean what fanout reads in them.

OpenAI documents the reset as the time until the limit is back to its initial state:
the window empty. Some gateways and proxies report the time until the window's
*oldest* entry leaves, which frees only that entry's share: a client that sends the
whole window's budget at such a reset is refused for most of it, at every reset.

:class:`ResetTrust` holds what a limiter learned of it. A reset is believed once it
has kept its word: until then (``"unknown"``) the first send into room only a reset
promised goes alone (streamed, so that its headers come with its first token), and
the others wait for its response, whose ``remaining`` shows whether the room was
there; after ``KEEPS_TO_TRUST`` such checks that found it, resets are ``"trusted"``.
Any response to a request sent after a reset was due that reports less than
``BROKEN_SHARE`` of the room the reset promised, or a 429 on a send into a reset's
room before they are trusted, makes them ``"distrusted"`` for good: the limiter then
paces by its schedule and the reported ``remaining`` alone. What was learned is kept
in the endpoint memory (``fanout.endpoint.memory``), so the next process starts there.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

__all__ = ["BROKEN_SHARE", "KEEPS_TO_TRUST", "RESET_STATES", "Promise", "ResetTrust", "judge"]

log = logging.getLogger("fanout")

BROKEN_SHARE = 0.5
"""A reset broke its promise when a response after it reports less than this share of
the room it promised."""
KEEPS_TO_TRUST = 3
"""Checks that found the promised room before resets are trusted without checking."""
RESET_STATES = ("trusted", "distrusted")
"""What may be learned (and remembered) of an endpoint's resets."""

Promise = tuple[float, float, float, float]
"""What a reset promised: when (the limiter's clock), the room then, the units sent
when it was reported, and the room that report gave without the reset."""


def judge(
    promises: Iterable[Promise],
    remaining: float,
    sent: float,
    upto: float,
    since: float,
    unit: float,
) -> str | None:
    """What a response to a request sent at ``since`` says of the promises due by then.

    It reports ``remaining``; ``upto`` units were sent up to it (itself included),
    ``sent`` so far: the endpoint may have counted some sent after it too, and they
    are added to the room it reports. ``"broken"``: less than ``BROKEN_SHARE`` of the
    room a promise left for it (at least two ``unit``, the request's size); ``"kept"``:
    a promise of room beyond its report's ``remaining`` was kept; else None."""
    unit = max(1.0, unit)
    remaining += max(0.0, sent - upto)
    sent = upto
    verdict = None
    for at, full, mark, base in promises:
        expected = full - (sent - mark)  # the least room there is, if the reset was right
        if at > since or expected < 2 * unit:
            continue
        if remaining < BROKEN_SHARE * expected:
            return "broken"
        if full - max(base, 0.0) >= 2 * unit:
            verdict = "kept"
    return verdict


class ResetTrust:
    """What one limiter learned of its endpoint's resets (see the module docstring)."""

    __slots__ = ("kept", "state", "verifying")

    def __init__(self) -> None:
        self.state = "unknown"  # or one of RESET_STATES
        self.verifying: int | None = None  # the send checking a reset's promise
        self.kept = 0  # checks that found the room promised

    def usable(self) -> bool:
        """The room a reset promised may be sent into now: trusted, or unknown and no
        other send checking one."""
        if self.state == "unknown":
            return self.verifying is None
        return self.state == "trusted"

    def sending(self, seq: int) -> bool:
        """Send ``seq`` goes into room only a reset promised: True if it is to check
        the promise (it is streamed, and holds the others until its headers come)."""
        if self.state != "unknown":
            return False
        self.verifying = seq
        return True

    def ended(self, seq: int) -> bool:
        """Send ``seq`` ended without headers: True if another may check now."""
        if seq != self.verifying:
            return False
        self.verifying = None
        return True

    def heard(self, seq: int, verdicts: set[str | None]) -> None:
        """The response to send ``seq`` gave these verdicts (see :func:`judge`)."""
        if "broken" in verdicts:
            self._distrust()
        elif "kept" in verdicts and seq == self.verifying and self.state == "unknown":
            self.kept += 1
            if self.kept >= KEEPS_TO_TRUST:
                self.state = "trusted"
        if seq == self.verifying:
            self.verifying = None

    def refused(self) -> None:
        """A send into a reset's room got a 429: if resets were trusted, the next is
        checked again; if they were not yet, they are not believed any more."""
        if self.state == "trusted":
            self.state = "unknown"
            self.kept = 0
        elif self.state == "unknown":
            self._distrust()

    def _distrust(self) -> None:
        if self.state != "distrusted":
            log.info(
                "the endpoint's x-ratelimit-reset-* promised room that was not there: "
                "not counting on it any more, pacing by the limits"
            )
        self.state = "distrusted"

    def learned(self) -> str | None:
        """``"trusted"``, ``"distrusted"``, or None (not known yet)."""
        return self.state if self.state in RESET_STATES else None

    def seed(self, value: str | None) -> None:
        """Start from what an earlier process learned, unless this one learned something."""
        if value in RESET_STATES and self.state == "unknown" and self.kept == 0:
            self.state = value
