"""Re-planning: every decision of one call, taken in one object as what it sent comes back.

The planner (``planning``, ``opening``) is pure: questions, the policy and what is known
of the endpoint in, a plan out. A call's :class:`Replanner` holds what is known *during*
the call (``Evidence``: responses and header reports back, groups running, the first
merge check) and takes every decision the call makes from it; the runner
(``dispatch``) carries them out and reports back, and decides nothing:

* the opening of each batch (``opening``: commit to a plan, or a first wave alone);
* after a first wave, the plan worth committing to (``after_wave``);
* whether a plan's first merged group is the call's first merge check
  (``first_check_of``), and the plan of the rest once it is back;
* when sending a plan stops for a re-plan (``due_for``: a ``Due``) and what that
  re-plan says it was made after (``replan_trigger``);
* while re-planning, whether the next group may start now (``hold_until_sendable``);
* how each merged group after the first check goes (``send_for``: alone, merged
  unchecked, checked by a question of its own asked alone, or by a canary), from the
  checks back by then (``spotting``);
* what the report says was decided (``revise``: ``Report.revisions``).

``plan_batch``, ``open_plan``, ``commit_plan`` and ``plan_to_price`` are the planner
called with what the transport knows (its endpoint model, the limits' room, whether
the system prompt was sent before); ``Fanout.plan`` uses them for a dry run.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import anyio

from .. import telemetry as telemetry
from ..core import clock
from ..core.models import Answer
from ..core.plans import Budget, Plan, PlanRevision
from .agreement import CheckResult, established
from .call import CallOptions, CallStats
from .canaries import Canaries, Canary
from .intake import Job
from .opening import Opening, answer_lengths_known, open_batch, planning_room, room_in_doubt
from .planning import (
    PRIOR_ANSWER_TOKENS,
    estimate_groups,
    expected_answer_tokens,
    plan_jobs,
    question_tokens,
)
from .spotting import decide, spot_checked
from .structured import SCHEMA_FORMAT
from .transport import Transport

__all__ = [
    "Due",
    "Evidence",
    "FirstCheck",
    "GroupSend",
    "Replanner",
    "commit_plan",
    "open_plan",
    "plan_batch",
    "plan_to_price",
    "sent_until",
]


def plan_batch(
    transport: Transport, batch: list[Job], opts: CallOptions, budget: Budget | None = None
) -> Plan:
    """Plan a batch with what the transport knows: the endpoint model, the limits'
    room now (or ``budget``), and whether the call's system prompt was sent before."""
    return plan_jobs(
        batch,
        opts,
        endpoint=transport.learner.endpoint,
        budget=transport.limiter.budget() if budget is None else budget,
        max_concurrency=transport.limits.max_concurrency,
        shared_prompt_cached=transport.learner.has_sent_shared(opts.system),
        merge_format=transport.learner.merge_format(opts.policy),
    )


def open_plan(transport: Transport, batch: list[Job], opts: CallOptions) -> Opening:
    """The first plan of a batch: at once when its answer lengths and the limits' room
    are known (or the policy is not auto), else weighed under hypotheses of them
    (``opening``)."""
    budget = planning_room(transport.limiter.budget(), len(batch))
    known = answer_lengths_known(batch, opts, transport.learner.endpoint.answer_tokens)
    if opts.policy.mode != "auto" or (known and not room_in_doubt(budget, len(batch))):
        plan = plan_batch(transport, batch, opts, budget)
        return Opening(wave=0, plan=plan, uncertain=False)
    return open_batch(
        batch, opts, budget, lambda j, o, b: plan_batch(transport, j, o, b), lengths_known=known
    )


def plan_to_price(transport: Transport, batch: list[Job], opts: CallOptions, plan: Plan) -> Plan:
    """``plan`` as its cost is estimated before anything is sent (``Fanout.plan``): with
    the answer lengths unknown, its candidates at the documented assumption (200 tokens,
    at most ``max_tokens``) rather than at the short answers an opening may commit to:
    an estimate before spending should not be the cheapest case."""
    if answer_lengths_known(batch, opts, transport.learner.endpoint.answer_tokens):
        return plan
    priced = plan_batch(transport, batch, opts)
    same = [c for c in priced.candidates if c.label == plan.chosen.label]
    return dataclasses.replace(priced, chosen=same[0] if same else priced.chosen)


def commit_plan(opening: Opening) -> Plan:
    """The plan for all of an opening's questions: its own, or, if it would send a first
    wave, the best one to commit to instead."""
    if opening.wave and opening.fallback is not None:
        return opening.fallback
    return opening.plan


def sent_until(plan: Plan, in_flight: Iterable[tuple[float, list[Job]]]) -> float | None:
    """When the groups already sent (each with when it started) are expected back, by
    the estimate ``plan`` was made with: its endpoint model and the answer length it
    assumed, each group costed as the planner costs one (a merged one's overheads, and
    its questions asked again). None if there are none."""
    inputs = plan.inputs
    assumed = (
        sum(inputs.answer_tokens) / len(inputs.answer_tokens)
        if inputs.answer_tokens
        else PRIOR_ANSWER_TOKENS
    )
    ends = []
    ep = inputs.endpoint
    for at, group in in_flight:
        if len(group) == 1:  # what estimate_groups says of one request alone, directly
            prompt = inputs.shared_prompt_tokens + question_tokens(group[0])
            answer = expected_answer_tokens(group[0], assumed)
            ends.append(at + ep.request_s(max(1, prompt - inputs.cached_prompt_tokens), answer))
            continue
        alone = dataclasses.replace(
            inputs,
            question_tokens=[question_tokens(job) for job in group],
            answer_tokens=[expected_answer_tokens(job, assumed) for job in group],
            budget=Budget(),
            mergeable=[True] * len(group),
        )
        ends.append(at + estimate_groups([list(range(len(group)))], alone)[0])
    return max(ends, default=None)


def _alike(last: PlanRevision, new: PlanRevision) -> bool:
    """``new`` plans the next batch of an iterator as ``last`` planned the one before."""
    return (
        new.trigger == last.trigger == "next batch"
        and new.plan.chosen.label == last.plan.chosen.label
    )


def _checked(result: CheckResult | None) -> str:
    """The trigger of the plan made when the call's first merge check came back."""
    if result is None:
        return "merge check: failed"
    return (
        f"merge check: {result.agreed} of {result.compared} merged answers agreed with split ones"
    )


def _heard(answers: int, reports: int) -> str:
    return f"after the first wave: {answers} answer(s), {reports} header report(s)"


class Evidence:
    """Responses this call has had back, and a way to wait for more."""

    def __init__(self) -> None:
        self.count = 0
        self.reports = 0  # responses whose headers came (before their body, if streamed)
        self.running = 0  # groups started and not finished
        self.wave_back = 0  # requests of the current first wave that are back
        self._event = anyio.Event()
        self._waiting = 0  # tasks in changed(): with none, a response wakes nobody

    def _wake(self) -> None:
        if not self._waiting:  # no new Event per response when nobody waits (hot path)
            return
        self._event.set()
        self._event = anyio.Event()

    def add(self) -> None:
        self.count += 1
        self._wake()

    def poke(self) -> None:
        """Wake the waiters without counting a response (a canary learned)."""
        self._wake()

    def report(self) -> None:
        self.reports += 1
        self._wake()

    async def changed(self) -> None:
        self._waiting += 1
        try:
            await self._event.wait()
        finally:
            self._waiting -= 1


@dataclasses.dataclass
class FirstCheck:
    """The call's first merge checks: whether one is out (the groups after it are held
    until it is back), how many came back, and what the last one found."""

    out: bool = False
    back: int = 0
    result: CheckResult | None = None


@dataclasses.dataclass(frozen=True)
class Due:
    """When the groups of a plan stop being sent and the rest is planned again: the
    responses reached ``responses`` (answer lengths unknown: after a first wave's first
    answer, then each time they double), the endpoint reported its room after
    ``reports`` reports, or the first merge check came back after ``checks``."""

    responses: int | None = None
    reports: int | None = None
    checks: int | None = None

    @property
    def held(self) -> bool:
        """Whether any re-plan may come while the plan's groups are sent."""
        return self.responses is not None or self.checks is not None

    def reached(self, evidence: Evidence, check: FirstCheck) -> bool:
        return (
            (self.responses is not None and evidence.count >= self.responses)
            or (self.reports is not None and evidence.reports > self.reports)
            or (self.checks is not None and check.back > self.checks)
        )


@dataclass(frozen=True)
class GroupSend:
    """How a merged group goes (``Replanner.send_for``): ``"alone"`` (each question its
    own request; ``note`` says why, for the report), ``"merged"`` (unchecked),
    ``"checked"`` (merged and checked: by ``canary`` riding it, or else by its last
    question asked alone as well), or ``"held"`` (sent merged, its answers delivered
    only as ``Replanner.after_held`` decides once the checks in flight are back, with a
    ``canary`` riding it where one fits, which checks it for no request if it is one of
    those checked then)."""

    how: Literal["alone", "merged", "checked", "held"]
    canary: Canary | None = None
    note: str = ""


class Replanner:
    """One call's decisions, from what came back so far (see the module doc)."""

    def __init__(self, transport: Transport, opts: CallOptions, stats: CallStats) -> None:
        self.transport = transport
        self.opts = opts
        self.stats = stats
        self.evidence = Evidence()
        self.check = FirstCheck()
        self.started = 0.0  # the call's start on the engine's clock (set by the runner)
        self.first_batch = True  # the batch being planned is the call's first
        self._opening: Opening  # the last batch's (set by open_batch)
        self._canaries = Canaries()
        self._merged = 0  # merged groups sent unchecked or checked since established
        self._checking = 0  # spot checks in flight
        self._back = anyio.Event()  # set when a spot check comes back

    # --- what comes back ---------------------------------------------------------------
    def group_started(self) -> None:
        self.evidence.running += 1

    def group_back(self, *, wave: bool = False) -> None:
        """A started group is back (answered, failed or cancelled)."""
        if wave:
            self.evidence.wave_back += 1
        self.evidence.running -= 1
        self.evidence.add()

    def first_check_sent(self) -> None:
        self.check.out = True

    def first_check_back(self, result: CheckResult | None) -> None:
        """The call's first merge check is back (``result`` None: it failed)."""
        self.check.result = result
        self.check.out = False
        self.check.back += 1

    def finished(self, job: Job, answer: Answer) -> None:
        """A finished answer of the call: asked alone, it may serve as a canary (the
        first check's waiters are told, for a canary may change their plan)."""
        if self._learn(job, answer) and self.check.out:
            self.evidence.poke()

    def sampled(self, job: Job, answer: Answer) -> None:
        """A first check's question answered alone, back before its merged reply."""
        if self._learn(job, answer):
            self.evidence.poke()

    def _learn(self, job: Job, answer: Answer) -> bool:
        """Keep ``answer`` as a canary (True if kept). Only where groups are
        spot-checked: a split call's hot path keeps none."""
        return spot_checked(self.opts.policy) and self._canaries.learn(job, answer)

    def spot_check_back(self) -> None:
        """A spot check is back: the groups waiting for it decide again."""
        self._checking -= 1
        self._back.set()
        self._back = anyio.Event()

    # --- the plans ---------------------------------------------------------------------
    def open_batch(self, batch: list[Job]) -> Opening:
        """How the next batch opens: a plan for it, or a first wave alone first."""
        self.first_batch = not self.stats.revisions
        opening = self._opening = open_plan(self.transport, batch, self.opts)
        if opening.wave:
            self.evidence.wave_back = 0
        return opening

    def wave_trigger(self) -> str:
        """What a first wave's plan is made after (``Report.revisions``)."""
        unknown = "the limits' room" if self._opening.lengths_known else "answer lengths"
        return f"first wave: {unknown} unknown"

    def batch_trigger(self) -> str:
        """What a batch's plan is made after when it opens without a wave."""
        return "the call's questions" if self.first_batch else "next batch"

    def next_plan(self, pending: list[Job]) -> tuple[Plan, bool]:
        """The plan of the questions still waiting, committed to (no second wave), and
        whether it was made with their answer lengths unknown."""
        reopened = open_plan(self.transport, pending, self.opts)
        return commit_plan(reopened), reopened.uncertain

    def first_check_of(self, plan: Plan) -> tuple[list[int], int] | None:
        """The group ``plan`` lays out as the call's first merge check (its
        ``GroupCheck`` "first"): its positions and how many of its questions are asked
        alone as well; None if it has none, or one is out already."""
        if self.check.out:
            return None
        for positions, check in zip(plan.groups, plan.checks, strict=False):
            if check is not None and check.kind == "first":
                return positions, check.alone
        return None

    async def first_check_back_yet(self) -> str:
        """Wait until the first merge check is back; returns the trigger of the plan
        made then."""
        while self.check.out:
            await self.evidence.changed()
        return _checked(self.check.result)

    def revise(
        self,
        plan: Plan,
        trigger: str,
        questions: int,
        in_flight: Iterable[tuple[float, list[Job]]],
    ) -> int:
        """Record a decision for ``questions`` of the batch, with the groups ``in_flight``
        (each with when it started) as they stand (``Report.revisions``); return its place
        there. The call's plan (``Report.plan``) is the first batch's, past its wave."""
        stats, endpoint = self.stats, self.transport.learner.endpoint
        revision = PlanRevision(
            at_s=clock.now() - self.started,
            trigger=trigger,
            questions=questions,
            plan=plan,
            observations=endpoint.estimate().observations,
            answer_tokens=endpoint.answer_tokens,
            sent_until_s=sent_until(plan, in_flight),
        )
        last = stats.revisions[-1] if stats.revisions else None
        if last is not None and _alike(last, revision):
            # One decision for one more batch: a streamed call's report stays the size
            # of its decisions, not of its input (a revision per batch held each plan).
            stats.revisions[-1] = dataclasses.replace(
                revision,
                questions=last.questions + questions,
                batches=last.batches + 1,
                earlier_requests=last.requests,
            )
        else:
            stats.revisions.append(revision)
        if (self.first_batch and not trigger.startswith("first wave")) or stats.plan is None:
            stats.plan = plan
        telemetry.planned(plan)
        return len(stats.revisions) - 1

    def sent(self, revision: int, requests: int) -> None:
        """Record how many requests a revision sent before the next one replaced it."""
        revisions = self.stats.revisions
        revisions[revision] = dataclasses.replace(revisions[revision], requests_sent=requests)

    # --- while a plan is sent ----------------------------------------------------------
    def due_for(self, plan: Plan, adaptive: bool) -> Due:
        """When sending ``plan`` stops for a re-plan: a plan made before the endpoint
        reported its room is redone once it has; one made while the first merge check is
        out, once it is back."""
        evidence = self.evidence
        return Due(
            responses=max(2 * evidence.count, evidence.count + 2) if adaptive else None,
            reports=evidence.reports if not self.transport.limiter.budget().room_known else None,
            checks=self.check.back if self.check.out else None,
        )

    def holds(self, plan: Plan, due: Due) -> bool:
        """Whether ``plan``'s groups start only as each can be sent: while a re-plan may
        come, or while its merged groups are checked as they go (each then decides how
        it is checked, or whether it merges, with the checks back by then, and a canary
        learned meanwhile can ride it)."""
        checked_as_sent = spot_checked(self.opts.policy) and any(len(g) > 1 for g in plan.groups)
        return due.held or checked_as_sent

    def reached(self, due: Due) -> bool:
        return due.reached(self.evidence, self.check)

    def replan_trigger(self, due: Due) -> str:
        if due.checks is not None and not self.check.out:
            return _checked(self.check.result)
        learned = self.transport.learner.endpoint.answer_tokens
        known = (
            f"answers ~{learned:.0f} tokens"
            if learned is not None
            else "the limits' room reported, answer lengths not yet known"
        )
        return f"{self.evidence.count} responses in: {known}"

    async def after_wave(self, pending: list[Job], wave: int) -> tuple[Plan, str, bool]:
        """Wait for what the first wave tells (its first headers: the limits' room; its
        first answer: how long answers run), re-weighing the opening of the rest each
        time, until one plan is worth committing to; when the whole wave is back having
        taught nothing (it failed), or nothing comes in time, the best plan then."""
        transport, evidence = self.transport, self.evidence
        wait = transport.learner.endpoint.estimate().request_s(100, PRIOR_ANSWER_TOKENS)
        trigger = "no answer from the first wave in time"
        with anyio.move_on_after(max(5.0, 2 * wait)):
            while True:
                await evidence.changed()
                trigger = _heard(evidence.count, evidence.reports)
                reopened = open_plan(transport, pending, self.opts)
                if reopened.wave == 0:
                    return reopened.plan, trigger, reopened.uncertain
                if evidence.wave_back >= wave:  # all back, and still in doubt: no re-weighing
                    return commit_plan(reopened), trigger, True
        return commit_plan(open_plan(transport, pending, self.opts)), trigger, True

    async def hold_until_sendable(self, due: Due) -> None:
        """While re-planning, a group starts only when it could be sent now (a request
        slot free, the request limit's room): one started would wait committed to its
        plan. Returns early when the next re-plan is due."""
        transport, evidence = self.transport, self.evidence
        while not due.reached(evidence, self.check) and evidence.running > 0:
            budget = transport.limiter.budget()
            busy = evidence.running >= transport.limits.max_concurrency
            if not busy and (budget.rpm is None or budget.requests_now > 0):
                return
            # Looked at again within a tenth of the request pacing: a request slot
            # opens at most that late.
            pace = 6.0 / budget.rpm if budget.rpm and not busy else 1.0
            with anyio.move_on_after(max(0.005, min(pace, 1.0))):
                await evidence.changed()

    # --- each merged group -------------------------------------------------------------
    async def send_for(self, group: list[Job]) -> GroupSend:
        """How a merged group goes, decided as it can be sent (``spotting``): where
        auto checks merged answers, from the agreement counted by then; else merged.
        Where a few more agreeing checks would settle it and that many are in flight,
        the group is ``"held"``: sent merged now, and decided by ``after_held`` once
        they are back, before any of its answers is delivered. A ``"checked"`` group
        is a spot check in flight until ``spot_check_back``."""
        threshold = self.opts.policy.merge_agreement
        if not spot_checked(self.opts.policy) or threshold is None:
            return GroupSend("merged")
        known = self._known(group)
        decision = decide(known, threshold, merged=self._merged, checking=self._checking)
        if decision == "wait":
            # A canary rides every held group where one fits (its tokens, no request):
            # which of them are checked is known only as they are decided, in the order
            # their replies come back (``after_held``), and a held group checked with
            # none asks its last question alone.
            return GroupSend("held", canary=self._canaries.pick(group))
        return self._go(group, known, decision, threshold)

    async def after_held(self, held: GroupSend, group: list[Job]) -> GroupSend:
        """How a ``"held"`` group's merged reply, back, is taken: decided as ``send_for``
        would decide the group now, once the checks it waits for are back: its merged
        answers delivered (``"merged"``), checked (``"checked"``), or not taken, its
        questions asked alone (``"alone"``): the same rule, and the same count of
        groups since agreement was established (one in ``SPOT_CHECK_EVERY`` checked), as
        for a group sent then, in the order the held groups are decided. A checked held
        group is checked by the canary riding it if it has one and agreement is
        established, else by its last question asked alone now."""
        threshold = self.opts.policy.merge_agreement
        assert threshold is not None  # only auto's checked groups are held
        while True:
            known = self._known(group)
            decision = decide(known, threshold, merged=self._merged, checking=self._checking)
            if decision != "wait":
                break
            await self._back.wait()
        send = self._go(group, known, decision, threshold)
        if send.how != "checked":
            return send
        # Its request is gone: the canary that can check it is the one riding it.
        return GroupSend("checked", canary=held.canary if established(known, threshold) else None)

    def _go(
        self,
        group: list[Job],
        known: tuple[int, int, int] | None,
        decision: str,
        threshold: float,
    ) -> GroupSend:
        if decision != "alone" and established(known, threshold):
            self._merged += 1
        # A canary only where agreement is established (the one group in four checked
        # then); before, the check asks a question of the group alone (see ``canaries``).
        canary = self._canaries.pick(group) if established(known, threshold) else None
        if decision == "alone":
            counts = known or (0, 0, 0)
            return GroupSend(
                "alone",
                note=(
                    f"a group of {len(group)} asked alone, not merged: merged answers agreed "
                    f"with split ones on {counts[1]} of {counts[0]} checked"
                ),
            )
        if decision == "merge":
            return GroupSend("merged")
        self._checking += 1
        return GroupSend("checked", canary=canary)

    def _known(self, group: list[Job]) -> tuple[int, int, int] | None:
        fmt = (
            SCHEMA_FORMAT
            if group[0].structured is not None
            else self.transport.learner.merge_format(self.opts.policy)
        )
        return self.transport.learner.endpoint.merge_agreement(fmt)
