"""Attempt deadlines that do not count a request's turn in the endpoint's queue.

An attempt is abandoned at its deadline (``retrying.attempt_deadline``) so that a hung
request is asked again instead of holding its question for the SDK's ten minutes. But a
server with few slots (llama.cpp's ``-np``, Ollama, vLLM under its ``max_num_seqs``)
queues what it cannot run yet, first come first served: a request sent behind many
others may wait longer than any deadline computed before the endpoint's slots are
known, while it is not hung at all. Abandoning it then sends it again at the back of
the queue, and the server may still answer the abandoned one: work done twice.

So an attempt's clock restarts each time an **earlier** request to the endpoint is
answered (a whole response, not an error): while the requests ahead of it keep being
answered, it is waiting its turn. A hung attempt is still abandoned one deadline after
the last request ahead of it was answered (at once, if none was); a hung server, whose
requests are all unanswered, sees every attempt abandoned at its first deadline.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import anyio

__all__ = ["QueueClock"]


class QueueClock:
    """The deadlines of the attempts in flight to one endpoint (see the module doc)."""

    def __init__(self) -> None:
        self._next = 0
        self._open: dict[int, tuple[anyio.CancelScope, float]] = {}  # in sending order

    @contextmanager
    def attempt(self, deadline_s: float | None) -> Iterator[int]:
        """A cancel scope for one attempt, ending it at ``deadline_s`` after it was sent
        or after the last earlier request was answered, whichever is later (None: no
        deadline). Yields the attempt's number for :meth:`answered`."""
        seq = self._next
        self._next += 1
        if deadline_s is None:
            yield seq
            return
        with anyio.CancelScope(deadline=anyio.current_time() + deadline_s) as scope:
            self._open[seq] = (scope, deadline_s)
            try:
                yield seq
            finally:
                del self._open[seq]

    def answered(self, seq: int) -> None:
        """Attempt ``seq`` was answered: the attempts sent after it start their clocks
        again."""
        if not self._open:
            return
        now = anyio.current_time()
        for other, (scope, deadline_s) in self._open.items():
            if other > seq and scope.deadline < now + deadline_s:
                scope.deadline = now + deadline_s
