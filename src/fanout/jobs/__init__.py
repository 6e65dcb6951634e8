"""Resumable JSONL jobs (``fanout run`` on the command line)::

from fanout.jobs import run_jsonl

summary = await run_jsonl(fo, "questions.jsonl", "answers.jsonl")

On N processes: ``run_jsonl(..., shard=Shard(index=K, count=N))`` in each, each
into its own output, then :func:`combine_jsonl` (``fanout run --shard K/N``,
``fanout combine``).
"""

from __future__ import annotations

from ._run import BadLine as BadLine
from ._run import JobSummary as JobSummary
from ._run import run_jsonl as run_jsonl
from ._shard import CombineSummary as CombineSummary
from ._shard import Shard as Shard
from ._shard import combine_jsonl as combine_jsonl

__all__ = ["BadLine", "CombineSummary", "JobSummary", "Shard", "combine_jsonl", "run_jsonl"]
