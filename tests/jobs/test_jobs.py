"""Resumable JSONL jobs: every id answered exactly once, even across SIGKILLs."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import sys
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout.jobs import run_jsonl
from fanout.jobs._output import repair_tail
from fanout.sim import answer_for

from .._virtual import on_virtual_time
from ..conftest import SimFactory


def _write_questions(path: Path, n: int, *, extra_lines: list[str] | None = None) -> list[str]:
    ids = [f"q{i:05d}" for i in range(n)]
    lines = [json.dumps({"id": qid, "question": f"What is item {qid}?"}) for qid in ids]
    lines += extra_lines or []
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return ids


def _answered(qid: str, answer: str) -> dict[str, object]:
    """A whole answer record as fanout 0.1 wrote it (no fingerprint)."""
    return {"id": qid, "answer": answer, "error": None, "attempts": 1, "mode": "split",
            "usage": {"prompt_tokens": 5, "completion_tokens": 3}, "finish_reason": "stop"}  # fmt: skip


def _records(path: Path) -> list[dict[str, object]]:
    text = path.read_text(encoding="utf-8")
    assert text == "" or text.endswith("\n"), "the output ends with a torn line"
    return [json.loads(line) for line in text.splitlines()]


class TestRunJsonl:
    @on_virtual_time
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

    @on_virtual_time
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

    @on_virtual_time
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

    @on_virtual_time
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

    @on_virtual_time
    async def test_a_torn_last_line_is_cut_and_the_job_completes(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A half-written record (killed mid-write) is removed; its id is asked again."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 10)
        dst.write_text(json.dumps(_answered("q00000", "a")) + "\n" + '{"id": "q00001", "ans')
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


# wall clock: the job runs in another process (see tests/_virtual.py)
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
                # Once this run has written something (however long it took to start
                # on a busy machine), at a random moment after.
                before = dst.read_bytes().count(b"\n") if dst.exists() else 0
                while proc.returncode is None and (
                    (dst.read_bytes().count(b"\n") if dst.exists() else 0) <= before
                ):
                    await asyncio.sleep(0.02)
                await asyncio.sleep(rng.uniform(0.0, 0.5))
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


def _last(path: Path) -> dict[str, dict[str, object]]:
    """The last record of each id: what the output says now."""
    return {str(r["id"]): r for r in _records(path)}


FAILING = {"fault_rates": {"500": 1.0}}


class TestResume:
    @on_virtual_time
    async def test_failed_ids_are_asked_again_on_resume(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Ids whose record is a failure are answered by the next run, and counted."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 20)
        async with sim(time_scale=100, answer_tokens=3, **FAILING) as (_, client):
            fo = fanout.Fanout(client, model="m", retry=fanout.Retry(max_attempts=1))
            first = await run_jsonl(fo, src, dst)
        assert first.failed == 20
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            second = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
            assert server.stats.requests, "the failed ids were sent again"
        assert (second.answered, second.failed, second.skipped_done) == (20, 0, 0)
        assert second.retried_failed == 20
        last = _last(dst)
        assert sorted(last) == ids
        assert all(r["error"] is None and r["answer"] for r in last.values())

    @on_virtual_time
    async def test_failed_ids_can_be_left_alone(self, sim: SimFactory, tmp_path: Path) -> None:
        """retry_failed=False sends nothing for them, and counts them apart from done ids."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 5)
        async with sim(time_scale=100, answer_tokens=3, **FAILING) as (_, client):
            fo = fanout.Fanout(client, model="m", retry=fanout.Retry(max_attempts=1))
            await run_jsonl(fo, src, dst)
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            fo = fanout.Fanout(client, model="m")
            summary = await run_jsonl(fo, src, dst, retry_failed=False)
            assert server.stats.requests == []
        assert (summary.skipped_failed, summary.skipped_done, summary.answered) == (5, 0, 0)

    @on_virtual_time
    async def test_a_changed_question_is_answered_again(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Same id, different question: re-asked (and counted); unchanged ids are skipped."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 6)
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            fo = fanout.Fanout(client, model="m", policy="split")
            await run_jsonl(fo, src, dst)
            lines = src.read_text().splitlines()
            lines[2] = json.dumps({"id": "q00002", "question": "Something else entirely?"})
            src.write_text("\n".join(lines) + "\n")
            server.reset_stats()
            summary = await run_jsonl(fo, src, dst)
            assert len(server.stats.requests) == 1
        assert (summary.reasked_changed, summary.skipped_done, summary.answered) == (1, 5, 1)
        assert _last(dst)["q00002"]["answer"] == answer_for("Something else entirely?", 3)

    @pytest.mark.parametrize(
        "change",
        [{"model": "other"}, {"system": "Be terse."}, {"temperature": 0.5}],
        ids=["model", "system", "parameter"],
    )
    @on_virtual_time
    async def test_a_changed_model_system_or_parameter_is_answered_again(
        self, sim: SimFactory, tmp_path: Path, change: dict[str, Any]
    ) -> None:
        """The fingerprint covers the model, the system prompt and the create() parameters."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 3)
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            fo = fanout.Fanout(client, model="m")
            await run_jsonl(fo, src, dst)
            same = await run_jsonl(fo, src, dst)
            changed = await run_jsonl(fo, src, dst, **change)
        assert (same.skipped_done, same.reasked_changed) == (3, 0)
        assert (changed.skipped_done, changed.reasked_changed, changed.answered) == (0, 3, 3)

    @on_virtual_time
    async def test_records_without_a_fingerprint_are_trusted(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Output written before fingerprints existed is not re-asked (and not re-billed)."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 2)
        dst.write_text(json.dumps(_answered("q00000", "old")) + "\n")
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert (summary.skipped_done, summary.answered, summary.reasked_changed) == (1, 1, 0)


class TestLock:
    @on_virtual_time
    async def test_a_second_run_on_the_same_output_fails_at_once(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """While a job writes an output, another job on it stops before sending anything."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 30)
        async with sim(time_scale=20, answer_tokens=20) as (server, client):
            fo = fanout.Fanout(
                client, model="m", policy="split", limits=fanout.Limits(max_concurrency=4)
            )
            first = asyncio.create_task(run_jsonl(fo, src, dst))
            while not server.stats.requests:
                await asyncio.sleep(0.01)
            sent = len(server.stats.requests)
            with pytest.raises(fanout.JobError, match="another run"):
                await run_jsonl(fo, src, dst)
            assert len(server.stats.requests) <= sent + 4, "the second run sent nothing"
            summary = await first
        assert summary.answered == 30
        got = [str(r["id"]) for r in _records(dst)]
        assert sorted(got) == ids

    @on_virtual_time
    async def test_without_fcntl_the_job_runs_and_says_it_is_not_locked(
        self,
        sim: SimFactory,
        tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture,
    ) -> None:
        """Where file locking is missing (Windows), the job still runs, with a warning."""
        import fanout.jobs._output

        monkeypatch.setattr(fanout.jobs._output, "fcntl", None)
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 3)
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert summary.answered == 3
        assert "cannot lock" in caplog.text


class TestInput:
    @on_virtual_time
    async def test_invalid_utf8_is_a_bad_line_and_the_job_goes_on(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A line that is not UTF-8 is skipped with its number; every line after it is answered."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 5)
        lines = src.read_bytes().splitlines(keepends=True)
        lines.insert(2, b'{"id": "bad", "question": "caf\xe9?"}\n')
        src.write_bytes(b"".join(lines))
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert [(b.line, b.reason.split(":")[0]) for b in summary.bad_lines] == [(3, "not UTF-8")]
        assert sorted(str(r["id"]) for r in _records(dst)) == ids

    @on_virtual_time
    async def test_a_utf8_bom_does_not_spoil_the_first_line(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A file saved with a byte-order mark reads like one without."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 3)
        src.write_bytes(b"\xef\xbb\xbf" + src.read_bytes())
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert summary.bad_lines == []
        assert sorted(str(r["id"]) for r in _records(dst)) == ids


class TestOutput:
    @on_virtual_time
    async def test_a_whole_last_record_without_a_newline_is_kept(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A last line that parses is a record, not a torn one: kept, and not asked again."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        ids = _write_questions(src, 3)
        dst.write_text(json.dumps(_answered("q00000", "kept")))
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            summary = await run_jsonl(fanout.Fanout(client, model="m"), src, dst)
        assert not summary.repaired_tail
        assert (summary.skipped_done, summary.answered) == (1, 2)
        assert _last(dst)["q00000"]["answer"] == "kept"
        assert sorted(_last(dst)) == ids

    @on_virtual_time
    async def test_error_records_name_the_id_and_the_input_line(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A failure says which id and which input line, not a position among the questions left."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        _write_questions(src, 3)
        dst.write_text(json.dumps(_answered("q00000", "a")) + "\n")
        async with sim(time_scale=100, answer_tokens=3, **FAILING) as (_, client):
            fo = fanout.Fanout(client, model="m", retry=fanout.Retry(max_attempts=1))
            await run_jsonl(fo, src, dst)
        error = _last(dst)["q00001"]["error"]
        assert isinstance(error, str)
        assert 'id "q00001" (line 2)' in error
        assert "question 0" not in error

    @on_virtual_time
    async def test_ids_sharing_one_question_each_name_their_own_line(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Identical questions are sent once; each failure record still names its own id."""
        src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
        src.write_text("".join(json.dumps({"id": i, "question": "same?"}) + "\n" for i in (7, 8)))
        async with sim(time_scale=100, answer_tokens=3, **FAILING) as (_, client):
            fo = fanout.Fanout(client, model="m", retry=fanout.Retry(max_attempts=1))
            await run_jsonl(fo, src, dst)
        errors = {r["id"]: str(r["error"]) for r in _records(dst)}
        assert errors[7].startswith("QuestionError: id 7 (line 1) failed")
        assert errors[8].startswith("QuestionError: id 8 (line 2) failed")

    def test_a_newline_ended_last_line_is_never_cut(self, tmp_path: Path) -> None:
        """Only a line without its newline can be torn; a whole line stays, JSON or not."""
        path = tmp_path / "out.jsonl"
        path.write_text('{"id": 1}\nnot json\n')
        assert not repair_tail(path)
        assert path.read_text() == '{"id": 1}\nnot json\n'
