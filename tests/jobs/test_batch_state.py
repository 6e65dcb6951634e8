"""A batch job's state (``state.json`` beside its output, ``jobs/_batch_state.py``): one
of a wrong shape stops ``fanout run --batch`` with one line and exit code 2, no
traceback; extra keys (a newer fanout's, or a user's note) are accepted."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest


def _state_cli(tmp_path: Path, state: object) -> tuple[int, str]:
    import subprocess
    import sys

    src = tmp_path / "q.jsonl"
    src.write_text(json.dumps({"id": 0, "question": "What is 1?"}) + "\n")
    dst = tmp_path / "a.jsonl"
    from fanout.jobs._batch import batch_dir

    d = batch_dir(dst)
    d.mkdir(parents=True, exist_ok=True)
    (d / "state.json").write_text(json.dumps(state))
    proc = subprocess.run(
        [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--batch"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("state", [
    {"version": 1, "chunks": [{"key": "k", "round": 1, "file": "c.jsonl", "file_id": None,
                               "batch_id": None, "state": "written",
                               "lines": {"x": {"ids": [], "merged": None}}}]},
    {"version": 1, "chunks": [{"key": "k", "round": 0, "file": "c.jsonl", "file_id": None,
                               "batch_id": None, "state": "written", "lines": {}}]},
    {"version": 2},
    {"version": 1, "deadline_at": "soon"},
])  # fmt: skip
def test_a_state_of_a_wrong_shape_is_one_error_line_exit_2(tmp_path: Path, state: Any) -> None:
    code, err = _state_cli(tmp_path, state)
    assert code == 2, (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_state_with_extra_keys_is_accepted(tmp_path: Path) -> None:
    """Extra keys (a newer fanout's, or a user's note) are no wrong shape: accepted."""
    from fanout.jobs._batch_state import check_state

    check_state({"version": 1, "chunks": [], "future": {"x": 1}}, tmp_path / "state.json")
