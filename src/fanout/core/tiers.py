"""Service tiers and the deadline-aware choice between them.

A job can be sent three ways, each at its own price:

* ``"standard"``: online, at the endpoint's default tier (what fanout always did);
* ``"flex"``: online with ``service_tier="flex"``: half price on OpenAI, slower, and
  refused (429 ``resource_unavailable``) when the provider has no room; a refused
  request is retried later, or sent at the standard tier when the deadline needs it;
* ``"batch"``: the Batch API: half price, answered "within 24 h, usually within an
  hour" (``Policy.batch_expected_s`` says which figure to plan with).

:func:`tier_factor` is the one place that prices a tier relative to the standard one;
:func:`choose_tier` weighs every (tier, plan candidate) pair and picks the cheapest
one expected to finish by the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import Policy
from .plans import Candidate, Plan

__all__ = ["TIERS", "TierChoice", "TierOption", "checks_merges", "choose_tier", "tier_factor"]

TIERS = ("standard", "flex", "batch")

_FACTORS = {"standard": 1.0, "flex": 0.5, "batch": 0.5}


def tier_factor(tier: str) -> float:
    """The price of a token at ``tier`` relative to the standard tier (OpenAI prices
    flex and batch at half the standard price). Raises ``ValueError`` for an unknown tier."""
    try:
        return _FACTORS[tier]
    except KeyError:
        raise ValueError(f"unknown service tier {tier!r}; known: {', '.join(TIERS)}") from None


@dataclass(frozen=True)
class TierOption:
    """One way to send a job: a tier and a plan candidate (split, or merged groups)."""

    tier: str
    candidate: Candidate
    est_wall_s: float
    est_cost: float
    """In standard-tier tokens: the candidate's tokens times the tier's factor (flex:
    plus the expected share sent at the standard tier after refusals)."""

    @property
    def label(self) -> str:
        return f"{self.tier} {self.candidate.label}"

    def describe(self) -> str:
        return f"{self.label} ~{self.est_cost:,.0f} token-units in ~{_duration(self.est_wall_s)}"


@dataclass(frozen=True)
class TierChoice:
    """What :func:`choose_tier` picked, the options it weighed, and why."""

    chosen: TierOption
    options: list[TierOption]
    deadline_s: float | None
    reason: str

    @property
    def tier(self) -> str:
        return self.chosen.tier


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def checks_merges(policy: Policy) -> bool:
    """Whether ``policy`` takes merged answers only where they are checked against split
    ones (auto with ``Policy.merge_agreement``): a batch cannot check them, so no merged
    batch request is chosen (see :func:`options_for`)."""
    return policy.mode == "auto" and policy.merge_agreement is not None


def options_for(plan: Plan, policy: Policy, tiers: tuple[str, ...] = TIERS) -> list[TierOption]:
    """Every (tier, candidate) pair of ``plan`` with its estimated time and cost, but
    merged batch candidates where the policy checks merged answers (``checks_merges``):
    a batch's answers all come back at once, after the merge could have been checked."""
    out: list[TierOption] = []
    for tier in tiers:
        factor = tier_factor(tier)
        for c in plan.candidates:
            if tier == "batch" and c.group_size > 1 and checks_merges(policy):
                continue
            cost = c.est_tokens * factor
            wall = c.est_wall_s
            if tier == "flex":
                share = policy.flex_fallback_share
                cost = c.est_tokens * (factor * (1 - share) + tier_factor("standard") * share)
                wall = c.est_wall_s * policy.flex_slowdown
            elif tier == "batch":
                wall = policy.batch_expected_s
            out.append(TierOption(tier=tier, candidate=c, est_wall_s=wall, est_cost=cost))
    return out


def choose_tier(plan: Plan, policy: Policy, *, tiers: tuple[str, ...] = TIERS) -> TierChoice:
    """The cheapest option of ``plan`` (among ``tiers``) expected to finish within
    ``policy.deadline_s``; if none is, the fastest. Without a deadline, or with the
    latency objective, the plan's own choice at the standard tier. Ties on cost go to
    the faster option."""
    deadline = policy.deadline_s
    standard = next(
        o for o in options_for(plan, policy, ("standard",)) if o.candidate is plan.chosen
    )
    if policy.objective != "cost" or deadline is None:
        return TierChoice(
            standard,
            [standard],
            deadline,
            f"{standard.label}: no deadline with the cost objective, so no other tier was weighed",
        )
    options = options_for(plan, policy, tiers)
    fits = [o for o in options if o.est_wall_s <= deadline]
    if fits:
        chosen = min(fits, key=lambda o: (round(o.est_cost, 6), o.est_wall_s))
        why = f"the cheapest expected to finish within the deadline of {_duration(deadline)}"
    else:
        chosen = min(options, key=lambda o: (o.est_wall_s, o.est_cost))
        why = (
            f"none is expected to finish within the deadline of {_duration(deadline)}: the fastest"
        )
    best: dict[str, TierOption] = {}
    for o in options:  # the cheapest candidate of each tier, for the reason
        if o.tier not in best or o.est_cost < best[o.tier].est_cost:
            best[o.tier] = o
    others = "; ".join(o.describe() for t, o in best.items() if o is not chosen)
    reason = f"{chosen.describe()}: {why}" + (f" (others: {others})" if others else "")
    if (
        "batch" in tiers
        and checks_merges(policy)
        and any(c.group_size > 1 for c in plan.candidates)
    ):
        reason += (
            "; merged batch requests are left out: a batch cannot check merged answers "
            "against split ones before they are taken (Policy.merge_agreement), so auto "
            "merges online only, where it checks them"
        )
    return TierChoice(chosen, options, deadline, reason)
