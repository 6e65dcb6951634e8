"""Canary checks: a merged group checked by a question whose answer is already known.

Auto's spot checks (``spotting``) compare a merged group's answers with split ones,
asking a question of the group alone as well: a request more for each checked group,
which is what merging saves under a tight request limit. Once agreement is
*established* for the endpoint and model (``agreement.established``) and only one
merged group in four is still checked, that group is checked for tokens instead: a
question of the call already answered alone (a first wave's, a merge check's sample, a
spot check's, a re-asked one) rides in the group as its last member (a *canary*), and
its merged answer is compared with the one it was given alone
(``agreement.answers_agree``). The canary goes last because late positions are where
a merged reply goes wrong first (answers shifted by one, one answer run on), so a
reply that slipped anywhere before it answers the canary wrongly too.

Not before agreement is established: a canary is not a question of the group, and it
tends to be one the model answers well anywhere (the same few known questions ride
group after group). On SmolLM2-135M (``benchmarks/real_model.py``, ``Limits(rpm=30)``)
groups checked by canaries before the first check came back took 13 merged answers of
which 3 were right (42 of 79 correct where split gets 48): the canaries agreed, the
groups' own answers were wrong. Until the endpoint has proved itself on its own
questions, a check asks one of them alone.

What a canary check finds is what a spot check of one question finds, and counts the
same (``EndpointModel.observe_merge_check``): agreeing, the group takes its merged
answers; disagreeing, every question of the group is asked alone. Like a spot check,
it counts a disagreement, never a misattribution: the answers of the other questions
in its reply are not known (a known answer of a question outside the reply that the
canary's matches is no misattribution by the reply; with yes/no answers it is mere
chance). The canary's own answer is not delivered again, and its tokens are the
group's usage.

The group's own questions are at most ``Policy.max_group_size``; the canary is one
more in the prompt, so a checked group of the cap asks ``max_group_size + 1``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core import clock
from ..core.models import Answer
from .agreement import CheckResult, answers_agree
from .call import CallOptions, CallStats, Tally
from .codec import MergedReply
from .execution import Finish, deliver_merged, group_tally, send_merged
from .intake import Job
from .merging import cut_by_filter
from .structured import SCHEMA_FORMAT
from .transport import Transport

__all__ = [
    "KEPT_CANARIES",
    "Canaries",
    "Canary",
    "check_with_canary",
    "judge_canary",
    "with_rider",
]

KEPT_CANARIES = 16
"""The most answers of a call kept as canaries (the most recent ones)."""


@dataclass(frozen=True)
class Canary:
    """A question of the call answered alone, and its answer."""

    job: Job
    answer: str


class Canaries:
    """The questions of one call answered alone so far, to ride merged groups."""

    def __init__(self) -> None:
        self._kept: list[Canary] = []
        self._turn = 0

    def learn(self, job: Job, answer: Answer) -> bool:
        """Keep an answer as a canary if it was asked alone and answered (not one the
        content filter cut), once per question (True if kept)."""
        text = answer.text
        if (
            answer.mode != "split"
            or answer.error is not None
            or text is None
            or not text.strip()
            or not job.question.mergeable
            or len(answer.choices) > 1
            or cut_by_filter(answer.finish_reason)  # not the whole answer
            or any(kept.job is job for kept in self._kept)  # learned before it was finished
        ):
            return False
        self._kept.append(Canary(job=job, answer=text))
        if len(self._kept) > KEPT_CANARIES:
            del self._kept[0]
        return True

    def known(self) -> list[str]:
        return [canary.answer for canary in self._kept]

    def pick(self, group: list[Job]) -> Canary | None:
        """A canary that can ride ``group`` (the same context and structured format,
        not one of its questions), taking turns; None if there is none."""
        first = group[0]
        inside = {id(job) for job in group}
        fitting = [
            c
            for c in self._kept
            if id(c.job) not in inside
            and c.job.question.context == first.question.context
            and c.job.structured is first.structured
        ]
        if not fitting:
            return None
        self._turn += 1
        return fitting[self._turn % len(fitting)]


async def check_with_canary(
    transport: Transport,
    group: list[Job],
    canary: Canary,
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
) -> CheckResult:
    """Ask ``group`` merged with ``canary`` as its last member, and take the merged
    answers only if the canary's agrees with its known answer (see the module doc)."""
    start = clock.now()
    tally = group_tally(group)
    reply = await send_merged(transport, with_rider(group, canary), opts, stats, tally)
    return await judge_canary(transport, group, canary, reply, tally, opts, stats, finish, start)


def with_rider(group: list[Job], canary: Canary) -> list[Job]:
    """The jobs of ``group``'s merged request with ``canary`` riding it, last."""
    q = canary.job
    rider = Job(
        index=q.index, question=q.question, params=q.params, key=q.key, structured=q.structured
    )
    return [*group, rider]


async def judge_canary(
    transport: Transport,
    group: list[Job],
    canary: Canary,
    reply: MergedReply,
    tally: Tally,
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
    start: float,
) -> CheckResult:
    """Compare the canary's merged answer in ``reply`` with its known one, keep what
    was found, and deliver the group: its merged answers only if the canary's agreed."""
    q = canary.job
    request, filtered = reply.request, reply.filtered
    # Repeats kept: a canary whose known answer another question of the group rightly
    # shares agrees (that question is asked alone, ``deliver_merged``).
    found = reply.with_repeats
    mine = found.get(request.tags[-1])
    agreed = mine is not None and answers_agree(canary.answer, mine, q.question.text)
    result = CheckResult(compared=1, agreed=int(agreed), misattributed=0)
    fmt = SCHEMA_FORMAT if request.structured else request.format
    if reply.replied and not filtered:  # a filtered reply tells nothing of merging
        transport.learner.endpoint.observe_merge_check(fmt, 1, result.agreed, result.misattributed)
    trusted = agreed  # one compared: its agreement is all or nothing, whatever the threshold
    k = len(group)
    stats.merge_checks.append(
        f"{result.agreed} of 1 merged answers ({fmt}) agreed with split ones (question "
        f"{q.index}, answered alone before, asked again as the group's canary)"
        + ("" if reply.replied else " (the merged request failed)")
        + (" (the content filter cut the merged reply)" if filtered else "")
        + (
            f"; the group's {k} questions took the merged answers"
            if trusted
            else f"; the group's {k} questions asked alone instead"
        )
    )
    await deliver_merged(
        transport, group, reply, tally, opts, stats, finish, start, trusted=trusted, riders=1
    )
    return result
