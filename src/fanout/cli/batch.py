"""The options of ``fanout run`` for the Batch API and the deadline-aware choice."""

from __future__ import annotations

import argparse
from typing import Any

from ..jobs._batch import BatchOptions
from ..jobs._run import JobSummary

__all__ = ["add_batch_args", "batch_kwargs", "policy_kwargs", "tier_lines"]


def add_batch_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("cost: the Batch API, flex, a deadline (docs/batch.md)")
    g.add_argument(
        "--batch",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="send the questions through the Batch API (--no-batch: online); "
        "default: the cheapest way that meets --deadline with --objective cost, "
        "and the Batch API while batches of OUTPUT are unfinished",
    )
    g.add_argument(
        "--deadline",
        type=float,
        metavar="SECONDS",
        help="answers needed within SECONDS (with --objective cost: picks online, "
        "flex or batch, whichever is cheapest in time)",
    )
    g.add_argument(
        "--batch-poll",
        type=float,
        default=30.0,
        metavar="SECONDS",
        help="seconds between looks at running batches (default 30)",
    )
    g.add_argument(
        "--batch-expected",
        type=float,
        default=3600.0,
        metavar="SECONDS",
        help="how long a batch is planned to take (default 3600: OpenAI "
        "promises 24 h, usually answers within one)",
    )


def batch_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """What ``run_job`` takes from the options."""
    return {"batch": args.batch, "options": BatchOptions(poll_s=args.batch_poll)}


def policy_kwargs(args: argparse.Namespace) -> dict[str, Any]:
    """What ``Policy`` takes from the options (none for commands without them)."""
    if getattr(args, "deadline", None) is None:
        return {}
    return {"deadline": args.deadline, "batch_expected_s": args.batch_expected}


def tier_lines(summary: JobSummary) -> str:
    """How the job was sent and what it cost, for the summary."""
    line = f"sent: {summary.tier or 'standard'}"
    if summary.batches:
        line += f", {summary.batches} batch(es), {summary.batch_answered} answered in batches"
        if summary.batch_unchecked:
            line += f" ({summary.batch_unchecked} merged, unchecked)"
    if summary.cost is None:  # no price known: the tokens, each at its tier's share
        line += f"; {summary.token_units:,.0f} token-units (batch and flex tokens count half)"
    if summary.tier_reason:
        line += f"\nwhy: {summary.tier_reason}"
    return line
