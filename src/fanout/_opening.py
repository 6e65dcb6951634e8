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

Pure computation, like ``_planning``: no I/O, no clocks.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass

from ._call import CallOptions
from ._intake import Job
from ._planning import PRIOR_ANSWER_TOKENS, estimate_groups
from ._plans import Budget, Plan

__all__ = ["HYPOTHESES", "Opening", "answer_lengths_known", "open_batch"]

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


def answer_lengths_known(jobs: list[Job], opts: CallOptions, learned: float | None) -> bool:
    """Does anything say how long these answers will be?"""
    if learned is not None or opts.policy.expected_tokens is not None:
        return True
    for job in jobs:
        cap = job.params.get("max_completion_tokens", job.params.get("max_tokens"))
        if job.question.expected_tokens is None and not (isinstance(cap, int) and cap <= 64):
            return False
    return True


def _with_length(opts: CallOptions, tokens: int) -> CallOptions:
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
    )


def _rooms(budget: Budget, n: int) -> list[Budget]:
    """The limits' room now: known, or, before the endpoint has said, either the even
    pacing's (a limit policed over seconds) or a minute's worth at once (policed per
    minute)."""
    if budget.room_known or not budget.rpm or budget.requests_now >= n:
        return [budget]
    return [budget, dataclasses.replace(budget, requests_now=min(float(n), budget.rpm))]


def open_batch(jobs: list[Job], opts: CallOptions, budget: Budget, plan: Planner) -> Opening:
    """Choose how to start a batch of ``jobs`` whose answer lengths are unknown
    (``plan(jobs, opts, budget)`` plans with what the transport knows)."""
    rooms = _rooms(budget, len(jobs))
    worlds = [(h, r) for h in HYPOTHESES for r in range(len(rooms))]
    plans = {(h, r): plan(jobs, _with_length(opts, h), rooms[r]) for h, r in worlds}
    # cost[option][world]: the estimated wall time of an opening in that world.
    cost: dict[str, dict[tuple[int, int], float]] = {}
    committed: dict[str, Plan] = {}
    for (h, _r), p in plans.items():
        label = f"{p.chosen.label}, planned for ~{h}-token answers"
        if label in committed:
            continue
        committed[label] = p
        cost[label] = {w: estimate_groups(p.groups, plans[w].inputs)[0] for w in worlds}
    some = plans[worlds[0]].inputs
    wave = min(_MAX_WAVE, max(1, len(jobs) // 8), max(1, some.max_concurrency))
    if len(jobs) > wave:
        rest = jobs[wave:]
        spent = sum(some.shared_prompt_tokens + some.question_tokens[i] for i in range(wave))
        after = {w: plan(rest, _with_length(opts, w[0]), _after(rooms[w[1]], wave, spent + wave * w[0]))
                 for w in worlds}  # fmt: skip
        wave_cost: dict[tuple[int, int], float] = {}
        for h, r in worlds:
            inputs = plans[h, r].inputs
            prompt = inputs.shared_prompt_tokens + inputs.question_tokens[0]
            # The rest is planned when the first reply's headers come (it is streamed) if
            # the room is all that was in doubt, else when its answer is in.
            settled = len({after[g, r].chosen.group_size for g in HYPOTHESES}) == 1
            decided = inputs.endpoint.request_s(prompt, 1 if settled else h)
            wave_cost[h, r] = decided + after[h, r].chosen.est_wall_s
        cost["first wave"] = wave_cost
    best = {w: min(c[w] for c in cost.values()) for w in worlds}
    regret = {label: max(c[w] / max(best[w], 1e-9) for w in worlds) for label, c in cost.items()}
    commit = min(committed, key=lambda label: (regret[label], committed[label].chosen.requests))
    lengths = ", ".join(map(str, HYPOTHESES[:-1])) + f" or {HYPOTHESES[-1]}"
    doubt = f"whether answers run {lengths} tokens" + (
        ", and whether the endpoint takes a minute's requests at once" if len(rooms) > 1 else ""
    )
    if "first wave" in regret and regret["first wave"] < _WAVE_MARGIN * regret[commit]:
        alone = dataclasses.replace(opts.policy, mode="split")
        first_plan = plan(jobs[:wave], dataclasses.replace(opts, policy=alone), budget)
        reason = (
            f"first wave: {wave} question{'s' if wave != 1 else ''} sent alone, to learn "
            f"{'the room the endpoint has and ' if len(rooms) > 1 else ''}how long the answers "
            f"are before planning the other {len(jobs) - wave}: the best plan depends on it "
            f"(within {regret['first wave']:.2f}x of the best estimate {doubt}; committing now, "
            f"{commit}, within {regret[commit]:.2f}x)."
        )
        return Opening(wave=wave, plan=dataclasses.replace(first_plan, reason=reason),
                       uncertain=True, fallback=committed[commit])  # fmt: skip
    chosen = committed[commit]
    reason = (
        f"{chosen.reason} Answer lengths unknown: {commit}, within {regret[commit]:.2f}x of the "
        f"best estimate {doubt}."
    )
    chosen = dataclasses.replace(chosen, reason=reason)
    return Opening(wave=0, plan=chosen, uncertain=True, fallback=chosen)
