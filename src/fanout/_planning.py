"""The cost model: choose split, merge or groups in between, and say why.

A *plan* partitions the questions into requests: a group of one is a split call,
a group of several a merged call. For each candidate group size the planner
estimates the wall time and the tokens, from

* the questions: prompt tokens of each, and of the shared prefix (system prompt);
* the answers: expected tokens per answer (a hint, else learned, else a prior);
* the endpoint, learned online from every response (:class:`EndpointModel`):
  round trip, prefill time per prompt token, decode time per output token, and how
  much each request already in flight slows a new one (about 0 on a
  continuous-batching server, about 1 on one that serializes);
* the limits: requests and tokens that may go now, the per-minute rates after
  that, and the concurrency cap.

Everything here is pure computation: no I/O, no clocks.
"""

from __future__ import annotations

import bisect
import heapq
import math
import statistics
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._config import Policy

__all__ = [
    "Budget",
    "Candidate",
    "EndpointEstimate",
    "EndpointModel",
    "Plan",
    "PlanInputs",
    "make_plan",
]

# Tokens a merged request adds: the instructions once, and a tag (and JSON
# punctuation) per question in the prompt and per answer in the reply.
MERGE_PROMPT_OVERHEAD = 60
MERGE_PROMPT_PER_QUESTION = 6
MERGE_ANSWER_OVERHEAD = 8
PRIOR_ANSWER_TOKENS = 200


@dataclass(frozen=True)
class EndpointEstimate:
    """What the planner believes about the endpoint.

    A request with ``p`` prompt tokens and ``c`` completion tokens, during whose
    life other requests holding ``P`` prompt and ``C`` completion tokens finish,
    takes ``rtt + p * prefill + c * decode + P * prefill_wait + C * decode_wait``.
    On a server that serializes, a request waits for the whole work of the ones
    ahead of it (``*_wait`` about equal to ``prefill`` and ``decode``); on a
    continuous-batching server they run together and barely delay each other
    (``*_wait`` near 0).
    """

    rtt_s: float
    """Fixed time per request: network, queueing, scheduling."""
    prefill_s_per_token: float
    decode_s_per_token: float
    """Decode time per output token for a request running alone."""
    prefill_wait_s_per_token: float
    """Delay per prompt token of the requests that finish during a request's life."""
    decode_wait_s_per_token: float
    """Delay per completion token of the requests that finish during a request's life."""
    observations: int
    prefix_cache: bool = False
    """The endpoint reuses the start of prompts it has processed (it reported cached
    prompt tokens, or a profile found it): a shared prompt sent before is not
    prefilled again. The prefill terms count only the tokens that are processed."""

    @property
    def slowdown_per_request(self) -> float:
        """How much one equal request finishing first delays another: about 0 on a
        continuous-batching server, about 1 on one that serializes."""
        work = self.prefill_s_per_token * 100 + self.decode_s_per_token * 100
        wait = self.prefill_wait_s_per_token * 100 + self.decode_wait_s_per_token * 100
        return wait / work if work > 0 else 0.0

    def request_s(
        self,
        prompt_tokens: float,
        completion_tokens: float,
        others_prompt: float = 0.0,
        others_completion: float = 0.0,
    ) -> float:
        """Estimated latency of one request, given the work that finishes before it."""
        return (
            self.rtt_s
            + prompt_tokens * self.prefill_s_per_token
            + completion_tokens * self.decode_s_per_token
            + others_prompt * self.prefill_wait_s_per_token
            + others_completion * self.decode_wait_s_per_token
        )


@dataclass(frozen=True)
class Budget:
    """Rate-limit room, as the planner sees it."""

    requests_now: float = math.inf
    tokens_now: float = math.inf
    rpm: float | None = None
    tpm: float | None = None
    paused_s: float = 0.0


_N_FEATURES = 5


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
        return self._cached

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


# --- plans --------------------------------------------------------------------------
@dataclass(frozen=True)
class PlanInputs:
    """Everything a plan was computed from (for the report and for dry runs)."""

    question_tokens: list[int]
    shared_prompt_tokens: int
    answer_tokens: list[int]
    endpoint: EndpointEstimate
    budget: Budget
    max_concurrency: int
    mergeable: list[bool]
    cached_prompt_tokens: int = 0
    """Prompt tokens at the start of every request the endpoint is expected to take
    from its cache (the shared prompt, sent before to an endpoint that caches
    prefixes): counted in the tokens, not in the prefill time."""


@dataclass(frozen=True)
class Candidate:
    """One way to send the questions, and what it is estimated to cost."""

    label: str
    group_size: int
    requests: int
    est_wall_s: float
    est_prompt_tokens: int
    est_completion_tokens: int
    est_limit_wait_s: float

    @property
    def est_tokens(self) -> int:
        return self.est_prompt_tokens + self.est_completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "group_size": self.group_size,
            "requests": self.requests,
            "est_wall_s": round(self.est_wall_s, 4),
            "est_prompt_tokens": self.est_prompt_tokens,
            "est_completion_tokens": self.est_completion_tokens,
            "est_limit_wait_s": round(self.est_limit_wait_s, 4),
        }


@dataclass(frozen=True)
class Plan:
    """The chosen partition of the questions into requests, and why."""

    groups: list[list[int]]
    """Question positions (within the planned batch) per request, in order."""
    chosen: Candidate
    candidates: list[Candidate]
    reason: str
    mode: str
    objective: str
    inputs: PlanInputs = field(repr=False)

    @property
    def mode_label(self) -> str:
        return self.chosen.label


def _group_sizes_to_try(n: int, cap: int) -> list[int]:
    sizes = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 100, 128, 256, n}
    return sorted(s for s in sizes if 1 <= s <= min(n, cap))


def _partition(indices: list[int], size: int) -> list[list[int]]:
    """Contiguous groups of near-equal size, at most ``size`` each."""
    if not indices:
        return []
    m = math.ceil(len(indices) / size)
    base, extra = divmod(len(indices), m)
    groups, start = [], 0
    for g in range(m):
        length = base + (1 if g < extra else 0)
        groups.append(indices[start : start + length])
        start += length
    return groups


def _estimate(groups: list[list[int]], inputs: PlanInputs) -> tuple[float, int, int, float]:
    """(wall seconds, prompt tokens, completion tokens, time spent waiting on limits)."""
    ep = inputs.endpoint
    budget = inputs.budget
    requests: list[tuple[int, int]] = []
    prefilled: list[int] = []  # prompt tokens each request has to process
    for group in groups:
        merged = len(group) > 1
        p = inputs.shared_prompt_tokens + sum(inputs.question_tokens[i] for i in group)
        c = sum(inputs.answer_tokens[i] for i in group)
        if merged:
            p += MERGE_PROMPT_OVERHEAD + MERGE_PROMPT_PER_QUESTION * len(group)
            c += MERGE_ANSWER_OVERHEAD * len(group)
        requests.append((p, c))
        prefilled.append(max(1, p - inputs.cached_prompt_tokens))
    prompt_total = sum(p for p, _ in requests)
    completion_total = sum(c for _, c in requests)

    # When may each request leave, given the request and token budgets?
    releases: list[float] = []
    tokens_used = 0.0
    for j, (p, c) in enumerate(requests):
        t = budget.paused_s
        if budget.rpm and j + 1 > budget.requests_now:
            t = max(t, budget.paused_s + (j + 1 - budget.requests_now) * 60.0 / budget.rpm)
        tokens_used += p + c
        if budget.tpm and tokens_used > budget.tokens_now:
            t = max(t, budget.paused_s + (tokens_used - budget.tokens_now) * 60.0 / budget.tpm)
        releases.append(t)
    # Run them through the concurrency cap: request j starts when released and a
    # slot is free. The requests in flight when it starts, and those released
    # before it would finish alone, overlap it; for the wall time (the slowest
    # request) count their work as finishing first.
    timed = [(q, c) for q, (_, c) in zip(prefilled, requests, strict=True)]
    prefix_p = [0.0]
    prefix_c = [0.0]
    for p, c in timed:
        prefix_p.append(prefix_p[-1] + p)
        prefix_c.append(prefix_c[-1] + c)
    active: list[tuple[float, int, int]] = []  # (finish, p, c) of requests in flight
    active_p = active_c = 0.0
    wall = 0.0
    waited = 0.0
    cap = inputs.max_concurrency
    for j, ((p, c), release) in enumerate(zip(timed, releases, strict=True)):
        start = release

        def retire(until: float) -> None:
            nonlocal active_p, active_c
            while active and active[0][0] <= until:
                _, done_p, done_c = heapq.heappop(active)
                active_p -= done_p
                active_c -= done_c

        retire(start)
        if len(active) >= cap:
            first, done_p, done_c = heapq.heappop(active)
            active_p -= done_p
            active_c -= done_c
            start = max(start, first)
            retire(start)
        alone = ep.request_s(p, c)
        end = bisect.bisect_left(releases, start + alone, lo=j + 1)
        end = min(end, j + 1 + max(0, cap - 1 - len(active)))
        others_p = active_p + prefix_p[end] - prefix_p[j + 1]
        others_c = active_c + prefix_c[end] - prefix_c[j + 1]
        finish = start + ep.request_s(p, c, others_p, others_c)
        heapq.heappush(active, (finish, p, c))
        active_p += p
        active_c += c
        wall = max(wall, finish)
        waited += release
    return wall, prompt_total, completion_total, waited


def make_plan(inputs: PlanInputs, policy: Policy) -> Plan:
    """Choose a plan for ``inputs`` under ``policy`` (pure; no I/O)."""
    n = len(inputs.question_tokens)
    mergeable = [i for i in range(n) if inputs.mergeable[i]]
    alone = [[i] for i in range(n) if not inputs.mergeable[i]]
    cap = policy.max_group_size or max(1, len(mergeable))
    if policy.mode == "split":
        sizes = [1]
    elif policy.mode == "merge":
        sizes = [min(cap, max(1, len(mergeable)))]
    else:
        sizes = _group_sizes_to_try(max(1, len(mergeable)), cap)

    candidates: list[tuple[Candidate, list[list[int]]]] = []
    for size in sizes:
        groups = _partition(mergeable, size) + alone
        groups.sort(key=lambda g: g[0])
        wall, p, c, waited = _estimate(groups, inputs)
        if size == 1 or len(mergeable) <= 1:
            label = "split"
        elif size >= len(mergeable):
            label = "merge"
        else:
            label = f"groups of {size}"
        candidates.append(
            (
                Candidate(
                    label=label,
                    group_size=size,
                    requests=len(groups),
                    est_wall_s=wall,
                    est_prompt_tokens=p,
                    est_completion_tokens=c,
                    est_limit_wait_s=waited,
                ),
                groups,
            )
        )

    fastest = min(c.est_wall_s for c, _ in candidates)
    within = [(c, g) for c, g in candidates if c.est_wall_s <= fastest * (1 + policy.slack) + 1e-9]
    if policy.mode != "auto":
        chosen, groups = candidates[0]
    elif policy.objective == "latency":
        # The fastest; among near-ties, the cheapest; then the fewest requests.
        chosen, groups = min(
            within, key=lambda cg: (cg[0].est_tokens, cg[0].requests, cg[0].est_wall_s)
        )
    else:
        chosen, groups = min(within, key=lambda cg: (cg[0].est_tokens, cg[0].est_wall_s))
    reason = _reason(chosen, [c for c, _ in candidates], inputs, policy)
    return Plan(
        groups=groups,
        chosen=chosen,
        candidates=[c for c, _ in candidates],
        reason=reason,
        mode=policy.mode,
        objective=policy.objective,
        inputs=inputs,
    )


def _reason(
    chosen: Candidate, candidates: list[Candidate], inputs: PlanInputs, policy: Policy
) -> str:
    what = f"{chosen.label} ({chosen.requests} request{'s' if chosen.requests != 1 else ''})"
    if policy.mode != "auto":
        return f"{what}: policy mode {policy.mode!r} was asked for."
    others = [c for c in candidates if c is not chosen]
    if not others:
        return f"{what}: the only possible plan for {len(inputs.question_tokens)} question(s)."
    split = next((c for c in candidates if c.group_size == 1), None)
    merge = max(candidates, key=lambda c: c.group_size)
    ep = inputs.endpoint
    serial = ep.slowdown_per_request >= 0.5
    if chosen.group_size == 1:
        why = (
            "the endpoint decodes concurrent requests in parallel"
            if not serial
            else "the answers are long enough that parallel requests still finish first"
        )
        if inputs.cached_prompt_tokens:
            why += f", and it has the shared prompt ({inputs.cached_prompt_tokens} tokens) cached"
        return (
            f"{what}: estimated {chosen.est_wall_s:.2f}s against {merge.est_wall_s:.2f}s for "
            f"{merge.label}, because {why} (slowdown per request in flight "
            f"{ep.slowdown_per_request:.2f})."
        )
    causes = []
    if split is not None and split.est_limit_wait_s > 0.25 * split.est_wall_s * split.requests:
        causes.append("the rate limits would hold split requests back")
    if serial:
        causes.append("the endpoint does not run requests in parallel")
    if split is not None and chosen.est_tokens < split.est_tokens:
        causes.append(
            f"it needs {split.est_tokens - chosen.est_tokens} fewer tokens (the shared prompt is paid once)"
        )
    if split is not None and chosen.est_wall_s < split.est_wall_s and not causes:
        causes.append("round trips dominate such short answers")
    because = "; ".join(causes) or "it is the best trade-off of time and tokens"
    versus = (
        f" against {split.est_wall_s:.2f}s and {split.est_tokens} tokens for split"
        if split is not None
        else ""
    )
    return (
        f"{what}: estimated {chosen.est_wall_s:.2f}s and {chosen.est_tokens} tokens{versus}; "
        f"objective {policy.objective}: {because}."
    )
