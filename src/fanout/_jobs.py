"""Resumable JSONL jobs: questions in, answers out, nothing lost when killed.

Input: one JSON object per line, ``{"id": ..., "question": ...}``, optionally with
``"system"``, ``"expected_tokens"`` and any ``create()`` parameter (``"max_tokens"``,
``"temperature"``, ...) for that question alone.

Output: one JSON object per line, appended and flushed as soon as each answer is
known: ``{"id", "answer", "error", "usage", "attempts", "mode", "finish_reason"}``.

Resuming (the default when the output exists): ids already in the output are
skipped; a torn last line (the process was killed while writing it) is cut off
first. Each record goes out in a single ``write`` on a file opened for appending,
so a line is either whole or the torn tail that the next run removes. Bad input
lines (not JSON, no id, no question, an id seen before) are reported with their
line numbers and skipped; the job goes on.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._models import Answer, Question
from ._progress import count_lines, expected_total

if TYPE_CHECKING:
    from ._fanout import Fanout

__all__ = ["BadLine", "JobSummary", "read_done_ids", "repair_tail", "run_jsonl"]

log = logging.getLogger("fanout.jobs")

_QUESTION_KEYS = {"id", "question", "system", "expected_tokens"}


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
    """Ids already answered in the output (a resumed run)."""
    answered: int = 0
    failed: int = 0
    bad_lines: list[BadLine] = field(default_factory=list)
    repaired_tail: bool = False
    """A torn last line was cut off the output before resuming."""


def repair_tail(path: Path) -> bool:
    """Cut a torn last line (no newline, or not JSON) off ``path``; True if cut."""
    if not path.exists():
        return False
    with path.open("rb+") as f:
        f.seek(0, os.SEEK_END)
        size = f.tell()
        if size == 0:
            return False
        # Find the start of the last line.
        pos = size
        chunk = 4096
        tail = b""
        while pos > 0:
            step = min(chunk, pos)
            pos -= step
            f.seek(pos)
            tail = f.read(step) + tail
            if tail[:-1].rfind(b"\n") >= 0:
                break
        last_nl = tail[:-1].rfind(b"\n")
        line_start = pos + last_nl + 1 if last_nl >= 0 else 0
        f.seek(line_start)
        last = f.read()
        ok = last.endswith(b"\n")
        if ok:
            try:
                json.loads(last)
            except ValueError:
                ok = False
        if ok:
            return False
        f.truncate(line_start)
        return True


def read_done_ids(path: Path) -> set[str]:
    """Ids already in an output file (answered or failed for good)."""
    done: set[str] = set()
    if not path.exists():
        return done
    with path.open("r", encoding="utf-8") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict) and "id" in record:
                done.add(_key(record["id"]))
    return done


def _parse(line: str, lineno: int) -> tuple[Question | None, str | None, BadLine | None]:
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        return None, None, BadLine(lineno, f"not JSON: {exc.msg}")
    if not isinstance(record, dict):
        return None, None, BadLine(lineno, "not a JSON object")
    if "id" not in record or record["id"] is None or isinstance(record["id"], (dict, list)):
        return None, None, BadLine(lineno, "missing id")
    qid = _key(record["id"])
    question = record.get("question")
    if not isinstance(question, str) or not question.strip():
        return None, qid, BadLine(lineno, f"id {qid}: missing or empty question")
    params = {k: v for k, v in record.items() if k not in _QUESTION_KEYS}
    expected = record.get("expected_tokens")
    try:
        q = Question(
            text=question,
            id=qid,
            params=params,
            system=record.get("system") if isinstance(record.get("system"), str) else None,
            expected_tokens=expected if isinstance(expected, int) and expected > 0 else None,
        )
    except ValueError as exc:
        return None, qid, BadLine(lineno, f"id {qid}: {exc}")
    return q, qid, None


def _prepare(src: Path, dst: Path, *, resume: bool) -> tuple[bool, set[str]]:
    if not src.exists():
        raise FileNotFoundError(f"input file not found: {src}")
    if not resume and dst.exists():
        dst.unlink()
    repaired = repair_tail(dst)
    if repaired:
        log.warning("cut a torn last line off %s before resuming", dst)
    return repaired, read_done_ids(dst)


def _key(value: object) -> str:
    """An id as its JSON text: 1 and "1" are different ids, and the output echoes the
    id with its input type."""
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _record(answer: Answer) -> bytes:
    error = None if answer.error is None else f"{type(answer.error).__name__}: {answer.error}"
    record: dict[str, Any] = {
        "id": json.loads(answer.id) if answer.id is not None else None,
        "answer": answer.text,
        "error": error,
        "usage": {
            "prompt_tokens": answer.usage.prompt_tokens,
            "completion_tokens": answer.usage.completion_tokens,
        },
        "attempts": answer.attempts,
        "mode": answer.mode,
        "finish_reason": answer.finish_reason,
    }
    return (json.dumps(record, ensure_ascii=False) + "\n").encode("utf-8")


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


async def run_jsonl(
    fo: Fanout,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    resume: bool = True,
    progress: bool = False,
    **overrides: Any,
) -> JobSummary:
    """Answer every question of ``input_path`` into ``output_path`` (see the module
    docstring). ``overrides`` are what ``Fanout.ask_many`` takes."""
    src, dst = Path(input_path), Path(output_path)
    summary = JobSummary()
    # Local file work, done once before anything is sent: blocking is harmless here.
    summary.repaired_tail, done = _prepare(src, dst, resume=resume)
    seen: set[str] = set()

    def lines() -> Iterator[tuple[int, str]]:
        # Reading short lines of a local file between requests: not worth a thread.
        with src.open("r", encoding="utf-8") as f:
            yield from enumerate(f, 1)

    async def questions() -> AsyncIterator[Question]:
        for lineno, line in lines():
            if not line.strip():
                continue
            summary.total_lines += 1
            q, qid, bad = _parse(line, lineno)
            if qid is not None and bad is None and qid in seen:
                bad = BadLine(lineno, f"duplicate id {qid}")
            if bad is not None:
                summary.bad_lines.append(bad)
                log.warning("skipping input line %d: %s", bad.line, bad.reason)
                continue
            assert q is not None and qid is not None
            seen.add(qid)
            if qid in done:
                summary.skipped_done += 1
                continue
            yield q

    counted = count_lines(src) if progress else 0  # progress total: these, less those skipped
    total = expected_total.set(lambda: counted - summary.skipped_done - len(summary.bad_lines))
    fd = os.open(dst, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        async for answer in fo.as_completed(questions(), progress=progress, **overrides):
            _write_all(fd, _record(answer))
            if answer.error is None:
                summary.answered += 1
            else:
                summary.failed += 1
    finally:
        os.close(fd)
        expected_total.reset(total)
    return summary
