"""Merged requests in a batch job, whose answers nothing checks.

Online, auto takes merged answers only where they are checked against split answers of
the same questions (``engine.spotting``, ``engine.agreement``, ``engine.canaries``): a
group that disagrees is asked again alone. A batch's answers all come back at once,
hours later, after the merge could have been checked, so a batch job merges only when
asked to: with ``mode="merge"``, or auto with the checks off
(``Policy(merge_agreement=None)``). Under auto with the checks on, every question of a
batch goes alone (and the deadline's choice keeps the split batch candidates only:
``core.tiers.options_for``).
"""

from __future__ import annotations

from ..core.config import DEFAULT_MAX_GROUP_SIZE, Policy
from ..core.tiers import checks_merges

__all__ = ["batch_group_size"]


def batch_group_size(policy: Policy, chosen: int | None) -> int:
    """The most questions a batch request holds: one where the policy checks merged
    answers (a batch cannot) or splits; else the group size of the plan candidate the
    deadline's choice picked (``chosen``), or the policy's cap (no cap: the
    quality-safe one)."""
    if policy.mode == "split" or checks_merges(policy):
        return 1
    if chosen is not None:
        return chosen
    return policy.max_group_size or DEFAULT_MAX_GROUP_SIZE
