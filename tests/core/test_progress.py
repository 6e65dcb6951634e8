"""Progress: a bar on a terminal (rich's or a plain one), log lines elsewhere, with a total."""

from __future__ import annotations

import io
import json
import logging
import sys
from pathlib import Path

import pytest

import fanout
from fanout.core.progress import (
    _LineProgress,
    _LogProgress,
    _RichProgress,
    count_lines,
    expected_total,
    make_progress,
)
from fanout.jobs import run_jsonl

from .._virtual import on_virtual_time
from ..conftest import SimFactory


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_count_lines_counts_the_non_blank_lines(tmp_path: Path) -> None:
    """Blank lines are not questions; a last line without a newline is."""
    path = tmp_path / "q.jsonl"
    path.write_bytes(b'{"id": 1}\n\n  \n{"id": 2}\r\n{"id": 3}')
    assert count_lines(path) == 3


def test_without_rich_a_terminal_gets_a_plain_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """rich not installed and standard error a terminal: the plain one-line bar."""
    monkeypatch.setitem(sys.modules, "rich.progress", None)
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert isinstance(make_progress(), _LineProgress)


def test_not_on_a_terminal_progress_is_log_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """Standard error not a terminal: log lines, whether rich is installed or not."""
    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert isinstance(make_progress(), _LogProgress)


def test_the_plain_bar_shows_done_total_rate_and_eta() -> None:
    """Redrawn in place with done/total, rate, ETA, retries and 429s; a newline at the end."""
    out = _Terminal()
    bar = _LineProgress(out, every_s=0)
    bar.update(done=1, total=4, retries=2, rate_limited=1)
    bar.update(done=4, total=4, retries=2, rate_limited=1)
    bar.close()
    text = out.getvalue()
    assert text.startswith("\rfanout [####............] 1/4  ")
    assert "\rfanout [################] 4/4  " in text
    assert "/s  eta " in text
    assert "retries 2  429s 1" in text
    assert text.endswith("\n")


def test_the_plain_bar_without_a_total_says_so() -> None:
    """A stream of unknown length shows done/? and no ETA."""
    out = _Terminal()
    bar = _LineProgress(out, every_s=0)
    bar.update(done=3, total=None, retries=0, rate_limited=0)
    assert out.getvalue().startswith("\rfanout 3/?  ")
    assert "eta ?" in out.getvalue()


def test_an_expected_total_fills_in_for_a_stream(caplog: pytest.LogCaptureFixture) -> None:
    """Set around a call, expected_total gives the sinks the total the engine lacks,
    read at each update; the log lines carry it, and the last state is logged once."""
    caplog.set_level(logging.INFO, logger="fanout.progress")
    remaining = [5]
    token = expected_total.set(lambda: remaining[0])
    try:
        sink = _LogProgress(every_s=3600)
        rich_bar = _RichProgress()
    finally:
        expected_total.reset(token)
    sink.update(done=1, total=None, retries=0, rate_limited=0)
    remaining[0] = 4  # a bad line was found
    sink.update(done=2, total=None, retries=0, rate_limited=0)  # too soon to log
    sink.update(done=4, total=None, retries=0, rate_limited=0)  # done: logged
    sink.close()  # nothing new
    rich_bar.close()
    lines = [r.getMessage() for r in caplog.records if r.name == "fanout.progress"]
    assert len(lines) == 2
    assert lines[0].startswith("progress done=1 total=5 rate=")
    assert lines[1].startswith("progress done=4 total=4 rate=")
    assert "eta=0s" in lines[1]
    assert rich_bar._progress.tasks[0].total == 5


@on_virtual_time
async def test_run_jsonl_progress_counts_what_is_left_to_answer(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A JSONL job's progress total is its lines less the bad ones and those already
    answered, so the last line reads done == total."""
    caplog.set_level(logging.INFO, logger="fanout.progress")
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    lines = [json.dumps({"id": i, "question": f"q{i}?"}) for i in range(6)] + ["not json"]
    src.write_text("\n".join(lines) + "\n\n")
    async with sim(time_scale=100, answer_tokens=3) as (_, client):
        fo = fanout.Fanout(client, model="m")
        src_first = tmp_path / "first.jsonl"
        src_first.write_text("\n".join(lines[:2]) + "\n")
        await run_jsonl(fo, src_first, dst)  # ids 0 and 1 answered already
        summary = await run_jsonl(fo, src, dst, progress=True)
    assert (summary.answered, summary.skipped_done, len(summary.bad_lines)) == (4, 2, 1)
    last = [r.getMessage() for r in caplog.records if r.name == "fanout.progress"][-1]
    assert last.startswith("progress done=4 total=4 ")
