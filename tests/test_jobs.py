"""Resumable JSONL jobs: every id answered exactly once, even across SIGKILLs."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
from pathlib import Path

import fanout
from fanout._jobs import repair_tail
from fanout.jobs import run_jsonl
from fanout.sim import answer_for

from .conftest import SimFactory


def _write_questions(path: Path, n: int, *, extra_lines: list[str] | None = None) -> list[str]:
    ids = [f"q{i:05d}" for i in range(n)]
    lines = [json.dumps({"id": qid, "question": f"What is item {qid}?"}) for qid in ids]
    lines += extra_lines or []
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def _records(path: Path) -> list[dict[str, object]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "the output ends with a torn line"
    return [json.loads(line) for line in text.splitlines()]


class TestRunJsonl:
    async def test_every_question_is_answered_into_the_output(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """One record per id, with the answer, usage and attempts."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 40)
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        records = _records(dst)
        assert sorted(str(r["id"]) for r in records) == ids
        assert summary.answered == 40
        for r in records:
            assert r["error"] is None
            assert r["answer"] == answer_for(f"What is item {r['id']}?", 3)
            assert r["attempts"] == 1
            assert isinstance(r["usage"], dict)

    async def test_bad_lines_are_reported_with_their_numbers_and_skipped(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Not JSON, no id, no question, a repeated id: reported, and the job goes on."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        extra = ["{not json", json.dumps({"question": "no id?"}), json.dumps({"id": "x"}),
                 json.dumps({"id": "q00001", "question": "again?"})]  # fmt: skip
        ids = _write_questions(src, 5, extra_lines=extra)
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert [(b.line, b.reason.split(":")[0]) for b in summary.bad_lines] == [
            (6, "not JSON"), (7, "missing id"), (8, 'id "x"'), (9, 'duplicate id "q00001"'),
        ]  # fmt: skip
        assert sorted(str(r["id"]) for r in _records(dst)) == ids

    async def test_per_question_parameters_are_used(self, sim: SimFactory, tmp_path: Path) -> None:
        """Extra keys on a line are create() parameters for that question alone."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        src.write_text(json.dumps({"id": 1, "question": "long?", "max_tokens": 4}) + "\n")
        async with sim(time_scale=100, answer_tokens=50) as (_, client):
            await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        (record,) = _records(dst)
        assert record["finish_reason"] == "length"
        usage = record["usage"]
        assert isinstance(usage, dict)
        assert usage["completion_tokens"] == 4

    async def test_rerunning_skips_what_is_already_answered(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """The second run of the same job sends nothing and writes nothing new."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 20)
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            fo = fanout.Fanout(client, model="m")
            await run_jsonl(fo, src, dst)
            before = dst.read_bytes()
            server.reset_stats()
            summary = await run_jsonl(fo, src, dst)
            assert server.stats.requests == []
        assert summary.skipped_done == 20
        assert dst.read_bytes() == before

    async def test_a_torn_last_line_is_cut_and_the_job_completes(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A half-written record (killed mid-write) is removed; its id is asked again."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 10)
        dst.write_text(
            json.dumps({"id": "q00000", "answer": "a", "error": None})
            + "\n"
            + '{"id": "q00001", "ans'
        )
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert summary.repaired_tail
        assert summary.skipped_done == 1
        records = _records(dst)
        assert sorted(str(r["id"]) for r in records) == ids

    def test_repair_leaves_a_clean_file_alone(self, tmp_path: Path) -> None:
        """Whole lines are never cut."""
        path = tmp_path / "out.jsonl"
        path.write_text('{"id": 1}\n{"id": 2}\n')
        assert not repair_tail(path)
        assert path.read_text() == '{"id": 1}\n{"id": 2}\n'


async def test_sigkill_at_random_moments_loses_nothing_and_duplicates_nothing(
    sim: SimFactory, tmp_path: Path
) -> None:
    """`fanout run` killed with SIGKILL at random moments, then resumed: each id exactly once."""
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    ids = _write_questions(src, 1500)
    rng = random.Random(20261130)
    partial_kills = 0
    async with sim(time_scale=5, answer_tokens=4) as (server, _):
        cmd = [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--base-url", server.base_url,
               "--model", "m", "--api-key", "sim", "--concurrency", "16", "--policy", "split"]  # fmt: skip
        for attempt in range(20):
            proc = await asyncio.create_subprocess_exec(*cmd, stdout=asyncio.subprocess.PIPE,
                                                        stderr=asyncio.subprocess.PIPE)  # fmt: skip
            if attempt < 5:
                await asyncio.sleep(rng.uniform(0.9, 1.6))
                if proc.returncode is None:
                    proc.send_signal(signal.SIGKILL)
            await proc.communicate()
            if proc.returncode == 0:
                break
            assert proc.returncode == -signal.SIGKILL
            answered = dst.read_bytes().count(b"\n") if dst.exists() else 0
            if 0 < answered < len(ids):
                partial_kills += 1
    assert proc.returncode == 0
    assert partial_kills >= 3, "the kills should land while the job is half done"
    records = _records(dst)
    got = [str(r["id"]) for r in records]
    assert len(got) == len(set(got)), "an id was answered twice"
    assert sorted(got) == ids
    assert all(r["error"] is None for r in records)
