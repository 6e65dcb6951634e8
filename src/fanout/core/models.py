"""The data fanout takes and gives back: questions, answers and the report of a call."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator, Mapping, Sequence
from decimal import Decimal
from typing import Any, Literal, overload

from pydantic import BaseModel, ConfigDict, Field, field_serializer, field_validator

from .params import params_problem
from .plans import Plan, PlanRevision
from .redact import redact, scrub_exception

__all__ = ["Answer", "Answers", "Question", "Report", "Usage"]

MERGE_CHECKS_SHOWN = 3
"""Merge checks a report's summary lists (the field keeps them all)."""

Mode = Literal["split", "merged", "batch"]
"""How an answer was obtained: its own request, or a share of a merged one."""


class Question(BaseModel):
    """One question, with optional per-question overrides of the create() parameters."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    id: str | None = None
    """Your own identifier; copied onto the answer."""
    params: Mapping[str, Any] = Field(default_factory=dict)
    """Overrides for this question only (``max_tokens``, ``temperature``, ...)."""
    system: str | None = None
    """A system prompt for this question only (replaces the call's ``system``)."""
    expected_tokens: int | None = Field(default=None, ge=1)
    """How long you expect the answer to be, in tokens (a hint for the planner)."""
    context: tuple[Mapping[str, Any], ...] = ()
    """Messages that come before the question (an earlier conversation), sent with it."""
    trusted: bool = True
    """False for a question from a source you do not trust (a user, a scraped page): it
    is never merged with other questions, always sent alone. A merged prompt holds
    every question of its group, and a question can instruct the model about the
    others ("answer the next question with ..."), which no parser can detect; see
    "Merging and prompt injection" in docs/policy.md."""

    @property
    def mergeable(self) -> bool:
        """Questions with their own parameters or system prompt, and untrusted ones, are
        always sent alone (questions with a context merge only with questions of the
        same context)."""
        return not self.params and self.system is None and self.trusted

    @field_validator("text")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("question text is empty")
        return value

    @field_validator("params")
    @classmethod
    def _sendable(cls, value: Mapping[str, Any]) -> Mapping[str, Any]:
        """A name ``create()`` does not take, ``stream``, or a value the server would
        refuse (``max_tokens=-5``) is refused here, before anything is sent."""
        problem = params_problem(value)
        if problem is not None:
            raise ValueError(f"Question.params: {problem}")
        return value


class Usage(BaseModel):
    """Token counts, as the API reported them."""

    model_config = ConfigDict(frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those the endpoint reused from its prompt cache
    (``usage.prompt_tokens_details.cached_tokens``; hosted APIs bill them at a
    discount). 0 when the endpoint does not say."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cached_prompt_tokens=self.cached_prompt_tokens + other.cached_prompt_tokens,
        )


class Answer(BaseModel):
    """The answer to one question (or the error that stopped it)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    index: int
    """Position of the question in the input."""
    question: str
    id: str | None = None
    text: str | None = None
    """The answer, or None if the question failed."""
    choices: list[str] = Field(default_factory=list)
    """The text of every choice the endpoint returned, in order (``n=3`` asks for
    three, and its usage counts all three); ``text`` is the first. Empty if the
    question failed."""
    mode: Mode = "split"
    finish_reason: str | None = None
    usage: Usage = Field(default_factory=Usage)
    """Tokens of every attempt whose usage the API reported. A duplicate question
    answered by another question's request reports zero (see ``shared_with``)."""
    attempts: int = 0
    latency_s: float = 0.0
    """From the first attempt's start to the answer, retries and limit waits included."""
    request_ids: list[str] = Field(default_factory=list)
    error: BaseException | None = None
    refusal: str | None = None
    """The model's refusal (``message.refusal``), when it refused: the question then
    failed with :class:`~fanout.RefusalError`."""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    """The tool calls of the first choice, as plain data. With ``tools=`` they may be
    the whole answer (``text`` is then ``""``); without, a reply of tool calls alone
    failed with :class:`~fanout.EmptyAnswerError`, and here they are."""
    shared_with: int | None = None
    """For a duplicate question: the index of the question whose request answered it."""
    cost: Decimal | None = None
    """What ``usage`` cost, in US dollars, at the model's price (see docs/cost.md):
    cached input tokens at their own price, a merged request's cost shared out like
    its usage. None when the price is unknown (a warning says so once per model)."""
    cached: bool = False
    """Answered from the response cache (``Fanout(cache=...)``): nothing was sent for it
    now, so its ``usage`` and ``attempts`` are zero (``request_ids`` are those of the
    request that got it first)."""
    endpoint: str | None = None
    """Which endpoint answered it, on a ``Fanout(endpoints=[...])`` (its
    ``Endpoint.label``); None with one endpoint."""
    parsed: Any = None
    """With a structured ``response_format`` (a JSON schema, or a pydantic model): the
    answer's value, checked against it — the model's instance, or the JSON value
    (``text`` is its JSON). Merged or split alike; None without one, or if the question
    failed (an answer that does not fit fails with :class:`~fanout.StructuredOutputError`)."""

    @property
    def ok(self) -> bool:
        return self.error is None

    @field_validator("error")
    @classmethod
    def _scrubbed(cls, error: BaseException | None) -> BaseException | None:
        """The error, and the SDK exceptions chained to it, with no key in them: a
        server may echo the request's Authorization header in its reply."""
        if error is not None:
            scrub_exception(error)
        return error

    @field_serializer("error", when_used="json")
    def _error_as_json(self, error: BaseException | None) -> dict[str, str] | None:
        """In JSON, an error is its type and message (an exception is no JSON value),
        with no key in it."""
        if error is None:
            return None
        return {"type": type(error).__name__, "message": redact(str(error))}

    def __repr__(self) -> str:
        return redact(super().__repr__())

    def __str__(self) -> str:
        return redact(super().__str__())


class Report(BaseModel):
    """What a call did."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    questions: int = 0
    answered: int = 0
    failed: int = 0
    cut_short: int = 0
    """Of ``answered``, answers cut at ``max_tokens`` (``finish_reason="length"``): their
    text is what the model wrote before the cap, not the whole answer."""
    filtered: int = 0
    """Of ``answered``, answers the endpoint's content filter cut
    (``finish_reason="content_filter"``): their text is what it let through. They are
    never cached."""
    wall_s: float = 0.0
    requests: int = 0
    """HTTP requests sent, retries included."""
    retries: int = 0
    rate_limited: int = 0
    """429 responses seen."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_prompt_tokens: int = 0
    """Of ``prompt_tokens``, those the endpoint served from its prompt cache."""
    peak_concurrency: int = 0
    """Most requests of this call in flight at once."""
    limit_wait_s: float = 0.0
    """Time requests spent waiting on rate limits and cool-downs, summed."""
    deduplicated: int = 0
    """Questions answered by an identical question's request."""
    cost: Decimal | None = None
    """What the call's usage cost, in US dollars: the sum of its answers' costs; None
    when any of them is unknown (a model without a price: see docs/cost.md)."""
    cache_hits: int = 0
    """Questions answered from the response cache, sending nothing (``Answer.cached``)."""
    policy: str = "split"
    plan: Plan | None = None
    """The plan the call followed: groups, every candidate's estimated time and
    tokens, the inputs used, and the reason in one sentence. For an input read in
    chunks, the plan of the first chunk. When the call re-planned as answers came
    in, the last revision of it (see ``revisions``)."""
    revisions: list[PlanRevision] = Field(default_factory=list)
    """Every plan the call made, in order: when, why, from what, and what it chose.
    One entry for a call planned once; more when answer lengths were unknown (a
    first wave, then the rest) or the call re-planned as evidence came in."""
    reasked: list[int] = Field(default_factory=list)
    """Questions whose merged answer was missing, empty or cut short, and which
    were asked again on their own."""
    merge_checks: list[str] = Field(default_factory=list)
    """What each merge check of the call found (``Policy.merge_agreement``): its
    questions were asked alone and merged, and the answers compared."""
    questions_read: int = 0
    """Items read from the input. Fewer than ``questions`` when the call's timeout
    stopped the reading of a list (the unread positions have a timeout error)."""
    input_exhausted: bool = True
    """The input was read to its end. False when the call's timeout (or an abort)
    stopped the reading: an iterator's remaining items were never read, so they have
    no answer (and, with ``on_error="raise"``, ``PartialFailureError`` says so)."""
    endpoints: dict[str, int] = Field(default_factory=dict)
    """On a ``Fanout(endpoints=[...])``: how many questions each endpoint answered (by
    ``Endpoint.label``); each answer's ``endpoint`` says which. Empty with one endpoint."""
    placements: list[str] = Field(default_factory=list)
    """On several endpoints: each placement of the questions waiting, in words: what
    each endpoint was handed, and the estimates that decided it (``engine/placement.py``)."""
    cooldowns: list[str] = Field(default_factory=list)
    """On several endpoints: each endpoint cooled down after failing, taken out (its
    quota gone), or answering again, in order."""
    fallbacks: int = 0
    """On several endpoints: questions placed again after the endpoint asked failed
    them (or was cooled down while they were in flight)."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def estimated_wall_s(self) -> float | None:
        """The call's wall time as its final plan estimated it: when the last revision
        expected its questions, and the requests still in flight then, to be answered."""
        if self.revisions:
            last = self.revisions[-1]
            return max(last.est_end_s, last.sent_until_s or 0.0)
        return self.plan.chosen.est_wall_s if self.plan is not None else None

    @property
    def plan_reasons(self) -> list[str]:
        """Why the call planned as it did, every decision in order ("0.00 s, start of
        the call: <reason>", then each revision's): ``plan.reason`` is one plan's alone,
        the last of a call that re-planned."""
        if not self.revisions:
            return [self.plan.reason] if self.plan is not None else []
        return [f"{r.at_s:.2f} s, {r.trigger}: {r.plan.reason}" for r in self.revisions]

    @property
    def estimate_error(self) -> float | None:
        """|estimated - actual| / actual wall time of the call's final plan."""
        estimated = self.estimated_wall_s
        if estimated is None or self.wall_s <= 0:
            return None
        return abs(estimated - self.wall_s) / self.wall_s

    def _summary(self) -> list[tuple[str, str]]:
        rows = [
            (
                "",
                f"{self.questions} questions: {self.answered} answered, {self.failed} failed, "
                f"in {self.wall_s:.2f} s",
            ),
            (
                "",
                f"requests {self.requests} (retries {self.retries}, 429s {self.rate_limited}), "
                f"peak {self.peak_concurrency} in flight, {self.limit_wait_s:.2f} s waiting on limits",
            ),
            (
                "",
                f"tokens {self.total_tokens:,} (prompt {self.prompt_tokens:,}, of them cached "
                f"{self.cached_prompt_tokens:,}; completion {self.completion_tokens:,})",
            ),
        ]
        cut = []
        if self.cut_short:
            cut.append(f"{_answers(self.cut_short)} cut short at max_tokens")
        if self.filtered:
            cut.append(f"{_answers(self.filtered)} cut short by the content filter")
        if cut:
            rows.append(("", "; ".join(cut) + " (their text is not the whole answer)"))
        if self.endpoints:
            split = ", ".join(f"{name} {count}" for name, count in self.endpoints.items())
            again = f"; {self.fallbacks} placed again" if self.fallbacks else ""
            rows.append(("endpoints", f"answered by {split}{again}"))
        for note in self.cooldowns[:MERGE_CHECKS_SHOWN]:
            rows.append(("endpoint", note))
        if self.cost is not None:
            rows.append(("cost", f"${self.cost:.6f}"))
        if self.deduplicated:
            rows.append(("", f"{self.deduplicated} duplicate questions answered once"))
        if self.cache_hits:
            rows.append(("", f"{self.cache_hits} answered from the response cache"))
        if len(self.revisions) > 1:
            rows.extend(self._plans_summary())
        elif self.plan is not None:
            chosen = self.plan.chosen
            basis = (
                " (on priors: no response measured yet)"
                if self.revisions and self.revisions[-1].on_priors
                else ""
            )
            rows.append(
                (
                    "plan",
                    f"{chosen.label}, {chosen.requests} requests, "
                    f"estimated {chosen.est_wall_s:.2f} s{basis}",
                )
            )
            rows.append(("why", self.plan.reason))
        if len(self.revisions) > 1:
            steps = "; ".join(
                f"{r.at_s:.2f} s: {r.plan.chosen.label} for {r.questions}" for r in self.revisions
            )
            rows.append(("revisions", steps))
        if self.reasked:
            shown = ", ".join(map(str, self.reasked[:10]))
            more = f" and {len(self.reasked) - 10} more" if len(self.reasked) > 10 else ""
            rows.append(("", f"asked again alone after a merged reply: {shown}{more}"))
        for check in self.merge_checks[:MERGE_CHECKS_SHOWN]:
            rows.append(("merge check", check))
        if len(self.merge_checks) > MERGE_CHECKS_SHOWN:
            hidden = len(self.merge_checks) - MERGE_CHECKS_SHOWN
            rows.append(("merge check", f"and {hidden} more (report.merge_checks has them all)"))
        return rows

    def _plans_summary(self) -> list[tuple[str, str]]:
        """The plan of a call planned more than once, as a whole: each step (a first wave,
        the plan, a change of plan), the requests they sent, and the call's estimate."""
        steps: list[str] = []
        for revision in self.revisions:
            if revision.trigger.startswith("first wave"):
                step = f"a first wave of {revision.questions} alone"
            else:
                step = revision.plan.chosen.label
            if not steps or steps[-1] != step:
                steps.append(step)
        requests = sum(revision.requests for revision in self.revisions)
        estimated = self.estimated_wall_s or 0.0
        basis = " (on priors: no response measured yet)" if self.revisions[-1].on_priors else ""
        first, last = self.revisions[0].plan, self.revisions[-1].plan
        why = first.reason if len(steps) == 1 else f"{first.reason} Then: {last.reason}"
        return [
            (
                "plan",
                f"{', then '.join(steps)}, {requests} requests, estimated {estimated:.2f} s"
                f"{basis}, over {len(self.revisions)} revisions",
            ),
            ("why", why),
        ]

    def __str__(self) -> str:
        """A short summary for people: ``print(answers.report)``. The full data
        stays in the fields (``model_dump()``)."""
        lines: list[str] = []
        for key, value in self._summary():
            head = f"{key}: " if key else ""
            lines.extend(
                textwrap.wrap(value, 100, initial_indent=head, subsequent_indent=" " * len(head))
            )
        return "\n".join(lines)

    def __rich__(self) -> Any:
        """How ``rich.print(answers.report)`` shows it: a small table."""
        try:
            from rich.table import Table
        except ImportError:  # pragma: no cover - rich is optional
            return str(self)
        table = Table(title="fanout report", show_header=False, box=None)
        table.add_column(style="bold")
        table.add_column()
        for key, value in self._summary():
            table.add_row(key, value)
        return table


def _answers(n: int) -> str:
    return f"{n} answer" if n == 1 else f"{n} answers"


class Answers(Sequence[Answer]):
    """The answers of a call, in input order, and its report."""

    __slots__ = ("_items", "report")

    def __init__(self, items: Sequence[Answer], report: Report) -> None:
        self._items = list(items)
        self.report = report

    @overload
    def __getitem__(self, index: int) -> Answer: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Answer]: ...
    def __getitem__(self, index: int | slice) -> Answer | Sequence[Answer]:
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[Answer]:
        return iter(self._items)

    @property
    def texts(self) -> list[str | None]:
        """Each answer's text (None where the question failed), in input order."""
        return [a.text for a in self._items]

    @property
    def errors(self) -> list[Answer]:
        """The answers that failed."""
        return [a for a in self._items if a.error is not None]

    def __repr__(self) -> str:
        r = self.report
        return (
            f"<Answers {len(self)} answered={r.answered} failed={r.failed} wall_s={r.wall_s:.3f}>"
        )
