"""What a JSONL job has spent: each record's ``cost``, and the job's spend cap.

The cap of a job (``run_jsonl(..., max_cost=X)``, ``fanout run --max-cost X``) is
the job's total, over all its runs: what the output's records say earlier runs
spent counts against it, so a run stopped at the cap and started again with the same
cap sends nothing more, and with a higher one finishes the job. Every record counts,
superseded ones included (they were paid for). A record without a ``cost`` (written
before fanout priced answers) counts its usage at the job's model's full input and
output price.
"""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING

from ..core.exceptions import BudgetExceededError
from ..core.models import Answer, Question, Usage
from ..engine.spending import check_max_cost
from ._output import BOM

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["job_cap", "not_sent", "record_cost", "recorded_spend"]


def record_cost(answer: Answer) -> float | None:
    """An answer's cost as its record holds it: a JSON number of US dollars (None: the
    price is unknown). A float keeps 15 significant digits, far below a cent."""
    return None if answer.cost is None else float(answer.cost)


def _usage_of(record: dict[str, object]) -> Usage:
    usage = record.get("usage")
    if not isinstance(usage, dict):
        return Usage()
    counts = [usage.get("prompt_tokens"), usage.get("completion_tokens")]
    if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
        return Usage()
    return Usage(prompt_tokens=counts[0], completion_tokens=counts[1])  # type: ignore[arg-type]


def recorded_spend(path: Path, fo: Fanout, model: object) -> Decimal:
    """What the records of the output at ``path`` cost, in US dollars."""
    if not path.exists():
        return Decimal(0)
    total = Decimal(0)
    with path.open("rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                record = json.loads(
                    raw.removeprefix(BOM) if lineno == 1 else raw, parse_float=Decimal
                )
            except (ValueError, RecursionError):
                continue
            if not isinstance(record, dict) or "id" not in record:
                continue
            cost = record.get("cost")
            if isinstance(cost, (Decimal, int)) and not isinstance(cost, bool) and cost >= 0:
                total += Decimal(cost)
                continue
            usage = _usage_of(record)
            if usage.total_tokens and isinstance(model, str):
                priced = fo.pricer.cost(usage, model)
                total += priced if priced is not None else Decimal(0)
    return total


def job_cap(max_cost: object, path: Path, fo: Fanout, model: object) -> tuple[Decimal, Decimal]:
    """(the cap left for this run, what earlier runs spent) for a job capped at
    ``max_cost`` whose output is ``path``."""
    cap = check_max_cost(max_cost)
    assert cap is not None
    spent = recorded_spend(path, fo, model)
    return max(Decimal(0), cap - spent), spent


def not_sent(question: Question, worst: Decimal, left: Decimal) -> Answer:
    """The answer of a question whose batch request's worst case (``worst``) did not fit
    in what the spend caps left (``left``) with no batch out."""
    error = BudgetExceededError(
        f"not sent: its batch request's worst case ${worst:.6f} would pass the spend cap "
        f"(${max(left, Decimal(0)):.6f} left of it)",
        index=0,
        question=question.text,
        attempts=0,
        spent=None,
    )
    return Answer(index=0, question=question.text, id=question.id, error=error)
