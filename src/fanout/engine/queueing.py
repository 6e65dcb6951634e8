"""Attempt deadlines that do not count a request's turn in the endpoint's queue.

An attempt is abandoned at its deadline (``retrying.attempt_deadline``) so that a hung
request is asked again instead of holding its question for the SDK's ten minutes. But a
server with few slots (llama.cpp's ``-np``, Ollama, vLLM under its ``max_num_seqs``)
queues what it cannot run yet, first come first served: a request sent behind many
others may wait longer than any deadline computed before the endpoint's slots are
known, while it is not hung at all. Abandoning it then sends it again at the back of
the queue, and the server may still answer the abandoned one: work done twice.

So an attempt's clock restarts each time a request that may be ahead of it in the
queue is answered (a whole response, not an error): while those keep being answered, it
is waiting its turn. "Ahead of it" is any request sent before it or up to
:data:`SAME_TIME_S` after it: requests sent together reach the server in any order (each
opens its connection, tasks are scheduled as the event loop goes), so the first sent may
be queued last. A hung attempt is still abandoned one deadline (at least nine tenths of
one) after the last request that could be ahead of it was answered (at once, if none
was); a hung server, whose requests are all unanswered, sees every attempt abandoned at
its first deadline.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import anyio

from ..core import clock

__all__ = ["SAME_TIME_S", "QueueClock"]

_SLACK = 0.9

SAME_TIME_S = 1.0
"""Requests sent within this many seconds of each other may reach the server in either
order."""


class QueueClock:
    """The deadlines of the attempts in flight to one endpoint (see the module doc)."""

    def __init__(self) -> None:
        self._next = 0
        self._open: dict[int, tuple[anyio.CancelScope, float, float]] = {}
        # No open attempt's clock may be moved before this time (the earliest at which
        # a tenth of one has gone since it was last set): until then an answer has
        # nothing to move, and is not checked against each attempt in flight.
        self._movable_at = math.inf

    @contextmanager
    def attempt(self, deadline_s: float | None) -> Iterator[float]:
        """A cancel scope for one attempt, ending it at ``deadline_s`` after it was sent
        or after the last request that could be ahead of it was answered, whichever is
        later (None: no deadline). Yields the time it was sent, for :meth:`answered`."""
        sent = clock.now()
        if deadline_s is None:
            yield sent
            return
        seq = self._next
        self._next += 1
        with anyio.CancelScope(deadline=sent + deadline_s) as scope:
            self._open[seq] = (scope, deadline_s, sent)
            self._movable_at = min(self._movable_at, (sent + deadline_s) - _SLACK * deadline_s)
            try:
                yield sent
            finally:
                del self._open[seq]

    def answered(self, sent: float) -> None:
        """The attempt sent at ``sent`` was answered: the attempts that may have been
        queued behind it (sent after it, or up to :data:`SAME_TIME_S` before it) start
        their clocks again."""
        now = clock.now()
        if now < self._movable_at:
            return
        movable_at = math.inf
        for scope, deadline_s, other_sent in self._open.values():
            # moved only once a tenth of it has gone: each move re-arms the event loop's
            # timer, which with hundreds in flight and an answer per millisecond was most
            # of this method's cost; an attempt still gets >= 0.9 deadline after it
            if other_sent > sent - SAME_TIME_S and scope.deadline < now + _SLACK * deadline_s:
                scope.deadline = now + deadline_s
            movable_at = min(movable_at, scope.deadline - _SLACK * deadline_s)
        self._movable_at = movable_at
