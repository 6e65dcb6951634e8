"""Resumable JSONL jobs (``fanout run`` on the command line)::

from fanout.jobs import run_jsonl

summary = await run_jsonl(fo, "questions.jsonl", "answers.jsonl")
"""

from __future__ import annotations

from ._jobs import BadLine as BadLine
from ._jobs import JobSummary as JobSummary
from ._jobs import run_jsonl as run_jsonl

__all__ = ["BadLine", "JobSummary", "run_jsonl"]
