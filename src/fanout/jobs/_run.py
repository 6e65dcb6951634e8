"""Resumable JSONL jobs: questions in, answers out, nothing lost when killed.

Input: one JSON object per line (UTF-8, a byte-order mark is ignored),
``{"id": ..., "question": ...}``, optionally with ``"system"``,
``"expected_tokens"`` and any ``create()`` parameter (``"max_tokens"``,
``"temperature"``, ...) for that question alone.

Output: one JSON object per line, appended as soon as each answer is known:
``{"id", "answer", "error", "usage", "attempts", "mode", "finish_reason",
"fingerprint", "cost"}`` (``cost``: US dollars, null if the price is unknown), with
``"tool_calls"`` and ``"refusal"`` when the reply held them, and ``"endpoint"`` (the one
that answered) on several endpoints.
The output is locked while a job writes it (see :mod:`fanout.jobs._output`): a second
job on it stops at once.

Resuming (the default when the output exists): the *last* record of an id is what
the output says about it. An id is skipped if that record is an answer to the same
request; it is asked again, and a new record appended, if

* the record is a failure (unless ``retry_failed=False``), or
* its ``fingerprint`` differs: the question, the system prompt, the model or a
  ``create()`` parameter changed since. The first such id is logged as a warning,
  and the summary counts them (``reasked_changed``). Records without a
  fingerprint (written by fanout 0.1) are trusted.

Only whole records count (see :mod:`fanout._joboutput`): a line edited by hand into
something fanout does not write (``{"id": 1}`` alone, neither answer nor error, a
fingerprint that is not one) is ignored, and its id asked again.

Bad input lines (not UTF-8, not strict JSON, a string cut inside a character, no id,
no question, an id seen before, a parameter ``create()`` would refuse) are logged once
as ``FILE:LINE: skipped: reason``, kept in the summary, and skipped; the job goes on.

The job stops reading its input, and sends nothing more, after the first answer
that says the API key cannot be used: no quota left (``insufficient_quota``), or
refused (401, 403). The ids not answered are answered by running it again.

The output must not be the input (by any name): refused before anything is written.
An input that is not a regular file (a pipe, ``/dev/stdin``) is read once, as it
comes: the progress total is then unknown.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

import openai
from pydantic import ValidationError

from ..core.exceptions import BudgetExceededError, JobError, QuotaExceededError
from ..core.logs import redact, redact_registered
from ..core.models import Answer, Question
from ..core.notgiven import NOT_GIVEN, given_or
from ..core.params import params_problem
from ..core.progress import count_lines, expected_total
from ..core.tiers import tier_factor
from ..engine.call import CALL_OPTIONS
from ..engine.spending import call_caps
from ._output import BOM, Done, JobOutput, id_key, log
from ._shard import Shard
from ._spend import job_cap, record_cost

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["BadLine", "JobSummary", "fingerprint", "parse_record", "run_jsonl"]

_QUESTION_KEYS = {"id", "question", "system", "expected_tokens", "trusted"}
_POSITION = re.compile(r"question \d+")
# A call's own keyword arguments, not create() parameters; but the API stays in the
# fingerprint: the same question through another API is another request.
_NOT_SENT = frozenset(CALL_OPTIONS) - {"api"}


@dataclass(frozen=True)
class BadLine:
    """An input line that was skipped, and why."""

    line: int
    reason: str


@dataclass
class JobSummary:
    """What a ``run_jsonl`` call did."""

    total_lines: int = 0
    skipped_done: int = 0
    """Ids already answered, for the same request, in the output (a resumed run)."""
    answered: int = 0
    failed: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)
    repaired_tail: bool = False
    """A torn last line was cut off the output before resuming."""
    retried_failed: int = 0
    """Ids whose last record was a failure, asked again."""
    skipped_failed: int = 0
    """Ids whose last record was a failure, left alone (``retry_failed=False``):
    they still have no answer."""
    reasked_changed: int = 0
    """Ids answered before for a different request (question, system prompt, model
    or parameters), asked again."""
    stopped_for_quota: bool = False
    """The API key ran out of quota (``insufficient_quota``): the job stopped reading
    its input; the ids not answered are answered by running it again later."""
    cached: int = 0
    """Of ``answered``, those answered from the response cache (``--cache``)."""
    stopped_for_key: str | None = None
    """The endpoint refused the API key (401, or 403: no access), e.g. ``"401
    invalid_api_key"``: the job stopped reading its input and sent nothing more; the
    ids not answered are answered by running it again with a key it accepts."""
    cost: Decimal | None = Decimal(0)
    """What this run's requests cost, in US dollars (None: a price is unknown)."""
    spent_before: Decimal = Decimal(0)
    """With ``max_cost``: what the output's records say earlier runs spent."""
    first_error: str | None = None
    """The first failed answer's error, as its record holds it (naming its id)."""
    stopped_for_budget: bool = False
    """``max_cost`` was reached: a request would have passed it, so the job stopped
    reading its input; running it again with a higher cap answers the rest."""
    tier: str | None = None
    """How the job was sent: ``"standard"``, ``"flex"`` or ``"batch"`` (see
    :func:`fanout.jobs.run_job`)."""
    tier_reason: str | None = None
    """Why that tier: the choice, and what the others would have cost (a deadline and
    the cost objective; None otherwise)."""
    batches: int = 0
    """Batches this output went through (the Batch API)."""
    batch_answered: int = 0
    """Of ``answered``, the answers that came from a batch."""
    batch_unchecked: int = 0
    """Of ``batch_answered``, the answers taken from merged batch requests: nothing
    checked them against split answers (their records say ``"merged": "unchecked"``)."""
    token_units: float = 0.0
    """The tokens of the records written, each priced at its tier relative to the
    standard one (``fanout.core.tiers.tier_factor``): batch and flex tokens count half."""
    other_shards: int = 0
    """Input lines left to the other shards (``shard=``): their ids hash to another
    shard; lines without an id are reported by shard 1 alone."""


def fingerprint(
    question: Question, model: object, system: str | None, params: Mapping[str, Any]
) -> str:
    """A digest of what is sent for ``question``: its text, the system prompt, the
    model and the ``create()`` parameters (the call's, then the question's own)."""
    request = {
        "question": question.text,
        "system": question.system if question.system is not None else system,
        "model": model,
        "params": {**params, **question.params},
    }
    blob = json.dumps(
        request, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=repr
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def _call_request(
    fo: Fanout, overrides: Mapping[str, Any]
) -> tuple[object, str | None, dict[str, Any]]:
    """(model, system, create() parameters) of a call on ``fo`` with ``overrides``,
    resolved the way the engine resolves them."""
    params = {**fo.create_kwargs, **{k: v for k, v in overrides.items() if k not in _NOT_SENT}}
    model = overrides.get("model") or fo.model or params.get("model")
    params.pop("model", None)
    return model, given_or(overrides.get("system", NOT_GIVEN), fo.system), params


class _NotStrictJSONError(ValueError):
    """A number strict JSON has no word for (NaN, Infinity, beyond a float's range)."""


def _no_constant(name: str) -> float:
    raise _NotStrictJSONError(f"{name} is not a JSON value")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _NotStrictJSONError(f"{text} is too large for a number")
    return value


def _loads_strict(line: str) -> Any:
    """``json.loads`` that refuses NaN, Infinity and numbers beyond a float's range:
    written back (an id), they would make the output unreadable to strict parsers."""
    return json.loads(line, parse_constant=_no_constant, parse_float=_finite)


def _lone_surrogate(record: object) -> str | None:
    """A lone surrogate in any string of ``record`` (a string cut inside a character,
    as ``JSON.stringify`` writes it), as ``\\udXXX``; None if there is none."""
    try:
        json.dumps(record, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"\\u{ord(exc.object[exc.start]):04x}"
    return None


def _one_line(exc: ValidationError) -> str:
    """A pydantic error in one line: what each refused field says."""
    return "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in exc.errors())


def _parse(raw: bytes, lineno: int) -> tuple[Question | None, str | None, BadLine | None]:
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            None,
            None,
            BadLine(
                lineno, f"not UTF-8: byte 0x{raw[exc.start]:02x} at offset {exc.start} of the line"
            ),
        )
    try:
        record = _loads_strict(line)
        surrogate = _lone_surrogate(record)
    except json.JSONDecodeError as exc:
        return None, None, BadLine(lineno, f"not JSON: {exc.msg}")
    except _NotStrictJSONError as exc:
        return None, None, BadLine(lineno, f"not strict JSON: {exc}")
    except ValueError as exc:  # an integer of more digits than Python converts
        return None, None, BadLine(lineno, f"not JSON: {exc}")
    except RecursionError:
        return None, None, BadLine(lineno, "not JSON: nested too deeply")
    if surrogate is not None:
        return (
            None,
            None,
            BadLine(
                lineno,
                f"not valid Unicode: a lone surrogate {surrogate} "
                "(a string cut inside a character)",
            ),
        )
    if not isinstance(record, dict):
        return None, None, BadLine(lineno, "not a JSON object")
    return parse_record(record, lineno)


def parse_record(
    record: Mapping[str, Any], lineno: int
) -> tuple[Question | None, str | None, BadLine | None]:
    """The question of one input record (a JSONL line's object, or a dataset's row in
    :mod:`fanout.ray`): its id, text, system prompt, expected tokens, trust and
    ``create()`` parameters, checked; or why it cannot be asked (a :class:`BadLine`
    numbered ``lineno``). The id it returns is the record's ``"id"`` as JSON text."""
    if "id" not in record or record["id"] is None:
        return None, None, BadLine(lineno, "missing id")
    if isinstance(record["id"], (dict, list)):
        kind = "an object" if isinstance(record["id"], dict) else "an array"
        return None, None, BadLine(lineno, f"id must be a string or a number, not {kind}")
    qid = id_key(record["id"])
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        hint = ""
        if "question" not in record:
            near = [k for k in ("prompt", "messages", "input", "text", "content") if k in record]
            hint = (
                f' (the question goes under "question"; this line has {near[0]!r})'
                if near
                else (' (the question goes under "question")')
            )
        return None, qid, BadLine(lineno, f"id {qid}: missing or empty question{hint}")
    params = {k: v for k, v in record.items() if k not in _QUESTION_KEYS}
    problem = params_problem(params)
    if problem is not None:
        return None, qid, BadLine(lineno, f"id {qid}: {problem}")
    system = record.get("system")
    if system is not None and not isinstance(system, str):
        kind = type(system).__name__.replace("dict", "object").replace("list", "array")
        return None, qid, BadLine(lineno, f"id {qid}: system must be a string, not {kind}")
    expected = record.get("expected_tokens")
    trusted = record.get("trusted", True)
    if not isinstance(trusted, bool):
        return None, qid, BadLine(lineno, f"id {qid}: trusted must be true or false")
    try:
        q = Question(
            text=question,
            id=qid,
            params=params,
            system=system,
            expected_tokens=expected if isinstance(expected, int) and expected > 0 else None,
            trusted=trusted,
        )
    except ValidationError as exc:
        return None, qid, BadLine(lineno, f"id {qid}: {_one_line(exc)}")
    return q, qid, None


def _error_text(answer: Answer, line: int | None) -> str | None:
    """The error of a record, naming the id and its input line (the engine names a
    question by its position among those sent, which means nothing in a file)."""
    error = answer.error
    if error is None:
        return None
    where = f"id {answer.id}" + (f" (line {line})" if line is not None else "")
    message = str(error)
    position = _POSITION.match(message)  # a duplicate's error names the first asker
    message = where + message[position.end() :] if position else f"{where}: {message}"
    return redact(f"{type(error).__name__}: {message}")


def _record(
    answer: Answer, line: int | None, fp: str | None, *, merged: str | None = None
) -> bytes:
    """The output record of ``answer`` (``merged``: ``"unchecked"`` for an answer taken
    from a merged batch request, whose answers nothing checked; else no such field)."""
    record: dict[str, Any] = {
        "id": json.loads(answer.id) if answer.id is not None else None,
        # Only the keys fanout knows are taken out of an answer's text: a key-shaped
        # string in an answer may be what was asked for (see fanout.core.logs).
        "answer": None if answer.text is None else redact_registered(answer.text),
        "error": _error_text(answer, line),
        "usage": {
            "prompt_tokens": answer.usage.prompt_tokens,
            "completion_tokens": answer.usage.completion_tokens,
        },
        "attempts": answer.attempts,
        "mode": answer.mode,
        "finish_reason": answer.finish_reason,
        "fingerprint": fp,
    }
    if answer.tool_calls:  # an answer of tool calls (tools=), or an error's (none offered)
        record["tool_calls"] = answer.tool_calls
    if answer.refusal is not None:
        record["refusal"] = redact_registered(answer.refusal)
    if merged is not None:
        record["merged"] = merged
    if answer.endpoint is not None:
        record["endpoint"] = answer.endpoint
    record["cost"] = record_cost(answer)
    return (json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def _refusal(error: BaseException | None) -> str | None:
    """``"401 invalid_api_key"`` if ``error`` comes from the endpoint refusing the API
    key (401) or access (403), directly or as the reason a request was not sent."""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, (openai.AuthenticationError, openai.PermissionDeniedError)):
            return f"{error.status_code}" + (f" {error.code}" if error.code else "")
        error, seen = error.__cause__, seen + 1
    return None


def _open_input(src: Path) -> IO[bytes]:
    try:
        return src.open("rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"input file not found: {src}") from None
    except OSError as exc:
        raise JobError(f"cannot read the questions from {src}: {exc.strerror}") from exc


def _owns(shard: Shard, qid: str | None) -> bool:
    """Whether a line with id ``qid`` is the shard's (a line without one: shard 1's)."""
    return shard.owns(qid) if qid is not None else shard.index == 1


def _foreign_records(dst: Path, done: Mapping[str, Done], shard: Shard) -> None:
    """Warn if the output holds ids of other shards: written with another split."""
    foreign = sum(1 for key in done if not shard.owns(key))
    if foreign:
        log.warning(
            "%s holds %d id(s) that are not shard %s's: was it written with another "
            "--shard? (fanout combine keeps one record per id)",
            dst,
            foreign,
            shard,
        )


async def run_jsonl(
    fo: Fanout,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    resume: bool = True,
    retry_failed: bool = True,
    progress: bool = False,
    shard: Shard | None = None,
    **overrides: Any,
) -> JobSummary:
    """Answer every question of ``input_path`` into ``output_path`` (see the module
    docstring). ``resume=False`` empties the output first; ``retry_failed=False``
    leaves ids whose last record is a failure alone. ``overrides`` are what
    ``Fanout.ask_many`` takes. ``shard=Shard(index=K, count=N)`` answers only the
    ids of shard K of N (see :mod:`fanout.jobs._shard`): give each shard its own
    output. Raises :class:`JobError` if the output is locked by
    another run, cannot be written, or is the input."""
    summary = JobSummary()
    await run_into(
        summary,
        fo,
        input_path,
        output_path,
        resume=resume,
        retry_failed=retry_failed,
        progress=progress,
        shard=shard,
        **overrides,
    )
    return summary


class _JobRun:
    """One run of a JSONL job (:func:`run_into`): the input read line by line into the
    questions the output does not answer yet, each answer recorded as it comes."""

    def __init__(
        self,
        summary: JobSummary,
        src: Path,
        lines: IO[bytes],
        done: Mapping[str, Done],
        request: tuple[object, str | None, dict[str, Any]],
        *,
        retry_failed: bool,
        shard: Shard | None,
    ) -> None:
        self.summary = summary
        self.src = src
        self.lines = lines
        self.done = done
        self.retry_failed = retry_failed
        self.shard = shard
        self.model, self.system, self.params = request  # what the fingerprints cover
        self.seen: set[str] = set()
        self.pending: dict[str, tuple[int, str]] = {}  # id -> (input line, fingerprint)
        self.stopped: list[JobError] = []

    def skip(self, bad: BadLine) -> None:
        self.summary.bad_lines.append(bad)
        log.warning("%s:%d: skipped: %s", self.src, bad.line, bad.reason)

    def resumed(self, qid: str, fp: str, prev: Done, lineno: int) -> bool:
        """Whether the output already holds what this question needs."""
        summary = self.summary
        if prev.fingerprint is not None and prev.fingerprint != bytes.fromhex(fp):
            summary.reasked_changed += 1
            level = log.warning if summary.reasked_changed == 1 else log.info
            level(
                "%s:%d: id %s was answered for a different request (question, system "
                "prompt, model or parameters): asking it again",
                self.src,
                lineno,
                qid,
            )
            return False
        if prev.ok:
            summary.skipped_done += 1
            return True
        if not self.retry_failed and not prev.unsent:
            summary.skipped_failed += 1
            return True
        summary.retried_failed += 1
        return False

    async def questions(self) -> AsyncIterator[Question]:
        """The questions to ask, read as the engine takes them. Short lines of a local
        file are read between requests: not worth a thread."""
        summary = self.summary
        lineno = 0
        try:
            for lineno, raw in enumerate(self.lines, 1):
                if summary.stopped_for_quota or summary.stopped_for_key:
                    return  # the key is refused, or has no quota: nothing can be answered
                if summary.stopped_for_budget:
                    return  # the spend cap is reached: run again with a higher one
                if lineno == 1:
                    raw = raw.removeprefix(BOM)
                if not raw.strip():
                    continue
                q = self._question(raw, lineno)
                if q is not None:
                    yield q
        except OSError as exc:
            # Raised here it would reach the caller wrapped in the engine's
            # ExceptionGroup: stop reading, and raise it once the answers are in.
            self.stopped.append(JobError(f"{self.src}:{lineno + 1}: cannot read: {exc.strerror}"))

    def _question(self, raw: bytes, lineno: int) -> Question | None:
        """The question of one input line, if it is to be asked (None: bad, another
        shard's, or answered already)."""
        summary = self.summary
        summary.total_lines += 1
        q, qid, bad = _parse(raw, lineno)
        if self.shard is not None and not _owns(self.shard, qid):
            summary.total_lines -= 1
            summary.other_shards += 1
            return None
        if qid is not None and bad is None and qid in self.seen:
            bad = BadLine(lineno, f"duplicate id {qid}")
        if bad is not None:
            self.skip(bad)
            return None
        assert q is not None and qid is not None
        self.seen.add(qid)
        fp = fingerprint(q, self.model, self.system, self.params)
        prev = self.done.get(qid)
        if prev is not None and self.resumed(qid, fp, prev, lineno):
            return None
        self.pending[qid] = (lineno, fp)
        return q

    def left(self, counted: int | None) -> int | None:
        """The progress total: the input's lines (``counted``), less those skipped on
        the way; a shard's, those read and a fair share of the rest."""
        if counted is None:
            return None
        summary, mine = self.summary, counted
        if self.shard is not None:
            unread = counted - summary.total_lines - summary.other_shards
            mine = summary.total_lines + round(unread / self.shard.count)
        return mine - summary.skipped_done - summary.skipped_failed - len(summary.bad_lines)

    def record(self, out: JobOutput, answer: Answer) -> None:
        """Write ``answer`` to the output and count it; a refused key, a quota gone or
        the spend cap reached stop the reading."""
        summary = self.summary
        where = self.pending.pop(answer.id, None) if answer.id is not None else None
        line, fp = where if where is not None else (None, None)
        out.append(_record(answer, line, fp))
        if answer.cost is not None and summary.cost is not None:
            summary.cost += answer.cost
        elif answer.usage.total_tokens:
            summary.cost = None  # tokens of an unknown price
        summary.token_units += answer.usage.total_tokens * tier_factor(summary.tier or "standard")
        if answer.error is None:
            summary.answered += 1
            summary.cached += answer.cached
            return
        summary.failed += 1
        summary.first_error = summary.first_error or _error_text(answer, line)
        if isinstance(answer.error, BudgetExceededError):
            summary.stopped_for_budget = True
        if isinstance(answer.error, QuotaExceededError):
            summary.stopped_for_quota = True
        refused = _refusal(answer.error)
        if refused is not None and summary.stopped_for_key is None:
            summary.stopped_for_key = refused


async def run_into(
    summary: JobSummary,
    fo: Fanout,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    resume: bool = True,
    retry_failed: bool = True,
    progress: bool = False,
    shard: Shard | None = None,
    **overrides: Any,
) -> None:
    """:func:`run_jsonl`, counting into ``summary`` as it goes: the command line
    says what was written when it is interrupted."""
    src, dst = Path(input_path), Path(output_path)
    request = _call_request(fo, overrides)
    model = request[0]
    if overrides.get("max_cost") is not None:  # a cap that cannot be kept: before any file
        call_caps(None, overrides["max_cost"], fo.pricer, str(model))
    with (
        _open_input(src) as f,
        JobOutput.open(dst, overwrite=not resume, input_file=(src, os.fstat(f.fileno()))) as out,
    ):
        summary.repaired_tail = out.repaired
        done = out.read_done()
        if overrides.get("max_cost") is not None:  # the cap is the job's, over all its runs
            overrides["max_cost"], summary.spent_before = job_cap(
                overrides["max_cost"], dst, fo, model
            )
        if shard is not None:
            _foreign_records(dst, done, shard)
        job = _JobRun(summary, src, f, done, request, retry_failed=retry_failed, shard=shard)
        # Only a regular file is counted ahead: a pipe read to its end would leave
        # nothing for the job, and a character device may never end.
        regular = stat.S_ISREG(os.fstat(f.fileno()).st_mode)
        counted = count_lines(src) if progress and regular else None
        total = expected_total.set(lambda: job.left(counted))
        answers = fo.as_completed(job.questions(), progress=progress, **overrides)
        try:
            async for answer in answers:
                job.record(out, answer)
        finally:
            aclose = getattr(answers, "aclose", None)
            if aclose is not None:
                await aclose()
            expected_total.reset(total)
        if job.stopped:
            raise job.stopped[0]
