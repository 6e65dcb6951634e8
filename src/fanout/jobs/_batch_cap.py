"""The spend caps of a batch job: the job's own (``max_cost``, over all its runs) and its
``Fanout``'s (``Fanout(max_cost=...)``, over all its calls).

A batch's cost is known only once it has run, so each batch request reserves its
worst case (``engine.spending.worst_case`` at the batch price: its prompt with a
margin, and its ``max_tokens``, else 1,000 tokens per question) against what the caps
leave after what was spent and the reservations of the batches not collected yet. Each
request's reservation is kept in the batch state (``"worst"``); a state written without
one (by a run without a cap, or before caps were kept for batches) is costed again from
the chunk's input file, which stays on disk until the chunk is collected.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.params import answer_cap
from ..engine.spending import UNCAPPED_ANSWER_TOKENS, call_caps, check_max_cost, worst_case
from ._spend import recorded_spend

if TYPE_CHECKING:
    from ..engine.facade import Fanout
    from ._run import JobSummary

__all__ = ["BatchCap"]


class BatchCap:
    """What a batch job's caps leave, and what each of its requests reserves."""

    def __init__(
        self, fo: Fanout, max_cost: object, dst: Path, model: str, summary: JobSummary
    ) -> None:
        self.job = check_max_cost(max_cost)
        """The job's cap (None: none); what earlier runs spent is ``summary.spent_before``."""
        self.shared = fo.spend_cap
        """The ``Fanout``'s cap, which the job's batch spend counts against too."""
        self._pricer = fo.pricer
        self._summary = summary
        self._model = model
        call_caps(self.shared, self.job, fo.pricer, model)  # a cap needs a price to be kept
        if self.job is not None:
            summary.spent_before = recorded_spend(dst, fo, model)

    @property
    def on(self) -> bool:
        return self.job is not None or self.shared is not None

    def left(self, reserved: Decimal) -> Decimal:
        """The least any cap leaves after the spend and ``reserved`` (batches out)."""
        lefts = []
        if self.job is not None:
            lefts.append(self.job - self._job_spent() - reserved)
        if self.shared is not None:
            lefts.append(self.shared.cap - self.shared.spent - self.shared.reserved - reserved)
        return min(lefts)

    def spent(self, cost: Decimal) -> None:
        """A batch answer's cost, counted on the ``Fanout``'s cap (the job's cap reads
        the job summary)."""
        if self.shared is not None:
            self.shared.settle(Decimal(0), cost)

    def online_cap(self) -> Decimal | None:
        """What the job's cap leaves for questions asked online after the batches."""
        if self.job is None:
            return None
        return max(Decimal(0), self.job - self._job_spent())

    def _job_spent(self) -> Decimal:
        """What the job spent: earlier runs' records and this run's answers."""
        return self._summary.spent_before + (self._summary.cost or 0)

    def worst(self, model: str, body: Mapping[str, Any], questions: int) -> Decimal:
        """The most a batch request of ``questions`` questions may cost (a ConfigError
        if its model has no known price: a cap could not be kept on it)."""
        if model:
            call_caps(self.shared, self.job, self._pricer, model)
        if not isinstance(answer_cap(body), int):
            body = {**body, "max_tokens": questions * UNCAPPED_ANSWER_TOKENS}
        return worst_case(self._pricer, body, model, None, tier="batch")

    def reserved(self, chunks: Iterable[dict[str, Any]], directory: Path) -> Decimal:
        """What the requests of ``chunks`` (batches not collected yet) hold reserved."""
        total = Decimal(0)
        for chunk in chunks:
            lines: dict[str, dict[str, Any]] = chunk["lines"]
            missing = {cid for cid, meta in lines.items() if "worst" not in meta}
            total += sum((Decimal(m["worst"]) for m in lines.values() if "worst" in m), Decimal(0))
            if missing:
                total += self._from_file(directory / chunk["file"], missing, lines)
        return total

    def _from_file(self, path: Path, wanted: set[str], lines: dict[str, dict[str, Any]]) -> Decimal:
        """The worst cases of the ``wanted`` lines of a chunk's input file; if it is gone,
        as many 1,000-token requests at the batch price of the lines' questions."""
        total = Decimal(0)
        try:
            text = path.read_text("utf-8")
        except OSError:
            text = ""
        for raw in text.splitlines():
            line = json.loads(raw)
            cid = line.get("custom_id")
            if cid in wanted:
                body = line["body"]
                total += self.worst(str(body.get("model", "")), body, len(lines[cid]["ids"]))
                wanted.discard(cid)
        for cid in wanted:  # no file to cost it from: the uncapped answer of each question
            n = len(lines[cid]["ids"])
            total += self.worst(self._model, {"messages": []}, n)
        return total
