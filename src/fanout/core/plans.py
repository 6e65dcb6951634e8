"""What a plan is made of and what it says: the planner's inputs and its outputs.

Plain data, shared by the planner (``engine/planning.py``), the endpoint model that feeds it
(``endpoint/model.py``), the limiters that report their room (``Budget``) and the report that
shows the plan (``_models.Report``). Imports nothing of fanout's but the money's
plain data (``CostEstimate``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

from .money import CostEstimate  # plain data too

__all__ = [
    "Budget",
    "Candidate",
    "EndpointEstimate",
    "GroupCheck",
    "MergeChecks",
    "Plan",
    "PlanInputs",
    "PlanRevision",
]


@dataclass(frozen=True)
class EndpointEstimate:
    """What the planner believes about the endpoint.

    A request with ``p`` prompt tokens and ``c`` completion tokens, during whose
    life other requests holding ``P`` prompt and ``C`` completion tokens finish,
    takes ``rtt + p * prefill + c * decode + P * prefill_wait + C * decode_wait``.
    On a server that serializes, a request waits for the whole work of the ones
    ahead of it (``*_wait`` about equal to ``prefill`` and ``decode``); on a
    continuous-batching server they run together and barely delay each other
    (``*_wait`` near 0). The learned model (:class:`~fanout.planning.EndpointModel`)
    ties the two: ``*_wait = s * speed``, with one slowdown ``s`` in [0, 1].
    """

    rtt_s: float
    """Fixed time per request: network, queueing, scheduling."""
    prefill_s_per_token: float
    decode_s_per_token: float
    """Decode time per output token for a request running alone."""
    prefill_wait_s_per_token: float
    """Delay per prompt token of the requests that finish during a request's life."""
    decode_wait_s_per_token: float
    """Delay per completion token of the requests that finish during a request's life."""
    observations: int
    prefix_cache: bool = False
    """The endpoint reuses the start of prompts it has processed (it reported cached
    prompt tokens, or a profile found it): a shared prompt sent before is not
    prefilled again. The prefill terms count only the tokens that are processed."""
    merge_failure_rate: float = 0.0
    """The share of a merged request's questions whose answer does not come back
    whole and is asked again alone (learned from this endpoint's merged replies)."""
    slots: int | None = None
    """How many requests the endpoint runs at once (a server's parallel slots: a
    request beyond them queues until one of them finishes), learned from latencies
    that grow in steps of whole answers; None: no limit seen."""

    @property
    def slowdown_per_request(self) -> float:
        """How much one equal request finishing first delays another: about 0 on a
        continuous-batching server, about 1 on one that serializes."""
        work = self.prefill_s_per_token * 100 + self.decode_s_per_token * 100
        wait = self.prefill_wait_s_per_token * 100 + self.decode_wait_s_per_token * 100
        return wait / work if work > 0 else 0.0

    def request_s(
        self,
        prompt_tokens: float,
        completion_tokens: float,
        others_prompt: float = 0.0,
        others_completion: float = 0.0,
    ) -> float:
        """Estimated latency of one request, given the work that finishes before it."""
        return (
            self.rtt_s
            + prompt_tokens * self.prefill_s_per_token
            + completion_tokens * self.decode_s_per_token
            + others_prompt * self.prefill_wait_s_per_token
            + others_completion * self.decode_wait_s_per_token
        )


@dataclass(frozen=True)
class Budget:
    """Rate-limit room, as the planner sees it."""

    requests_now: float = math.inf
    tokens_now: float = math.inf
    rpm: float | None = None
    tpm: float | None = None
    paused_s: float = 0.0
    room_known: bool = True
    """False until the endpoint has reported its room (``x-ratelimit-remaining-*``):
    ``requests_now`` is then the even pacing's, and the endpoint may well take more
    at once."""
    burst_seen: float = 0.0
    """The most requests the endpoint has reported room for at once (its
    ``remaining`` plus one), here or in an earlier process (the endpoint memory): 0
    if it never has."""
    first_alone: bool = False
    """The limiter holds every request after the first until the first one's headers
    have come (no ``Limits`` configured, and nothing sent yet: they say whether there
    is a limit at all): the planner costs that wait for all but the first request."""


@dataclass(frozen=True)
class PlanInputs:
    """Everything a plan was computed from (for the report and for dry runs)."""

    question_tokens: list[int]
    shared_prompt_tokens: int
    answer_tokens: list[int]
    endpoint: EndpointEstimate
    budget: Budget
    max_concurrency: int
    mergeable: list[bool]
    cached_prompt_tokens: int = 0
    """Prompt tokens at the start of every request the endpoint is expected to take
    from its cache (the shared prompt, sent before to an endpoint that caches
    prefixes): counted in the tokens, not in the prefill time."""
    merge_prompt_per_question: float | None = None
    """Prompt tokens a merged request adds per question beyond the questions' own (its
    instructions, tags and schema), as learned from the usage of merged requests here;
    None: the planner's prior."""
    merge_answer_overhead: float | None = None
    """Completion tokens a merged reply adds per answer beyond the answer (its key or
    tag and the question's words it carries), as learned here; None: the prior."""
    merge_checks: MergeChecks | None = None
    """The merge checks merged groups would make (auto with ``Policy.merge_agreement``),
    costed with them; None: merged groups are sent unchecked."""


@dataclass(frozen=True)
class MergeChecks:
    """What the merge checks of a plan's merged groups cost (``engine/spotting.py``),
    assuming they agree: the first merged group asked both ways, a sample of it alone
    (``first``); then one question alone beside each merged group until the agreement
    counted (``counts``: compared, agreed, misattributed) is established at
    ``threshold``. Their requests and tokens are costed, not the waits for them."""

    first: bool
    counts: tuple[int, int, int]
    threshold: float


@dataclass(frozen=True)
class GroupCheck:
    """How a plan's merged group is checked against split answers, as planned (and
    costed) from the merge checks known when the plan was made (``MergeChecks``):

    * ``"first"``: the call's first merge check: ``alone`` of its questions are asked
      alone as well, and the groups after it wait for the comparison;
    * ``"spot"``: its last question is asked alone as well (``alone`` 1), until the
      checks establish agreement;
    * ``"sentinel"``: agreement established, one merged group in ``SPOT_CHECK_EVERY``
      is still checked: by a question of the call answered before riding it (a canary,
      no request of its own), else by its last question asked alone;
    * ``"none"``: merged and unchecked (agreement established, or no checks: the
      policy merges, or ``Policy(merge_agreement=None)``).

    Groups after the first check go as the call's ``Replanner`` decides when each can
    be sent, with the checks back by then (``engine/spotting.py``): a spot check may
    wait for those in flight, a group may go alone when agreement turned out low, and
    sentinels start once agreement is established, which may come sooner or later
    than planned."""

    kind: Literal["first", "spot", "sentinel", "none"]
    alone: int = 0
    """Questions of the group also asked alone (a sentinel's canary is not counted)."""


@dataclass(frozen=True)
class Candidate:
    """One way to send the questions, and what it is estimated to cost."""

    label: str
    group_size: int
    requests: int
    est_wall_s: float
    est_prompt_tokens: int
    est_completion_tokens: int
    est_limit_wait_s: float
    check_requests: int = 0
    """The requests its merge checks add, as laid out when it was costed (questions of
    its merged groups asked alone as well, see :class:`GroupCheck`); ``requests``
    counts the plan's own. The estimates count both."""

    @property
    def est_tokens(self) -> int:
        return self.est_prompt_tokens + self.est_completion_tokens

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "group_size": self.group_size,
            "requests": self.requests,
            "check_requests": self.check_requests,
            "est_wall_s": round(self.est_wall_s, 4),
            "est_prompt_tokens": self.est_prompt_tokens,
            "est_completion_tokens": self.est_completion_tokens,
            "est_limit_wait_s": round(self.est_limit_wait_s, 4),
        }


@dataclass(frozen=True)
class Plan:
    """The chosen partition of the questions into requests, and why."""

    groups: list[list[int]]
    """Question positions (within the planned batch) per request, in order."""
    chosen: Candidate
    candidates: list[Candidate]
    reason: str
    mode: str
    objective: str
    inputs: PlanInputs = field(repr=False)
    uncapped: Candidate | None = None
    """When ``Policy.max_group_size`` made this plan much slower (1.5x or more) than
    larger groups would be: the fastest plan above the cap (not followed)."""
    merge_check: bool = False
    """Its merged groups are not yet known to answer as well as split requests do here:
    the first is checked against split answers before the rest go
    (``Policy.merge_agreement``)."""
    estimates: list[CostEstimate] = field(default_factory=list)
    """What each candidate would cost, and the split and chosen ones at the flex and
    batch tiers (``Fanout.plan`` fills it in: see docs/cost.md)."""
    checks: tuple[GroupCheck | None, ...] = ()
    """How each of ``groups`` is checked, in their order (None: a group of one
    question, asked alone); empty for a plan made without its checks laid out."""

    @property
    def mode_label(self) -> str:
        return self.chosen.label

    def checks_planned(self) -> dict[str, int]:
        """How many merged groups are planned for each kind of :class:`GroupCheck`."""
        counts: dict[str, int] = {}
        for check in self.checks:
            if check is not None:
                counts[check.kind] = counts.get(check.kind, 0) + 1
        return counts


@dataclass(frozen=True)
class PlanRevision:
    """One decision of a call's control loop: when it was made, what prompted it, and
    the plan it made for the questions not yet sent."""

    at_s: float
    """Seconds since the call started."""
    trigger: str
    """What prompted it: the start of the call (or of a batch of an iterator), the
    answers of a first wave, more responses since the last plan."""
    questions: int
    """Questions the plan covers: those not sent yet."""
    plan: Plan
    observations: int
    """Responses the endpoint model had learned from at the time."""
    answer_tokens: float | None
    """The answer length it had learned (None: unknown)."""
    sent_until_s: float | None = None
    """When the requests already sent and not yet answered were expected to be, by the
    same estimate as the plan (seconds since the call started; None: none were)."""
    requests_sent: int | None = None
    """The requests of this plan that were sent before the next revision re-planned the
    rest (None: all of them)."""
    batches: int = 1
    """The batches of an iterator's input this decision stands for. Consecutive batches
    planned alike (``"next batch"``, the same candidate chosen) are one revision, so
    that a streamed call's report does not grow with its input: ``at_s``, ``plan``
    and the estimates are the last batch's, ``questions`` and ``requests`` count them
    all."""
    earlier_requests: int = 0
    """The requests of the earlier batches this revision stands for."""

    @property
    def requests(self) -> int:
        """The requests this revision sent (or will send)."""
        own = self.plan.chosen.requests if self.requests_sent is None else self.requests_sent
        return self.earlier_requests + own

    @property
    def on_priors(self) -> bool:
        """Whether its estimate rests on priors alone: no response of the endpoint had
        been measured when it was made (its speed and answer lengths are assumptions)."""
        return self.observations == 0

    @property
    def est_end_s(self) -> float:
        """When it expected its questions to be answered, since the call started."""
        return self.at_s + self.plan.chosen.est_wall_s

    def as_dict(self) -> dict[str, Any]:
        return {
            "at_s": round(self.at_s, 4),
            "trigger": self.trigger,
            "questions": self.questions,
            "plan": self.plan.chosen.label,
            "requests": self.plan.chosen.requests,
            "batches": self.batches,
            "est_wall_s": round(self.plan.chosen.est_wall_s, 4),
            "estimate": "priors" if self.on_priors else "measured",
            "observations": self.observations,
            "answer_tokens": None if self.answer_tokens is None else round(self.answer_tokens, 1),
            "sent_until_s": None if self.sent_until_s is None else round(self.sent_until_s, 4),
            "requests_sent": self.requests_sent,
            "checks": self.plan.checks_planned(),
            "reason": self.plan.reason,
        }
