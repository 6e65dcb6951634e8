"""`fanout run` / ``run_jsonl`` on hostile inputs and endings: the input given as the
output, a pipe, strings cut inside a character, non-strict JSON, hand-edited
records, a refused API key, Ctrl-C, bad per-question parameters."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout.cli.main import main
from fanout.jobs import run_jsonl

from .conftest import SimFactory

FAST = ["--sim-time-scale", "100"]


def _interruptible() -> None:
    """In the child: SIGINT as a terminal's Ctrl-C meets it. A shell that runs pytest in
    the background without job control (``pytest &`` in a script, ``nohup``) makes its
    processes ignore SIGINT, the children inherit that, and Python then keeps ignoring
    it: the run under test would finish instead of being interrupted."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _questions(path: Path, n: int) -> str:
    text = "".join(
        json.dumps({"id": f"q{i}", "question": f"What is {i}?"}) + "\n" for i in range(n)
    )
    path.write_text(text, encoding="utf-8")
    return text


def _fanout_run(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "fanout", "run", *args],
        capture_output=True, text=True, timeout=60, **kwargs,
    )  # fmt: skip


def _strict(text: str) -> list[dict[str, Any]]:
    """The records of an output, parsed as a strict JSON reader would (no NaN, no
    Infinity, valid UTF-8)."""

    def refuse(name: str) -> None:
        raise AssertionError(f"{name} is not JSON")

    return [json.loads(line, parse_constant=refuse) for line in text.splitlines()]


def _last(path: Path) -> dict[str, dict[str, Any]]:
    return {r["id"]: r for r in _strict(path.read_text(encoding="utf-8"))}


# --- 1, 2: the input given as the output ------------------------------------------------
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


# --- 3: a pipe as the input ---------------------------------------------------------------
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


# --- 6: lone surrogates -------------------------------------------------------------------
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


# --- 19: hand-edited records ---------------------------------------------------------------
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


# --- 20: NaN and Infinity ------------------------------------------------------------------
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


# --- 21: a refused API key -------------------------------------------------------------------
async def _cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fanout", "run", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_a_wrong_api_key_stops_the_run_after_the_first_401_and_says_why(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A key the endpoint refuses: one request, not one per question; exit code 4
    (stopped, run again) and one line naming the 401; the same command with the right
    key answers everything."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    _questions(src, 60)
    async with sim(time_scale=100, answer_tokens=3, api_key="sk-right-key-0123456789") as (
        server,
        _,
    ):
        common = [str(src), str(dst), "--base-url", server.base_url, "--model", "m",
                  "--policy", "split", "--no-progress"]  # fmt: skip
        code, out, err = await _cli(*common, "--api-key", "sk-wrong-key-9876543210")
        assert code == 4, (out, err)
        assert len(server.stats.requests) <= 2, "stopped after the first refusal"
        assert err.count("\n") == 1, err
        assert err.startswith("fanout run: stopped: the endpoint refused the API key (401")
        assert "9876543210" not in err
        assert "run the same command again" in err
        code, out, err = await _cli(*common, "--api-key", "sk-right-key-0123456789")
    assert code == 0, (out, err)
    last = _last(dst)
    assert len(last) == 60
    assert all(r["error"] is None for r in last.values())


@asynccontextmanager
async def _forbidding_server() -> AsyncIterator[tuple[str, list[int]]]:
    """An endpoint on 127.0.0.1 that answers every request 403, as the hosted API does
    for a region or project without access; yields its URL and a request count."""
    seen: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        length = next((int(line.split(":", 1)[1]) for line in head.split("\r\n")
                       if line.lower().startswith("content-length:")), 0)  # fmt: skip
        await reader.readexactly(length)
        seen.append(1)
        body = json.dumps({"error": {"message": "Project does not have access to model m",
                                     "type": "invalid_request_error",
                                     "code": "model_not_found"}}).encode()  # fmt: skip
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        server.close()
        await server.wait_closed()


async def test_a_403_stops_a_job_after_the_first_refusal(tmp_path: Path) -> None:
    """403 (no access) stops the job as a 401 does: one request sent, the job marked
    stopped with the reason, the questions answered or failed each named in the output."""
    from openai import AsyncOpenAI

    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    _questions(src, 30)
    async with _forbidding_server() as (url, seen):
        client = AsyncOpenAI(base_url=url, api_key="k")
        try:
            fo = fanout.Fanout(client, model="m", policy="split")
            summary = await run_jsonl(fo, src, dst)
        finally:
            await client.close()
    assert len(seen) == 1
    assert summary.stopped_for_key is not None and "403" in summary.stopped_for_key
    assert summary.answered == 0
    records = _strict(dst.read_text())
    assert len(records) == summary.failed >= 1
    assert all(r["error"] and f'id "{r["id"]}"' in r["error"] for r in records)


# --- 22: Ctrl-C ------------------------------------------------------------------------------
def test_ctrl_c_says_how_many_records_were_written_and_how_to_resume(tmp_path: Path) -> None:
    """SIGINT mid-run: exit code 130 and one line saying how many records this run
    wrote (as many as the output holds) and that the same command resumes."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    _questions(src, 200)
    cmd = [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--policy", "split",
           "--no-progress"]  # fmt: skip
    slow = ["--sim-time-scale", "20", "--concurrency", "2"]
    with subprocess.Popen(
        [*cmd, *slow], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=_interruptible,
    ) as proc:  # fmt: skip
        deadline = time.monotonic() + 60
        while (not dst.exists() or dst.read_text().count("\n") < 2) and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    written = dst.read_text().count("\n")
    assert 2 <= written < 200
    assert f"fanout run: interrupted: {written} record(s) written to {dst}" in err, err
    assert "run the same command again to resume" in err
    assert "Traceback" not in err
    proc2 = subprocess.run([*cmd, *FAST], capture_output=True, text=True, timeout=60)
    assert proc2.returncode == 0, proc2.stderr
    assert f"already done {written}" in proc2.stdout


def test_ctrl_c_on_a_terminal_ends_the_progress_line_before_saying_so(tmp_path: Path) -> None:
    """With the bar drawn on a terminal, the message starts on a line of its own."""
    import pty

    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    _questions(src, 200)
    code = (
        "import runpy, sys; sys.modules['rich'] = None; "
        "sys.argv[0] = 'fanout'; runpy.run_module('fanout', run_name='__main__')"
    )
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-c", code, "run", str(src), str(dst), "--sim-time-scale", "20",
         "--policy", "split", "--concurrency", "2"],
        stdout=subprocess.PIPE, stderr=follower, text=True, preexec_fn=_interruptible,
    ) as proc:  # fmt: skip
        os.close(follower)
        screen = b""
        while b"fanout [" not in screen or (not dst.exists() or dst.read_text().count("\n") < 2):
            screen += os.read(leader, 4096)
        proc.send_signal(signal.SIGINT)
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:
                break
            if not chunk:
                break
            screen += chunk
        proc.communicate(timeout=60)
    os.close(leader)
    assert proc.returncode == 130
    text = screen.decode()
    assert "\nfanout run: interrupted: " in text.replace("\r\n", "\n"), text[-400:]


# --- 23: bad per-question parameters ---------------------------------------------------------
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
    lines = proc.stderr.splitlines()
    assert len(lines) == 2, proc.stderr
    assert f"{src}:2: skipped: id 2: max_tokens" in lines[0]
    assert f"{src}:3: skipped: id 3: " in lines[1]
    assert "did you mean 'temperature'?" in lines[1]
    assert "validation error" not in proc.stderr.lower()


async def test_a_refused_key_stops_the_rest_of_its_call_only(sim: SimFactory) -> None:
    """In the library: after a 401, the call's other questions are not sent (each
    fails naming the refusal); the next call on the same Fanout tries again (a key
    from a callable may have been renewed)."""
    async with sim(time_scale=100, answer_tokens=3, api_key="sk-right-key-0123456789") as (
        server,
        client,
    ):
        # One request at a time: those waiting when the 401 comes are not sent.
        fo = fanout.Fanout(client.with_options(api_key="wrong"), model="m", policy="split",
                           limits=fanout.Limits(max_concurrency=1))  # fmt: skip
        for _call in range(2):
            server.reset_stats()
            answers = await fo.ask_many([f"q{i}?" for i in range(12)], on_error="return")
            assert len(server.stats.requests) == 1
            assert all(a.error is not None for a in answers)
            not_sent = [a for a in answers if a.attempts == 0]
            assert len(not_sent) == 11
            assert all("refused with 401 invalid_api_key" in str(a.error) for a in not_sent)
