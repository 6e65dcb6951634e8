"""Resumable JSONL jobs: questions in, answers out, nothing lost when killed.

Input: one JSON object per line (UTF-8, a byte-order mark is ignored),
``{"id": ..., "question": ...}``, optionally with ``"system"``,
``"expected_tokens"`` and any ``create()`` parameter (``"max_tokens"``,
``"temperature"``, ...) for that question alone.

Output: one JSON object per line, appended as soon as each answer is known:
``{"id", "answer", "error", "usage", "attempts", "mode", "finish_reason",
"fingerprint"}``, with ``"tool_calls"`` and ``"refusal"`` when the reply held them.
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

Bad input lines (not UTF-8, not JSON, no id, no question, an id seen before) are
logged once as ``FILE:LINE: skipped: reason``, kept in the summary, and skipped; the
job goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from ..core.exceptions import JobError, QuotaExceededError
from ..core.logs import redact, redact_registered
from ..core.models import Answer, Question
from ..core.progress import count_lines, expected_total
from ._output import BOM, Done, JobOutput, id_key, log

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["BadLine", "JobSummary", "fingerprint", "run_jsonl"]

_QUESTION_KEYS = {"id", "question", "system", "expected_tokens", "trusted"}
_POSITION = re.compile(r"question \d+")
# Keyword arguments of Fanout.as_completed that are not part of the request sent.
_CALL_OPTIONS = {"model", "system", "retry", "policy", "on_error", "timeout", "progress",
                 "on_answer", "dedupe"}  # fmt: skip


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


def fingerprint(question: Question, model: object, system: str | None,
                params: Mapping[str, Any]) -> str:  # fmt: skip
    """A digest of what is sent for ``question``: its text, the system prompt, the
    model and the ``create()`` parameters (the call's, then the question's own)."""
    request = {
        "question": question.text,
        "system": question.system if question.system is not None else system,
        "model": model,
        "params": {**params, **question.params},
    }
    blob = json.dumps(request, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                      default=repr)  # fmt: skip
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()[:32]


def _call_request(
    fo: Fanout, overrides: Mapping[str, Any]
) -> tuple[object, str | None, dict[str, Any]]:
    """(model, system, create() parameters) of a call on ``fo`` with ``overrides``,
    resolved the way the engine resolves them."""
    params = {**fo.create_kwargs, **{k: v for k, v in overrides.items() if k not in _CALL_OPTIONS}}
    model = overrides.get("model") or fo.model or params.get("model")
    params.pop("model", None)
    system = overrides.get("system")
    return model, system if system is not None else fo.system, params


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
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, None, BadLine(lineno, f"not JSON: {exc.msg}")
    if not isinstance(record, dict):
        return None, None, BadLine(lineno, "not a JSON object")
    if "id" not in record or record["id"] is None or isinstance(record["id"], (dict, list)):
        return None, None, BadLine(lineno, "missing id")
    qid = id_key(record["id"])
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        return None, qid, BadLine(lineno, f"id {qid}: missing or empty question")
    params = {k: v for k, v in record.items() if k not in _QUESTION_KEYS}
    expected = record.get("expected_tokens")
    trusted = record.get("trusted", True)
    if not isinstance(trusted, bool):
        return None, qid, BadLine(lineno, f"id {qid}: trusted must be true or false")
    try:
        q = Question(
            text=question,
            id=qid,
            params=params,
            system=record.get("system") if isinstance(record.get("system"), str) else None,
            expected_tokens=expected if isinstance(expected, int) and expected > 0 else None,
            trusted=trusted,
        )
    except ValueError as exc:
        return None, qid, BadLine(lineno, f"id {qid}: {exc}")
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


def _record(answer: Answer, line: int | None, fp: str | None) -> bytes:
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
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def _open_input(src: Path) -> IO[bytes]:
    try:
        return src.open("rb")
    except FileNotFoundError:
        raise FileNotFoundError(f"input file not found: {src}") from None
    except OSError as exc:
        raise JobError(f"cannot read the questions from {src}: {exc.strerror}") from exc


async def run_jsonl(
    fo: Fanout,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    resume: bool = True,
    retry_failed: bool = True,
    progress: bool = False,
    **overrides: Any,
) -> JobSummary:
    """Answer every question of ``input_path`` into ``output_path`` (see the module
    docstring). ``resume=False`` empties the output first; ``retry_failed=False``
    leaves ids whose last record is a failure alone. ``overrides`` are what
    ``Fanout.ask_many`` takes. Raises :class:`JobError` if the output is locked by
    another run or cannot be written."""
    src, dst = Path(input_path), Path(output_path)
    summary = JobSummary()
    model, system, params = _call_request(fo, overrides)
    with _open_input(src) as f, JobOutput.open(dst, overwrite=not resume) as out:
        summary.repaired_tail = out.repaired
        done = out.read_done()
        seen: set[str] = set()
        pending: dict[str, tuple[int, str]] = {}  # id -> (input line, fingerprint)
        stopped: list[JobError] = []

        def skip(bad: BadLine) -> None:
            summary.bad_lines.append(bad)
            log.warning("%s:%d: skipped: %s", src, bad.line, bad.reason)

        def resumed(qid: str, fp: str, prev: Done, lineno: int) -> bool:
            """Whether the output already holds what this question needs."""
            if prev.fingerprint is not None and prev.fingerprint != bytes.fromhex(fp):
                summary.reasked_changed += 1
                level = log.warning if summary.reasked_changed == 1 else log.info
                level("%s:%d: id %s was answered for a different request (question, system "
                      "prompt, model or parameters): asking it again", src, lineno, qid)  # fmt: skip
                return False
            if prev.ok:
                summary.skipped_done += 1
                return True
            if not retry_failed:
                summary.skipped_failed += 1
                return True
            summary.retried_failed += 1
            return False

        async def questions() -> AsyncIterator[Question]:
            # Short lines of a local file read between requests: not worth a thread.
            lineno = 0
            try:
                for lineno, raw in enumerate(f, 1):
                    if summary.stopped_for_quota:
                        return  # quota is account-wide: nothing more can be answered
                    if lineno == 1:
                        raw = raw.removeprefix(BOM)
                    if not raw.strip():
                        continue
                    summary.total_lines += 1
                    q, qid, bad = _parse(raw, lineno)
                    if qid is not None and bad is None and qid in seen:
                        bad = BadLine(lineno, f"duplicate id {qid}")
                    if bad is not None:
                        skip(bad)
                        continue
                    assert q is not None and qid is not None
                    seen.add(qid)
                    fp = fingerprint(q, model, system, params)
                    prev = done.get(qid)
                    if prev is not None and resumed(qid, fp, prev, lineno):
                        continue
                    pending[qid] = (lineno, fp)
                    yield q
            except OSError as exc:
                # Raised here it would reach the caller wrapped in the engine's
                # ExceptionGroup: stop reading, and raise it once the answers are in.
                stopped.append(JobError(f"{src}:{lineno + 1}: cannot read: {exc.strerror}"))

        # The progress total: the input's lines, less those skipped on the way.
        counted = count_lines(src) if progress else 0
        total = expected_total.set(
            lambda: counted - summary.skipped_done - summary.skipped_failed - len(summary.bad_lines)
        )
        answers = fo.as_completed(questions(), progress=progress, **overrides)
        try:
            async for answer in answers:
                where = pending.pop(answer.id, None) if answer.id is not None else None
                line, fp = where if where is not None else (None, None)
                out.append(_record(answer, line, fp))
                if answer.error is None:
                    summary.answered += 1
                else:
                    summary.failed += 1
                    if isinstance(answer.error, QuotaExceededError):
                        summary.stopped_for_quota = True
        finally:
            aclose = getattr(answers, "aclose", None)
            if aclose is not None:
                await aclose()
            expected_total.reset(total)
        if stopped:
            raise stopped[0]
    return summary
