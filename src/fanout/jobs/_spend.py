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
from collections.abc import Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.exceptions import BudgetExceededError
from ..core.models import Answer, Question, Usage
from ..engine.spending import Pricer, check_max_cost, worst_case
from ._output import BOM

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["batch_reservations", "job_cap", "not_sent", "record_cost", "recorded_spend"]


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
                record = json.loads(raw.removeprefix(BOM) if lineno == 1 else raw,
                                    parse_float=Decimal)  # fmt: skip
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


def batch_reservations(
    requests: list[tuple[str, Mapping[str, Any]]], pricer: Pricer, left: Decimal
) -> list[Decimal]:
    """The worst cases, at the batch price, of the first of ``requests`` (model, body)
    that fit in ``left`` together, in order: a batch's cost is known only once it has
    run, so each of its requests reserves its worst case against a job's spend cap."""
    fit: list[Decimal] = []
    for model, body in requests:
        worst = worst_case(pricer, body, model, None, tier="batch")
        if worst > left:
            break
        left -= worst
        fit.append(worst)
    return fit


def not_sent(question: Question, cap: Decimal, spent: Decimal) -> Answer:
    """The answer of a question whose batch request did not fit under the spend cap."""
    error = BudgetExceededError(
        f"not sent: its batch request's worst case would pass the spend cap max_cost=${cap} "
        f"(${spent:.6f} spent)", index=0, question=question.text, attempts=0, cap=cap,
        spent=spent)  # fmt: skip
    return Answer(index=0, question=question.text, id=question.id, error=error)
