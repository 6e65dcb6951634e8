"""The endpoint model: what a ``Fanout`` learns of an endpoint's timing from its responses.

A learner, fed one observation per response (its tokens, its latency, and the work that
finished while it was in flight), fitted by least squares towards priors; the planner
reads its :class:`~fanout.planning.EndpointEstimate`.
"""

from __future__ import annotations

import statistics
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..core.plans import EndpointEstimate
from ._linalg import nnls as _nnls
from .slots import compact_send_times, find_slots, queued

__all__ = ["SNAPSHOT_VERSION", "EndpointModel", "EndpointSnapshot"]

_N_FEATURES = 5
_REFIT_EVERY = 16  # responses between the fits recent_estimate() makes, at least
_REFIT_SHARE = 4  # ... and at least a 1/_REFIT_SHARE of the window the last fit saw
SNAPSHOT_VERSION = 1
"""The layout of :meth:`EndpointModel.snapshot`; a snapshot of another is not restored."""
_SNAPSHOT_FIELDS = (
    "prompt_tokens",
    "completion_tokens",
    "others_prompt_tokens",
    "others_completion_tokens",
    "latency_s",
)
"""An observation of a snapshot, in order: the arguments of ``observe`` that replay it."""
_MAX_VALUE = 1e7
"""The most tokens (or seconds) a remembered observation or answer length may hold: more
than any context or answer has; a larger number is no measurement (and ``1e308`` tokens
overflow the planner's arithmetic)."""
_S_COARSE = tuple(i / 10 for i in range(11))  # the slowdowns tried first, then refined
_F_TEST = 4.0  # F statistic a fitted slowdown must reach to leave the prior (about p = 0.05)
_PREFILL_PRIOR_TOKENS = 1000.0  # the prefill prior weighs like one request of this many tokens
_NOISE_S = 0.01  # ... when the latencies scatter this much (seconds, rms) or more about the fit
_SIZE_SPREAD = 2.0  # requests must differ in size this much for a slowdown to be fitted
_SLOT_SEARCH = 128  # the latest observations a search for slots reads (it costs per one)
_RESTORED_GAP_S = 1e6  # restored send times end this long before the model's own begin
_SAVED_GAP_S = 1e4  # pauses between remembered sends are kept at most this long

_MERGE_FAILURE_PRIOR = 0.02  # share of merged questions re-asked, before any merged reply
_MERGE_PRIOR_QUESTIONS = 10.0  # ... weighing like this many merged questions
_MERGE_MEMORY_QUESTIONS = 200.0  # the merged questions the failure rate remembers

_Sums = tuple[list[list[float]], list[float], float, int]
_Obs = tuple[float, float, float, float, float]


_Value = Annotated[float, Field(ge=0, le=_MAX_VALUE, allow_inf_nan=False)]
# Send times: up to a window of 4,096 sends, each pause at most _SAVED_GAP_S.
_Time = Annotated[float, Field(ge=-1e9, le=1e9, allow_inf_nan=False)]


class EndpointSnapshot(BaseModel):
    """The layout of :meth:`EndpointModel.snapshot`, validated whole before any of it is
    used (strict: ``true`` is no number, ``"3"`` no count; see ``_MAX_VALUE``)."""

    model_config = ConfigDict(strict=True, frozen=True)

    version: Literal[1]
    fields: list[str]
    observations: list[Annotated[list[_Value], Field(min_length=5, max_length=5)]] = Field(
        max_length=4096
    )
    answer_tokens: Annotated[float, Field(gt=0, le=_MAX_VALUE, allow_inf_nan=False)] | None = None
    prefix_cache: bool
    merge_outcomes: Annotated[list[_Value], Field(min_length=2, max_length=2)] | None = None
    """Questions of merged requests asked again, of all asked (absent in the first
    snapshots)."""
    merge_checks: dict[
        Literal["json", "text", "schema"],
        Annotated[list[_Value], Field(min_length=3, max_length=3)],
    ] = Field(default_factory=dict)
    """Per merged format: [answers compared, agreed, misattributed] by the merge check
    (merged answers against split answers of the same questions); ``"schema"``: the
    checks of structured outputs merged under a composed schema."""
    merge_usage: Annotated[list[_Value], Field(min_length=2, max_length=2)] | None = None
    """[prompt tokens per question, completion tokens per answer] a merged request adds."""
    sent_s: list[_Time | None] | None = Field(default=None, max_length=4096)
    """When each observation's request was sent, in seconds from one origin (None: a
    first token), one per observation: what tells the endpoint's slots (absent in older
    snapshots, whose observations tell none)."""
    slots: Annotated[int, Field(ge=1, le=1_000_000)] | None = None
    """The slots the model had found (see ``fanout.endpoint.slots``), kept until as
    many responses are new as a search needs (absent: searched again at once)."""

    @field_validator("fields")
    @classmethod
    def _same_layout(cls, value: list[str]) -> list[str]:
        if value != list(_SNAPSHOT_FIELDS):
            raise ValueError(f"observation fields {value!r}, not {list(_SNAPSHOT_FIELDS)!r}")
        return value

    @model_validator(mode="after")
    def _outcomes(self) -> EndpointSnapshot:
        merged = self.merge_outcomes
        if merged is not None and not (merged[0] <= merged[1] and merged[1] > 0):
            raise ValueError(f"merge_outcomes {merged!r}")
        for fmt, (compared, agreed, wrong) in self.merge_checks.items():
            if not (agreed + wrong <= compared):
                raise ValueError(f"merge_checks[{fmt!r}] {[compared, agreed, wrong]!r}")
        if self.sent_s is not None and len(self.sent_s) != len(self.observations):
            raise ValueError(
                f"{len(self.sent_s)} send times for {len(self.observations)} observations"
            )
        return self


class EndpointModel:
    """Learns an endpoint's timing from the responses a ``Fanout`` sees.

    Each response gives one observation: its prompt and completion tokens, the
    prompt and completion tokens of the other requests that finished during its
    life, and its latency. The model (see :class:`EndpointEstimate`, and
    ``_choose`` for the one slowdown that ties the wait terms to the speeds) is
    fitted by least squares over the last ``window`` observations, with no
    coefficient below zero, and pulled towards the priors, so no response is needed
    to start and the priors only decide what the data cannot (a ridge). Merged
    requests teach it how often a merged answer has to be asked again
    (:meth:`observe_merged`).
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
        # When each observation's request was sent (None: a first token, a remembered
        # observation of an older snapshot), beside it: what tells the server's slots.
        self._sent: deque[float | None] = deque(maxlen=window)
        self._origin: float | None = None  # the clock's time the send times count from
        self._after = 0.0  # ... and where this model's own begin (after remembered ones)
        self._replaying = False  # restore() gives send times already counted so
        # The slots found, _seen then, and the observations the search read.
        self._slots: tuple[int | None, int, int] | None = None
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
        # Questions of merged requests whose answer did not come back whole, of all
        # asked merged, starting from the prior's pseudo-counts.
        self._merge_failed = _MERGE_FAILURE_PRIOR * _MERGE_PRIOR_QUESTIONS
        self._merge_checks: dict[str, list[int]] = {}  # format -> [compared, agreed, misattributed]
        self.warned_low_agreement = False  # a forced merge was warned of low agreement
        self.merge_prompt_per_question: float | None = None  # learned, see observe_merge_usage
        self.merge_answer_overhead: float | None = None
        self._merge_asked = _MERGE_PRIOR_QUESTIONS

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
        sent_at: float | None = None,
    ) -> None:
        """One response: its tokens, its latency, and the tokens of the other
        requests that finished while it was in flight. Prompt tokens the endpoint
        took from its cache (``cached_prompt_tokens``, part of ``prompt_tokens``) cost
        no prefill; ``others_prompt_tokens`` should leave them out too. ``sent_at``: when
        the request was sent (seconds on a monotonic clock, the same for every response
        of this model; not for a first token): what tells how many requests the endpoint
        runs at once (see ``fanout.endpoint.slots``)."""
        if latency_s <= 0 or completion_tokens < 0:
            return
        if cached_prompt_tokens > 0:
            if not self._prefix_cache:
                self._prefix_cache = True
                self._cached = None
            prompt_tokens = max(0, prompt_tokens - cached_prompt_tokens)
        obs = (
            float(prompt_tokens),
            float(completion_tokens),
            float(others_prompt_tokens),
            float(others_completion_tokens),
            latency_s,
        )
        if len(self._obs) == self._obs.maxlen:
            self._accumulate(self._obs[0], -1.0)
        self._obs.append(obs)
        if sent_at is not None and not self._replaying:
            if self._origin is None:
                self._origin = sent_at - self._after
            sent_at -= self._origin
        self._sent.append(sent_at)
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

    def observe_merge_check(self, fmt: str, compared: int, agreed: int, misattributed: int) -> None:
        """A merge check: of ``compared`` questions asked both alone and merged (format
        ``fmt``), the merged answer of ``agreed`` said what the split one said, and that of
        ``misattributed`` said what another question's split answer said."""
        counts = self._merge_checks.setdefault(fmt, [0, 0, 0])
        counts[0] += compared
        counts[1] += agreed
        counts[2] += misattributed

    def observe_merge_usage(self, prompt_per_question: float, answer_overhead: float) -> None:
        """A merged request's usage beyond its questions and answers: prompt tokens per
        question, completion tokens per answer (exponentially weighted means; what the
        planner costs a merged request with instead of its priors)."""
        if not (0 <= prompt_per_question < 1e5 and 0 <= answer_overhead < 1e5):
            return
        if self.merge_prompt_per_question is None or self.merge_answer_overhead is None:
            self.merge_prompt_per_question, self.merge_answer_overhead = (
                prompt_per_question,
                answer_overhead,
            )
        else:
            self.merge_prompt_per_question += 0.3 * (
                prompt_per_question - self.merge_prompt_per_question
            )
            self.merge_answer_overhead += 0.3 * (answer_overhead - self.merge_answer_overhead)

    def merge_agreement(self, fmt: str) -> tuple[int, int, int] | None:
        """(compared, agreed, misattributed) over the merge checks of format ``fmt``;
        None before any (see ``Policy.merge_agreement``)."""
        counts = self._merge_checks.get(fmt)
        if not counts or counts[0] <= 0:
            return None
        return counts[0], counts[1], counts[2]

    def observe_merged(self, questions: int, answered: int) -> None:
        """One merged request: of its ``questions``, ``answered`` came back whole (the
        others are asked again alone; a merged request that failed answered none)."""
        if questions <= 0:
            return
        self._merge_failed += questions - min(max(answered, 0), questions)
        self._merge_asked += questions
        if self._merge_asked > _MERGE_MEMORY_QUESTIONS:  # recent replies count most
            shrink = _MERGE_MEMORY_QUESTIONS / self._merge_asked
            self._merge_failed *= shrink
            self._merge_asked *= shrink
        self._cached = None

    @property
    def merge_failure_rate(self) -> float:
        """The share of merged questions that are asked again (learned, from a prior)."""
        return self._merge_failed / self._merge_asked

    @property
    def answer_tokens(self) -> float | None:
        return self._answer_tokens

    def recent_latency_s(self, last: int = 32, share: float = 0.5) -> float | None:
        """A quantile (``share``: the median by default) of the latencies of the last
        ``last`` responses, each request's time from its send to its answer; None before
        any response."""
        if not self._obs:
            return None
        recent = sorted(obs[4] for obs in list(self._obs)[-last:])
        return recent[min(len(recent) - 1, int(share * len(recent)))]

    # --- estimating ---------------------------------------------------------------
    def estimate(self) -> EndpointEstimate:
        if self._cached is None:
            self._cached = self._fit()
            self._recent = (self._cached, self._seen)
        return self._cached

    def recent_estimate(self) -> EndpointEstimate:
        """The last fit, refitted only every ``_REFIT_EVERY`` responses, or once a
        quarter of the observations it saw are new if that is more (64 with a full
        window of 256): for uses that run per request (a deadline) and need no fit of
        the very latest response. (A fit costs about as much as a request's whole
        overhead; at hundreds of responses a second, refitting every 16 was a tenth of
        it.)"""
        recent = self._recent
        if recent is None:
            return self.estimate()
        estimate, seen = recent
        if self._seen - seen >= max(_REFIT_EVERY, estimate.observations // _REFIT_SHARE):
            return self.estimate()
        return estimate

    def _fit(self) -> EndpointEstimate:
        prior = self._prior
        n = len(self._obs)
        if n == 0:
            return self._to_estimate(prior, 0)
        obs = list(self._obs)
        theta = self._fit_window(obs, (self._xtx, self._xty, self._yy, n))
        slots = self._find_slots(obs, theta)
        if slots is not None:
            # The latencies as services: less the waits for a slot.
            served, _ = queued(obs, list(self._sent), slots)
            theta = self._fit_window(served, _sums(served))
        return self._to_estimate(theta, n, slots)

    def _fit_window(self, obs: Sequence[_Obs], sums: _Sums, *, robust: bool = True) -> list[float]:
        """The fit of ``obs`` (whose normal equations ``sums`` holds): ``_choose``, then
        with ``robust`` one pass without the requests far off it."""
        n = len(obs)
        vary = _sizes_vary(obs)
        theta = self._choose(sums, vary=vary)
        if n >= 5 and robust:
            # One robust pass: a request far off the fit (the first on a new
            # connection, a hiccup) is left out and the rest refitted.
            residuals = [lat - _predict(theta, o) for o in obs for lat in (o[4],)]
            med = statistics.median(abs(r) for r in residuals)
            mean_latency = sum(o[4] for o in obs) / n
            limit = max(4.45 * med, 0.1 * mean_latency)  # 3 x 1.4826 x the median deviation
            outliers = [o for o, r in zip(obs, residuals, strict=True) if abs(r) > limit]
            if outliers and len(outliers) <= n // 4:
                xtx = [row[:] for row in sums[0]]
                xty = sums[1][:]
                yy = sums[2]
                for o in outliers:
                    row = (1.0, o[0], o[1], o[2], o[3])
                    yy -= o[4] * o[4]
                    for i in range(_N_FEATURES):
                        xty[i] -= row[i] * o[4]
                        for j in range(_N_FEATURES):
                            xtx[i][j] -= row[i] * row[j]
                theta = self._choose((xtx, xty, yy, n - len(outliers)), vary=vary)
        return theta

    def _find_slots(self, obs: list[_Obs], theta: Sequence[float]) -> int | None:
        """The server's slots (see ``fanout.endpoint.slots``): searched again once half
        as many responses are new as the last search read (a search fits its
        observations once per slot count tried: 20-30 ms for ``_SLOT_SEARCH`` of them on
        a busy machine, so once per 64 responses at most)."""
        found = self._slots
        if found is not None and self._seen - found[1] < max(1, found[2] // 2):
            return found[0]
        slots = self._search_slots(obs, theta)
        self._slots = (slots, self._seen, min(len(obs), _SLOT_SEARCH))
        return slots

    def _search_slots(self, obs: list[_Obs], theta: Sequence[float]) -> int | None:
        """``fanout.endpoint.slots.find_slots`` over the latest ``_SLOT_SEARCH``
        observations, against ``theta`` (the fit without slots)."""
        recent = obs[-_SLOT_SEARCH:]
        sent = list(self._sent)[-_SLOT_SEARCH:]
        return find_slots(recent, sent, [_predict(theta, o) for o in recent])

    def _choose(self, sums: _Sums, *, vary: bool = True) -> list[float]:
        """Fit ``latency = rtt + prefill * (p + s * P) + decode * (c + s * C)``: one
        slowdown ``s`` in [0, 1] scales the work of the requests that finished during a
        request's life (0: they did not delay it, a batching server; 1: it waited for
        all of it, a serializing one). A delay can be neither negative nor more than the
        work itself, so the wait terms are tied to the speeds and bounded, and a fit
        cannot buy a better match with a wait coefficient many times the work (on a
        batching server a long request sees the short ones finish, so "waited" and
        "long" are easily confused). ``s`` is searched on a grid (the rest is linear);
        where the error barely depends on it, the prior decides, as it does where the
        requests are all of about one size (``vary`` False, see ``_sizes_vary``)."""
        prior = self._slowdown_prior
        # The prefill speed is often barely seen (prompts of one length, partly
        # cached), and then a cold first request passes for a slow prefill: its prior
        # weighs like one request of _PREFILL_PRIOR_TOKENS, in proportion to the noise
        # of the latencies (a Bayesian ridge: clean data needs no prior).
        _, sse = self._fit_at(sums, prior, 0.0)
        noise = min(1.0, sse / max(sums[3], 1) / _NOISE_S**2)
        prefill_weight = noise * _PREFILL_PRIOR_TOKENS**2
        if sums[3] < 4:
            speeds, _ = self._fit_at(sums, prior, prefill_weight)
            return _with_slowdown(speeds, prior)
        if not vary:
            # Requests of one size (see _sizes_vary): the delay the others caused is
            # per request, no speed's; the speeds are fitted without it, and the
            # slowdown is the prior's.
            speeds, _ = self._fit_at(sums, 0.0, prefill_weight)
            return _with_slowdown(speeds, prior)
        tried: dict[float, tuple[list[float], float]] = {}

        def at(s: float) -> float:
            if s not in tried:
                tried[s] = self._fit_at(sums, s, prefill_weight)
            return tried[s][1]

        coarse = min(_S_COARSE, key=at)
        lo, hi = max(0.0, coarse - 0.1), min(1.0, coarse + 0.1)
        fine = [round(lo + i * (hi - lo) / 8, 4) for i in range(9)]
        best = min(fine, key=at)
        # The fitted s only if it explains the latencies significantly better than
        # the prior's (an F test of the one parameter): noise, or too little variety
        # in what finished during the requests' lives, says nothing about s.
        n = sums[3]
        if at(prior) - tried[best][1] <= _F_TEST * tried[best][1] / max(1, n - 4) + 1e-12:
            best = prior
        return _with_slowdown(tried[best][0], best)

    def _fit_at(self, sums: _Sums, s: float, prefill_weight: float) -> tuple[list[float], float]:
        """The speeds (rtt, prefill, decode) for the slowdown ``s``, and the squared
        error: a linear fit on the features (1, p + s P, c + s C), whose normal
        equations follow from the five running sums; ``prefill_weight``: the prefill
        prior's."""
        xtx, xty, yy, n = sums
        # z = A x with x = (1, p, c, P, C): z0 = x0, z1 = x1 + s x3, z2 = x2 + s x4
        cols = ((0, None), (1, 3), (2, 4))

        def zz(a: int, b: int) -> float:
            (i, k), (j, m) = cols[a], cols[b]
            v = xtx[i][j]
            if k is not None:
                v += s * xtx[k][j]
            if m is not None:
                v += s * xtx[i][m]
            if k is not None and m is not None:
                v += s * s * xtx[k][m]
            return v

        ztz = [[zz(a, b) for b in range(3)] for a in range(3)]
        zty = [xty[i] + (s * xty[k] if k is not None else 0.0) for i, k in cols]
        prior = self._prior
        lam = [self._prior_weight * max(1e-12, ztz[i][i] / max(n, 1)) for i in range(3)]
        lam[1] = max(lam[1], prefill_weight)
        # The decode speed weighs its prior in proportion to it, not to the latency it
        # would explain: answers all of one length (one-token answers, say) cannot tell a
        # slow decode from a long round trip, and the round trip should take the slack
        # (an even split made 1-token answers look 170x slower to decode than they were).
        lam[2] = max(lam[2], self._prior_weight * (yy / max(n, 1)) / max(prior[2], 1e-9) ** 2)
        theta = _nnls(ztz, zty, lam, prior[:3])
        sse = yy - 2 * sum(t * y for t, y in zip(theta, zty, strict=True))
        sse += sum(theta[a] * ztz[a][b] * theta[b] for a in range(3) for b in range(3))
        return theta, max(sse, 0.0)

    def _to_estimate(
        self, theta: Sequence[float], n: int, slots: int | None = None
    ) -> EndpointEstimate:
        rtt, prefill, decode, prefill_wait, decode_wait = theta
        return EndpointEstimate(
            rtt_s=max(rtt, 0.0),
            prefill_s_per_token=max(prefill, 0.0),
            decode_s_per_token=max(decode, 1e-6),
            prefill_wait_s_per_token=max(prefill_wait, 0.0),
            decode_wait_s_per_token=max(decode_wait, 0.0),
            observations=n,
            prefix_cache=self._prefix_cache,
            merge_failure_rate=self.merge_failure_rate,
            slots=slots,
        )

    # --- remembering (fanout.endpoint.memory) -----------------------------------------------
    def snapshot(self) -> dict[str, Any]:
        """What this model learned, as plain data (JSON-ready): the observations in its
        window, as ``observe`` took them, the typical answer length, whether the
        endpoint caches prefixes, and how its merged replies fared, and when each
        observation's request was sent. The priors are the constructor's, not part of it."""
        slots = self.estimate().slots
        return {
            "version": SNAPSHOT_VERSION,
            "fields": list(_SNAPSHOT_FIELDS),
            "observations": [list(obs) for obs in self._obs],
            "answer_tokens": self._answer_tokens,
            "prefix_cache": self._prefix_cache,
            "merge_outcomes": [self._merge_failed, self._merge_asked],
            "merge_checks": {fmt: list(counts) for fmt, counts in self._merge_checks.items()},
            "merge_usage": (
                None
                if self.merge_prompt_per_question is None or self.merge_answer_overhead is None
                else [self.merge_prompt_per_question, self.merge_answer_overhead]
            ),
            "sent_s": compact_send_times(self._sent, _SAVED_GAP_S),
            "slots": slots,
        }

    def restore(self, snapshot: Mapping[str, Any] | EndpointSnapshot) -> None:
        """Learn what a :meth:`snapshot` holds, as if its responses were seen again:
        each observation is replayed through ``observe``, the answer length through
        ``observe_answer`` (if none was seen yet). Raises ``ValueError`` (a pydantic
        ``ValidationError``), having changed nothing, for a snapshot of another layout
        or with bad values (see :class:`EndpointSnapshot`)."""
        snap = (
            snapshot
            if isinstance(snapshot, EndpointSnapshot)
            else EndpointSnapshot.model_validate(
                dict(snapshot) if isinstance(snapshot, Mapping) else snapshot
            )
        )
        if snap.merge_outcomes is not None:
            self._merge_failed, self._merge_asked = snap.merge_outcomes
            self._cached = None
        if snap.merge_usage is not None and self.merge_prompt_per_question is None:
            self.observe_merge_usage(*snap.merge_usage)
        for fmt, counts in snap.merge_checks.items():
            if fmt not in self._merge_checks:
                self._merge_checks[fmt] = [int(c) for c in counts]
        if snap.prefix_cache and not self._prefix_cache:
            self._prefix_cache = True
            self._cached = None
        # The remembered send times, before any of this model's (a monotonic clock's
        # times of another process mean nothing here): none of them overlaps another's.
        # Into a model with none of its own they go as they were, and its own will count
        # from after them: the same numbers, the same fit.
        sent = snap.sent_s or [None] * len(snap.observations)
        times = [t for t in sent if t is not None]
        own = [t for t in self._sent if t is not None]
        shift = min(own) - max(times) - _RESTORED_GAP_S if own and times else 0.0
        if times and not own:
            self._after = max(self._after, max(times) + _RESTORED_GAP_S)
        self._replaying = True
        try:
            for (p, c, op, oc, latency), at in zip(snap.observations, sent, strict=True):
                self.observe(
                    prompt_tokens=int(p),
                    completion_tokens=int(c),
                    latency_s=float(latency),
                    others_prompt_tokens=int(op),
                    others_completion_tokens=int(oc),
                    sent_at=None if at is None else at + shift,
                )
        finally:
            self._replaying = False
        if "slots" in snap.model_fields_set and self._obs:
            self._slots = (snap.slots, self._seen, min(len(self._obs), _SLOT_SEARCH))
        if snap.answer_tokens is not None and self._answer_tokens is None:
            self.observe_answer(snap.answer_tokens)


def _sizes_vary(observations: Sequence[tuple[float, float, float, float, float]]) -> bool:
    """Do the observed requests differ in size: are a quarter of them at least
    ``_SIZE_SPREAD`` times as large, in completion or in prompt tokens, as another
    quarter? Only then can the delay the others caused be told per token, which the
    slowdown is: when the requests are (nearly all) of one size (short answers all 3
    tokens long), the others' tokens are in proportion to their number, and a delay
    per request (connections opened in a burst, the CPU of a busy client, a queue)
    passes for a serializing endpoint, on which every token of a larger request (a
    merged one) would delay the others as much."""
    n = len(observations)
    if n < 4:
        return False
    for k in (1, 0):  # completion, prompt
        sizes = sorted(obs[k] for obs in observations)
        if sizes[(3 * n) // 4] >= _SIZE_SPREAD * max(sizes[n // 4], 1.0):
            return True
    return False


def _sums(observations: Sequence[_Obs]) -> _Sums:
    """The normal equations' sums of ``observations`` (as ``_accumulate`` keeps them)."""
    xtx = [[0.0] * _N_FEATURES for _ in range(_N_FEATURES)]
    xty = [0.0] * _N_FEATURES
    yy = 0.0
    for p, c, op, oc, latency in observations:
        row = (1.0, p, c, op, oc)
        yy += latency * latency
        for i in range(_N_FEATURES):
            xty[i] += row[i] * latency
            for j in range(_N_FEATURES):
                xtx[i][j] += row[i] * row[j]
    return xtx, xty, yy, len(observations)


def _with_slowdown(speeds: Sequence[float], s: float) -> list[float]:
    rtt, prefill, decode = speeds
    return [rtt, prefill, decode, prefill * s, decode * s]


def _predict(theta: Sequence[float], obs: tuple[float, float, float, float, float]) -> float:
    p, c, op, oc, _ = obs
    return theta[0] + theta[1] * p + theta[2] * c + theta[3] * op + theta[4] * oc
