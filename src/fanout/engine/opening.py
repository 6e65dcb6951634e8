"""The opening move of a batch whose answer lengths are unknown.

The best plan depends most on how long the answers are: ~200-token answers go
fastest split on a batching server, 3-token ones merged, above all under a
requests-per-minute limit. When nothing says how long they will be (no
``expected_tokens``, no ``max_tokens`` cap, nothing learned from this endpoint), the
planner plans the batch under a few hypotheses of answer length and weighs three
kinds of opening:

* commit now to the plan made for one hypothesis;
* send a *first wave* of a few questions alone (useful work in every case), learn
  the answer length (and the endpoint's speed, and its limits) from the first reply,
  and plan the rest with that;

each costed under every hypothesis (the wave as its first reply's latency plus the
best plan of the rest, with the wave's requests taken from the budget). It takes the
opening whose worst ratio to the best possible, over the hypotheses, is the smallest
(a minimax regret). A wave wins where it is cheap and the plans disagree; where a
wave would spend a scarce request, or every hypothesis leads to the same plan, it
commits.

Pure computation, like ``planning``: no I/O, no clocks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ..core.params import answer_cap
from ..core.plans import Budget, Plan
from .call import CallOptions
from .intake import Job
from .planning import PRIOR_ANSWER_TOKENS, estimate_groups

__all__ = [
    "HYPOTHESES",
    "Opening",
    "answer_lengths_known",
    "open_batch",
    "planning_room",
    "room_in_doubt",
]

HYPOTHESES = (4, 30, PRIOR_ANSWER_TOKENS)
"""Answer lengths (tokens) the opening is weighed under: a word, a sentence or two,
a paragraph."""
_MAX_WAVE = 4
_WAVE_MARGIN = 0.9  # a wave must beat the best commitment's worst regret by 10 %

Planner = Callable[[list[Job], CallOptions, Budget], Plan]


@dataclass(frozen=True)
class Opening:
    """How a batch starts: ``wave`` questions alone first (then a re-plan), or none
    and ``plan`` for them all. ``plan`` covers the questions sent now."""

    wave: int
    plan: Plan
    uncertain: bool
    """The answer lengths were unknown when it was chosen: re-plan as they come in."""
    fallback: Plan | None = None
    """The best plan to commit to for all of them, if no evidence comes in time."""
    lengths_known: bool = True
    """The answer lengths were known (only the limits' room was in doubt)."""


def answer_lengths_known(jobs: list[Job], opts: CallOptions, learned: float | None) -> bool:
    """Does anything say how long these answers will be?"""
    if learned is not None or opts.policy.expected_tokens is not None:
        return True
    for job in jobs:
        cap = answer_cap(job.params)
        if job.question.expected_tokens is None and not (isinstance(cap, int) and cap <= 64):
            return False
    return True


def _with_length(opts: CallOptions, tokens: int | None) -> CallOptions:
    if tokens is None:  # the lengths are known: plan with them
        return opts
    return dataclasses.replace(
        opts, policy=dataclasses.replace(opts.policy, expected_tokens=tokens)
    )


def _after(budget: Budget, requests: int, tokens: int) -> Budget:
    """The budget left once ``requests`` holding ``tokens`` have gone."""
    paused = budget.paused_s
    if budget.rpm and requests > budget.requests_now:
        paused += (requests - budget.requests_now) * 60.0 / budget.rpm
    if budget.tpm and tokens > budget.tokens_now:
        paused = max(paused, budget.paused_s + (tokens - budget.tokens_now) * 60.0 / budget.tpm)
    return dataclasses.replace(
        budget,
        requests_now=max(0.0, budget.requests_now - requests),
        tokens_now=max(0.0, budget.tokens_now - tokens),
        paused_s=paused,
        room_known=True,  # the rest is planned once the first of them has reported it
        first_alone=False,  # the first of them went alone
    )


def _rooms(budget: Budget, n: int) -> list[Budget]:
    """The limits' room now: known, or, before the endpoint has said, either the even
    pacing's (a limit policed over seconds) or a minute's worth at once (policed per
    minute); or, if the endpoint has reported room for a burst before (an earlier
    process, remembered), that burst again."""
    burst = min(float(n), budget.rpm or 0.0)
    if budget.room_known or burst <= budget.requests_now:
        return [budget]
    if budget.burst_seen >= 1:
        seen = max(budget.requests_now, min(float(n), budget.burst_seen))
        return [dataclasses.replace(budget, requests_now=seen)]
    return [budget, dataclasses.replace(budget, requests_now=burst)]


def _wave_cost(
    jobs: list[Job],
    wave: int,
    opts: CallOptions,
    rooms: list[Budget],
    plans: dict[tuple[int | None, int], Plan],
    lengths: tuple[int | None, ...],
    plan: Planner,
) -> dict[tuple[int | None, int], float]:
    """What a first wave of ``wave`` questions costs in each world: the time until the
    rest can be planned, plus the best plan of the rest with the wave's requests
    taken from the budget."""
    rest = jobs[wave:]
    after = {}
    for (h, r), p in plans.items():
        inputs = p.inputs
        spent = sum(
            inputs.shared_prompt_tokens + inputs.question_tokens[i] + inputs.answer_tokens[i]
            for i in range(wave)
        )
        after[h, r] = plan(rest, _with_length(opts, h), _after(rooms[r], wave, spent))
    cost = {}
    for (h, r), p in plans.items():
        inputs = p.inputs
        prompt = inputs.shared_prompt_tokens + inputs.question_tokens[0]
        # The rest is planned when the first reply's headers come (it is streamed) if
        # the room is all that was in doubt, else when its answer is in.
        settled = len({after[g, r].chosen.group_size for g in lengths}) == 1
        decided = inputs.endpoint.request_s(prompt, 1 if settled else inputs.answer_tokens[0])
        cost[h, r] = decided + after[h, r].chosen.est_wall_s
    return cost


def planning_room(budget: Budget, n: int) -> Budget:
    """The room to plan ``n`` requests with when it is not in doubt: ``budget``, or,
    before this endpoint has reported its room, the burst it reported before."""
    rooms = _rooms(budget, n)
    return rooms[0] if len(rooms) == 1 else budget


def room_in_doubt(budget: Budget, n: int) -> bool:
    """Would ``n`` requests find a room the endpoint has not reported yet?"""
    return len(_rooms(budget, n)) > 1


def open_batch(
    jobs: list[Job], opts: CallOptions, budget: Budget, plan: Planner, *, lengths_known: bool
) -> Opening:
    """Choose how to start a batch of ``jobs`` whose answer lengths are unknown, or
    whose limits' room is (``plan(jobs, opts, budget)`` plans with what the transport
    knows)."""
    rooms = _rooms(budget, len(jobs))
    lengths: tuple[int | None, ...] = (None,) if lengths_known else HYPOTHESES
    worlds = [(h, r) for h in lengths for r in range(len(rooms))]
    plans = {(h, r): plan(jobs, _with_length(opts, h), rooms[r]) for h, r in worlds}
    # cost[option][world]: the estimated wall time of an opening in that world.
    cost: dict[str, dict[tuple[int | None, int], float]] = {}
    committed: dict[str, Plan] = {}
    for (h, r), p in plans.items():
        label = p.chosen.label + (
            f", planned for ~{h}-token answers"
            if h is not None
            else f", planned for {'even pacing' if r == 0 else 'room for all'}"
        )
        if any(q.groups == p.groups for q in committed.values()):
            continue
        committed[label] = p
        cost[label] = {w: estimate_groups(p.groups, plans[w].inputs)[0] for w in worlds}
    some = plans[worlds[0]].inputs
    most = min(_MAX_WAVE, max(1, len(jobs) // 8), max(1, some.max_concurrency))
    # One streamed request tells the room; a few tell the answer lengths better, but
    # spend more of a tight request budget: both are weighed.
    for wave in sorted({1} if lengths_known else {1, most}):
        if len(jobs) > wave:
            cost[f"first wave of {wave}"] = _wave_cost(
                jobs, wave, opts, rooms, plans, lengths, plan
            )
    best = {w: min(c[w] for c in cost.values()) for w in worlds}
    regret = {label: max(c[w] / max(best[w], 1e-9) for w in worlds) for label, c in cost.items()}
    commit = min(committed, key=lambda label: (regret[label], committed[label].chosen.requests))
    doubts = []
    if not lengths_known:
        doubts.append(
            "whether answers run "
            + ", ".join(map(str, HYPOTHESES[:-1]))
            + f" or {HYPOTHESES[-1]} tokens"
        )
    if len(rooms) > 1:
        doubts.append(
            f"whether the endpoint takes them all at once or one per {60 / (budget.rpm or 1):.2g} s"
        )
    doubt = ", and ".join(doubts)
    unknown = "Answer lengths unknown" if not lengths_known else "The limits' room unknown"
    waves = [label for label in cost if label.startswith("first wave")]
    best_wave = min(waves, key=lambda label: regret[label], default=None)
    if best_wave is not None and regret[best_wave] < _WAVE_MARGIN * regret[commit]:
        wave = int(best_wave.rsplit(" ", 1)[1])
        alone = dataclasses.replace(opts.policy, mode="split")
        first_plan = plan(jobs[:wave], dataclasses.replace(opts, policy=alone), budget)
        what = (
            "the room the endpoint has"
            if lengths_known
            else "how long the answers are"
            if len(rooms) == 1
            else "the room the endpoint has and how long the answers are"
        )
        reason = (
            f"first wave: {wave} question{'s' if wave != 1 else ''} sent alone, to learn "
            f"{what} before planning the other {len(jobs) - wave}: the best plan depends on "
            f"it (within {regret[best_wave]:.2f}x of the best estimate {doubt}; committing "
            f"now, {commit}, within {regret[commit]:.2f}x)."
        )
        return Opening(
            wave=wave,
            plan=dataclasses.replace(first_plan, reason=reason),
            uncertain=True,
            fallback=committed[commit],
            lengths_known=lengths_known,
        )
    chosen = committed[commit]
    reason = (
        f"{chosen.reason} {unknown}: {commit}, within {regret[commit]:.2f}x of the best "
        f"estimate {doubt}."
    )
    chosen = dataclasses.replace(chosen, reason=reason)
    return Opening(
        wave=0, plan=chosen, uncertain=True, fallback=chosen, lengths_known=lengths_known
    )
