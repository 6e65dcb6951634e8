"""The endpoint model: what a ``Fanout`` learns of an endpoint's timing from its responses.

A learner, fed one observation per response (its tokens, its latency, and the work that
finished while it was in flight), fitted by least squares towards priors; the planner
reads its :class:`~fanout.planning.EndpointEstimate`.
"""

from __future__ import annotations

import math
import statistics
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from ._plans import EndpointEstimate

__all__ = ["SNAPSHOT_VERSION", "EndpointModel"]

_N_FEATURES = 5
_REFIT_EVERY = 16  # responses between the fits recent_estimate() makes
SNAPSHOT_VERSION = 1
"""The layout of :meth:`EndpointModel.snapshot`; a snapshot of another is not restored."""
_SNAPSHOT_FIELDS = ("prompt_tokens", "completion_tokens", "others_prompt_tokens",
                    "others_completion_tokens", "latency_s")  # fmt: skip
"""An observation of a snapshot, in order: the arguments of ``observe`` that replay it."""


class EndpointModel:
    """Learns an endpoint's timing from the responses a ``Fanout`` sees.

    Each response gives one observation: its prompt and completion tokens, the
    prompt and completion tokens of the other requests that finished during its
    life, and its latency. The model (see :class:`EndpointEstimate`) is fitted by
    least squares over the last ``window`` observations, with no coefficient
    below zero, and pulled towards the priors with the weight of
    ``prior_weight`` observations, so no response is needed to start and the
    priors only decide what the data cannot (a ridge).
    """

    def __init__(
        self,
        *,
        rtt_s: float = 0.3,
        prefill_s_per_token: float = 0.0002,
        decode_s_per_token: float = 0.015,
        slowdown_per_request: float = 0.03,
        window: int = 256,
        prior_weight: float = 0.001,
        prefix_cache: bool = False,
    ) -> None:
        self._prior = (
            rtt_s,
            prefill_s_per_token,
            decode_s_per_token,
            prefill_s_per_token * slowdown_per_request,
            decode_s_per_token * slowdown_per_request,
        )
        self._slowdown_prior = slowdown_per_request
        self._obs: deque[tuple[float, float, float, float, float]] = deque(maxlen=window)
        # Running sums of the normal equations, so a refit costs the same however
        # many observations the window holds.
        self._xtx = [[0.0] * _N_FEATURES for _ in range(_N_FEATURES)]
        self._xty = [0.0] * _N_FEATURES
        self._yy = 0.0
        self._prior_weight = prior_weight
        self._cached: EndpointEstimate | None = None
        self._answer_tokens: float | None = None
        self._prefix_cache = prefix_cache
        self._seen = 0  # responses observed, ever
        self._recent: tuple[EndpointEstimate, int] | None = None  # a fit, and _seen then

    @classmethod
    def from_profile(cls, profile: Any) -> EndpointModel:
        """Start from what ``Fanout.profile()`` measured instead of generic priors."""
        return cls(
            rtt_s=profile.rtt_s,
            prefill_s_per_token=profile.prefill_s_per_token,
            decode_s_per_token=profile.decode_s_per_token,
            slowdown_per_request=min(1.0, profile.slowdown_per_request),
            prefix_cache=bool(getattr(profile, "prefix_cache", False)),
        )

    # --- learning ---------------------------------------------------------------
    def observe(
        self,
        *,
        prompt_tokens: int,
        completion_tokens: int,
        latency_s: float,
        others_prompt_tokens: int = 0,
        others_completion_tokens: int = 0,
        cached_prompt_tokens: int = 0,
    ) -> None:
        """One response: its tokens, its latency, and the tokens of the other
        requests that finished while it was in flight. Prompt tokens the endpoint
        took from its cache (``cached_prompt_tokens``, part of ``prompt_tokens``) cost
        no prefill; ``others_prompt_tokens`` should leave them out too."""
        if latency_s <= 0 or completion_tokens < 0:
            return
        if cached_prompt_tokens > 0:
            if not self._prefix_cache:
                self._prefix_cache = True
                self._cached = None
            prompt_tokens = max(0, prompt_tokens - cached_prompt_tokens)
        obs = (float(prompt_tokens), float(completion_tokens), float(others_prompt_tokens),
               float(others_completion_tokens), latency_s)  # fmt: skip
        if len(self._obs) == self._obs.maxlen:
            self._accumulate(self._obs[0], -1.0)
        self._obs.append(obs)
        self._accumulate(obs, 1.0)
        self._cached = None
        self._seen += 1

    def _accumulate(self, obs: tuple[float, float, float, float, float], sign: float) -> None:
        p, c, op, oc, latency = obs
        row = (1.0, p, c, op, oc)
        self._yy += sign * latency * latency
        for i in range(_N_FEATURES):
            self._xty[i] += sign * row[i] * latency
            for j in range(_N_FEATURES):
                self._xtx[i][j] += sign * row[i] * row[j]

    def observe_answer(self, completion_tokens: float) -> None:
        """Learn the typical answer length (an exponentially weighted mean)."""
        if completion_tokens <= 0:
            return
        if self._answer_tokens is None:
            self._answer_tokens = completion_tokens
        else:
            self._answer_tokens += 0.2 * (completion_tokens - self._answer_tokens)

    @property
    def answer_tokens(self) -> float | None:
        return self._answer_tokens

    # --- estimating ---------------------------------------------------------------
    def estimate(self) -> EndpointEstimate:
        if self._cached is None:
            self._cached = self._fit()
            self._recent = (self._cached, self._seen)
        return self._cached

    def recent_estimate(self) -> EndpointEstimate:
        """The last fit, refitted only every ``_REFIT_EVERY`` responses: for uses that
        run per request (a deadline) and need no fit of the very latest response."""
        recent = self._recent
        if recent is None or self._seen - recent[1] >= _REFIT_EVERY:
            return self.estimate()
        return recent[0]

    def _fit(self) -> EndpointEstimate:
        prior = self._prior
        n = len(self._obs)
        if n == 0:
            return self._to_estimate(prior, 0)
        sums = (self._xtx, self._xty, self._yy, n)
        theta = self._choose(sums)
        if n >= 5:
            # One robust pass: a request far off the fit (the first on a new
            # connection, a hiccup) is left out and the rest refitted.
            residuals = [lat - _predict(theta, obs) for obs in self._obs for lat in (obs[4],)]
            med = statistics.median(abs(r) for r in residuals)
            mean_latency = sum(obs[4] for obs in self._obs) / n
            limit = max(4.45 * med, 0.1 * mean_latency)  # 3 x 1.4826 x the median deviation
            outliers = [obs for obs, r in zip(self._obs, residuals, strict=True) if abs(r) > limit]
            if outliers and len(outliers) <= n // 4:
                xtx = [row[:] for row in self._xtx]
                xty = self._xty[:]
                yy = self._yy
                for obs in outliers:
                    row = (1.0, obs[0], obs[1], obs[2], obs[3])
                    yy -= obs[4] * obs[4]
                    for i in range(_N_FEATURES):
                        xty[i] -= row[i] * obs[4]
                        for j in range(_N_FEATURES):
                            xtx[i][j] -= row[i] * row[j]
                theta = self._choose((xtx, xty, yy, n - len(outliers)))
        return self._to_estimate(theta, n)

    def _choose(self, sums: tuple[list[list[float]], list[float], float, int]) -> list[float]:
        """Two models: requests that do not delay each other (the wait terms at the
        small prior slowdown of the fitted speeds), and the full one. On a batching
        server a long request also sees many short ones finish during its life, so
        the full fit can mistake "long" for "kept waiting": it is taken only if it
        explains the latencies clearly better (under half the squared error)."""
        alone, alone_sse = self._solve_nnls(sums, [0, 1, 2], fixed={3: 0.0, 4: 0.0})
        full, full_sse = self._solve_nnls(sums, [0, 1, 2, 3, 4], fixed={})
        if sums[3] >= 4 and full_sse < 0.5 * alone_sse:
            return full
        theta = list(alone)
        theta[3] = alone[1] * self._slowdown_prior
        theta[4] = alone[2] * self._slowdown_prior
        return theta

    def _solve_nnls(
        self,
        sums: tuple[list[list[float]], list[float], float, int],
        features: list[int],
        fixed: dict[int, float],
    ) -> tuple[list[float], float]:
        """Ridge towards the priors (each weighing like ``prior_weight`` rows) with no
        coefficient below zero: a coefficient that wants to be negative is set to
        zero and the rest refitted (a small active-set least squares). Returns the
        coefficients and their sum of squared errors."""
        xtx, xty, yy, n = sums
        prior = self._prior
        lam = [self._prior_weight * max(1e-12, xtx[i][i] / max(n, 1)) for i in range(_N_FEATURES)]
        theta = [0.0] * _N_FEATURES
        for i, value in fixed.items():
            theta[i] = value
        active = list(features)
        while active:
            a = [[xtx[i][j] + (lam[i] if i == j else 0.0) for j in active] for i in active]
            b = [
                xty[i] + lam[i] * prior[i] - sum(xtx[i][k] * v for k, v in fixed.items())
                for i in active
            ]
            solution = _solve(a, b)
            if solution is None:
                return list(prior), math.inf
            worst = min(range(len(active)), key=lambda j: solution[j])
            if solution[worst] >= 0:
                for j, i in enumerate(active):
                    theta[i] = solution[j]
                break
            theta[active[worst]] = 0.0
            del active[worst]
        # SSE = y'y - 2 theta'X'y + theta'X'X theta
        sse = yy - 2 * sum(t * y for t, y in zip(theta, xty, strict=True))
        sse += sum(
            theta[i] * xtx[i][j] * theta[j] for i in range(_N_FEATURES) for j in range(_N_FEATURES)
        )
        return theta, max(sse, 0.0)

    def _to_estimate(self, theta: Sequence[float], n: int) -> EndpointEstimate:
        rtt, prefill, decode, prefill_wait, decode_wait = theta
        return EndpointEstimate(
            rtt_s=max(rtt, 0.0),
            prefill_s_per_token=max(prefill, 0.0),
            decode_s_per_token=max(decode, 1e-6),
            prefill_wait_s_per_token=max(prefill_wait, 0.0),
            decode_wait_s_per_token=max(decode_wait, 0.0),
            observations=n,
            prefix_cache=self._prefix_cache,
        )

    # --- remembering (fanout._memory) -----------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """What this model learned, as plain data (JSON-ready): the observations in its
        window, as ``observe`` took them, the typical answer length and whether the
        endpoint caches prefixes. The priors are the constructor's, not part of it."""
        return {
            "version": SNAPSHOT_VERSION,
            "fields": list(_SNAPSHOT_FIELDS),
            "observations": [list(obs) for obs in self._obs],
            "answer_tokens": self._answer_tokens,
            "prefix_cache": self._prefix_cache,
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Learn what a :meth:`snapshot` holds, as if its responses were seen again:
        each observation is replayed through ``observe``, the answer length through
        ``observe_answer`` (if none was seen yet). Raises ``ValueError``, having
        changed nothing, for a snapshot of another layout or with bad values."""
        if snapshot.get("version") != SNAPSHOT_VERSION:
            raise ValueError(
                f"snapshot version {snapshot.get('version')!r}, not {SNAPSHOT_VERSION}"
            )
        if snapshot.get("fields") != list(_SNAPSHOT_FIELDS):
            raise ValueError(f"observation fields {snapshot.get('fields')!r}")
        rows = snapshot.get("observations")
        answer = snapshot.get("answer_tokens")
        if not isinstance(rows, list) or not isinstance(snapshot.get("prefix_cache"), bool):
            raise ValueError("observations or prefix_cache missing")
        if answer is not None and (not _finite(answer) or answer <= 0):
            raise ValueError(f"answer_tokens {answer!r}")
        replay = []
        for row in rows:
            if not (isinstance(row, list) and len(row) == len(_SNAPSHOT_FIELDS)
                    and all(_finite(v) and v >= 0 for v in row)):  # fmt: skip
                raise ValueError(f"observation {row!r}")
            replay.append(row)
        if snapshot["prefix_cache"] and not self._prefix_cache:
            self._prefix_cache = True
            self._cached = None
        for p, c, op, oc, latency in replay:
            self.observe(prompt_tokens=int(p), completion_tokens=int(c), latency_s=float(latency),
                         others_prompt_tokens=int(op), others_completion_tokens=int(oc))  # fmt: skip
        if answer is not None and self._answer_tokens is None:
            self.observe_answer(float(answer))


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _predict(theta: Sequence[float], obs: tuple[float, float, float, float, float]) -> float:
    p, c, op, oc, _ = obs
    return theta[0] + theta[1] * p + theta[2] * c + theta[3] * op + theta[4] * oc


def _solve(a: list[list[float]], b: list[float]) -> list[float] | None:
    """Gaussian elimination with partial pivoting (4 unknowns; no numpy needed)."""
    n = len(b)
    m = [[*row, b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        if abs(m[pivot][col]) < 1e-18:
            return None
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            for c in range(col, n + 1):
                m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x
