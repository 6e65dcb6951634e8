"""The command line's money: ``--price``, ``--max-cost``, the cost columns of
``fanout plan``, ``fanout run --dry-run``, and the exit code of a job stopped at its
spend cap."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.models import Question
from ..core.money import Pricing
from ..engine.spending import UNCAPPED_ANSWER_TOKENS
from ..jobs._output import BOM
from ..jobs._run import BadLine, _parse
from ..jobs._spend import recorded_spend

if TYPE_CHECKING:
    from ..core.plans import Plan
    from ..engine.facade import Fanout
    from ..jobs._run import JobSummary

__all__ = [
    "BUDGET_EXIT",
    "add_money_args",
    "budget_stop",
    "cost_line",
    "dry_run",
    "estimates_table",
    "pricing_of",
]

BUDGET_EXIT = 5
"""``fanout run``'s exit code when the job stopped at its spend cap (``--max-cost``)."""


def _usd(value: str) -> Decimal:
    try:
        amount = Decimal(value)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"expected US dollars, got {value!r}") from None
    if not amount.is_finite() or amount < 0:
        raise argparse.ArgumentTypeError(f"expected zero or more US dollars, got {value!r}")
    return amount


def _price(value: str) -> Pricing:
    """``IN,OUT[,CACHED]`` US dollars per million tokens; ``0`` for free."""
    parts = [p.strip() for p in value.split(",")]
    if parts == ["0"]:
        return Pricing.free()
    if len(parts) not in (2, 3):
        raise argparse.ArgumentTypeError(
            f"expected INPUT,OUTPUT[,CACHED_INPUT] in USD per million tokens, or 0; got {value!r}"
        )
    numbers = [_usd(p) for p in parts]
    return Pricing(
        input=numbers[0], output=numbers[1], cached_input=numbers[2] if len(numbers) == 3 else None
    )


def add_money_args(parser: argparse.ArgumentParser, *, run: bool) -> None:
    g = parser.add_argument_group("cost (docs/cost.md)")
    g.add_argument(
        "--price",
        type=_price,
        metavar="IN,OUT[,CACHED]",
        help="the model's price in USD per million input, output (and cached input) "
        "tokens, instead of the price library's; 0 for a server of your own",
    )
    if run:
        g.add_argument(
            "--max-cost",
            type=_usd,
            metavar="USD",
            help="stop the job before its spend (over all its runs) would pass USD; "
            f"exit code {BUDGET_EXIT}. Without --max-tokens each answer is "
            f"capped at {UNCAPPED_ANSWER_TOKENS} tokens (what a request "
            "reserves), so the cap holds",
        )
        g.add_argument(
            "--dry-run",
            action="store_true",
            help="send nothing: print the estimated cost and time of each plan for "
            "the questions OUTPUT does not answer yet",
        )


def cap_answers(args: argparse.Namespace) -> None:
    """``--max-cost`` without ``--max-tokens``: each answer's ``max_tokens`` is what its
    request reserves (``UNCAPPED_ANSWER_TOKENS``), so no answer can cost more than was
    reserved for it and the cap is hard (an input line's own ``max_tokens`` is kept)."""
    if getattr(args, "max_cost", None) is not None and args.max_tokens is None:
        args.max_tokens = UNCAPPED_ANSWER_TOKENS


def pricing_of(args: argparse.Namespace) -> dict[str, Any]:
    """The ``Fanout`` keyword arguments of ``--price``."""
    price = getattr(args, "price", None)
    if price is None and not getattr(args, "base_url", None):
        price = Pricing.free()  # the built-in simulator costs nothing
    return {} if price is None else {"pricing": price}


def _money(value: Decimal | None) -> str:
    return "unknown" if value is None else f"${value:.6f}"


def estimates_table(plan: Plan) -> str:
    """Each way to send the questions: requests, tokens, estimated cost and time."""
    rows = [
        f"{'plan':<22} {'requests':>8} {'prompt tok':>11} {'answer tok':>11} "
        f"{'est. cost':>12} {'est. time':>10}"
    ]
    notes: list[str] = []
    for e in plan.estimates:
        mark = "*" if e.label == plan.chosen.label and e.tier == "standard" else " "
        when = f"{e.est_wall_s:>9.2f}s" if e.est_wall_s is not None else f"{'see below':>10}"
        rows.append(
            f"{mark}{e.label:<21} {e.requests:>8} {e.est_prompt_tokens:>11} "
            f"{e.est_completion_tokens:>11} {_money(e.est_cost):>12} {when}"
        )
        if e.time_note and e.time_note not in notes:
            notes.append(e.time_note)
    planned = {c.label: c.est_completion_tokens for c in plan.candidates}
    if any(
        e.est_completion_tokens > planned.get(e.label, e.est_completion_tokens)
        for e in plan.estimates
    ):
        notes.append(
            "answer tok: before any answer of this endpoint is measured, costs are estimated "
            "at the documented 200 tokens an answer (at most max_tokens), not at the shorter "
            "answers the plan's time assumes: an estimate before spending is not the cheapest case"
        )
    return "\n".join(rows + [f"  {note}" for note in notes])


def _pending(args: argparse.Namespace) -> list[Question]:
    """The questions of INPUT that OUTPUT does not answer yet (all of them with
    ``--overwrite``), read without touching OUTPUT."""
    answered: set[str] = set()
    out = Path(args.output)
    if out.exists() and not args.overwrite:
        for raw in out.read_bytes().splitlines():
            try:
                record = json.loads(raw.removeprefix(BOM))
            except ValueError:
                continue
            if isinstance(record, dict) and "id" in record and record.get("error") is None:
                answered.add(json.dumps(record["id"], ensure_ascii=False, sort_keys=True))
    return read_questions(Path(args.input), answered)


def read_questions(path: Path, answered: frozenset[str] | set[str] = frozenset()) -> list[Question]:
    """The questions of the JSONL file ``path`` as ``fanout run`` reads them (each
    line's own parameters with it), less the ids in ``answered``; a line ``fanout run``
    would skip (not JSON, no question, a duplicate id, a parameter ``create()`` would
    refuse) is skipped here too, and said on stderr in the same words."""
    questions: list[Question] = []
    seen: set[str] = set()
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            q, qid, bad = _parse(raw.removeprefix(BOM) if lineno == 1 else raw, lineno)
            if qid is not None and bad is None and qid in seen:
                bad = BadLine(lineno, f"duplicate id {qid}")
            if bad is not None:
                print(f"{path}:{bad.line}: skipped: {bad.reason}", file=sys.stderr)
                continue
            assert q is not None and qid is not None
            seen.add(qid)
            if qid not in answered:
                questions.append(q)
    return questions


def dry_run(
    args: argparse.Namespace, make: Callable[[argparse.Namespace, Any, str], Fanout]
) -> int:
    """``fanout run --dry-run``: the plans for the questions left, with their estimated
    cost and time; nothing is sent (no simulator is started), OUTPUT is not touched.
    ``make``: the command line's ``Fanout`` for the arguments, a client and a model."""
    from openai import AsyncOpenAI

    client = AsyncOpenAI(
        api_key=args.api_key or "dry-run", base_url=args.base_url or "http://127.0.0.1:9/v1"
    )
    fo = make(args, client, args.model or "sim-1")
    questions = _pending(args)
    print(f"{len(questions)} question(s) of {args.input} to answer")
    if not questions:
        return 0
    plan = fo.plan(questions)
    print(estimates_table(plan))
    print(f"\nchosen: {plan.reason}")
    if args.max_cost is not None:
        spent = recorded_spend(Path(args.output), fo, fo.model) if not args.overwrite else 0
        print(f"spend cap ${args.max_cost}: ${spent:.6f} recorded in {args.output} already")
    return 0


def budget_stop(summary: JobSummary, args: argparse.Namespace) -> int | None:
    """The exit code of a job stopped at its spend cap, after saying so; else None."""
    if not summary.stopped_for_budget:
        return None
    spent = summary.spent_before + (summary.cost or Decimal(0))
    print(
        f"fanout run: stopped at the spend cap --max-cost {args.max_cost}: ${spent:.6f} "
        "spent by this job; the next request would have passed it: run the same command "
        "again with a higher --max-cost to answer the rest",
        file=sys.stderr,
    )
    return BUDGET_EXIT


def cost_line(summary: JobSummary) -> str:
    """The run summary's cost, when known."""
    if summary.cost is None:
        return "; cost unknown"
    before = (
        f" (job total ${summary.spent_before + summary.cost:.6f})" if summary.spent_before else ""
    )
    return f"; cost ${summary.cost:.6f}{before}"
