"""Merged groups under auto's merge check: which are spot-checked, and which merge at all.

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
  is checked.

Once agreement is established, the one group in four that is checked carries a
question of the call already answered alone (with the same context and structured
format) as its *canary* (``canaries``), compared for tokens instead of a request; before,
a check always asks a question of its own group alone. Groups that are checked as they
go decide as each can be sent (``dispatch`` holds them), with the checks back by then.
"""

from __future__ import annotations

from typing import Literal

import anyio

from ..core.config import SPOT_CHECK_EVERY, Policy
from ..core.models import Answer
from ..core.plans import Plan
from .agreement import agreement_too_low, established, still_to_check
from .call import CallOptions, CallStats
from .canaries import Canaries, check_with_canary
from .execution import Finish, ask_merged, ask_one, check_merged, merge_format_for
from .intake import Job
from .structured import SCHEMA_FORMAT
from .transport import Transport

__all__ = ["WAIT_FOR_CHECKS", "SpotChecks", "spot_checked"]

WAIT_FOR_CHECKS = 8
"""The most agreeing checks the other merged groups of a call wait for, when that many
would establish agreement (see the module doc)."""

Decision = Literal["alone", "check", "merge", "wait"]


def spot_checked(policy: Policy) -> bool:
    """Auto with the merge check on keeps checking merged groups."""
    return policy.mode == "auto" and policy.merge_agreement is not None


class SpotChecks:
    """One call's merged groups after its first merge check (see the module doc)."""

    def __init__(self, transport: Transport, opts: CallOptions, stats: CallStats) -> None:
        self._transport = transport
        self._opts = opts
        self._stats = stats
        self._merged = 0  # merged groups sent unchecked or checked since established
        self._checking = 0  # spot checks in flight
        self._back = anyio.Event()  # set when a check comes back
        self._canaries = Canaries()

    def learn(self, job: Job, answer: Answer) -> bool:
        """A finished answer of the call: asked alone, it may serve as a canary (True
        if kept as one). Only where groups are spot-checked: a split call's hot path
        keeps none."""
        return spot_checked(self._opts.policy) and self._canaries.learn(job, answer)

    def checks_as_sent(self, plan: Plan) -> bool:
        """Whether ``plan`` merges groups that are checked as they go: each then
        decides how it is checked (or whether it merges) as it can be sent, with the
        checks back by then, and a canary learned meanwhile can ride it."""
        return spot_checked(self._opts.policy) and any(len(g) > 1 for g in plan.groups)

    def _known(self, group: list[Job]) -> tuple[int, int, int] | None:
        fmt = (
            SCHEMA_FORMAT
            if group[0].structured is not None
            else merge_format_for(self._transport, self._opts.policy)
        )
        return self._transport.endpoint.merge_agreement(fmt)

    def _decide(self, group: list[Job], threshold: float) -> Decision:
        known = self._known(group)
        if agreement_too_low(known, threshold):
            return "alone"
        if established(known, threshold):
            self._merged += 1
            return "check" if (self._merged - 1) % SPOT_CHECK_EVERY == 0 else "merge"
        needed = still_to_check(known, threshold)
        if needed is not None and needed <= WAIT_FOR_CHECKS and self._checking >= needed:
            return "wait"
        return "check"

    async def run(self, group: list[Job], finish: Finish) -> None:
        """Send one merged group: checked, unchecked, or each of its questions alone."""
        transport, opts, stats = self._transport, self._opts, self._stats
        threshold = opts.policy.merge_agreement
        if not spot_checked(opts.policy) or threshold is None:
            await ask_merged(transport, group, opts, stats, finish)
            return
        while (decision := self._decide(group, threshold)) == "wait":
            await self._back.wait()
        # A canary only where agreement is established (the one group in four checked
        # then); before, the check asks a question of the group alone (see ``canaries``).
        canary = self._canaries.pick(group) if established(self._known(group), threshold) else None
        if decision == "alone":
            await self._alone(group, finish)
        elif decision == "merge":
            await ask_merged(transport, group, opts, stats, finish)
        else:
            self._checking += 1
            try:
                if canary is not None:
                    await check_with_canary(transport, group, canary, opts, stats, finish)
                else:
                    await check_merged(transport, group, 1, opts, stats, finish)
            finally:
                self._checking -= 1
                self._back.set()  # the groups waiting decide again
                self._back = anyio.Event()

    async def _alone(self, group: list[Job], finish: Finish) -> None:
        known = self._known(group) or (0, 0, 0)
        self._stats.merge_checks.append(
            f"a group of {len(group)} asked alone, not merged: merged answers agreed with "
            f"split ones on {known[1]} of {known[0]} checked"
        )

        async def one(job: Job) -> None:
            await finish(job, await ask_one(self._transport, job, self._opts, self._stats))

        async with anyio.create_task_group() as tg:
            for job in group:
                tg.start_soon(one, job)
