"""A job that stops before its end: the endpoint refusing the API key (401, 403) stops
it after the first refusal, and Ctrl-C; each says so in one line (how many records were
written, how to resume), and the same command resumes."""

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

import fanout
from fanout.jobs import run_jsonl

from ..conftest import SimFactory
from ._job_files import FAST, _last, _questions, _strict


def _interruptible() -> None:
    """In the child: SIGINT as a terminal's Ctrl-C meets it. A shell that runs pytest in
    the background without job control (``pytest &`` in a script, ``nohup``) makes its
    processes ignore SIGINT, the children inherit that, and Python then keeps ignoring
    it: the run under test would finish instead of being interrupted."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


async def _cli(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fanout", "run", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


# --- a refused API key -----------------------------------------------------------------------
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


# --- Ctrl-C ----------------------------------------------------------------------------------
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
