"""A job's questions written as JSONL, and its output read back as a strict JSON
reader would (test_job_input.py, test_job_stops.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FAST = ["--sim-time-scale", "100"]


def _questions(path: Path, n: int) -> str:
    text = "".join(
        json.dumps({"id": f"q{i}", "question": f"What is {i}?"}) + "\n" for i in range(n)
    )
    path.write_text(text, encoding="utf-8")
    return text


def _strict(text: str) -> list[dict[str, Any]]:
    """The records of an output, parsed as a strict JSON reader would (no NaN, no
    Infinity, valid UTF-8)."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return [json.loads(line, parse_constant=refuse) for line in text.splitlines()]


def _last(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _strict(path.read_text(encoding="utf-8"))}
