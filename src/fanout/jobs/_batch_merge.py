"""Merged requests in a batch job, whose answers nothing checks.

Online, auto takes merged answers only where they are checked against split answers of
the same questions (``engine.spotting``, ``engine.agreement``, ``engine.canaries``): a
group that disagrees is asked again alone. A batch's answers all come back at once,
hours later, after the merge could have been checked, so a batch job merges only when
asked to: with ``mode="merge"``, or auto with the checks off
(``Policy(merge_agreement=None)``). Under auto with the checks on, every question of a
batch goes alone (and the deadline's choice keeps the split batch candidates only:
``core.tiers.options_for``).

The answers of a merged batch request are recorded as unchecked (``"merged":
"unchecked"``) and counted (``JobSummary.batch_unchecked``); a forced merge warns when
this endpoint's agreement of merged with split answers is unknown or low, as an online
forced merge warns when it is low.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core.config import DEFAULT_MAX_GROUP_SIZE, DEFAULT_MERGE_AGREEMENT, MERGE_CHECK_MIN, Policy
from ..core.models import Question
from ..core.tiers import checks_merges
from ..engine.agreement import agreement_too_low
from ._output import log

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["MERGE_FORMAT", "UNCHECKED", "batch_group_size", "warn_unchecked"]

UNCHECKED = "unchecked"
"""The ``"merged"`` field of the record of an answer taken from a merged batch request."""

MERGE_FORMAT = "json"
"""The format of a batch job's merged requests (its merge checks are this format's)."""


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


def warn_unchecked(
    fo: Fanout, policy: Policy, group_size: int, model: str, questions: list[Question]
) -> None:
    """Warn that a forced merge (``mode="merge"``) of ``questions`` into batch requests
    of up to ``group_size`` takes answers nothing checks, when this endpoint's agreement
    of merged with split answers is not known or known to be low (a dry plan loads what
    the endpoint memory holds, as a call does before its first plan)."""
    if policy.mode != "merge" or group_size < 2 or sum(q.mergeable for q in questions) < 2:
        return
    fo.plan(questions[:1], model=model, policy=Policy(mode="split"))  # loads the memory
    known = fo.endpoint.merge_agreement(MERGE_FORMAT)
    threshold = (
        DEFAULT_MERGE_AGREEMENT if policy.merge_agreement is None else policy.merge_agreement
    )
    head = (
        "merging as asked (policy 'merge') in a batch job, unchecked: a batch cannot check "
        "merged answers against split ones before they are taken, and merged answers "
        f"({MERGE_FORMAT})"
    )
    tail = (
        'their records say "merged": "unchecked" (policy \'auto\' sends the questions of a '
        "batch alone)"
    )
    if known is None or known[0] < MERGE_CHECK_MIN:
        log.warning(
            "%s are not known to agree with split answers of the same questions here "
            "(%d compared, fewer than %d; online, auto compares them): a wrong or "
            "swapped answer is taken as it comes; %s",
            head,
            0 if known is None else known[0],
            MERGE_CHECK_MIN,
            tail,
        )
    elif agreement_too_low(known, threshold):
        fo.endpoint.warned_low_agreement = True  # the job's online questions do not say it again
        log.warning(
            "%s agreed with split answers of the same questions on only %d of %d checked "
            "here (%d with another question's answer): expect wrong answers; %s",
            head,
            known[1],
            known[0],
            known[2],
            tail,
        )
