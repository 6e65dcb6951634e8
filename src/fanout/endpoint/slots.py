"""Server slots: how many requests an endpoint runs at once, told from when its requests
were sent and answered.

A server with ``k`` slots (llama-server's ``-np``, an engine's ``max_num_seqs``) runs
at most ``k`` requests at once; one sent while ``k`` are running waits, first come first
served, until one of them finishes. Its latency then grows in steps of whole answers: it
is the wait plus its own service. Given when each request was sent and when it was
answered, the wait each one would have had under ``k`` slots follows from the answers
alone (:func:`queued`), and the endpoint model keeps the ``k`` that explains the
latencies best (see ``EndpointModel``), only where the data can tell: requests must
have waited under it.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from ._linalg import solve

__all__ = [
    "MIN_QUEUED",
    "SLOT_GAIN",
    "Observation",
    "candidates",
    "compact_send_times",
    "find_slots",
    "most_in_flight",
    "queued",
    "sent_during",
]

Observation = tuple[float, float, float, float, float]
"""(prompt tokens, completion tokens, others' prompt tokens, others' completion tokens,
latency): what ``EndpointModel.observe`` keeps of one response."""

MIN_QUEUED = 3
"""Requests that must have waited under a slot count for it to be weighed at all (and a
quarter of those with a send time)."""

SLOT_GAIN = 0.6
"""A slot count is kept when it leaves at most this share of the error of the fit
without one, and of any other count (see ``find_slots``)."""

_MIN_ANSWER = 32
"""The fewest completion tokens per answer, on average, that slots are read from."""

_STALL = 2.5
"""How many times slower than the requests that waited the first ones may be served
(see ``_served_alike``)."""

_JITTER = 0.1
"""Requests sent within this share of the shortest latency of one another are a burst
(see ``_timed``)."""

_SPARSE = (16, 20, 24, 32, 40, 48, 64, 96, 128, 192, 256, 384, 512)


def _timed(
    observations: Sequence[Observation], sent: Sequence[float | None]
) -> list[tuple[float, float, int]]:
    """(sent, answered, index) of the observations with a send time, in the order the
    endpoint most likely took them: as sent, but requests sent within ``_JITTER`` of the
    shortest latency of one another (a burst) in the order they were answered. Which of
    a burst reached the server first is unknown (the client stamps each one before its
    own work of sending it, and sends them concurrently); the first answered is the
    likeliest to have been taken first."""
    timed = sorted(
        (s, s + obs[4], i)
        for i, (obs, s) in enumerate(zip(observations, sent, strict=True))
        if s is not None
    )
    if not timed:
        return timed
    jitter = _JITTER * max(0.0, min(f - s for s, f, _ in timed))
    ordered: list[tuple[float, float, int]] = []
    burst = [timed[0]]
    for item in timed[1:]:
        if item[0] - burst[0][0] <= jitter:
            burst.append(item)
            continue
        ordered.extend(sorted(burst, key=lambda t: (t[1], t[0])))
        burst = [item]
    ordered.extend(sorted(burst, key=lambda t: (t[1], t[0])))
    return ordered


def most_in_flight(observations: Sequence[Observation], sent: Sequence[float | None]) -> int:
    """The most of these requests in flight at once (each counted as it was sent)."""
    earlier: list[float] = []  # when the requests sent before were answered, sorted
    most = 0
    for s, f, _ in _timed(observations, sent):
        most = max(most, len(earlier) - bisect.bisect_right(earlier, s) + 1)
        bisect.insort(earlier, f)
    return most


def candidates(most: int) -> list[int]:
    """The slot counts worth trying when at most ``most`` requests were in flight at
    once: every count up to 16, then a sparser grid (fewer than ``most``: with as many
    slots as requests, none waited)."""
    return [k for k in (*range(1, 16), *_SPARSE) if k < most]


def queued(
    observations: Sequence[Observation], sent: Sequence[float | None], slots: int
) -> tuple[list[Observation], int]:
    """The observations as the service of each request, were the endpoint to run at most
    ``slots`` at once: the latency less the time it waited for a slot (until the
    ``slots``-th latest answer of the requests taken before it, see ``_timed``), and the
    others' tokens less those answered during that wait. Observations without a send
    time (``None``) stay as they are. Also: how many requests waited.

    A wrong count shows in the result: too few slots make requests wait longer than
    they took (a negative service), too many leave the steps unexplained."""
    return _Queue(observations, sent, slots).served(slots)


class _Queue:
    """What ``queued`` needs for any slot count up to ``most``, computed once: the order
    the requests were taken in, for each the latest answers of those taken before it,
    and the tokens answered by any time."""

    def __init__(
        self, observations: Sequence[Observation], sent: Sequence[float | None], most: int
    ) -> None:
        self.observations = observations
        self.timed = _timed(observations, sent)
        answered = sorted((f, observations[i][0], observations[i][1]) for _, f, i in self.timed)
        self.times = [f for f, _, _ in answered]
        self.done_p = [0.0]
        self.done_c = [0.0]
        for _, p, c in answered:
            self.done_p.append(self.done_p[-1] + p)
            self.done_c.append(self.done_c[-1] + c)
        earlier: list[float] = []
        self.latest: list[list[float]] = []  # per request: the latest answers before it
        for _, f, _ in self.timed:
            self.latest.append(earlier[: -most - 1 : -1])
            bisect.insort(earlier, f)

    def served(self, slots: int) -> tuple[list[Observation], int]:
        out = list(self.observations)
        waited = 0
        for (s, _, i), latest in zip(self.timed, self.latest, strict=True):
            if len(latest) < slots or latest[slots - 1] <= s:
                continue
            start = latest[slots - 1]
            waited += 1
            a = bisect.bisect_right(self.times, s)
            b = bisect.bisect_right(self.times, start)
            p, c, op, oc, latency = out[i]
            out[i] = (
                p,
                c,
                max(0.0, op - (self.done_p[b] - self.done_p[a])),
                max(0.0, oc - (self.done_c[b] - self.done_c[a])),
                latency - (start - s),
            )
        return out, waited


def sent_during(
    observations: Sequence[Observation],
    sent: Sequence[float | None],
    served: Sequence[Observation] | None = None,
) -> list[float]:
    """For each observation, how many requests were sent during its life (0 without a
    send time), or with ``served`` (``queued``'s) during its service. Requests sent in a
    burst cost the client (and a server's front end) time per request, which the
    requests served meanwhile pay: a delay per request, not a slot."""
    times = sorted(s for s in sent if s is not None)
    lives = served if served is not None else observations
    out = []
    for obs, life, s in zip(observations, lives, sent, strict=True):
        if s is None:
            out.append(0.0)
            continue
        answered = s + obs[4]
        began = answered - life[4]
        out.append(float(bisect.bisect_left(times, answered) - bisect.bisect_right(times, began)))
    return out


def find_slots(
    observations: Sequence[Observation], sent: Sequence[float | None], without: Sequence[float]
) -> int | None:
    """The slot count that explains the latencies best as a wait for a slot plus a
    service (``queued``; the services by ``_service_error``), if it explains them much
    better than the endpoint model without slots, whose latencies are ``without``, and
    than any other count does: its error at most ``SLOT_GAIN`` times theirs (all
    ``_relative_error``; a count that explains them hardly better than its neighbours
    is noise read as a queue). Only counts
    under which a quarter of the requests with a send time (and ``MIN_QUEUED``) waited
    are weighed: with fewer requests in flight than slots, or a few beyond them, the
    data cannot tell; and only those whose waits are of whole answers
    (``_whole_answers``), of answers of ``_MIN_ANSWER`` tokens on average or more (a
    wait for an answer of a few tokens is lost in a busy client's noise)."""
    timed = [i for i, at in enumerate(sent) if at is not None]
    most = most_in_flight(observations, sent)
    if most < 2 or sum(observations[i][1] for i in timed) < _MIN_ANSWER * len(timed):
        return None
    needed = max(MIN_QUEUED, len(timed) // 4)
    base = _relative_error([without[i] for i in timed], [observations[i][4] for i in timed])
    errors: dict[int, float] = {}
    tried = candidates(most)
    queue = _Queue(observations, sent, max(tried, default=1))
    for k in tried:
        served, waited = queue.served(k)
        if waited < needed or not _whole_answers(observations, served, k, most):
            continue
        if not _served_alike(observations, served, timed):
            continue
        errors[k] = _service_error(observations, sent, served, timed)
    if not errors:
        return None
    best = min(errors, key=lambda k: errors[k])
    others = [e for k, e in errors.items() if k != best]
    if errors[best] > SLOT_GAIN * base or (others and errors[best] > SLOT_GAIN * min(others)):
        return None
    return best


def _whole_answers(
    observations: Sequence[Observation], served: Sequence[Observation], slots: int, most: int
) -> bool:
    """Do the requests that waited under ``slots`` wait for whole answers: on average no
    longer than the services of as many rounds of ``slots`` requests as were in flight
    at most? A queue behind slots makes a request wait for the answers ahead of it; a
    busy client that reads every answer late makes waits of many tiny services (the
    answers all arrive at once), which no slot count explains."""
    waits = [
        (obs[4] - s[4], s[4]) for obs, s in zip(observations, served, strict=True) if s[4] < obs[4]
    ]
    if not waits:
        return False
    wait = sum(w for w, _ in waits) / len(waits)
    service = sum(max(s, 0.0) for _, s in waits) / len(waits)
    return wait <= math.ceil(most / slots) * service


def _least_squares(rows: Sequence[Sequence[float]], ys: Sequence[float]) -> list[float] | None:
    """The coefficients of ``ys`` on ``rows`` by least squares (the normal equations)."""
    k = len(rows[0])
    a = [[0.0] * k for _ in range(k)]
    b = [0.0] * k
    for r, y in zip(rows, ys, strict=True):
        for u in range(k):
            ru = r[u]
            b[u] += ru * y
            row = a[u]
            for v in range(u, k):
                row[v] += ru * r[v]
    for u in range(k):
        for v in range(u):
            a[u][v] = a[v][u]
        a[u][u] += 1e-9 * max(a[u][u], 1.0)  # a column that never varies is no singularity
    return solve(a, b)


def _served_alike(
    observations: Sequence[Observation], served: Sequence[Observation], timed: Sequence[int]
) -> bool:
    """Were the requests that did not wait served about as fast as those that did: at
    most ``_STALL`` times the time the waiting ones' services predict for their tokens
    (their median)? The first requests of a burst pay the client's start-up and sending,
    no more; a client that reads every answer late makes the first ones look many times
    slower than the rest, which no slot count explains."""
    waited = [i for i in timed if served[i][4] < observations[i][4]]
    alone = [i for i in timed if served[i][4] >= observations[i][4]]
    if not alone:
        return True
    coef = _least_squares(
        [(1.0, served[i][0], served[i][1]) for i in waited], [served[i][4] for i in waited]
    )
    if coef is None:
        return False
    ratios = sorted(
        observations[i][4]
        / max(1e-9, coef[0] + coef[1] * observations[i][0] + coef[2] * observations[i][1])
        for i in alone
    )
    return ratios[len(ratios) // 2] <= _STALL


def _relative_error(predicted: Sequence[float], observed: Sequence[float]) -> float:
    """The mean of ``|observed - predicted| / predicted``, less the largest quarter (a
    hiccup, the first requests on new connections decide no comparison). Relative to
    the prediction: waits that leave services of a few milliseconds for long answers
    would otherwise win by making every number small."""
    errors = sorted(abs(y - p) / max(p, 1e-9) for p, y in zip(predicted, observed, strict=True))
    kept = errors[: len(errors) - len(errors) // 4]
    return sum(kept) / max(1, len(kept))


def _service_error(
    observations: Sequence[Observation],
    sent: Sequence[float | None],
    served: Sequence[Observation],
    timed: Sequence[int],
) -> float:
    """How well the services ``served`` (``queued``'s) of the ``timed`` observations are
    explained by least squares on their prompt and completion tokens and on the
    requests sent during each (``sent_during``: a burst's cost per request, which the
    first requests of a burst pay and no queue explains): ``_relative_error``."""
    during = sent_during(observations, sent, served)
    rows = [(1.0, served[i][0], served[i][1], during[i]) for i in timed]
    ys = [served[i][4] for i in timed]
    coef = _least_squares(rows, ys)
    if coef is None:
        return math.inf
    predicted = [sum(c * x for c, x in zip(coef, r, strict=True)) for r in rows]
    return _relative_error(predicted, ys)


def compact_send_times(sent: Sequence[float | None], gap: float) -> list[float | None]:
    """``sent`` counted from 0, in the same order, with every pause longer than ``gap``
    shortened to ``gap``: what the slots are read from (which requests overlapped, and by
    how much) is unchanged when ``gap`` is longer than any latency, and remembered times
    no longer grow by a gap with every process that loads and saves them. ``None`` (no
    send time) stays ``None``."""
    order = sorted((t, i) for i, t in enumerate(sent) if t is not None)
    out: list[float | None] = [None] * len(sent)
    at, previous = 0.0, None
    for t, i in order:
        if previous is not None:
            at += min(t - previous, gap)
        out[i] = at
        previous = t
    return out
