"""Resumable JSONL jobs (``fanout run`` on the command line)::

from fanout.jobs import run_jsonl

summary = await run_jsonl(fo, "questions.jsonl", "answers.jsonl")
"""

from __future__ import annotations

from ._run import BadLine as BadLine
from ._run import JobSummary as JobSummary
from ._run import run_jsonl as run_jsonl

__all__ = ["BadLine", "JobSummary", "run_jsonl"]
