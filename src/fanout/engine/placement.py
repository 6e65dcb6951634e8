"""Placement: which endpoint of a ``Fanout(endpoints=[...])`` answers how many questions.

Pure: from what is known of each endpoint (:class:`Capacity`: the requests it runs at
once, how long one takes there, the rate its limits allow, what it holds already),
:func:`place` gives each question to the endpoint that would have it answered
soonest, given what that endpoint holds by then (earliest finish, one question at a
time). An endpoint's finish time only grows with what it holds, so the largest of
them, the call's wall time, is the smallest any split of the questions reaches under
these estimates: a slower endpoint gets work as soon as the faster one, saturated,
would answer later than it.

Under ``objective="cost"`` the questions go to the cheapest endpoints (by price per
request), earliest finish among them. Only the endpoints of the lowest ``priority``
given are placed on: the others are fallbacks (the pool offers them only when those
are cooled down).
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Capacity", "Placement", "finish_s", "place"]


@dataclass(frozen=True)
class Capacity:
    """One endpoint as placement sees it."""

    name: str
    slots: int
    """Requests it runs at once (learned, else at most the ``Limits.max_concurrency``
    fanout sends it): beyond them, requests wait for a slot."""
    request_s: float
    """Seconds one request takes once running, its slots full."""
    rate_per_s: float | None = None
    """Requests a second its rate limits allow (None: no limit)."""
    load: int = 0
    """Questions it holds already (sent or given, not yet answered)."""
    price: float = 0.0
    """What one request costs there (any unit; only compared)."""
    priority: int = 0


@dataclass(frozen=True)
class Placement:
    counts: tuple[int, ...]
    """New questions for each endpoint, in the order given."""
    finish_s: tuple[float, ...]
    """When each endpoint would have answered all it holds then (seconds from now)."""
    reason: str


def finish_s(c: Capacity, held: int) -> float:
    """Seconds until an endpoint holding ``held`` questions has answered them all: whole
    rounds of its slots, and no sooner than its rate lets the last one go."""
    if held <= 0:
        return 0.0
    t = math.ceil(held / max(1, c.slots)) * c.request_s
    if c.rate_per_s is not None and c.rate_per_s > 0:
        t = max(t, (held - 1) / c.rate_per_s + c.request_s)
    return t


def place(questions: int, endpoints: Sequence[Capacity], objective: str = "latency") -> Placement:
    """Give ``questions`` new questions to ``endpoints``: see the module docstring."""
    n = len(endpoints)
    counts = [0] * n
    if n == 0:
        return Placement((), (), "no endpoint available")
    tier = min(c.priority for c in endpoints)
    open_ = [i for i, c in enumerate(endpoints) if c.priority == tier]
    if objective == "cost":
        cheapest = min(endpoints[i].price for i in open_)
        open_ = [i for i in open_ if endpoints[i].price <= cheapest]
    # (finish time with one more, price, position): each question to the smallest.
    heap = [(finish_s(endpoints[i], endpoints[i].load + 1), endpoints[i].price, i) for i in open_]
    heapq.heapify(heap)
    for _ in range(max(0, questions)):
        _, price, i = heapq.heappop(heap)
        counts[i] += 1
        c = endpoints[i]
        heapq.heappush(heap, (finish_s(c, c.load + counts[i] + 1), price, i))
    finish = tuple(finish_s(c, c.load + k) for c, k in zip(endpoints, counts, strict=True))
    return Placement(tuple(counts), finish, _reason(questions, endpoints, counts, finish, tier))


def _reason(
    questions: int,
    endpoints: Sequence[Capacity],
    counts: Sequence[int],
    finish: Sequence[float],
    tier: int,
) -> str:
    parts = []
    for c, k, f in zip(endpoints, counts, finish, strict=True):
        if c.priority != tier:
            parts.append(f"none to {c.name} (a fallback, priority {c.priority})")
            continue
        rate = f", {c.rate_per_s * 60:.0f} rpm" if c.rate_per_s else ""
        held = f", holding {c.load}" if c.load else ""
        parts.append(
            f"{k} to {c.name} ({c.slots} slots, {c.request_s:.2f} s a request{rate}{held}; "
            f"done in {f:.1f} s)"
        )
    return f"{questions} questions, each where it is answered soonest: " + "; ".join(parts)
