"""Resumable JSONL jobs (``fanout run`` on the command line)::

from fanout.jobs import run_jsonl

summary = await run_jsonl(fo, "questions.jsonl", "answers.jsonl")

Through the Batch API, or at the tier a deadline makes cheapest (docs/batch.md)::

from fanout.jobs import JobSummary, run_job

summary = JobSummary()
await run_job(summary, fo, "questions.jsonl", "answers.jsonl", batch=True)

On N processes: ``run_jsonl(..., shard=Shard(index=K, count=N))`` in each, each
into its own output, then :func:`combine_jsonl` (``fanout run --shard K/N``,
``fanout combine``).
"""

from __future__ import annotations

from ._batch import BatchOptions as BatchOptions
from ._batch import run_job as run_job
from ._run import BadLine as BadLine
from ._run import JobSummary as JobSummary
from ._run import run_jsonl as run_jsonl
from ._shard import CombineSummary as CombineSummary
from ._shard import Shard as Shard
from ._shard import combine_jsonl as combine_jsonl

__all__ = [
    "BadLine",
    "BatchOptions",
    "CombineSummary",
    "JobSummary",
    "Shard",
    "combine_jsonl",
    "run_job",
    "run_jsonl",
]
