"""Execution: a group of jobs becomes answers.

A group of one is a split request: the question alone, its answer as the endpoint
wrote it. A larger group is a merged request: the questions under unforgeable tags
in one prompt (``merging``), the reply parsed back by those tags, its usage shared
out, and every question whose answer did not come back whole asked again on its own.
Each request goes through the :class:`~fanout.engine.transport.Transport`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import anyio
import openai

from .. import telemetry as telemetry
from ..core import clock
from ..core.exceptions import (
    BudgetExceededError,
    EmptyAnswerError,
    MalformedResponseError,
    QuestionError,
    QuotaExceededError,
    RefusalError,
    StructuredOutputError,
)
from ..core.logs import redact
from ..core.models import Answer, Usage
from ..core.redact import scrub_exception
from ..endpoint.tokens import estimate_text_tokens
from .agreement import CheckResult, answers_agree, compare
from .call import CallOptions, CallStats, Tally
from .codec import MergedReply, merged_params, read_merged
from .intake import Job
from .merging import build_merged
from .planning import MERGE_ANSWER_OVERHEAD, PRIOR_ANSWER_TOKENS, expected_answer_tokens
from .reach import UnreachableError
from .replies import judge, tool_calls_of
from .retrying import (
    EmptyReplyError,
    RefusedReplyError,
    UnreadableResponseError,
    is_quota_error,
)
from .spending import OverBudgetError
from .structured import SCHEMA_FORMAT, UnfitReplyError, check_fits
from .transport import KeyRefusedError, QuotaGoneError, Transport

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

__all__ = [
    "ask_merged",
    "ask_one",
    "check_merged",
    "check_reply",
    "deliver_merged",
    "group_tally",
    "question_error",
    "send_merged",
]

log = logging.getLogger("fanout")

Finish = Callable[[Job, Answer], Awaitable[None]]


def group_tally(jobs: list[Job]) -> Tally:
    """The counters of one request made for ``jobs`` (a merged group): each job counts
    it, so that a job the call's timeout ends knows what it cost."""
    tally = Tally()
    for job in jobs:
        job.tallies.append(tally)
    return tally


def question_error(
    exc: Exception, job: Job, attempts: int, *, base_url: str | None = None
) -> QuestionError:
    """The error a question's answer carries, with the SDK's exception as its cause.

    ``base_url``: the endpoint's address, named when it could not be reached."""
    q = job.question
    if isinstance(exc, QuestionError):
        return exc
    tried = f"after {attempts} attempt(s)"
    if isinstance(exc, RefusedReplyError):
        shown = exc.refusal if len(exc.refusal) <= 300 else f"{exc.refusal[:300]}..."
        err: QuestionError = RefusalError(
            f"question {job.index}: the model refused ({tried}): {shown}",
            index=job.index,
            question=q.text,
            attempts=attempts,
            refusal=exc.refusal,
        )
    elif isinstance(exc, UnfitReplyError):
        err = StructuredOutputError(
            f"question {job.index}: the answer did not fit the response_format ({tried}): "
            f"{exc.reason}",
            index=job.index,
            question=q.text,
            attempts=attempts,
            reply=exc.reply,
            reason=exc.reason,
        )
    elif isinstance(exc, EmptyReplyError):
        err = EmptyAnswerError(
            f"question {job.index}: no answer {tried}: {exc}",
            index=job.index,
            question=q.text,
            attempts=attempts,
            tool_calls=exc.tool_calls,
        )
    elif isinstance(exc, UnreadableResponseError):
        err = MalformedResponseError(
            f"question {job.index} failed {tried}: {exc}",
            index=job.index,
            question=q.text,
            attempts=attempts,
        )
    elif isinstance(exc, QuotaGoneError):
        err = QuotaExceededError(
            f"question {job.index}: not sent: the API key has no quota left (an earlier "
            "request got insufficient_quota)",
            index=job.index,
            question=q.text,
            attempts=attempts,
        )
    elif is_quota_error(exc):
        err = QuotaExceededError(
            f"question {job.index}: the API key has no quota left (insufficient_quota); "
            "not retried",
            index=job.index,
            question=q.text,
            attempts=attempts,
        )
    elif isinstance(exc, OverBudgetError):
        err = BudgetExceededError(
            f"question {job.index}: {exc}",
            index=job.index,
            question=q.text,
            attempts=attempts,
            cap=exc.cap.cap,
            spent=exc.cap.spent,
        )
    elif isinstance(exc, UnreachableError):
        err = QuestionError(
            redact(f"question {job.index}: {exc} ({base_url})"),
            index=job.index,
            question=q.text,
            attempts=attempts,
        )
    elif isinstance(exc, KeyRefusedError):
        err = QuestionError(
            f"question {job.index}: {exc} (the endpoint refuses the API key or its access)",
            index=job.index,
            question=q.text,
            attempts=attempts,
        )
    else:
        what = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, openai.APITimeoutError) and base_url:
            what = f"no answer from {base_url} in time: {what}"
        elif isinstance(exc, openai.APIConnectionError) and base_url:
            what = f"could not reach {base_url}: {what}"
        err = QuestionError(
            redact(f"question {job.index} failed after {attempts} attempt(s): {what}"),
            index=job.index,
            question=q.text,
            attempts=attempts,
        )
    scrub_exception(exc)  # the SDK's exception may hold an echoed key
    err.__cause__ = exc
    return err


async def ask_one(transport: Transport, job: Job, opts: CallOptions, stats: CallStats) -> Answer:
    """Ask ``job``'s question alone."""
    start = clock.now()
    q = job.question
    # The answer's length, where the caller told it: its attempt deadline allows for it.
    tally = Tally(answer_tokens=q.expected_tokens or opts.policy.expected_tokens)
    job.tallies.append(tally)  # seen by the timeout path while the request is out
    try:
        # Empty is no answer, nor one that does not fit the question's structured
        # format: judged within the attempt, so that it is retried.
        completion = await transport.send(
            job.params, opts, stats, tally, check=lambda c: _judge(c, job)
        )
    except Exception as exc:
        error = question_error(exc, job, tally.attempts, base_url=str(transport.client.base_url))
        log.debug("question %d failed after %d attempts: %r", job.index, tally.attempts, exc)
        return Answer(
            index=job.index,
            question=q.text,
            id=q.id,
            usage=tally.usage,
            attempts=tally.attempts,
            latency_s=clock.now() - start,
            request_ids=tally.request_ids,
            error=error,
            refusal=getattr(exc, "refusal", None),
            tool_calls=getattr(exc, "tool_calls", []),
        )
    # The transport checked it: at least one choice, each with a message. With n > 1
    # the choices are put in the order of their index, whatever order they came in.
    ordered = sorted(completion.choices, key=lambda c: c.index if isinstance(c.index, int) else 0)
    choice = ordered[0]
    if completion.usage is not None and choice.finish_reason != "length":
        # An answer cut at max_tokens says how long the cap is, not the answers: learned,
        # it would shorten the estimates of calls without that cap (12x on cost).
        transport.learner.endpoint.observe_answer(completion.usage.completion_tokens)
    choices = [c.message.content or "" for c in ordered]  # n > 1: all of them
    parsed = _structured_value(completion, job)
    return Answer(
        index=job.index,
        question=q.text,
        id=q.id,
        text=choices[0],
        choices=choices,
        tool_calls=tool_calls_of(choice.message),
        mode="split",
        finish_reason=choice.finish_reason,
        usage=tally.usage,
        attempts=tally.attempts,
        latency_s=clock.now() - start,
        request_ids=tally.request_ids,
        parsed=parsed,
    )


def _judge(completion: ChatCompletion, job: Job) -> None:
    """Whether ``completion`` answers ``job`` (raises if not): text, or the tool calls
    it asked for; with a structured format, a value that fits it."""
    judge(completion, job.params)
    _structured_value(completion, job)


def _structured_value(completion: ChatCompletion, job: Job) -> Any:
    """The checked value of the answer under the job's structured format (raises
    ``UnfitReplyError`` if it does not fit); None without one, or for a reply of tool
    calls alone (``tools=``: they are the answer)."""
    if job.structured is None:
        return None
    choice = min(completion.choices, key=lambda c: c.index if isinstance(c.index, int) else 0)
    if not (choice.message.content or "").strip() and tool_calls_of(choice.message):
        return None
    return check_fits(completion, job.structured)


def _refuses_response_format(exc: BaseException) -> bool:
    """A 400/422 that is about ``response_format`` (structured outputs unsupported)."""
    if not isinstance(exc, (openai.BadRequestError, openai.UnprocessableEntityError)):
        return False
    text = f"{exc.param or ''} {exc.message}".lower()
    return "response_format" in text or "json_schema" in text


async def send_merged(
    transport: Transport,
    group: list[Job],
    opts: CallOptions,
    stats: CallStats,
    tally: Tally,
) -> MergedReply:
    """Send the group's merged request and read its reply (``codec``); falls back from
    JSON to tagged text once if the endpoint refuses ``response_format``. A request
    that failed is a reply that answers none (``MergedReply.replied`` False)."""
    policy = opts.policy
    structured = group[0].structured  # the call's: questions with their own are never merged
    fmt = "json" if structured is not None else transport.learner.merge_format(policy)
    texts = [job.question.text for job in group]
    request = build_merged(texts, fmt, structured=structured)
    # The reply holds every answer: its attempt deadline allows for all of them.
    assumed = policy.expected_tokens or transport.learner.endpoint.answer_tokens
    assumed = assumed or PRIOR_ANSWER_TOKENS
    tally.answer_tokens = sum(expected_answer_tokens(job, assumed) for job in group)
    tally.answer_tokens += MERGE_ANSWER_OVERHEAD * len(group)
    while True:
        try:
            params = merged_params(
                request,
                model=opts.model,
                system=opts.system,
                create_kwargs=opts.create_kwargs,
                context=group[0].question.context,
            )
            with telemetry.merged_request(len(group)):
                completion = await transport.send(params, opts, stats, tally)
            return read_merged(request, completion, structured, tally.usage)
        except Exception as exc:
            if (
                request.format == "json"
                and not request.structured
                and policy.merge_format == "auto"
                and _refuses_response_format(exc)
            ):
                log.info("endpoint refuses response_format; merging with tagged text from now on")
                transport.learner.json_ok = False
                request = build_merged(texts, "text")
                continue
            log.debug(
                "merged request for %d questions failed (%r); asking each alone", len(group), exc
            )
            return read_merged(request, None, structured, tally.usage)


async def ask_merged(
    transport: Transport,
    group: list[Job],
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
) -> None:
    """Ask a group in one request; re-ask on their own the questions whose answer
    did not come back whole. Every question of the group is finished."""
    start = clock.now()
    tally = group_tally(group)
    reply = await send_merged(transport, group, opts, stats, tally)
    await deliver_merged(transport, group, reply, tally, opts, stats, finish, start)


async def deliver_merged(
    transport: Transport,
    group: list[Job],
    reply: MergedReply,
    tally: Tally,
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
    start: float,
    *,
    alone: Mapping[int, Answer] | None = None,
    trusted: bool = True,
    riders: int = 0,
    merged_first: bool = False,
) -> None:
    """Finish a group from its merged reply: each answer found is the question's (with
    its share of the request's usage), each one missing is asked alone. ``alone``: the
    answers of the questions (by position in the group) a merge check asked alone as
    well; they are those questions' answers (with their share of the merged request).
    ``trusted=False``: the check found the merged answers wrong, and the rest of the
    group is asked alone. ``riders``: questions after the group's in the request (a
    canary check's, ``canaries``): answered by the reply too, and counted in what it
    teaches of merging here, but not delivered; the usage is the group's. A reply the
    content filter cut answers none of the group (``merging.cut_by_filter``): each
    question is asked alone, with its share of the reply's usage. ``merged_first``: the
    questions in ``alone`` were asked alone after the merged request (``check_reply``),
    whose request id comes first in their answers."""
    request, found = reply.request, reply.found
    if reply.filtered:
        log.debug(
            "merged reply for %d questions cut by the content filter; asking each alone", len(group)
        )
    shares = reply.shares(len(group)) if reply.replied else [Usage()] * len(group)
    own_shares = reply.own_completion_tokens()  # riders' included
    latency = clock.now() - start
    # What the planner expects of merging here: how many answers come back whole, and
    # what a merged request costs beyond its questions and answers. A filtered reply
    # tells nothing of merging: the filter would cut the question asked alone as well.
    k = len(request.tags)
    if not reply.filtered:
        transport.learner.endpoint.observe_merged(k, sum(tag in found for tag in request.tags))
    billed = reply.reply_usage
    if billed is not None and reply.complete:
        own_prompt = sum(3 + estimate_text_tokens(text) for text in request.questions)
        shared = 3 + (3 + estimate_text_tokens(opts.system) if opts.system else 0)
        own_answers = sum(estimate_text_tokens(text) for text in found.values())
        transport.learner.endpoint.observe_merge_usage(
            max(0.0, (billed.prompt_tokens - shared - own_prompt) / k),
            max(0.0, (billed.completion_tokens - own_answers) / k),
        )
    reask: list[tuple[Job, Usage]] = []
    for i, (job, tag) in enumerate(
        zip(group, request.tags[: len(request.tags) - riders], strict=True)
    ):
        share = shares[i]
        own = alone.get(i) if alone else None
        text = found.get(tag) if trusted else None
        if own is not None and (own.error is None or text is None):
            # Asked alone: its own answer; its own error too, unless the merged answer
            # is trusted (it was asked alone with its retries: not asked a third time).
            await finish(job, _with_share(own, share, tally, start, merged_first=merged_first))
            continue
        if text is None:
            reask.append((job, share))
            continue
        # The answer's own length: its share less the merge's framing per answer.
        framing = transport.learner.endpoint.merge_answer_overhead or MERGE_ANSWER_OVERHEAD
        transport.learner.endpoint.observe_answer(max(1, own_shares[i] - framing))
        q = job.question
        answer = Answer(
            index=job.index,
            question=q.text,
            id=q.id,
            text=text,
            choices=[text],
            mode="merged",
            finish_reason="stop",
            usage=share,
            attempts=tally.attempts,
            latency_s=latency,
            request_ids=list(tally.request_ids),
            parsed=reply.values.get(tag),
        )
        await finish(job, answer if own is None else _after_failing_alone(answer, own))
    if not reask:
        return
    stats.reasked.extend(job.index for job, _ in reask)

    async def again(job: Job, share: Usage) -> None:
        answer = await ask_one(transport, job, opts, stats)
        await finish(job, _with_share(answer, share, tally, start, merged_first=True))

    with telemetry.reasking(len(reask), len(group), opts.model):
        async with anyio.create_task_group() as tg:
            for job, share in reask:
                tg.start_soon(again, job, share)


def _after_failing_alone(answer: Answer, failed: Answer) -> Answer:
    """A merged answer of a question whose request alone (a merge check's) failed: what
    that request cost is counted in it too."""
    return answer.model_copy(
        update={
            "usage": answer.usage + failed.usage,
            "attempts": answer.attempts + failed.attempts,
            "request_ids": [*failed.request_ids, *answer.request_ids],
        }
    )


def _with_share(
    answer: Answer, share: Usage, tally: Tally, start: float, *, merged_first: bool
) -> Answer:
    """A question's answer asked alone, with its share of the group's merged request
    added (usage, attempts, request ids: the merged one first if it was sent first)."""
    ids = (
        [*tally.request_ids, *answer.request_ids]
        if merged_first
        else [*answer.request_ids, *tally.request_ids]
    )
    return answer.model_copy(
        update={
            "usage": answer.usage + share,
            "attempts": answer.attempts + tally.attempts,
            "request_ids": ids,
            "latency_s": clock.now() - start,
        }
    )


def _questions(n: int) -> str:
    return f"{n} question" if n == 1 else f"{n} questions"


async def check_merged(
    transport: Transport,
    group: list[Job],
    sample: int,
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
    *,
    on_alone: Callable[[Job, Answer], None] | None = None,
) -> CheckResult:
    """The merge check (``Policy.merge_agreement``): the group is asked merged and, at
    the same time, its last ``sample`` questions alone (late positions are where a
    merged reply goes wrong first: answers shifted by one, or the first answer
    repeated). Those split answers are the sampled questions' answers, and the merged
    ones are compared with them (``agreement.compare``); what was found is kept in the
    endpoint model (and so in its memory). The rest of the group takes its merged
    answers if every answer of the sample agreed, and is asked alone if not (the
    endpoint's agreement, kept against ``merge_agreement``, decides later groups). The merged request's usage is
    shared out over the group. ``on_alone``: told each sampled question's answer as it
    comes back, before the merged reply (it is that question's answer either way)."""
    start = clock.now()
    checked = range(len(group) - sample, len(group))
    tally = group_tally(group[: checked.start])
    alone: dict[int, Answer] = {}

    async def one(i: int) -> None:
        alone[i] = await ask_one(transport, group[i], opts, stats)
        if alone[i].error is None:
            group[i].answered_alone = alone[i]
        if on_alone is not None:
            on_alone(group[i], alone[i])

    async with anyio.create_task_group() as tg:
        for i in checked:
            tg.start_soon(one, i)
        # Sent from here before the tasks above start: the merged request goes first.
        reply = await send_merged(transport, group, opts, stats, tally)
    return await _judge_check(
        transport, group, checked, alone, reply, tally, opts, stats, finish, start
    )


async def check_reply(
    transport: Transport,
    group: list[Job],
    reply: MergedReply,
    tally: Tally,
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
    start: float,
    *,
    rider: tuple[str, str] | None = None,
) -> CheckResult:
    """A spot check (sample of one) of a merged reply already back, decided after it
    was sent (a group held while the checks it waited for were out: ``dispatch``):
    its last question is asked alone now, and the group takes its merged answers as
    ``check_merged`` would have (the same comparison, made after the reply instead of
    beside it). ``rider``: the question and the known answer of a canary that rode the
    request after the group's questions (not delivered, ``deliver_merged``). Its merged
    answer is compared too, for no request, as a veto only: one that disagrees (or is
    missing from a reply that came) keeps the group's merged answers out whatever the
    sample found. It is not counted in the endpoint's agreement either way: before
    agreement is established a canary's agreement says little of the group's own
    answers (``canaries``), and counting only its disagreements would bias the counts
    down. Every question of the group is finished."""
    checked = range(len(group) - 1, len(group))
    alone = {checked.start: await ask_one(transport, group[-1], opts, stats)}
    if alone[checked.start].error is None:  # its answer, if the call's timeout comes first
        group[-1].answered_alone = alone[checked.start]
    vetoed = False
    if rider is not None and reply.replied and not reply.filtered:
        question, known = rider
        mine = reply.with_repeats.get(reply.request.tags[-1])
        vetoed = mine is None or not answers_agree(known, mine, question)
    return await _judge_check(
        transport,
        group,
        checked,
        alone,
        reply,
        tally,
        opts,
        stats,
        finish,
        start,
        merged_first=True,
        riders=0 if rider is None else 1,
        vetoed=vetoed,
    )


async def _judge_check(
    transport: Transport,
    group: list[Job],
    checked: range,
    alone: dict[int, Answer],
    reply: MergedReply,
    tally: Tally,
    opts: CallOptions,
    stats: CallStats,
    finish: Finish,
    start: float,
    *,
    merged_first: bool = False,
    riders: int = 0,
    vetoed: bool = False,
) -> CheckResult:
    """Compare the ``checked`` questions' answers ``alone`` with the merged ones, keep
    what was found, and deliver the group: its merged answers only if they agreed (and
    no canary riding it disagreed: ``vetoed``)."""
    request, found, filtered = reply.request, reply.found, reply.filtered
    fmt = SCHEMA_FORMAT if request.structured else request.format
    result = compare(
        [alone[i].text if alone[i].error is None else None for i in checked],
        [found.get(request.tags[i]) for i in checked],
        [group[i].question.text for i in checked],
    )
    if reply.replied and not filtered:  # a filtered reply tells nothing of merging
        transport.learner.endpoint.observe_merge_check(
            fmt, result.compared, result.agreed, result.misattributed
        )
    # The group's unchecked questions take their merged answers only if every answer
    # compared agreed: a reply wrong at one checked position may be wrong at an
    # unchecked one (on SmolLM2, 3 of 4 agreeing let "Egypt" answer "What is the
    # capital of Egypt?"). ``Policy.merge_agreement`` weighs the endpoint's agreement,
    # for the groups to come (``spotting``).
    trusted = (
        reply.replied
        and not vetoed
        and result.compared > 0
        and result.misattributed == 0
        and result.agreed == result.compared
    )
    rest = checked.start
    stats.merge_checks.append(
        f"{result.agreed} of {result.compared} merged answers ({fmt}) agreed with "
        f"split ones"
        + (f", {result.misattributed} with another question's" if result.misattributed else "")
        + (", the canary riding the group disagreed" if vetoed else "")
        + ("" if reply.replied else " (the merged request failed)")
        + (" (the content filter cut the merged reply)" if filtered else "")
        + (
            ""
            if not rest
            else f"; {_questions(rest)} more of the group took the merged answers"
            if trusted
            else f"; {_questions(rest)} more of the group asked alone instead"
        )
    )
    await deliver_merged(
        transport,
        group,
        reply,
        tally,
        opts,
        stats,
        finish,
        start,
        alone=alone,
        trusted=trusted,
        merged_first=merged_first,
        riders=riders,
    )
    return result
