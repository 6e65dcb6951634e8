"""Merged groups under auto's merge check: which are spot-checked, and which merge at all.

The rule, as a pure function (``decide``); the call's ``Replanner`` applies it to each
merged group as the group can be sent, and the runner (``dispatch``) carries it out.

After a call's first merge check (``dispatch``), auto keeps checking: a merged group
also asks its last question alone and takes its merged answers only if that one
agrees (``execution.check_merged`` with a sample of one). What each group does follows
the agreement counted so far for the endpoint, model and format
(``EndpointModel.merge_agreement``, kept in its memory), from checks that have come
back (never from those still in flight):

* counts under the threshold (``agreement_too_low``: at least ``MERGE_CHECK_MIN``
  compared, fewer than ``Policy.merge_agreement`` of them agreeing): the group is not
  merged; its questions are asked alone, as the next plan would ask them;
* counts that *establish* agreement (``agreement.established``: the lower Wilson
  bound of the agreement rate, one-sided 95 %, at least ``Policy.merge_agreement``,
  and no merged answer ever found to be another question's): one merged group in
  :data:`SPOT_CHECK_EVERY` is checked, the others go unchecked;
* anything in between: the group is checked. When a few more agreeing answers would
  establish agreement (at most :data:`WAIT_FOR_CHECKS`), no more checks than that go
  at once: the other groups wait for them to come back, and then go thinned out (or
  checked, or alone) by what they found. That wait is the price of not checking every
  group of a large call; where more would be needed, nothing waits, and every group
  is checked. What waits is a group's answers, not its request (``Replanner.send_for``
  sends it "held", and ``Replanner.after_held`` applies this rule to it once the
  checks are back): the limits' room is not left idle meanwhile.

Once agreement is established, the one group in four that is checked carries a
question of the call already answered alone (with the same context and structured
format) as its *canary* (``canaries``), compared for tokens instead of a request; before,
a check always asks a question of its own group alone. Groups that are checked as they
go decide as each can be sent (the runner holds them), with the checks back by then.
"""

from __future__ import annotations

from typing import Literal

from ..core.config import SPOT_CHECK_EVERY, Policy
from .agreement import agreement_too_low, established, still_to_check

__all__ = ["WAIT_FOR_CHECKS", "Decision", "decide", "spot_checked"]

WAIT_FOR_CHECKS = 8
"""The most agreeing checks the other merged groups of a call wait for, when that many
would establish agreement (see the module doc)."""

Decision = Literal["alone", "check", "merge", "wait"]


def spot_checked(policy: Policy) -> bool:
    """Auto with the merge check on keeps checking merged groups."""
    return policy.mode == "auto" and policy.merge_agreement is not None


def decide(
    known: tuple[int, int, int] | None, threshold: float, *, merged: int, checking: int
) -> Decision:
    """What a merged group does, from the agreement ``known`` for its endpoint, model
    and format (compared, agreed, misattributed), the ``merged`` groups sent since
    agreement was established, and the spot checks ``checking`` now (module doc)."""
    if agreement_too_low(known, threshold):
        return "alone"
    if established(known, threshold):
        return "check" if merged % SPOT_CHECK_EVERY == 0 else "merge"
    needed = still_to_check(known, threshold)
    if needed is not None and needed <= WAIT_FOR_CHECKS and checking >= needed:
        return "wait"
    return "check"
