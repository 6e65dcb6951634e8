"""Merged groups under auto's merge check: which are spot-checked, and which go at all.

After a call's first merge check (``dispatch``), auto keeps checking: a merged group
also asks its last question alone and takes its merged answers only if that one
agrees (``execution.check_merged`` with a sample of one). How often, and whether a
group still merges, follows the agreement counted so far for the endpoint, model and
format (``EndpointModel.merge_agreement``, kept in its memory):

* until those counts *establish* agreement (``agreement.established``: the lower
  Wilson bound of the agreement rate, one-sided 95 %, at least
  ``Policy.merge_agreement``, and no merged answer ever another question's), every
  merged group is checked; once a merged answer has disagreed, at most
  :data:`UNVERIFIED_IN_FLIGHT` of them are in flight at once, so that what they find
  can still change what the next ones do (with a clean record so far they all go at
  once, the checks in flight counted as agreeing);
* a group that starts when the counts have fallen under the threshold (at least
  ``MERGE_CHECK_MIN`` compared) is not merged: its questions are asked alone, as the
  next plan would ask them;
* once agreement is established (checks in flight counted as agreeing), one merged
  group in :data:`SPOT_CHECK_EVERY` is checked, and the rest go unchecked, at once.
"""

from __future__ import annotations

import contextlib

import anyio

from ..core.config import SPOT_CHECK_EVERY, Policy
from .agreement import agreement_too_low, still_to_check
from .call import CallOptions, CallStats
from .execution import Finish, ask_merged, ask_one, check_merged, merge_format_for
from .intake import Job
from .structured import SCHEMA_FORMAT
from .transport import Transport

__all__ = ["UNVERIFIED_IN_FLIGHT", "SpotChecks", "spot_checked"]

UNVERIFIED_IN_FLIGHT = 2
"""Merged groups in flight at once while agreement is not yet established."""


def spot_checked(policy: Policy) -> bool:
    """Auto with the merge check on keeps checking merged groups."""
    return policy.mode == "auto" and policy.merge_agreement is not None


class SpotChecks:
    """One call's merged groups after its first merge check (see the module doc)."""

    def __init__(self, transport: Transport, opts: CallOptions, stats: CallStats) -> None:
        self._transport = transport
        self._opts = opts
        self._stats = stats
        self._started = 0  # merged groups started
        self._checking = 0  # spot checks in flight
        self._unverified = anyio.Semaphore(UNVERIFIED_IN_FLIGHT)

    def _known(self, group: list[Job]) -> tuple[int, int, int] | None:
        fmt = (
            SCHEMA_FORMAT
            if group[0].structured is not None
            else merge_format_for(self._transport, self._opts.policy)
        )
        return self._transport.endpoint.merge_agreement(fmt)

    def _needed(self, group: list[Job]) -> int | None:
        """Agreeing checks still wanted beyond those in flight (None: no number will do)."""
        threshold = self._opts.policy.merge_agreement
        assert threshold is not None
        needed = still_to_check(self._known(group), threshold)
        return None if needed is None else max(0, needed - self._checking)

    async def run(self, group: list[Job], finish: Finish) -> None:
        """Send one merged group: checked, unchecked, or, where merging has been seen
        to answer badly here, each of its questions alone."""
        nth, self._started = self._started, self._started + 1
        transport, opts, stats = self._transport, self._opts, self._stats
        if not spot_checked(opts.policy):
            await ask_merged(transport, group, opts, stats, finish)
            return
        known = self._known(group)
        doubted = known is not None and known[1] < known[0]  # a merged answer disagreed
        gate = (
            self._unverified if doubted and self._needed(group) != 0 else contextlib.nullcontext()
        )
        async with gate:
            threshold = opts.policy.merge_agreement
            assert threshold is not None
            if agreement_too_low(self._known(group), threshold):
                await self._alone(group, finish)
            elif self._needed(group) != 0 or nth % SPOT_CHECK_EVERY == 0:
                self._checking += 1
                try:
                    await check_merged(transport, group, 1, opts, stats, finish)
                finally:
                    self._checking -= 1
            else:
                await ask_merged(transport, group, opts, stats, finish)

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
