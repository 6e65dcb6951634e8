"""What a job is given to read: lines it refuses as bad (a string cut inside a
character, NaN or Infinity, a huge integer, deep nesting, bad per-question parameters),
records it does not take for answers (incomplete or edited by hand), questions from a
pipe, and its input named as its own output (refused, the input untouched)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout.cli.main import main
from fanout.jobs import run_jsonl

from ..conftest import SimFactory
from ._job_files import FAST, _last, _questions, _strict


def _fanout_run(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fanout", "run", *args],
        capture_output=True, text=True, timeout=60, **kwargs,
    )  # fmt: skip


# --- the input named as its own output -------------------------------------------------------
def test_the_input_as_its_own_output_with_overwrite_is_refused_untouched(tmp_path: Path) -> None:
    """`fanout run q.jsonl q.jsonl --overwrite`: one `fanout run:` line, exit code 2,
    the input byte for byte as it was (it used to be emptied)."""
    src = tmp_path / "q.jsonl"
    text = _questions(src, 3)
    proc = _fanout_run(str(src), str(src), "--overwrite", *FAST)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("fanout run: ") and proc.stderr.count("\n") == 1, proc.stderr
    assert "same file as the input" in proc.stderr
    assert proc.stdout == ""
    assert src.read_text(encoding="utf-8") == text


@pytest.mark.parametrize("overwrite", [False, True], ids=["resume", "overwrite"])
@pytest.mark.parametrize("how", ["same path", "symlink", "hard link"])
def test_the_input_as_the_output_by_any_name_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], how: str, overwrite: bool
) -> None:
    """The output the input by its path, a symlink or a hard link, resuming (where its
    questions were taken for answers: "already done", exit 0) or overwriting: exit
    code 2, one line, the input untouched."""
    src = tmp_path / "q.jsonl"
    text = _questions(src, 3)
    dst = src
    if how == "symlink":
        dst = tmp_path / "out.jsonl"
        dst.symlink_to(src)
    elif how == "hard link":
        dst = tmp_path / "out.jsonl"
        os.link(src, dst)
    code = main(["run", str(src), str(dst), *FAST, *(["--overwrite"] if overwrite else [])])
    out, err = capsys.readouterr()
    assert code == 2, (out, err)
    assert err == (
        f"fanout run: {dst} is the same file as the input {src}: the answers would be "
        "mixed into the questions; write them to another file\n"
    )
    assert src.read_text(encoding="utf-8") == text


async def test_run_jsonl_refuses_its_input_as_output(sim: SimFactory, tmp_path: Path) -> None:
    """From Python too: a JobError, nothing sent, the input untouched."""
    src = tmp_path / "q.jsonl"
    text = _questions(src, 3)
    async with sim(time_scale=100, answer_tokens=3) as (server, client):
        with pytest.raises(fanout.JobError, match="same file"):
            await run_jsonl(fanout.Fanout(client, model="m"), src, src, resume=False)
        assert server.stats.requests == []
    assert src.read_text(encoding="utf-8") == text


# --- a pipe as the input ---------------------------------------------------------------------
def test_questions_from_a_pipe_are_answered_with_progress_on(tmp_path: Path) -> None:
    """`cat q.jsonl | fanout run /dev/stdin out.jsonl` with progress on (the default):
    the pipe is not read ahead to count its lines; every question is answered."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    text = _questions(src, 4)
    proc = _fanout_run("/dev/stdin", str(dst), *FAST, input=text)
    assert proc.returncode == 0, proc.stderr
    assert "answered 4," in proc.stdout
    assert sorted(_last(dst)) == ["q0", "q1", "q2", "q3"]
    assert "fanout.progress progress done=4 total=?" in proc.stderr


# --- lines refused as bad, records not taken for answers -------------------------------------
async def test_a_lone_surrogate_is_a_bad_line_and_the_other_ids_are_answered(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A string cut inside an emoji (`\\ud83d`, as JSON.stringify writes it) in a
    question, an id or a parameter: reported as a bad line; the job goes on."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    lines = [
        '{"id": "ok1", "question": "fine?"}',
        '{"id": "a", "question": "cut \\ud83d"}',
        '{"id": "cut \\ud83d", "question": "fine too?"}',
        '{"id": "b", "question": "fine?", "system": "\\udc00 low alone"}',
        '{"id": "ok2", "question": "a whole emoji \\ud83d\\ude00?"}',
    ]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8")
    async with sim(time_scale=100, answer_tokens=3) as (_, client):
        summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
    assert [b.line for b in summary.bad_lines] == [2, 3, 4]
    assert all("surrogate" in b.reason for b in summary.bad_lines), summary.bad_lines
    assert summary.answered == 2
    assert sorted(_last(dst)) == ["ok1", "ok2"]


async def test_incomplete_or_hand_edited_records_are_not_taken_for_answers(
    sim: SimFactory, tmp_path: Path
) -> None:
    """`{"id": ...}` alone, `answer: null, error: null`, a record missing its usage,
    and a record whose fingerprint is not one (its question changed since) are not
    answers: those ids are asked again. A whole record is still trusted."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    _questions(src, 5)
    async with sim(time_scale=100, answer_tokens=3) as (server, client):
        fo = fanout.Fanout(client, model="m", policy="split")
        await run_jsonl(fo, src, dst)
        records = {r["id"]: r for r in _strict(dst.read_text())}
        edited = [
            {"id": "q0"},
            {**records["q1"], "answer": None, "error": None},
            {k: v for k, v in records["q2"].items() if k != "usage"},
            {**records["q3"], "fingerprint": "not a fingerprint"},
            records["q4"],
        ]
        dst.write_text("".join(json.dumps(r) + "\n" for r in edited))
        lines = src.read_text().splitlines()
        lines[3] = json.dumps({"id": "q3", "question": "A question changed by hand?"})
        src.write_text("\n".join(lines) + "\n")
        server.reset_stats()
        summary = await run_jsonl(fo, src, dst)
        assert len(server.stats.requests) == 4
    assert (summary.answered, summary.skipped_done) == (4, 1)
    last = _last(dst)
    assert all(r["error"] is None and isinstance(r["answer"], str) for r in last.values())
    assert last["q3"]["answer"] == fanout.sim.answer_for("A question changed by hand?", 3)


async def test_nan_and_infinite_ids_are_bad_lines_and_the_output_is_strict_json(
    sim: SimFactory, tmp_path: Path
) -> None:
    """`"id": NaN`, `Infinity`, `-Infinity` and a number too large for a float are
    refused as bad lines (and so is a NaN parameter); the output parses strictly."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    lines = [
        '{"id": NaN, "question": "nan?"}',
        '{"id": Infinity, "question": "inf?"}',
        '{"id": -Infinity, "question": "-inf?"}',
        '{"id": 1e400, "question": "huge?"}',
        '{"id": 5, "question": "temperature?", "temperature": NaN}',
        '{"id": 1.5, "question": "fine?"}',
    ]
    src.write_text("\n".join(lines) + "\n")
    async with sim(time_scale=100, answer_tokens=3) as (_, client):
        summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
    assert [b.line for b in summary.bad_lines] == [1, 2, 3, 4, 5]
    assert all("not strict JSON" in b.reason for b in summary.bad_lines), summary.bad_lines
    assert summary.answered == 1
    assert [r["id"] for r in _strict(dst.read_text())] == [1.5]


async def test_a_huge_integer_or_deep_nesting_is_a_bad_line_not_a_crash(
    sim: SimFactory, tmp_path: Path
) -> None:
    """An id of 5,000 digits (more than Python converts) and a value nested 100,000
    deep are reported as bad lines; the job goes on."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    lines = [
        '{"id": ' + "7" * 5000 + ', "question": "huge?"}',
        '{"id": "deep", "question": "deep?", "metadata": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"id": "ok", "question": "fine?"}',
    ]
    src.write_text("\n".join(lines) + "\n")
    async with sim(time_scale=100, answer_tokens=3) as (_, client):
        summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
    assert [(b.line, b.reason.split(":")[0]) for b in summary.bad_lines] == [
        (1, "not JSON"), (2, "not JSON"),
    ]  # fmt: skip
    assert [r["id"] for r in _strict(dst.read_text())] == ["ok"]


def test_bad_per_question_parameters_are_one_line_each_with_a_suggestion(tmp_path: Path) -> None:
    """`max_tokens: -5` and a misspelt `temprature`: one `IN:LINE: skipped:` line each,
    the misspelling with its "did you mean"; no validation dump."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text(
        json.dumps({"id": 1, "question": "ok?"}) + "\n"
        + json.dumps({"id": 2, "question": "neg?", "max_tokens": -5}) + "\n"
        + json.dumps({"id": 3, "question": "typo?", "temprature": 0.2}) + "\n"
    )  # fmt: skip
    proc = _fanout_run(str(src), str(dst), *FAST, "--no-progress")
    assert proc.returncode == 3, proc.stderr
    *lines, simulated = proc.stderr.splitlines()  # the last: the answers are the simulator's
    assert simulated.startswith("fanout run: answered by the built-in simulator")
    assert len(lines) == 2, proc.stderr
    assert f"{src}:2: skipped: id 2: max_tokens" in lines[0]
    assert f"{src}:3: skipped: id 3: " in lines[1]
    assert "did you mean 'temperature'?" in lines[1]
    assert "validation error" not in proc.stderr.lower()


async def test_a_system_or_id_of_the_wrong_type_is_a_bad_line_that_says_so(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A line whose ``system`` is not a string (a number, an object, true, a list) is a
    bad line naming it, not a question sent without its system prompt; an id that is an
    object or an array is named as such, not as "missing". A null system is no system."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    lines = [
        {"id": 1, "question": "Q1?", "system": 5},
        {"id": 2, "question": "Q2?", "system": {"x": 1}},
        {"id": 3, "question": "Q3?", "system": True},
        {"id": 4, "question": "Q4?", "system": ["Be terse.", "Answer in French."]},
        {"id": {"a": 1}, "question": "Q5?"},
        {"id": [1], "question": "Q6?"},
        {"id": 7, "question": "Q7?", "system": None},
        {"id": 8, "question": "Q8?", "system": "Be terse."},
    ]
    src.write_text("".join(json.dumps(line) + "\n" for line in lines))
    async with sim(time_scale=100, answer_tokens=3) as (server, client):
        summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        sent = len(server.stats.requests)
    reasons = {b.line: b.reason for b in summary.bad_lines}
    assert reasons == {
        1: "id 1: system must be a string, not int",
        2: "id 2: system must be a string, not object",
        3: "id 3: system must be a string, not bool",
        4: "id 4: system must be a string, not array",
        5: "id must be a string or a number, not an object",
        6: "id must be a string or a number, not an array",
    }
    assert summary.answered == 2 and sent == 2
