"""The cost model: choose split, merge or groups in between, and say why.

A *plan* partitions the questions into requests: a group of one is a split call,
a group of several a merged call. For each candidate group size the planner
estimates the wall time and the tokens, from

* the questions: prompt tokens of each, and of the shared prefix (system prompt);
* the answers: expected tokens per answer (a hint, else learned, else a prior);
* the endpoint, learned online from every response (:class:`EndpointModel`):
  round trip, prefill time per prompt token, decode time per output token, and how
  much each request already in flight slows a new one (about 0 on a
  continuous-batching server, about 1 on one that serializes);
* the limits: requests and tokens that may go now, the per-minute rates after
  that, and the concurrency cap.

Everything here is pure computation: no I/O, no clocks.
"""

from __future__ import annotations

import bisect
import dataclasses
import heapq
import logging
import math

from ..core.config import DEFAULT_MERGE_AGREEMENT, MERGE_CHECK_MIN, SPOT_CHECK_EVERY, Policy
from ..core.params import answer_cap
from ..core.plans import Budget, Candidate, GroupCheck, MergeChecks, Plan, PlanInputs
from ..endpoint.model import EndpointModel
from ..endpoint.tokens import estimate_text_tokens
from .agreement import CONFIDENCE, agreement_too_low, check_sample, still_to_check
from .call import CallOptions
from .intake import Job
from .structured import SCHEMA_FORMAT

__all__ = [
    "ANCHOR_TOKENS",
    "MERGE_ANSWER_OVERHEAD",
    "MERGE_PROMPT_OVERHEAD",
    "MERGE_PROMPT_PER_QUESTION",
    "PRIOR_ANSWER_TOKENS",
    "check_layout",
    "estimate_groups",
    "expected_answer_tokens",
    "make_plan",
    "merge_answer_extra",
    "merge_blocked",
    "merge_prompt_extra",
    "plan_jobs",
    "question_tokens",
]

log = logging.getLogger("fanout")

# create() parameters that change what one reply holds: with them, never merge (a
# structured response_format merges under a composed schema: see merge_blocked).
_UNMERGEABLE_PARAMS = frozenset(
    {
        "tools",
        "functions",
        "tool_choice",
        "n",
        "logprobs",
        "top_logprobs",
        "stop",
    }
)

# Tokens a merged request adds: the instructions once, and a tag (and JSON
# punctuation) per question in the prompt and per answer in the reply; with the JSON
# format, its response schema is billed as prompt too: a fixed part, and per question
# a property whose key (the tag and the question's first line) appears twice, as a
# property and in ``required``.
MERGE_PROMPT_OVERHEAD = 60
MERGE_PROMPT_PER_QUESTION = 6
MERGE_SCHEMA_OVERHEAD = 25
MERGE_SCHEMA_PER_QUESTION = 8
MERGE_ANSWER_OVERHEAD = 8
PRIOR_ANSWER_TOKENS = 200


def _group_sizes_to_try(n: int, cap: int) -> list[int]:
    sizes = {1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 25, 32, 40, 50, 64, 100, 128, 256, n}
    return sorted(s for s in sizes if 1 <= s <= min(n, cap))


def _partition(indices: list[int], size: int) -> list[list[int]]:
    """Contiguous groups of near-equal size, at most ``size`` each."""
    if not indices:
        return []
    m = math.ceil(len(indices) / size)
    base, extra = divmod(len(indices), m)
    groups, start = [], 0
    for g in range(m):
        length = base + (1 if g < extra else 0)
        groups.append(indices[start : start + length])
        start += length
    return groups


ANCHOR_TOKENS = 24
"""At most this many of a question's tokens are carried with its merged answer (the
anchor: its first line, cut at ``merging.ANCHOR_CHARS`` characters)."""


def merge_prompt_extra(inputs: PlanInputs, group: list[int]) -> float:
    """The prompt tokens a merged request of ``group`` adds to its questions': learned
    per question where merged requests were seen, else the prior (instructions, and
    per question its tag; the JSON format's schema, which carries each question's
    anchor twice)."""
    if inputs.merge_prompt_per_question is not None:
        return inputs.merge_prompt_per_question * len(group)
    anchors = sum(min(inputs.question_tokens[i], ANCHOR_TOKENS) for i in group)
    fixed = MERGE_PROMPT_OVERHEAD + MERGE_SCHEMA_OVERHEAD
    per_question = MERGE_PROMPT_PER_QUESTION + MERGE_SCHEMA_PER_QUESTION
    return fixed + per_question * len(group) + 2 * anchors


def merge_answer_extra(inputs: PlanInputs, group: list[int]) -> float:
    """The completion tokens a merged reply adds to its answers': learned per answer
    where merged replies were seen (the anchors, the question's words each answer
    carries, included), else the prior."""
    if inputs.merge_answer_overhead is not None:
        return inputs.merge_answer_overhead * len(group)
    return MERGE_ANSWER_OVERHEAD * len(group)


def estimate_groups(groups: list[list[int]], inputs: PlanInputs) -> tuple[float, int, int, float]:
    """(wall seconds, prompt tokens, completion tokens, time spent waiting on limits):
    the requests the groups make, when the limits let each leave, and how they run
    through the concurrency cap and the endpoint's slots."""
    work = _requests(_with_checks(groups, inputs.merge_checks), inputs)
    releases = _releases(work.requests, work.prefilled, inputs)
    wall, waited = _run(work, releases, inputs)
    return wall, work.prompt_total, work.completion_total, waited


@dataclasses.dataclass
class _Work:
    """The requests of a plan: each one's prompt and answer tokens, the prompt tokens it
    has to process (less what the endpoint has cached), and the time of its re-asks."""

    requests: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    prefilled: list[int] = dataclasses.field(default_factory=list)
    reask_s: list[float] = dataclasses.field(default_factory=list)
    prompt_total: int = 0
    completion_total: int = 0


def _requests(groups: list[list[int]], inputs: PlanInputs) -> _Work:
    """The groups as requests. A merged request's questions whose answer does not come
    back whole are asked again alone once it has finished: the time of that second
    round, weighed by the chance it is needed, and its expected tokens."""
    ep = inputs.endpoint
    work = _Work()
    reask_p = reask_c = 0.0
    fail = min(1.0, max(0.0, ep.merge_failure_rate))
    for group in groups:
        merged = len(group) > 1
        p = inputs.shared_prompt_tokens + sum(inputs.question_tokens[i] for i in group)
        c = sum(inputs.answer_tokens[i] for i in group)
        extra = 0.0
        if merged:
            p += round(merge_prompt_extra(inputs, group))
            c += round(merge_answer_extra(inputs, group))
            if fail > 0:
                k = len(group)
                alone_p = inputs.shared_prompt_tokens + (p - inputs.shared_prompt_tokens) / k
                alone_c = sum(inputs.answer_tokens[i] for i in group) / k
                again = max(1.0, fail * k)  # questions asked again, if any is
                work_p = max(1.0, alone_p - inputs.cached_prompt_tokens)
                extra = (1 - (1 - fail) ** k) * ep.request_s(
                    work_p, alone_c, (again - 1) * work_p, (again - 1) * alone_c
                )
                reask_p += fail * k * alone_p
                reask_c += fail * k * alone_c
        work.requests.append((p, c))
        work.prefilled.append(max(1, p - inputs.cached_prompt_tokens))
        work.reask_s.append(extra)
    work.prompt_total = sum(p for p, _ in work.requests) + round(reask_p)
    work.completion_total = sum(c for _, c in work.requests) + round(reask_c)
    return work


def _releases(
    requests: list[tuple[int, int]], prefilled: list[int], inputs: PlanInputs
) -> list[float]:
    """When may each request leave, given the request and token budgets? Room the
    endpoint has not reported yet (a hypothesis, or a burst remembered from an earlier
    process) is not spent before it does: the limiter streams the first request and
    sends the others at the even pacing's slots until its headers come."""
    ep, budget = inputs.endpoint, inputs.budget
    reported_at: float | None = None
    if budget.rpm and not budget.room_known and budget.requests_now > 1 and requests:
        reported_at = ep.request_s(prefilled[0], 1)
    # With no limits configured, the others wait for the first request's headers (they
    # say whether there is a limit, and its room) before they go at all: a round trip,
    # as a streamed reply's headers may come before its first token (the simulator sends
    # them once it has taken the request); costing the first token's time would be more.
    headers_at = ep.rtt_s if budget.first_alone and requests else None
    releases: list[float] = []
    tokens_used = 0.0
    for j, (p, c) in enumerate(requests):
        t = budget.paused_s
        if budget.rpm and j + 1 > budget.requests_now:
            t = max(t, budget.paused_s + (j + 1 - budget.requests_now) * 60.0 / budget.rpm)
        elif budget.rpm and j > 0 and reported_at is not None:
            t = max(t, budget.paused_s + min(reported_at, j * 60.0 / budget.rpm))
        if j > 0 and headers_at is not None:
            t = max(t, budget.paused_s + headers_at)
        tokens_used += p + c
        if budget.tpm and tokens_used > budget.tokens_now:
            t = max(t, budget.paused_s + (tokens_used - budget.tokens_now) * 60.0 / budget.tpm)
        # The limiter lets requests go in order: none before the one ahead of it (which
        # may wait for the first headers while this one's pacing slot comes sooner).
        releases.append(max(t, releases[-1]) if releases else t)
    return releases


class _InFlight:
    """The requests running at a moment of the estimate: each one's finish, and their
    prompt and answer tokens in all (what a request starting then runs beside)."""

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, int]] = []  # (finish, p, c)
        self.p = 0.0
        self.c = 0.0

    def __len__(self) -> int:
        return len(self.heap)

    def pop(self) -> float:
        """Take out the request that finishes first; return its finish."""
        finish, p, c = heapq.heappop(self.heap)
        self.p -= p
        self.c -= c
        return finish

    def retire(self, until: float) -> None:
        """Take out the requests finished by ``until``."""
        while self.heap and self.heap[0][0] <= until:
            self.pop()

    def push(self, finish: float, p: int, c: int) -> None:
        heapq.heappush(self.heap, (finish, p, c))
        self.p += p
        self.c += c


def _run(work: _Work, releases: list[float], inputs: PlanInputs) -> tuple[float, float]:
    """(wall, time waited on limits): the requests run through the concurrency cap:
    request j starts when released and a slot is free. The requests in flight when it
    starts, and those released before it would finish alone, overlap it; for the wall
    time (the slowest request) count their work as finishing first."""
    ep = inputs.endpoint
    timed = [(q, c) for q, (_, c) in zip(work.prefilled, work.requests, strict=True)]
    prefix_p = [0.0]
    prefix_c = [0.0]
    for p, c in timed:
        prefix_p.append(prefix_p[-1] + p)
        prefix_c.append(prefix_c[-1] + c)
    active = _InFlight()
    wall = 0.0
    waited = 0.0
    # A request beyond the endpoint's slots waits for one as it would for the cap, and
    # the endpoint's queue takes them in order: none starts before the one ahead of it.
    cap = min(inputs.max_concurrency, ep.slots or inputs.max_concurrency)
    queue = cap < inputs.max_concurrency
    started = 0.0
    for j, ((p, c), release) in enumerate(zip(timed, releases, strict=True)):
        start = max(release, started) if queue else release
        active.retire(start)
        if len(active) >= cap:
            start = max(start, active.pop())
            active.retire(start)
        started = start
        alone = ep.request_s(p, c)
        end = bisect.bisect_left(releases, start + alone, lo=j + 1)
        end = min(end, j + 1 + max(0, cap - 1 - len(active)))
        others_p = active.p + prefix_p[end] - prefix_p[j + 1]
        others_c = active.c + prefix_c[end] - prefix_c[j + 1]
        finish = start + ep.request_s(p, c, others_p, others_c)
        active.push(finish, p, c)
        wall = max(wall, finish + work.reask_s[j])
        waited += release
    return wall, waited


def check_layout(groups: list[list[int]], checks: MergeChecks | None) -> list[GroupCheck | None]:
    """How each of ``groups`` is checked (:class:`GroupCheck`; None for a group of one),
    planned from the merge checks known (``checks``; None: merged groups go unchecked),
    assuming every check agrees: the first merged group is the first check when one is
    due, the next merged groups are spot-checked until the counts would establish
    agreement, then one in ``SPOT_CHECK_EVERY`` is a sentinel."""
    layout: list[GroupCheck | None] = []
    compared, agreed, wrong = checks.counts if checks is not None else (0, 0, 0)
    merged_groups = sum(len(g) > 1 for g in groups)
    first_due = checks is not None and checks.first
    spot: int | None = None  # spot checks still to go (None: counted after the first)
    since = 0  # merged groups since agreement would be established
    for group in groups:
        if len(group) == 1:
            layout.append(None)
            continue
        if checks is None:
            layout.append(GroupCheck("none"))
            continue
        if first_due:
            first_due = False
            sample = check_sample(len(group), more=merged_groups > 1)
            compared, agreed = compared + sample, agreed + sample
            layout.append(GroupCheck("first", alone=sample))
            continue
        if spot is None:
            needed = still_to_check((compared, agreed, wrong), checks.threshold)
            spot = merged_groups if needed is None else needed
        if spot > 0:
            spot -= 1
            layout.append(GroupCheck("spot", alone=1))
            continue
        layout.append(GroupCheck("sentinel" if since % SPOT_CHECK_EVERY == 0 else "none"))
        since += 1
    return layout


def _with_checks(groups: list[list[int]], checks: MergeChecks | None) -> list[list[int]]:
    """The requests of a plan with those its merge checks add, in the order they go
    (:func:`check_layout`): the first check's group and its sample alone go first, each
    spot-checked group is followed by its last question alone; a sentinel's canary
    rides its group and adds no request. Their requests and tokens are costed; the
    waits for them are not: made before the endpoint's speed is measured, a plan would
    cost a wait for one merged reply from the priors' decode speed, and on the
    simulator's cold one-shot (200 three-token answers under a tight request limit)
    that tipped auto into splitting the whole call at three times the time."""
    if checks is None:
        return groups
    first: list[list[int]] = []
    rest: list[list[int]] = []
    for group, check in zip(groups, check_layout(groups, checks), strict=True):
        if check is not None and check.kind == "first":
            first = [group, *([i] for i in group[-check.alone :])]
            continue
        rest.append(group)
        if check is not None and check.kind == "spot":
            rest.append(group[-1:])
    return first + rest


_CAP_NOTE_RATIO = 1.5  # the cap is worth a note when it makes the plan this much slower


def _candidate(
    size: int, mergeable: list[int], alone: list[list[int]], inputs: PlanInputs
) -> tuple[Candidate, list[list[int]]]:
    groups = _partition(mergeable, size) + alone
    groups.sort(key=lambda g: g[0])
    wall, p, c, waited = estimate_groups(groups, inputs)
    if size == 1 or len(mergeable) <= 1:
        label = "split"
    elif size >= len(mergeable):
        label = "merge"
    else:
        label = f"groups of {size}"
    checks = check_layout(groups, inputs.merge_checks)
    candidate = Candidate(
        label=label,
        group_size=size,
        requests=len(groups),
        check_requests=sum(c.alone for c in checks if c is not None),
        est_wall_s=wall,
        est_prompt_tokens=p,
        est_completion_tokens=c,
        est_limit_wait_s=waited,
    )
    return candidate, groups


def make_plan(inputs: PlanInputs, policy: Policy) -> Plan:
    """Choose a plan for ``inputs`` under ``policy`` (pure; no I/O)."""
    n = len(inputs.question_tokens)
    mergeable = [i for i in range(n) if inputs.mergeable[i]]
    alone = [[i] for i in range(n) if not inputs.mergeable[i]]
    most = max(1, len(mergeable))
    cap = min(policy.max_group_size or most, most)
    if policy.mode == "split":
        sizes = [1]
    elif policy.mode == "merge":
        sizes = [cap]
    else:
        sizes = _group_sizes_to_try(most, cap)
    candidates = [_candidate(size, mergeable, alone, inputs) for size in sizes]

    fastest = min(c.est_wall_s for c, _ in candidates)
    within = [(c, g) for c, g in candidates if c.est_wall_s <= fastest * (1 + policy.slack) + 1e-9]
    if policy.mode != "auto":
        chosen, groups = candidates[0]
    elif policy.objective == "latency":
        # The fastest; among near-ties, the cheapest; then the fewest requests.
        chosen, groups = min(
            within, key=lambda cg: (cg[0].est_tokens, cg[0].requests, cg[0].est_wall_s)
        )
    else:
        chosen, groups = min(within, key=lambda cg: (cg[0].est_tokens, cg[0].est_wall_s))
    uncapped = None
    if policy.mode != "split" and cap < most and chosen.group_size == cap:
        # The cap binds: would larger groups be much faster? Then the report says so.
        above = [s for s in _group_sizes_to_try(most, most) if s > cap]
        best = min(
            (_candidate(s, mergeable, alone, inputs)[0] for s in above), key=lambda c: c.est_wall_s
        )
        if chosen.est_wall_s > _CAP_NOTE_RATIO * best.est_wall_s:
            uncapped = best
    reason = _reason(chosen, [c for c, _ in candidates], inputs, policy)
    if uncapped is not None:
        reason += (
            f" Merged requests are capped at {cap} questions for answer quality "
            f"(Policy.max_group_size); {uncapped.label} would take an estimated "
            f"{uncapped.est_wall_s:.2f}s instead of {chosen.est_wall_s:.2f}s "
            "(Policy(max_group_size=None) lifts the cap)."
        )
    return Plan(
        groups=groups,
        chosen=chosen,
        candidates=[c for c, _ in candidates],
        reason=reason,
        mode=policy.mode,
        objective=policy.objective,
        inputs=inputs,
        uncapped=uncapped,
    )


def _slots_said(slots: int | None) -> str:
    """The endpoint's learned slots, for a plan's reason (nothing when none are)."""
    if slots is None:
        return ""
    return f", {slots} slot{'s' if slots != 1 else ''} learned"


def _reason(
    chosen: Candidate, candidates: list[Candidate], inputs: PlanInputs, policy: Policy
) -> str:
    what = f"{chosen.label} ({chosen.requests} request{'s' if chosen.requests != 1 else ''})"
    if policy.mode != "auto":
        return f"{what}: policy mode {policy.mode!r} was asked for."
    others = [c for c in candidates if c is not chosen]
    if not others:
        return f"{what}: the only possible plan for {len(inputs.question_tokens)} question(s)."
    split = next((c for c in candidates if c.group_size == 1), None)
    merge = max(candidates, key=lambda c: c.group_size)
    ep = inputs.endpoint
    one_slot = ep.slots == 1
    serial = ep.slowdown_per_request >= 0.5 or one_slot
    if chosen.group_size == 1:
        if one_slot:
            why = (
                "a merged reply would be no faster on an endpoint that runs one request at "
                "a time (1 slot learned): it writes every answer, and their anchors, in a row"
            )
        elif not serial:
            why = "the endpoint decodes concurrent requests in parallel"
        else:
            why = "the answers are long enough that parallel requests still finish first"
        if inputs.cached_prompt_tokens:
            why += f", and it has the shared prompt ({inputs.cached_prompt_tokens} tokens) cached"
        if inputs.merge_checks is not None and merge.est_wall_s <= chosen.est_wall_s * (
            1 + policy.slack
        ):
            # A tie that the checks make: say so, not a speed the estimate did not weigh.
            return (
                f"{what}: estimated {chosen.est_wall_s:.2f}s against {merge.est_wall_s:.2f}s "
                f"for {merge.label}, which would save no time here: merged answers are not yet "
                "known to agree with split ones, and the merge checks would ask questions of "
                "the merged groups alone as well "
                "(Policy.merge_agreement; Policy(merge_agreement=None) merges unchecked)."
            )
        return (
            f"{what}: estimated {chosen.est_wall_s:.2f}s against {merge.est_wall_s:.2f}s for "
            f"{merge.label}, because {why} (slowdown per request in flight "
            f"{ep.slowdown_per_request:.2f}{_slots_said(ep.slots)})."
        )
    causes = []
    if split is not None and split.est_limit_wait_s > 0.25 * split.est_wall_s * split.requests:
        causes.append("the rate limits would hold split requests back")
    if serial:
        causes.append("the endpoint does not run requests in parallel")
    if split is not None and chosen.est_tokens < split.est_tokens:
        causes.append(
            f"it needs {split.est_tokens - chosen.est_tokens} fewer tokens (the shared prompt is paid once)"
        )
    if split is not None and chosen.est_wall_s < split.est_wall_s and not causes:
        causes.append("round trips dominate such short answers")
    because = "; ".join(causes) or "it is the best trade-off of time and tokens"
    versus = (
        f" against {split.est_wall_s:.2f}s and {split.est_tokens} tokens for split"
        if split is not None
        else ""
    )
    return (
        f"{what}: estimated {chosen.est_wall_s:.2f}s and {chosen.est_tokens} tokens{versus}; "
        f"objective {policy.objective}: {because}."
    )


def expected_answer_tokens(job: Job, assumed: float) -> int:
    """How long a question's answer is expected to be: its own hint, else ``assumed``
    (the policy's, or the learned length, or the prior), at most its ``max_tokens``."""
    expected = job.question.expected_tokens or assumed
    cap = answer_cap(job.params)
    if isinstance(cap, int) and cap > 0:
        expected = min(expected, cap)
    return max(1, int(expected))


def question_tokens(job: Job) -> int:
    """The prompt tokens a question adds to a request (its text and message framing)."""
    return 3 + estimate_text_tokens(job.question.text)


def merge_blocked(opts: CallOptions, merge_format: str) -> bool:
    """Whether the call's ``create()`` arguments forbid merging: one that changes what
    a reply holds (``tools``, ``n``, ``stop``, ...), or a ``response_format`` that is no
    structured one (``json_object``), or a structured one where merged requests would
    be tagged text (it merges as JSON only)."""
    if _UNMERGEABLE_PARAMS & opts.create_kwargs.keys():
        return True
    if opts.create_kwargs.get("response_format") is None:
        return False
    return opts.structured is None or merge_format != "json"


@dataclasses.dataclass(frozen=True)
class _Agreement:
    """What the merge checks known for this endpoint and format let a plan do."""

    mergeable: bool
    """Whether the call's questions may be merged at all."""
    first_check: bool = False
    """Auto, agreement not established: the first merged group is asked both ways."""
    checks: MergeChecks | None = None
    note: str = ""
    """Why merging is off for this endpoint (added to the plan's reason)."""


def _agreement(
    opts: CallOptions, endpoint: EndpointModel, merge_format: str, mergeable: bool
) -> _Agreement:
    """Whether merged answers are known to agree with split ones here (auto), or a
    warning, once, that they do not (policy "merge")."""
    policy = opts.policy
    if policy.mode == "auto" and policy.merge_agreement is not None:
        known = endpoint.merge_agreement(merge_format)
        checks = MergeChecks(
            first=known is None or known[0] < MERGE_CHECK_MIN,
            counts=known or (0, 0, 0),
            threshold=policy.merge_agreement,
        )
        if checks.first:
            return _Agreement(mergeable=mergeable, first_check=True, checks=checks)
        assert known is not None
        if agreement_too_low(known, policy.merge_agreement):
            compared, agreed, wrong = known
            note = (
                f" Merging is off for this endpoint and model: merged answers ({merge_format}) "
                f"agreed with split answers of the same questions on {agreed} of {compared} "
                f"checked ({wrong} with another question's answer), below "
                f"Policy.merge_agreement={policy.merge_agreement:g}."
            )
            return _Agreement(mergeable=False, checks=checks, note=note)
        return _Agreement(mergeable=mergeable, checks=checks)
    if policy.mode == "merge" and not endpoint.warned_low_agreement:
        known = endpoint.merge_agreement(merge_format)
        threshold = (
            DEFAULT_MERGE_AGREEMENT if policy.merge_agreement is None else policy.merge_agreement
        )
        if agreement_too_low(known, threshold) and known is not None:
            endpoint.warned_low_agreement = True
            log.warning(
                "merging as asked (policy 'merge'), but merged answers (%s) agreed with split "
                "answers of the same questions on only %d of %d checked here (%d with another "
                "question's answer): expect wrong answers",
                merge_format,
                known[1],
                known[0],
                known[2],
            )
    return _Agreement(mergeable=mergeable)


def _plan_inputs(
    jobs: list[Job],
    opts: CallOptions,
    endpoint: EndpointModel,
    agreement: _Agreement,
    *,
    budget: Budget,
    max_concurrency: int,
    shared_prompt_cached: bool,
) -> PlanInputs:
    """What the planner weighs for ``jobs``: their tokens, the answers' expected
    lengths, the endpoint, the limits' room, which may merge."""
    assumed = opts.policy.expected_tokens or endpoint.answer_tokens or PRIOR_ANSWER_TOKENS
    shared = 3 + (3 + estimate_text_tokens(opts.system) if opts.system else 0)
    estimate = endpoint.estimate()
    cached = shared if estimate.prefix_cache and opts.system and shared_prompt_cached else 0
    return PlanInputs(
        question_tokens=[question_tokens(job) for job in jobs],
        shared_prompt_tokens=shared,
        answer_tokens=[expected_answer_tokens(job, assumed) for job in jobs],
        endpoint=estimate,
        budget=budget,
        max_concurrency=max_concurrency,
        mergeable=[
            agreement.mergeable
            and job.question.mergeable
            and job.question.context == jobs[0].question.context
            for job in jobs
        ],
        cached_prompt_tokens=cached,
        merge_prompt_per_question=endpoint.merge_prompt_per_question,
        merge_answer_overhead=endpoint.merge_answer_overhead,
        merge_checks=agreement.checks if agreement.mergeable else None,
    )


def _with_checks_said(plan: Plan, policy: Policy, agreement: _Agreement) -> Plan:
    """``plan`` with its reason saying how its merged answers are checked (or why
    merging is off)."""
    merges = any(len(group) > 1 for group in plan.groups)
    if agreement.note:
        return dataclasses.replace(plan, reason=plan.reason + agreement.note)
    if agreement.first_check and merges:
        return dataclasses.replace(
            plan,
            merge_check=True,
            reason=plan.reason
            + (
                " Merged answers are not yet known to agree with split ones here: the first "
                "merged group is asked both ways and compared before the rest are merged "
                "(Policy.merge_agreement)."
            ),
        )
    if merges and policy.mode == "auto" and policy.merge_agreement is not None:
        return dataclasses.replace(
            plan,
            reason=plan.reason
            + (
                " Merged groups also ask their last question alone and take their merged "
                "answers only if that one agrees: every group until the checks establish "
                f"agreement at {CONFIDENCE * 100:.0f} % confidence, then one in {SPOT_CHECK_EVERY} "
                "(Policy.merge_agreement)."
            ),
        )
    return plan


def plan_jobs(
    jobs: list[Job],
    opts: CallOptions,
    *,
    endpoint: EndpointModel,
    budget: Budget,
    max_concurrency: int,
    shared_prompt_cached: bool,
    merge_format: str = "json",
) -> Plan:
    """Plan a batch of distinct jobs, from what is known of them, of the endpoint
    and of the limits' room. ``shared_prompt_cached``: the call's system prompt
    was sent before (an endpoint that caches prefixes need not prefill it).
    ``merge_format``: the format a merged request would use here (its merge checks
    decide whether auto may merge, see ``Policy.merge_agreement``)."""
    mergeable = not merge_blocked(opts, merge_format)
    if opts.structured is not None:
        merge_format = SCHEMA_FORMAT  # its merge checks are its own
    agreement = _agreement(opts, endpoint, merge_format, mergeable)
    inputs = _plan_inputs(
        jobs,
        opts,
        endpoint,
        agreement,
        budget=budget,
        max_concurrency=max_concurrency,
        shared_prompt_cached=shared_prompt_cached,
    )
    plan = _with_checks_said(make_plan(inputs, opts.policy), opts.policy, agreement)
    plan = dataclasses.replace(plan, checks=tuple(check_layout(plan.groups, inputs.merge_checks)))
    log.debug("plan for %d questions: %s", len(jobs), plan.reason)
    return plan
