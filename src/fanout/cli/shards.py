"""``fanout run --shard K/N`` and ``fanout combine``: a job on N processes."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from ..core.exceptions import ConfigError
from ..jobs._shard import CombineSummary, Shard, combine_jsonl

__all__ = ["add_combine_parser", "add_shard_arg", "combine"]

_COMBINE_EXIT_CODES = """exit codes:
  0    every id has an answer in COMBINED (with --input: every id of the input)
  1    some ids have no answer: their record is a failure, or (--input) no
       output holds them (they are named on standard error)
  2    an output unreadable or still being written, COMBINED not writable"""

_SHOWN = 10  # missing ids named on standard error


class _OneLineShard(argparse.Action):
    """``--shard K/N`` checked as it is read: a bad one stops the command in one line
    (argparse's own type errors print the whole usage before it), exit code 2."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        try:
            setattr(namespace, self.dest, Shard.parse(str(values)))
        except ConfigError as exc:
            print(f"{parser.prog}: error: argument --shard: {exc}", file=sys.stderr)
            raise SystemExit(2) from None


def add_shard_arg(run: argparse.ArgumentParser) -> None:
    """``--shard K/N`` on ``fanout run``."""
    run.add_argument(
        "--shard",
        action=_OneLineShard,
        metavar="K/N",
        help="answer only shard K of N (K counting from 1): the ids that hash "
        "to it, a split stable across runs and hosts; give each shard its own "
        "OUTPUT, then 'fanout combine' them",
    )


def add_combine_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The ``fanout combine`` subcommand."""
    p = sub.add_parser(
        "combine",
        help="combine the outputs of a job's shards into one, each id once",
        description="Write one record per id of OUTPUTS (the last whole record "
        "an output holds for it; an answer rather than a failure if two outputs "
        "hold the id) into COMBINED, written whole or not at all. With --input, "
        "in the input's order, ids not in the input left out, and the input ids "
        "no output holds named.",
        epilog=_COMBINE_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("outputs", nargs="+", metavar="OUTPUT", help="the shards' outputs")
    p.add_argument(
        "-o", "--output", required=True, metavar="COMBINED", help="the combined output (replaced)"
    )
    p.add_argument(
        "--input",
        metavar="IN.jsonl",
        help="the job's input: the order to follow, and the ids to expect",
    )


def combine(args: argparse.Namespace) -> int:
    """Run ``fanout combine``; its exit code."""
    summary = combine_jsonl(args.outputs, args.output, input_path=args.input)
    print(_summary_line(summary, len(args.outputs), args.output))
    if summary.missing:
        shown = ", ".join(summary.missing[:_SHOWN])
        more = f" and {len(summary.missing) - _SHOWN} more" if len(summary.missing) > _SHOWN else ""
        print(
            f"fanout combine: {len(summary.missing)} id(s) of {args.input} have no record in "
            f"any output: {shown}{more}; run their shards (again)",
            file=sys.stderr,
        )
    return 1 if summary.failed or summary.missing else 0


def _summary_line(s: CombineSummary, outputs: int, dst: str) -> str:
    line = (
        f"combined {outputs} output(s) into {dst}: {s.written} id(s), answered "
        f"{s.answered}, failed {s.failed}"
    )
    notes = []
    if s.missing:
        notes.append(f"{len(s.missing)} missing")
    if s.not_in_input:
        notes.append(f"{s.not_in_input} not in the input, left out")
    if s.duplicates:
        notes.append(f"{s.duplicates} held by several outputs, kept once")
    if s.skipped_lines:
        notes.append(f"{s.skipped_lines} line(s) that are no whole record skipped")
    return line + (f" ({'; '.join(notes)})" if notes else "")
