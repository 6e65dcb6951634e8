"""A batch of a dataset's rows as questions, and their answers as columns.

Each row is read as a line of ``fanout run``'s JSONL is (:func:`fanout.jobs._run.parse_record`):
the question, then the columns named as per-row parameters (``system``,
``expected_tokens``, ``trusted`` and any ``create()`` parameter). A row that cannot be
asked gets an error naming it, and is not sent.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..core.models import Answer, Answers, Question
from ..jobs._output import id_key
from ..jobs._run import _error_text, parse_record

__all__ = ["ANSWER_COLUMNS", "BatchRows", "answer_columns", "read_rows", "row_name"]

ANSWER_COLUMNS = (
    "answer",
    "error",
    "prompt_tokens",
    "completion_tokens",
    "attempts",
    "mode",
    "finish_reason",
    "cached",
    "plan",
    "plan_reason",
    "plan_on_priors",
    "batch",
    "batch_requests",
    "batch_rate_limited",
    "batch_retries",
    "batch_wall_s",
)
"""The columns :func:`fanout.ray.answer` adds, in this order."""

_HEAD = 60


def row_name(row: Mapping[str, Any], column: str, id_column: str | None) -> str:
    """How an error names its row: by its id, else by the start of its question."""
    if id_column is not None:
        return f"id {id_key(row.get(id_column))}"
    text = row.get(column)
    if isinstance(text, str):
        head = text if len(text) <= _HEAD else text[: _HEAD - 1] + "…"
        return f"row {json.dumps(head, ensure_ascii=False)}"
    return f"row {json.dumps(text, ensure_ascii=False, default=repr)[:_HEAD]}"


@dataclass
class BatchRows:
    """The questions of a batch, and where each row's answer comes from."""

    questions: list[Question]
    sent: list[int]
    """For each question, its row in the batch."""
    errors: dict[int, str]
    """Rows not sent, and why (naming the row)."""
    names: list[str]


def read_rows(
    rows: Sequence[Mapping[str, Any]],
    *,
    column: str,
    params: Sequence[str],
    id_column: str | None,
) -> BatchRows:
    """The questions of ``rows`` (a batch as Python values)."""
    out = BatchRows(questions=[], sent=[], errors={}, names=[])
    for i, row in enumerate(rows):
        name = row_name(row, column, id_column)
        out.names.append(name)
        text = row.get(column)
        if text is not None and not isinstance(text, str):
            kind = type(text).__name__
            out.errors[i] = f"{name}: column {column!r} holds a {kind}, not a string"
            continue
        record: dict[str, Any] = {
            "id": row.get(id_column) if id_column is not None else i,
            "question": text,
        }
        for key in params:
            value = row.get(key)
            if value is not None:  # a null is a row without the parameter
                record[key] = value
        if id_column is not None and record["id"] is None:
            out.errors[i] = f"row {i} of its batch: the id column {id_column!r} is null"
            continue
        question, qid, bad = parse_record(record, i)
        if bad is not None or question is None:
            reason = bad.reason if bad is not None else "not a question"
            if qid is not None:
                reason = reason.removeprefix(f"id {qid}: ")
            out.errors[i] = f"{name}: {reason}"
            continue
        out.questions.append(question)
        out.sent.append(i)
    return out


def answer_columns(
    batch: BatchRows, answers: Answers | None, batch_id: str
) -> dict[str, list[Any]]:
    """The added columns of a batch: each row's answer, or its error naming it."""
    n = len(batch.names)
    cols: dict[str, list[Any]] = {name: [None] * n for name in ANSWER_COLUMNS}
    report = answers.report if answers is not None else None
    plan = report.plan if report is not None else None
    for i, reason in batch.errors.items():
        cols["error"][i] = f"InputError: {reason}"
    for pos, row in enumerate(batch.sent):
        answer: Answer | None = answers[pos] if answers is not None else None
        if answer is None:
            continue
        cols["answer"][row] = answer.text if answer.error is None else None
        error = _error_text(answer, None)
        if error is not None:
            cols["error"][row] = error.replace(f"id {answer.id}", batch.names[row], 1)
        cols["prompt_tokens"][row] = answer.usage.prompt_tokens
        cols["completion_tokens"][row] = answer.usage.completion_tokens
        cols["attempts"][row] = answer.attempts
        cols["mode"][row] = answer.mode
        cols["finish_reason"][row] = answer.finish_reason
        cols["cached"][row] = answer.cached
    for i in range(n):
        cols["batch"][i] = batch_id
        if report is not None:
            cols["plan"][i] = plan.mode_label if plan is not None else report.policy
            cols["plan_reason"][i] = plan.reason if plan is not None else None
            # The batch's first plan: later ones rest on what its own answers measured.
            revisions = report.revisions
            cols["plan_on_priors"][i] = revisions[0].on_priors if revisions else None
            cols["batch_requests"][i] = report.requests
            cols["batch_rate_limited"][i] = report.rate_limited
            cols["batch_retries"][i] = report.retries
            cols["batch_wall_s"][i] = report.wall_s
    return cols
