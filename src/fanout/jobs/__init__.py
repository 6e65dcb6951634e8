"""Resumable JSONL jobs (``fanout run`` on the command line)::

from fanout.jobs import run_jsonl

summary = await run_jsonl(fo, "questions.jsonl", "answers.jsonl")

Through the Batch API, or at the tier a deadline makes cheapest (docs/batch.md)::

from fanout.jobs import JobSummary, run_job

summary = JobSummary()
await run_job(summary, fo, "questions.jsonl", "answers.jsonl", batch=True)
"""

from __future__ import annotations

from ._batch import BatchOptions as BatchOptions
from ._batch import run_job as run_job
from ._run import BadLine as BadLine
from ._run import JobSummary as JobSummary
from ._run import run_jsonl as run_jsonl

__all__ = ["BadLine", "BatchOptions", "JobSummary", "run_job", "run_jsonl"]
