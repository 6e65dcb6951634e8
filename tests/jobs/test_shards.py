"""A job on N processes: `fanout run --shard K/N` and `fanout combine`, through the real
command line in subprocesses, against the simulator on loopback (and a real redis)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from fanout import JobError
from fanout.jobs import Shard, combine_jsonl, run_jsonl

from ..conftest import SimFactory


def _write_questions(path: Path, n: int) -> list[object]:
    """``n`` questions, ids of both types (7 and "7" are different ids)."""
    ids: list[object] = [i if i % 2 else f"q{i}" for i in range(n)]
    path.write_text("".join(json.dumps({"id": i, "question": f"What is item {i}?"}) + "\n"
                            for i in ids))  # fmt: skip
    return ids


def _records(path: Path) -> list[dict[str, object]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "the output ends with a torn line"
    return [json.loads(line) for line in text.splitlines()]


def _key(value: object) -> str:
    return json.dumps(value)


def _run_cmd(src: Path, dst: Path, shard: str, base_url: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--shard", shard,
            "--base-url", base_url, "--model", "m", "--api-key", "sim", "--policy", "split",
            "--no-progress", *extra]  # fmt: skip


async def _start(cmd: list[str]) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE,
                                                stderr=asyncio.subprocess.PIPE)  # fmt: skip


async def _finish(proc: asyncio.subprocess.Process) -> tuple[int, str, str]:
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


async def test_two_shards_in_parallel_share_one_redis_limit_and_answer_every_id_once(
    sim: SimFactory, tmp_path: Path, redis_url: str
) -> None:
    """Two `fanout run --shard K/2` at once, one redis rpm limit that the simulator
    polices: every id is answered exactly once across the two outputs, none by both,
    0 x 429; `fanout combine --input` puts them back in the input's order."""
    src = tmp_path / "in.jsonl"
    ids = _write_questions(src, 120)
    outs = [tmp_path / "out.1.jsonl", tmp_path / "out.2.jsonl"]
    scale, rpm_model = 2, 600  # 20 requests per wall second, policed over 5-second windows
    async with sim(time_scale=scale, rpm=rpm_model, limit_period_s=5.0, answer_tokens=2,
                   rtt_s=0.05) as (server, _):  # fmt: skip
        limit = ["--redis", redis_url, "--rpm", str(rpm_model * scale)]
        procs = [await _start(_run_cmd(src, out, f"{k}/2", server.base_url, *limit))
                 for k, out in enumerate(outs, 1)]  # fmt: skip
        results = [await _finish(p) for p in procs]
        rate_limited = server.stats.rate_limited
    for code, out, err in results:
        assert code == 0, err
        assert "line(s) left to the other shards" in out
    per_shard = [[_key(r["id"]) for r in _records(out)] for out in outs]
    assert all(len(s) > 20 for s in per_shard), "both shards should hold a fair share"
    assert not set(per_shard[0]) & set(per_shard[1]), "an id was answered by both shards"
    every = Counter(per_shard[0] + per_shard[1])
    assert sorted(every) == sorted(_key(i) for i in ids)
    assert set(every.values()) == {1}, "an id was answered twice"
    assert rate_limited == 0
    combined = tmp_path / "all.jsonl"
    code, out, err = await _finish(await _start(
        [sys.executable, "-m", "fanout", "combine", *map(str, outs), "-o", str(combined),
         "--input", str(src)]))  # fmt: skip
    assert code == 0, err
    assert f"{len(ids)} id(s), answered {len(ids)}, failed 0" in out
    assert [r["id"] for r in _records(combined)] == ids


async def test_a_killed_shard_resumes_alone_and_does_not_ask_finished_ids_again(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Shard 1/2 killed with SIGKILL mid-run while shard 2/2 finishes; shard 1 run
    again alone: it skips what it wrote, sends only the rest (one request each), and
    leaves shard 2's output alone; across both outputs each id once."""
    src = tmp_path / "in.jsonl"
    ids = _write_questions(src, 400)
    outs = [tmp_path / "out.1.jsonl", tmp_path / "out.2.jsonl"]
    async with sim(time_scale=5, answer_tokens=4) as (server, _):
        cmds = [_run_cmd(src, out, f"{k}/2", server.base_url, "--concurrency", "8")
                for k, out in enumerate(outs, 1)]  # fmt: skip
        first, second = [await _start(cmd) for cmd in cmds]
        while first.returncode is None and (
            not outs[0].exists() or outs[0].read_bytes().count(b"\n") < 20
        ):
            await asyncio.sleep(0.02)
        assert first.returncode is None, "shard 1 ended before it could be killed"
        first.send_signal(signal.SIGKILL)
        code, _, _ = await _finish(first)
        assert code == -signal.SIGKILL
        code, _, err = await _finish(second)
        assert code == 0, err
        second_output = outs[1].read_bytes()
        written = outs[0].read_bytes()  # a torn last line is cut when it resumes
        whole = written[: written.rfind(b"\n") + 1].splitlines()
        before = {_key(json.loads(line)["id"]) for line in whole}
        server.reset_stats()
        code, out, err = await _finish(await _start(cmds[0]))
        resent = len(server.stats.requests)
    assert code == 0, err
    records = _records(outs[0])
    mine = {_key(r["id"]) for r in records}
    assert 20 <= len(before) < len(mine), "the kill should land while shard 1 is half done"
    assert f"already done {len(before)}," in out
    assert resent == len(mine) - len(before), "the resumed shard asked finished ids again"
    assert outs[1].read_bytes() == second_output, "resuming shard 1 touched shard 2's output"
    every = Counter([_key(r["id"]) for r in records] + [_key(r["id"]) for r in _records(outs[1])])
    assert sorted(every) == sorted(_key(i) for i in ids)
    assert set(every.values()) == {1}, "an id was answered twice"


BAD_SHARDS = [
    ("0/4", "shards count from 1, so K must be 1 to 4"),
    ("5/4", "shards count from 1, so K must be 1 to 4"),
    ("1/0", "a job has at least 1 shard, got 0"),
    ("-1/4", "expected K/N, shard K of N counting from 1 (e.g. 1/4), got '-1/4'"),
    ("2", "expected K/N"),
    ("1/2/3", "expected K/N"),
    ("a/b", "expected K/N"),
]


def test_a_bad_shard_is_refused_with_a_clear_message_and_exit_code_2(tmp_path: Path) -> None:
    """`fanout run --shard 0/4`: stops before a request, with one line naming the option
    and the reason, exit code 2; nothing is written."""
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_questions(src, 3)
    proc = subprocess.run(
        [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--shard", "0/4"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [  # one line: no usage before it
        "fanout run: error: argument --shard: shard 0/4: shards count from 1, so K must be 1 to 4"
    ]
    assert not dst.exists()


@pytest.mark.parametrize(("spec", "reason"), BAD_SHARDS)
def test_every_bad_shard_value_says_why_with_exit_code_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str, reason: str
) -> None:
    """Anything but K/N with 1 <= K <= N: exit code 2 and the reason (the command
    line's parser, in this process)."""
    from fanout.cli.main import main

    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    _write_questions(src, 3)
    with pytest.raises(SystemExit) as info:
        main(["run", str(src), str(dst), f"--shard={spec}"])
    assert info.value.code == 2
    (last,) = capsys.readouterr().err.strip().splitlines()
    assert last.startswith("fanout run: error: argument --shard: ")
    assert reason in last
    assert not dst.exists()


def test_the_split_is_stable_across_processes_and_hash_seeds_and_covers_every_id() -> None:
    """The shard of an id does not depend on Python's hash seed (checked in two fresh
    interpreters) nor change between versions (known values); N shards take every id
    once, and share 8,000 ids within 8 % of evenly."""
    code = ("from fanout.jobs._shard import shard_of; import json; "
            "print([shard_of(json.dumps(i), 7) for i in [*range(50), *map(str, range(50))]])")  # fmt: skip
    seen = set()
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True, env=env)  # fmt: skip
        seen.add(proc.stdout)
    assert len(seen) == 1
    from fanout.jobs._shard import shard_of

    assert [shard_of(_key(v), 4) for v in (0, 1, "0", "q1", 12345)] == KNOWN
    for count in (1, 2, 3, 4):
        shards = [Shard(index=k, count=count) for k in range(1, count + 1)]
        owners = Counter(sum(s.owns(_key(i)) for s in shards) for i in range(8_000))
        assert owners == {1: 8_000}
        sizes = Counter(shard_of(_key(i), count) for i in range(8_000))
        assert max(sizes.values()) <= 1.08 * 8_000 / count, sizes


KNOWN = [1, 2, 4, 1, 3]  # sha256 of "0", "1", '"0"', '"q1"', "12345" mod 4, plus 1


def _record(qid: object, answer: str | None, error: str | None = None) -> str:
    return json.dumps({"id": qid, "answer": answer, "error": error,
                       "usage": {"prompt_tokens": 1, "completion_tokens": 1}, "attempts": 1,
                       "mode": "split", "finish_reason": "stop"}) + "\n"  # fmt: skip


def test_combine_keeps_each_id_once_in_the_input_order_and_names_what_is_missing(
    tmp_path: Path,
) -> None:
    """Two outputs: the last record of an id counts, an answer beats another output's
    failure, a torn last line and a line that is no record are skipped, an id not in
    the input is left out, and the input id no output holds is named; exit code 1."""
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": "?"}) + "\n"
                           for i in ["a", 1, "b", 2, "c"]))  # fmt: skip
    one, two, dst = tmp_path / "o1.jsonl", tmp_path / "o2.jsonl", tmp_path / "all.jsonl"
    one.write_text(_record("b", None, "QuestionError: failed") + _record(2, "two")
                   + _record("a", None, "QuestionError: failed") + _record("a", "A")
                   + '{"id": 9}\n')  # fmt: skip
    two.write_text(_record("b", "B") + _record("zz", "not asked") + _record(1, None, "boom")
                   + '{"id": "c", "answ')  # fmt: skip
    proc = subprocess.run(
        [sys.executable, "-m", "fanout", "combine", str(one), str(two), "-o", str(dst),
         "--input", str(src)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    got = [(r["id"], r["answer"]) for r in _records(dst)]
    assert got == [("a", "A"), (1, None), ("b", "B"), (2, "two")]
    assert "4 id(s), answered 3, failed 1 (1 missing; 1 not in the input, left out" in proc.stdout
    assert "1 id(s) of" in proc.stderr and ': "c";' in proc.stderr
    # Without the input: the outputs' order, every id of them once.
    summary = combine_jsonl([one, two], dst)
    assert [r["id"] for r in _records(dst)] == [2, "a", "b", "zz", 1]
    assert (summary.written, summary.answered, summary.failed) == (5, 4, 1)
    assert summary.skipped_lines == 2
    for clobbered in (src, two):  # never written over the input, nor an output
        with pytest.raises(JobError, match="another file"):
            combine_jsonl([one, two], clobbered, input_path=src)
    assert json.loads(src.read_text().splitlines()[0]) == {"id": "a", "question": "?"}


def test_combine_refuses_an_output_still_being_written(tmp_path: Path) -> None:
    """An output a run still holds locked is not combined (it is not finished): one
    line saying so, exit code 2, nothing written."""
    import fcntl

    out, dst = tmp_path / "o1.jsonl", tmp_path / "all.jsonl"
    out.write_text(_record(1, "one"))
    with out.open("rb") as held:
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        proc = subprocess.run(
            [sys.executable, "-m", "fanout", "combine", str(out), "-o", str(dst)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 2
    assert proc.stderr.strip() == (f"fanout combine: {out} is being written by a run (it is "
                                   "locked): combine it once that run has ended")  # fmt: skip
    assert not dst.exists()


async def test_run_jsonl_takes_a_shard_and_warns_of_another_split(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """The Python API: run_jsonl(shard=Shard(...)) answers that shard's ids only; the
    shards together answer all; resuming a shard's output with another split warns."""
    import fanout

    src = tmp_path / "in.jsonl"
    ids = _write_questions(src, 30)
    async with sim(time_scale=100, answer_tokens=3) as (_, client):
        fo = fanout.Fanout(client, model="m")
        got: list[str] = []
        for k in (1, 2, 3):
            summary = await run_jsonl(
                fo, src, tmp_path / f"o{k}.jsonl", shard=Shard(index=k, count=3)
            )
            assert summary.answered + summary.other_shards == len(ids)
            assert summary.total_lines == summary.answered
            got += [_key(r["id"]) for r in _records(tmp_path / f"o{k}.jsonl")]
        assert sorted(got) == sorted(_key(i) for i in ids)
        assert len(got) == len(set(got))
        await run_jsonl(fo, src, tmp_path / "o1.jsonl", shard=Shard(index=1, count=2))
    assert "that are not shard 1/2's: was it written with another --shard?" in caplog.text
