"""Estimates before spending: what each way of sending a call's questions would cost.

``Fanout.plan`` (and so ``fanout plan``, ``fanout run --dry-run``) prices every
candidate the planner weighed, at the tokens it estimated, and the split and chosen
candidates again at the flex and batch tiers. Nothing is sent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..core.models import Usage
from ..core.money import CostEstimate, Tier, tier_of
from ..core.plans import Candidate, Plan
from .planning import ANCHOR_TOKENS
from .spending import Pricer

__all__ = ["BATCH_NOTE", "FLEX_NOTE", "estimate_costs"]


FLEX_NOTE = (
    "flex: the standard tier's time estimate; flex requests may run slower, and be "
    "refused (429) when capacity is short"
)
BATCH_NOTE = "batch: within 24 h, usually within an hour (the Batch API's promise)"


def estimate_costs(
    plan: Plan, pricer: Pricer, model: str, create_kwargs: Mapping[str, Any]
) -> list[CostEstimate]:
    """What each candidate of ``plan`` is estimated to cost at the call's tier, and the
    split and chosen candidates at the flex and batch tiers: the tokens the planner
    estimated, the prompt cache's share at the cached price."""
    tier = tier_of(create_kwargs)
    cached_per_request = plan.inputs.cached_prompt_tokens

    inputs = plan.inputs
    # A merged reply carries each question's anchor (its first words) with its answer;
    # the planner's prior overhead per answer leaves them out (until it has learned the
    # overhead here), the cost counts them.
    anchors = 0
    if inputs.merge_answer_overhead is None:
        anchors = sum(
            min(tokens, ANCHOR_TOKENS)
            for tokens, ok in zip(inputs.question_tokens, inputs.mergeable, strict=False)
            if ok
        )

    def one(c: Candidate, at: Tier, label: str) -> CostEstimate:
        completion = c.est_completion_tokens + (anchors if c.group_size > 1 else 0)
        usage = Usage(
            prompt_tokens=c.est_prompt_tokens,
            completion_tokens=completion,
            cached_prompt_tokens=min(c.est_prompt_tokens, cached_per_request * c.requests),
        )
        wall = None if at == "batch" else c.est_wall_s
        note = {"flex": FLEX_NOTE, "batch": BATCH_NOTE}.get(at, "")
        return CostEstimate(
            label=label,
            tier=at,
            requests=c.requests,
            est_prompt_tokens=c.est_prompt_tokens,
            est_completion_tokens=completion,
            est_cost=pricer.cost(usage, model, at),
            est_wall_s=wall,
            time_note=note,
        )

    rows = [one(c, tier, c.label) for c in plan.candidates]
    split = next((c for c in plan.candidates if c.group_size == 1), None)
    others = [c for c in (split, plan.chosen) if c is not None]
    for at in ("flex", "batch"):
        for c in dict.fromkeys(others):
            if at != tier:
                rows.append(one(c, at, f"{c.label} ({at})"))
    return rows
