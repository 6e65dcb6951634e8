"""The summary line ``fanout run`` prints when a job ends."""

from __future__ import annotations

from ..jobs._run import JobSummary
from .money import cost_line

__all__ = ["run_summary"]


def run_summary(summary: JobSummary, wall_s: float) -> str:
    s = summary
    line = (
        f"answered {s.answered}, failed {s.failed}, already done {s.skipped_done}, "
        f"bad lines {len(s.bad_lines)}, in {wall_s:.1f}s"
    )
    if s.cached:
        line += f"; {s.cached} of the answers from the response cache"
    again = []
    if s.retried_failed:
        again.append(f"{s.retried_failed} that had failed")
    if s.reasked_changed:
        again.append(f"{s.reasked_changed} whose request changed")
    if again:
        line += f" (asked again: {' and '.join(again)})"
    if s.skipped_failed:
        line += f"; {s.skipped_failed} failed before and were not retried (--no-retry-failed)"
    if s.repaired_tail:
        line += "; cut a torn last line before resuming"
    if s.other_shards:
        line += f"; {s.other_shards} line(s) left to the other shards"
    return line + cost_line(s)
