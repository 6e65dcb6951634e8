"""The command line's answers to what people mistype: an option name, the key a JSONL
line holds its question under."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from fanout.cli.main import main


@pytest.mark.parametrize(
    ("argv", "meant"),
    [
        (["run", "--rmp", "50", "in.jsonl", "out.jsonl"], "--rpm"),
        (["run", "--max-cots=0.5", "in.jsonl", "out.jsonl"], "--max-cost"),
        (["ask", "--polcy", "split", "What is X?"], "--policy"),
    ],
)
def test_a_misspelt_option_names_the_one_meant(
    argv: list[str], meant: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fanout run --rmp 50 IN OUT`` said "the following arguments are required: output"
    (50 taken for INPUT): it names the option meant, with exit code 2."""
    with pytest.raises(SystemExit) as info:
        main(argv)
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert f"unrecognized option {argv[1].split('=')[0]} (did you mean {meant}?)" in err


def test_an_abbreviated_option_argparse_accepts_is_left_alone(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--conc`` is argparse's abbreviation of ``--concurrency``: not a misspelling."""
    with pytest.raises(SystemExit) as info:
        main(["run", "--conc", "5", "--help"])
    assert info.value.code == 0
    assert "unrecognized" not in capsys.readouterr().err


@pytest.mark.parametrize("key", ["prompt", "messages"])
def test_a_line_with_its_question_under_another_key_says_which_key(
    key: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A line ``{"id": 1, "prompt": ...}`` was "missing or empty question" with no hint
    of the key expected."""
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    value = "What is X?" if key == "prompt" else [{"role": "user", "content": "What is X?"}]
    src.write_text(json.dumps({"id": 1, key: value}) + "\n")
    assert main(["run", str(src), str(dst), "--no-progress", "--sim-time-scale", "100"]) == 3
    (warning,) = [r.getMessage() for r in caplog.records if "missing or empty" in r.getMessage()]
    assert f'the question goes under "question"; this line has {key!r}' in warning


@pytest.mark.parametrize(
    ("flags", "says"),
    [(["--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "no API key"),
     (["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"], "--model is required"),
     (["--max-tokens", "0", "--sim-time-scale", "100"], "max_tokens must be a positive int")],
)  # fmt: skip
def test_a_run_that_cannot_start_for_an_option_exits_2(
    tmp_path: Any, flags: list[str], says: str
) -> None:
    """No key, no model with --base-url, or --max-tokens 0 (which the Python API refuses):
    one line and exit 2, the documented code for a bad option; nothing is answered."""
    import os
    import subprocess
    import sys

    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text('{"id": 1, "question": "hi?"}\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.run([sys.executable, "-m", "fanout", "run", str(src), str(dst), *flags],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr
    assert not dst.exists() or dst.read_text(encoding="utf-8") == ""
