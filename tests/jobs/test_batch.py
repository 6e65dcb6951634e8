"""The Batch API (the simulator's /v1/files and /v1/batches, `fanout run --batch`, resuming
a killed batch job at each phase) and the deadline-aware choice between batch, flex and
standard online requests."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import shutil
import signal
import sys
from collections import Counter
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from fanout import Fanout, Policy, Pricing, Question, plan
from fanout.cli.batch import tier_lines
from fanout.core.tiers import choose_tier
from fanout.engine.spending import Pricer, worst_case
from fanout.jobs import BatchOptions, JobSummary, run_job
from fanout.sim import answer_for

from .._virtual import on_virtual_time
from ..conftest import SimFactory

pytestmark = pytest.mark.slow

_LINE = {"method": "POST", "url": "/v1/chat/completions"}


def _line(custom_id: str, question: str, model: str = "m") -> dict[str, Any]:
    body = {"model": model, "messages": [{"role": "user", "content": question}]}
    return {"custom_id": custom_id, **_LINE, "body": body}


def _jsonl(lines: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(line) + "\n" for line in lines).encode()


async def _until_done(client: Any, batch_id: str) -> tuple[Any, list[str]]:
    seen: list[str] = []
    for _ in range(400):
        batch = await client.batches.retrieve(batch_id)
        if not seen or seen[-1] != batch.status:
            seen.append(batch.status)
        if batch.status in ("completed", "expired", "failed", "cancelled"):
            return batch, seen
        await asyncio.sleep(0.02)
    raise AssertionError(f"batch never ended: {seen}")


async def test_sim_batch_api_goes_through_the_openai_statuses_and_shapes(sim: SimFactory) -> None:
    """Upload with purpose=batch, create, poll validating -> in_progress -> finalizing ->
    completed, then download: every custom_id once, answers in the output file, the
    failed ones (batch_failure_rate) in the error file as 500s."""
    async with sim(time_scale=10, answer_tokens=3, batch_validate_s=1, batch_completion_s=4,
                   batch_finalize_s=1, batch_failure_rate=0.3, seed=3) as (server, client):  # fmt: skip
        data = _jsonl([_line(f"c{i}", f"What is {i}?") for i in range(20)])
        file = await client.files.create(file=("in.jsonl", data), purpose="batch")
        assert (file.object, file.purpose, file.bytes) == ("file", "batch", len(data))
        batch = await client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions",
                                            completion_window="24h", metadata={"k": "v"})  # fmt: skip
        assert batch.status == "validating" and batch.metadata == {"k": "v"}
        batch, seen = await _until_done(client, batch.id)
        statuses = list(dict.fromkeys(["validating", *seen]))
        assert statuses == ["validating", "in_progress", "finalizing", "completed"]
        assert batch.request_counts is not None
        counts = batch.request_counts
        assert counts.total == 20 and counts.completed + counts.failed == 20 and counts.failed > 0
        assert batch.output_file_id and batch.error_file_id
        out = [
            json.loads(x)
            for x in (await client.files.content(batch.output_file_id)).text.splitlines()
        ]
        err = [
            json.loads(x)
            for x in (await client.files.content(batch.error_file_id)).text.splitlines()
        ]
        assert len(out) == counts.completed and len(err) == counts.failed
        assert sorted(x["custom_id"] for x in out + err) == sorted(f"c{i}" for i in range(20))
        first = out[0]
        assert first["error"] is None and first["response"]["status_code"] == 200
        assert first["response"]["body"]["object"] == "chat.completion"
        assert first["response"]["body"]["choices"][0]["message"]["content"]
        assert {e["response"]["status_code"] for e in err} == {500}
        assert server.batches.submitted == Counter({f"c{i}": 1 for i in range(20)})


async def test_sim_batch_expires_and_refuses_mixed_models(sim: SimFactory) -> None:
    """The first `batch_expiries` batches expire at the window, half of their requests
    answered and the rest `batch_expired`; a file mixing models fails validation."""
    async with sim(time_scale=100, answer_tokens=3, batch_validate_s=0.5, batch_completion_s=3,
                   batch_window_s=2, batch_expiries=1) as (server, client):  # fmt: skip
        data = _jsonl([_line(f"c{i}", f"Q{i}?") for i in range(10)])
        file = await client.files.create(file=("in.jsonl", data), purpose="batch")
        made = await client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions",
                                           completion_window="24h")  # fmt: skip
        batch, _ = await _until_done(client, made.id)
        assert batch.status == "expired"
        assert batch.error_file_id is not None and batch.output_file_id is not None
        errors = (await client.files.content(batch.error_file_id)).text.splitlines()
        assert len(errors) == 5
        assert {json.loads(e)["error"]["code"] for e in errors} == {"batch_expired"}

        mixed = _jsonl([_line("a", "Q?", model="m"), _line("b", "Q?", model="other")])
        file = await client.files.create(file=("mixed.jsonl", mixed), purpose="batch")
        made = await client.batches.create(input_file_id=file.id, endpoint="/v1/chat/completions",
                                           completion_window="24h")  # fmt: skip
        batch, _ = await _until_done(client, made.id)
        assert batch.status == "failed"
        assert batch.errors is not None and batch.errors.data
        assert batch.errors.data[0].code == "mismatched_model"
        assert "a" not in server.batches.submitted  # a failed validation submits nothing


def test_sim_batch_damaged_lines_refuses_an_unknown_damage_or_line() -> None:
    """SimConfig(batch_damaged_lines=...): a line number below 1 or a damage not in
    BATCH_LINE_DAMAGE fails at construction, naming it."""
    from fanout.sim import BATCH_LINE_DAMAGE, SimConfig

    assert SimConfig(batch_damaged_lines=dict.fromkeys(range(1, 5), "torn"))
    assert set(BATCH_LINE_DAMAGE) == {"torn", "array", "string", "null"}
    with pytest.raises(ValueError, match="unknown batch line damage 'cut' for line 2"):
        SimConfig(batch_damaged_lines={2: "cut"})
    with pytest.raises(ValueError, match="batch_damaged_lines: line 0 must be"):
        SimConfig(batch_damaged_lines={0: "torn"})


def _questions(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps({"id": i, "question": f"What is {i}?"}) + "\n"
                            for i in range(n)))  # fmt: skip
    return path


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def _cli(base_url: str, src: Path, dst: Path, *extra: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fanout", "run", str(src), str(dst), "--base-url", base_url,
        "--model", "m", "--api-key", "sim", "--policy", "split", "--no-progress",
        "--batch-poll", "0.05", *extra,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def test_run_batch_answers_every_id_and_resubmits_only_the_failed_ones_alone(
    sim: SimFactory, tmp_path: Path
) -> None:
    """`fanout run --batch`: every id answered from a batch (mode "batch"), once; the
    requests that failed in a batch go in a follow-up batch, alone; the state is gone."""
    src, dst = _questions(tmp_path / "q.jsonl", 40), tmp_path / "a.jsonl"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=3,
                   batch_failure_rate=0.25, seed=5) as (server, _):  # fmt: skip
        proc = await _cli(server.base_url, src, dst, "--batch")
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        records = _records(dst)
        assert sorted(r["id"] for r in records) == list(range(40))
        assert all(r["error"] is None and r["mode"] == "batch" for r in records)
        batches = list(server.batches.batches.values())
        assert len(batches) >= 2  # the failures went in a follow-up batch
        first = {line["custom_id"] for line in batches[0].lines}
        again = [line for b in batches[1:] for line in b.lines]
        assert 0 < len(again) < 40 and not first & {line["custom_id"] for line in again}
        assert "sent: batch" in out.decode() and "answered in batches" in out.decode()
        assert not (tmp_path / "a.jsonl.batches").exists()


async def test_run_batch_keeps_the_spend_cap_on_each_requests_worst_case(
    sim: SimFactory, tmp_path: Path
) -> None:
    """`fanout run --batch --max-cost`: a batch's cost is known only once it has run, so
    each request reserves its worst case (its prompt with a margin and its max_tokens, at
    the batch price). The requests that fit go in a batch; the rest wait for it, as an
    online request waits for those in flight, and are planned again with what it cost.
    Here the answers use their max_tokens, so four cost nearly their worst case and the
    fifth still does not fit: it and the rest are not submitted (a BudgetExceededError
    record each) and the job stops at the cap (exit 5). Run again with a higher cap, it
    answers the rest, none submitted twice. (Batch jobs ignored --max-cost before.)"""
    questions = [f"What is {i}? {{{{tokens=400}}}}" for i in range(12)]
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                           for i, q in enumerate(questions)))  # fmt: skip
    pricer = Pricer(pricing=Pricing(input=1, output=1))  # USD per million tokens

    def worst(question: str) -> Decimal:
        body = {"model": "m", "max_tokens": 400,
                "messages": [{"role": "user", "content": question}]}  # fmt: skip
        return worst_case(pricer, body, "m", None, tier="batch")

    worsts = [worst(q) for q in questions]
    room_for_four = sum(worsts[:4]) + worsts[4] / 2
    price = ["--price", "1,1", "--max-tokens", "400"]
    async with sim(time_scale=100, batch_completion_s=3) as (server, _):
        proc = await _cli(server.base_url, src, dst, "--batch", *price,
                          "--max-cost", str(room_for_four))  # fmt: skip
        _, err = await proc.communicate()
        assert proc.returncode == 5, err.decode()
        assert "stopped at the spend cap" in err.decode()
        submitted = [line["custom_id"] for b in server.batches.batches.values() for line in b.lines]
        assert len(submitted) == 4
        first = {r["id"]: r for r in _records(dst)}
        assert sorted(first) == list(range(12))  # an answer or an error naming it, each
        answered = [first[i] for i in range(4)]
        assert all(r["mode"] == "batch" and r["error"] is None for r in answered)
        assert sum(Decimal(str(r["cost"])) for r in answered) <= room_for_four
        for i in range(4, 12):
            assert first[i]["error"].startswith(f"BudgetExceededError: id {i} "), first[i]

        proc = await _cli(server.base_url, src, dst, "--batch", *price,
                          "--max-cost", str(2 * sum(worsts)))  # fmt: skip
        _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        submitted = [line["custom_id"] for b in server.batches.batches.values() for line in b.lines]
    last = {r["id"]: r for r in _records(dst)}  # an id's last record is its answer
    assert sorted(last) == list(range(12))
    assert all(r["error"] is None for r in last.values())
    assert len(submitted) == 12 and len(set(submitted)) == 12


async def test_run_batch_under_a_cap_waits_for_its_batches_before_refusing(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Short answers under a cap with room for two worst cases and a half: two go in a
    batch, the rest wait for it; it costs a fraction of its reservation, so the rest fit
    after it, batch after batch, and every question is answered within the cap (the
    refusal comes only when nothing is out and the next does not fit)."""
    questions = [f"What is {i}?" for i in range(6)]
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                           for i, q in enumerate(questions)))  # fmt: skip
    pricer = Pricer(pricing=Pricing(input=1, output=1))
    body = {
        "model": "m",
        "max_tokens": 100,
        "messages": [{"role": "user", "content": "What is 0?"}],
    }
    cap = worst_case(pricer, body, "m", None, tier="batch") * Decimal("2.5")
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (server, _):
        proc = await _cli(server.base_url, src, dst, "--batch", "--price", "1,1",
                          "--max-tokens", "100", "--max-cost", str(cap))  # fmt: skip
        _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        batches = list(server.batches.batches.values())
    records = _records(dst)
    assert sorted(r["id"] for r in records) == list(range(6))
    assert all(r["error"] is None and r["mode"] == "batch" for r in records)
    assert len(batches) >= 3 and all(len(b.lines) <= 2 for b in batches)
    assert sum(Decimal(str(r["cost"])) for r in records) <= cap


async def _kill_when(proc: asyncio.subprocess.Process, ready: Callable[[], bool]) -> None:
    loop = asyncio.get_running_loop()
    until = loop.time() + 60  # a loaded machine starts a Python process slowly
    while loop.time() < until:
        if ready():
            break
        if proc.returncode is not None:
            raise AssertionError("the job ended before the phase to kill it in")
        await asyncio.sleep(0.005)
    else:
        raise AssertionError("the phase to kill the job in never came")
    os.kill(proc.pid, signal.SIGKILL)
    await proc.wait()


@pytest.mark.parametrize("phase", ["upload", "in_progress", "download"])
async def test_a_batch_job_killed_in_each_phase_resumes_without_resubmitting(
    sim: SimFactory, tmp_path: Path, phase: str
) -> None:
    """SIGKILL during the upload, while the batch runs, and during the download of its
    results: the same command again finishes the job with one batch, each request
    submitted once, every id answered once."""
    src, dst = _questions(tmp_path / "q.jsonl", 30), tmp_path / "a.jsonl"
    slow = {"upload": {"file_upload_s": 500}, "in_progress": {"batch_completion_s": 500},
            "download": {"file_download_s": 500}}[phase]  # fmt: skip
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=2) as (server, _):
        store = server.batches
        ready: dict[str, Callable[[], bool]] = {
            "upload": lambda: store.uploads >= 1,
            "in_progress": lambda: any(
                store._status(b) == "in_progress" for b in store.batches.values()
            ),
            "download": lambda: store.download_requests >= 1,
        }
        config = server.config
        server.config = store.config = type(config)(**{**config.__dict__, **slow})
        proc = await _cli(server.base_url, src, dst, "--batch")
        await _kill_when(proc, ready[phase])
        assert (tmp_path / "a.jsonl.batches" / "state.json").exists()
        server.config = store.config = config  # the next run is not slowed down
        proc = await _cli(server.base_url, src, dst, "--batch")
        _, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        records = _records(dst)
        assert sorted(r["id"] for r in records) == list(range(30))  # each id once
        assert all(r["mode"] == "batch" and r["error"] is None for r in records)
        assert len(store.batches) == 1
        assert len(store.submitted) == 30 and set(store.submitted.values()) == {1}
        assert server.stats.completions == 0  # nothing went online


async def test_expired_requests_are_resubmitted_and_go_online_when_the_deadline_is_near(
    sim: SimFactory, tmp_path: Path
) -> None:
    """An expired batch: its requests go in a new batch while the deadline leaves time
    for one, else online (mode "split")."""
    src = _questions(tmp_path / "q.jsonl", 10)
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1, batch_window_s=2,
                   batch_expiries=1) as (server, client):  # fmt: skip
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        summary = JobSummary()
        await run_job(summary, fo, src, tmp_path / "a.jsonl", batch=True,
                      options=BatchOptions(poll_s=0.05))  # fmt: skip
        assert summary.answered == 10 and summary.batch_answered == 10
        assert len(server.batches.batches) == 2 and server.stats.completions == 0

    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1, batch_window_s=2,
                   batch_expiries=1) as (server, client):  # fmt: skip
        policy = Policy(mode="split", objective="cost", deadline=60, batch_expected_s=3600)
        fo = Fanout(client, model="m", policy=policy, memory=False)
        summary = JobSummary()
        await run_job(summary, fo, src, tmp_path / "b.jsonl", batch=True,
                      options=BatchOptions(poll_s=0.05))  # fmt: skip
        records = _records(tmp_path / "b.jsonl")
        assert sorted(r["id"] for r in records) == list(range(10))
        assert Counter(r["mode"] for r in records) == {"batch": 5, "split": 5}
        assert len(server.batches.batches) == 1 and server.stats.completions == 5


async def test_cost_objective_with_a_day_goes_through_the_batch_api_at_half_the_cost(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Issue 28's acceptance, on the simulator, objective cost: with a 24 h deadline the
    job goes through the Batch API and costs half of the same job online, which is what
    a 1-minute deadline picks. (300 questions here, to stay fast on a shared machine; the
    10,000 of the issue were run by hand: see docs/batch.md.)"""
    n = 300
    src = _questions(tmp_path / "q.jsonl", n)
    async with sim(time_scale=1000, answer_tokens=2, batch_completion_s=5, rtt_s=0.01) as (
        server, _,
    ):  # fmt: skip
        day = await _cli(server.base_url, src, tmp_path / "day.jsonl", "--objective", "cost",
                         "--deadline", "86400", "--price", "0.15,0.60")  # fmt: skip
        out_day, err = await day.communicate()
        assert day.returncode == 0, err.decode()
        minute = await _cli(server.base_url, src, tmp_path / "minute.jsonl", "--objective",
                            "cost", "--deadline", "60", "--concurrency", "256", "--price",
                            "0.15,0.60")  # fmt: skip
        out_min, err = await minute.communicate()
        assert minute.returncode == 0, err.decode()
    day_text, minute_text = out_day.decode(), out_min.decode()
    assert "sent: batch" in day_text and "why: batch" in day_text, day_text
    assert "sent: standard" in minute_text, minute_text
    day_records, minute_records = (
        _records(tmp_path / "day.jsonl"),
        _records(tmp_path / "minute.jsonl"),
    )
    assert len(day_records) == len(minute_records) == n
    assert {r["mode"] for r in day_records} == {"batch"}
    assert {r["mode"] for r in minute_records} == {"split"}

    def dollars(text: str) -> float:  # the run summary's "cost $0.000123"
        return float(text.split("cost $")[1].split()[0].rstrip(";,"))

    ratio = dollars(day_text) / dollars(minute_text)
    assert 0.45 <= ratio <= 0.55, (ratio, day_text, minute_text)


async def test_flex_refusals_are_retried_at_flex_or_sent_standard_near_the_deadline(
    sim: SimFactory,
) -> None:
    """A flex request refused (429 resource_unavailable) is asked at flex again later;
    when the deadline leaves no time for that, it goes at the standard tier. Refusals
    do not make the other requests wait (no rate-limit cool-down)."""
    from fanout import Retry
    from fanout.engine.flex import flex_until

    async with sim(time_scale=100, answer_tokens=3, flex_refusal_rate=0.5, seed=1) as (
        server,
        client,
    ):
        fo = Fanout(client, model="m", policy="split", memory=False,
                    retry=Retry(initial_wait=0.01, max_wait=0.05, max_attempts=20))  # fmt: skip
        answers = await fo.ask_many([f"Q{i}?" for i in range(20)], service_tier="flex")
        assert all(a.ok for a in answers)
        records = server.stats.requests
        assert any(r.error_code == "resource_unavailable" for r in records)
        answered = [r for r in records if r.status == 200]
        assert len(answered) == 20 and {r.service_tier for r in answered} == {"flex"}

    async with sim(time_scale=100, answer_tokens=3, flex_refusal_rate=1.0) as (server, client):
        fo = Fanout(client, model="m", policy="split", memory=False,
                    retry=Retry(initial_wait=5, max_wait=5, max_attempts=20))  # fmt: skip
        import time

        token = flex_until.set(time.monotonic() + 2)
        try:
            answers = await fo.ask_many([f"Q{i}?" for i in range(5)], service_tier="flex")
        finally:
            flex_until.reset(token)
        assert all(a.ok for a in answers)
        answered = [r for r in server.stats.requests if r.status == 200]
        assert len(answered) == 5 and {r.service_tier for r in answered} == {None}
        assert server.stats.rate_limited == 0


@on_virtual_time
async def test_a_flex_request_s_expected_time_counts_its_answer_cap_under_either_name(
    sim: SimFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether a refused flex request has time to try flex again before the deadline is
    weighed with how long its answer may run: its cap under ``max_tokens`` or
    ``max_completion_tokens`` alike. (Only ``max_tokens`` was read: a request capped at
    4,000 tokens under the newer name was timed as a prior-length answer.)"""
    from fanout.engine.flex import send_flex as real

    seen: list[float] = []

    async def recording(send: Any, params: Any, retry: Any, expected_s: float, **kw: Any) -> Any:
        seen.append(expected_s)
        return await real(send, params, retry, expected_s, **kw)

    monkeypatch.setattr("fanout.engine.transport.send_flex", recording)
    async with sim(time_scale=100, answer_tokens=3) as (_server, client):
        caps: list[dict[str, Any]] = [{"max_tokens": 4000}, {"max_completion_tokens": 4000}]
        for cap in [*caps, {"max_completion_tokens": 10}]:
            fo = Fanout(client, model="m", policy="split", memory=False)  # nothing learned
            answers = await fo.ask_many(["Q?"], service_tier="flex", **cap)
            assert answers[0].ok
    long_old, long_new, short = seen
    assert long_new == pytest.approx(long_old)
    assert short < long_new


async def test_a_deadline_between_flex_and_batch_sends_the_job_at_flex(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Policy(objective="cost", deadline=...) too short for a batch but long enough for
    flex: the job goes online with service_tier="flex", and the reason names the others."""
    src = _questions(tmp_path / "q.jsonl", 20)
    async with sim(time_scale=100, answer_tokens=3) as (server, client):
        policy = Policy(mode="split", objective="cost", deadline=600)
        fo = Fanout(client, model="m", policy=policy, memory=False)
        summary = JobSummary()
        await run_job(summary, fo, src, tmp_path / "a.jsonl")
        assert summary.tier == "flex" and summary.answered == 20
        assert summary.tier_reason is not None
        assert "batch split" in summary.tier_reason and "standard split" in summary.tier_reason
        answered = [r for r in server.stats.requests if r.status == 200]
        assert {r.service_tier for r in answered} == {"flex"}
        assert not server.batches.batches


async def test_a_batch_job_stopped_after_planning_its_retries_does_not_submit_them_twice(
    sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (here: an error raised) after the failed requests of a collected batch
    were planned into a follow-up batch and before that batch was marked collected: the
    next run collects it again and finds its failures already planned, so each question
    goes in at most two batches (its own and one retry), and every id is answered."""
    from fanout.jobs import _batch

    src, dst = _questions(tmp_path / "q.jsonl", 30), tmp_path / "a.jsonl"
    planned = _batch._BatchJob._retry

    def stop_after(self: Any, *args: Any, **kwargs: Any) -> None:
        planned(self, *args, **kwargs)
        raise RuntimeError("stopped after planning the retries")

    # The first batch expires with half of its requests answered; the others complete.
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=0.5, batch_window_s=1,
                   batch_expiries=1) as (server, client):  # fmt: skip
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        options = BatchOptions(poll_s=0.05)
        monkeypatch.setattr(_batch._BatchJob, "_retry", stop_after)
        with pytest.raises(RuntimeError, match="stopped after planning"):
            await run_job(JobSummary(), fo, src, dst, batch=True, options=options)
        monkeypatch.setattr(_batch._BatchJob, "_retry", planned)
        await run_job(JobSummary(), fo, src, dst, batch=True, options=options)
        asked = Counter(line["body"]["messages"][-1]["content"]
                        for b in server.batches.batches.values() for line in b.lines)  # fmt: skip
    last = {r["id"]: r for r in _records(dst)}
    assert sorted(last) == list(range(30)) and all(r["error"] is None for r in last.values())
    assert max(asked.values()) == 2, asked.most_common(3)


async def test_a_batch_job_says_how_its_batches_are_doing_while_it_waits(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """With progress on (``fanout run``'s default), a batch job waiting for its batch
    logs its status and counts on the progress logger (a batch may take hours; it was
    silent), once per change at most every 5 seconds; with progress off, nothing."""
    src, dst = _questions(tmp_path / "q.jsonl", 5), tmp_path / "a.jsonl"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=30) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        with caplog.at_level(logging.INFO, logger="fanout.progress"):
            await run_job(JobSummary(), fo, src, dst, batch=True, progress=True,
                          options=BatchOptions(poll_s=0.05))  # fmt: skip
            said = [r.getMessage() for r in caplog.records if r.name == "fanout.progress"]
            caplog.clear()
            await run_job(JobSummary(), fo, src, tmp_path / "b.jsonl", batch=True,
                          options=BatchOptions(poll_s=0.05))  # fmt: skip
            quiet = [r for r in caplog.records if r.name == "fanout.progress"]
    # The batch ran 0.3 s, polled every 0.05 s: one line, not one per poll or status.
    assert len(said) == 1, said
    assert said[0].startswith("batch batch_") and ", 0 of 5 request(s) done, 0 failed" in said[0]
    assert quiet == []


@pytest.mark.parametrize("damage", ["torn", "array", "string", "null"])
async def test_a_bad_line_in_a_batchs_output_file_is_reported_and_its_question_asked_again(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """A completed batch whose output file has one bad line (cut short, or JSON that is
    no object) among nine good ones: the nine answers are recorded, a warning names the
    batch's output file, the line and (when it can be read) its custom_id, the bad
    line's question is answered in a follow-up batch, and the job ends, its state gone
    (it stopped at the first bad line before, nothing recorded, and so on every run)."""
    src, dst = _questions(tmp_path / "q.jsonl", 10), tmp_path / "a.jsonl"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1,
                   batch_damaged_lines={4: damage}) as (server, client):  # fmt: skip
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        summary = JobSummary()
        with caplog.at_level(logging.WARNING, logger="fanout.jobs"):
            await run_job(summary, fo, src, dst, batch=True, options=BatchOptions(poll_s=0.05))
        first, *later = server.batches.batches.values()
        assert first.output_file_id is not None
        output = server.batches.files[first.output_file_id].data.decode().splitlines()
    assert len(output) == 10 and not output[3].endswith("}")  # the fourth line is bad
    records = _records(dst)
    assert sorted(r["id"] for r in records) == list(range(10))  # each id once
    assert all(r["error"] is None and r["mode"] == "batch" for r in records)
    bad_id = first.lines[3]["custom_id"]
    assert [line["body"]["messages"][-1]["content"] for b in later for line in b.lines] == [
        "What is 3?"
    ]
    assert summary.answered == summary.batch_answered == 10
    warnings = [r.getMessage() for r in caplog.records if r.name == "fanout.jobs"]
    assert len(warnings) == 1, warnings
    assert first.output_file_id in warnings[0] and "line 4" in warnings[0]
    assert (bad_id in warnings[0]) == (damage == "torn"), warnings[0]
    assert not (tmp_path / "a.jsonl.batches").exists()


def test_a_batch_file_line_without_a_string_custom_id_or_an_object_response_is_left_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Lines that are objects but hold no string custom_id, or a response that is no
    object, are left out with a warning naming the file and the line (the second
    ended in an AttributeError when the line was read); the good line is kept."""
    from fanout.jobs._batch_lines import read_file

    good = {"custom_id": "k-1", "response": None, "error": {"code": "batch_expired"}}
    text = "\n".join([json.dumps({"custom_id": 5, "response": None}),
                      json.dumps({"custom_id": "k-2", "response": [1]}),
                      json.dumps(good)])  # fmt: skip
    with caplog.at_level(logging.WARNING, logger="fanout.jobs"):
        lines = read_file(text, "batch_1", "error", "file-1")
    assert lines == {"k-1": good}
    said = [r.getMessage() for r in caplog.records if r.name == "fanout.jobs"]
    assert len(said) == 2, said
    assert said[0].startswith("batch batch_1: line 1 of its error file file-1 is unusable: ")
    assert "no string custom_id (5)" in said[0]
    assert said[1].startswith("batch batch_1: line 2 of its error file file-1 is unusable "
                              "(custom_id 'k-2'): its response is not an object")  # fmt: skip


_CHUNK = {"key": "k", "round": 1, "file": "k.jsonl", "file_id": None, "batch_id": None,
          "state": "written", "lines": {"k-1": {"ids": [["0", "fp"]], "merged": None}}}  # fmt: skip


@pytest.mark.parametrize(
    ("state", "wrong"),
    [
        ([], "the state should be an object, not an array"),
        ({"version": 1, "chunks": None}, "chunks should be an array, not null"),
        ({"chunks": [1]}, "chunks[0] should be an object, not a number"),
        ({"chunks": [{k: v for k, v in _CHUNK.items() if k != "lines"}]},
         "chunks[0].lines is missing"),
        ({"chunks": [{**_CHUNK, "lines": []}]}, "chunks[0].lines should be an object"),
        ({"chunks": [{**_CHUNK, "lines": {"k-1": {"ids": [["0"]], "merged": None}}}]},
         "chunks[0].lines.k-1.ids[0]: List should have at least 2 items"),
        ({"chunks": [{**_CHUNK, "state": "running"}]}, "chunks[0].state: Input should be"),
    ],
    ids=["a list", "chunks null", "a chunk no object", "no lines", "lines a list",
         "an id no pair", "an unknown state"],
)  # fmt: skip
async def test_a_batch_state_of_a_bad_shape_stops_the_job_with_one_line_naming_it(
    sim: SimFactory, tmp_path: Path, state: Any, wrong: str
) -> None:
    """`OUTPUT.batches/state.json` that is JSON but no batch state (a list, `chunks:
    null`, a chunk without `lines`, values of the wrong type): `fanout run` exits 2 with
    one line naming the state file and what is wrong, as for a state that is no JSON,
    sends nothing and leaves the state as it was (these ended in an AttributeError,
    TypeError, KeyError or ValueError traceback, or an error naming no file)."""
    src, dst = _questions(tmp_path / "q.jsonl", 3), tmp_path / "a.jsonl"
    path = tmp_path / "a.jsonl.batches" / "state.json"
    path.parent.mkdir()
    path.write_text(json.dumps(state))
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (server, _):
        proc = await _cli(server.base_url, src, dst, "--batch")
        _, err = await proc.communicate()
        assert not server.batches.files and server.stats.completions == 0
    lines = err.decode().splitlines()
    assert proc.returncode == 2, err.decode()
    assert len(lines) == 1, err.decode()
    assert lines[0].startswith(f"fanout run: cannot read the batch state {path}: "), lines[0]
    assert wrong in lines[0], lines[0]
    assert json.loads(path.read_text()) == state


_LINE_META = {"ids": [["0", "fp"]], "merged": None}


@pytest.mark.parametrize(
    ("state", "wrong"),
    [
        ({"chunks": [{**_CHUNK, "round": True}]},
         "chunks[0].round: Input should be a valid integer (got a boolean)"),
        ({"chunks": [{**_CHUNK, "file": "../x.jsonl"}]},
         "chunks[0].file: '../x.jsonl' is not the name of a .jsonl file in the state's directory"),
        ({"chunks": [{**_CHUNK, "lines": {"k-1": {**_LINE_META, "worst": "lots"}}}]},
         "chunks[0].lines.k-1.worst: 'lots' is not an amount"),
        ({"deadline_at": "soon", "chunks": [_CHUNK]},
         "deadline_at: Input should be a valid number (got a string)"),
        ({"chunks": [{**_CHUNK, "lines": {"k-1": {**_LINE_META,
                                                  "merged": {"format": "xml", "nonce": "n"}}}}]},
         "chunks[0].lines.k-1.merged.format: Input should be 'json' or 'text' (got a string)"),
        ({"version": 2, "chunks": [_CHUNK]}, "version: Input should be 1 (got a number)"),
    ],
    ids=["a round true", "a file elsewhere", "a worst no amount", "a deadline no number",
         "an unknown merge format", "another version"],
)  # fmt: skip
async def test_run_job_refuses_a_batch_state_with_a_value_of_the_wrong_type_naming_it(
    sim: SimFactory, tmp_path: Path, state: Any, wrong: str
) -> None:
    """From Python, every value of the state is checked when it is loaded: a JobError
    naming the file and the value, before anything is sent. (These states failed later,
    here on the chunk's missing input file, naming no state; a chunk's input file named
    outside the state's directory would be uploaded, and deleted once collected.)"""
    from fanout import JobError

    src, dst = _questions(tmp_path / "q.jsonl", 3), tmp_path / "a.jsonl"
    path = tmp_path / "a.jsonl.batches" / "state.json"
    path.parent.mkdir()
    path.write_text(json.dumps(state))
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (server, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        with pytest.raises(JobError) as raised:
            await run_job(JobSummary(), fo, src, dst, batch=True, options=BatchOptions(poll_s=0.05))
        assert not server.batches.files and server.stats.completions == 0
    assert str(raised.value) == f"cannot read the batch state {path}: {wrong}"
    assert json.loads(path.read_text()) == state


# --- merged requests in a batch: nothing checks their answers ------------------------

_COLOURS = [f"Two words for colour {i}? {{{{tokens=2}}}}" for i in range(12)]
# A long shared prompt, paid once per merged request: merging is the cheapest plan.
_SYSTEM = "You are a helpful assistant who answers in two words. " * 20


def _day(**kw: Any) -> Policy:
    """A day, and flex at the standard price (each flex request expected to be refused
    and sent standard): the cheapest way is a batch, merged if a batch may merge."""
    return Policy(objective="cost", deadline=86_400, flex_fallback_share=1.0, **kw)


def _swap_merged_answers(store: Any) -> None:
    """Make the simulator's Batch API answer merged requests (JSON, one key per
    question) with every question's value moved to the next key: keys anchored right,
    values swapped, a reply that parses perfectly. Questions asked alone are answered
    rightly."""
    answer = store._answer

    def swapped(payload: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        status, body = answer(payload)
        if status == 200 and payload.get("response_format"):
            message = body["choices"][0]["message"]
            found = json.loads(message["content"])
            keys, values = list(found), list(found.values())
            message["content"] = json.dumps(dict(zip(keys, values[1:] + values[:1], strict=True)))
        return status, body

    store._answer = swapped


def _colour_questions(path: Path) -> Path:
    path.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                            for i, q in enumerate(_COLOURS)))  # fmt: skip
    return path


def _is_merged(line: dict[str, Any]) -> bool:
    """Whether a batch input line is a merged request (fanout's merged prompt)."""
    return "Answer each of the following" in line["body"]["messages"][-1]["content"]


def test_auto_leaves_the_merged_batch_candidates_out_of_a_deadlines_choice() -> None:
    """Auto with the merge checks on (the default): the deadline's choice among batch
    options keeps the split ones (a batch cannot check merged answers before they are
    taken), and its reason says that merged batch requests were left out, and why.
    Online merged options stay (the engine checks them); with the checks off, a merged
    batch option may be chosen."""
    questions = [Question(text=q) for q in _COLOURS]
    day = _day()
    planned = plan(questions, model="m", system=_SYSTEM, policy=day)
    assert any(c.group_size > 1 for c in planned.candidates)
    choice = choose_tier(planned, day)
    assert choice.tier == "batch" and choice.chosen.candidate.group_size == 1
    batch = [o for o in choice.options if o.tier == "batch"]
    assert batch and all(o.candidate.group_size == 1 for o in batch)
    assert any(o.candidate.group_size > 1 for o in choice.options if o.tier == "standard")
    assert "merged batch requests are left out" in choice.reason, choice.reason
    assert "Policy.merge_agreement" in choice.reason

    unchecked = _day(merge_agreement=None)
    choice = choose_tier(plan(questions, model="m", system=_SYSTEM, policy=unchecked), unchecked)
    assert choice.tier == "batch" and choice.chosen.candidate.group_size > 1
    assert "left out" not in choice.reason


async def test_auto_with_a_deadline_sends_no_merged_request_to_the_batch_api(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Auto, objective cost, a day's deadline and a long shared prompt: merging would be
    the cheapest batch, but a batch's merged answers cannot be checked, and this
    server's merged replies swap the answers under the right keys (which the online
    checks catch). The job goes through the Batch API with every question alone, so
    each gets its own answer. (Before: groups of 6 went in the batch and every swapped
    answer was delivered, q0 with q1's.)"""
    src, dst = _colour_questions(tmp_path / "q.jsonl"), tmp_path / "a.jsonl"
    async with sim(time_scale=100, batch_completion_s=1) as (server, client):
        _swap_merged_answers(server.batches)
        fo = Fanout(client, model="m", policy=_day(), memory=False)
        summary = JobSummary()
        await run_job(summary, fo, src, dst, system=_SYSTEM, options=BatchOptions(poll_s=0.05))
        lines = [line for b in server.batches.batches.values() for line in b.lines]
    last = {r["id"]: r for r in _records(dst)}
    assert [last[i]["answer"] for i in range(len(_COLOURS))] == [answer_for(q, 2) for q in _COLOURS]
    assert len(lines) == len(_COLOURS)
    assert not [line for line in lines if _is_merged(line)]
    assert all("merged" not in r for r in last.values())
    assert summary.tier == "batch" and summary.tier_reason is not None
    assert "merged batch requests are left out" in summary.tier_reason, summary.tier_reason
    assert summary.batch_unchecked == 0


@pytest.mark.parametrize("known", ["unknown", "low", "remembered low"])
async def test_a_forced_merge_in_a_batch_warns_and_records_its_answers_as_unchecked(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture, known: str
) -> None:
    """`--policy merge` through the Batch API: merged as asked, but nothing checks the
    merged answers, so the job warns (the endpoint's agreement unknown, or known low
    here or in the endpoint memory of an earlier process, as the online forced merge
    warns of low agreement), each answer's record says `"merged": "unchecked"` (mode
    still "batch"), and the summary counts them. (Before: no warning, and the swapped
    answers looked like any other batch answer.)"""
    src, dst = _colour_questions(tmp_path / "q.jsonl"), tmp_path / "a.jsonl"
    async with sim(time_scale=100, batch_completion_s=1) as (server, client):
        _swap_merged_answers(server.batches)
        memory = tmp_path / "memory" if known == "remembered low" else False
        if known == "remembered low":  # an earlier process saw 1 of 4 agree, and kept it
            earlier = Fanout(client, model="m", memory=memory)
            earlier.endpoint.observe_merge_check("json", 4, 1, 3)
            await earlier.ask_many(["What is 1?"], policy="split")
        fo = Fanout(client, model="m", policy=Policy(mode="merge", max_group_size=4),
                    memory=memory)  # fmt: skip
        if known == "low":
            fo.endpoint.observe_merge_check("json", 4, 1, 3)
        summary = JobSummary()
        with caplog.at_level(logging.WARNING, logger="fanout"):
            await run_job(summary, fo, src, dst, batch=True, options=BatchOptions(poll_s=0.05))
        lines = [line for b in server.batches.batches.values() for line in b.lines]
    assert len(lines) == 3 and all(_is_merged(line) for line in lines)
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    warnings = [w for w in warned if "merg" in w]  # not the unknown price's
    assert len(warnings) == 1, warned
    assert "policy 'merge'" in warnings[0] and "unchecked" in warnings[0], warnings[0]
    if known != "unknown":
        assert "only 1 of 4" in warnings[0], warnings[0]
    else:
        assert "not known" in warnings[0], warnings[0]
    records = _records(dst)
    assert sorted(r["id"] for r in records) == list(range(len(_COLOURS)))
    assert all(r["mode"] == "batch" and r["merged"] == "unchecked" for r in records), records
    assert summary.batch_answered == summary.batch_unchecked == len(_COLOURS)
    assert f"{len(_COLOURS)} merged, unchecked" in tier_lines(summary), tier_lines(summary)


async def test_a_forced_merge_known_to_agree_still_records_its_answers_as_unchecked(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """An endpoint whose merged answers agreed with split ones (9 of 9): a forced merge
    through the Batch API does not warn, but its answers were not checked themselves:
    their records still say `"merged": "unchecked"`."""
    src, dst = _colour_questions(tmp_path / "q.jsonl"), tmp_path / "a.jsonl"
    async with sim(time_scale=100, batch_completion_s=1) as (_server, client):
        fo = Fanout(client, model="m", policy=Policy(mode="merge", max_group_size=4),
                    memory=False)  # fmt: skip
        fo.endpoint.observe_merge_check("json", 9, 9, 0)
        summary = JobSummary()
        with caplog.at_level(logging.WARNING, logger="fanout"):
            await run_job(summary, fo, src, dst, batch=True, options=BatchOptions(poll_s=0.05))
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert [w for w in warned if "merg" in w] == [], warned
    records = _records(dst)
    assert len(records) == len(_COLOURS)
    assert all(r["merged"] == "unchecked" for r in records)
    assert summary.batch_unchecked == len(_COLOURS)


def _api_error(status: int, message: str) -> Exception:
    import httpx
    import openai

    request = httpx.Request("GET", "http://127.0.0.1/v1/batches/x")
    response = httpx.Response(status, request=request)
    cls = openai.InternalServerError if status >= 500 else openai.BadRequestError
    return cls(message, response=response, body={"message": message})  # type: ignore[arg-type]


@on_virtual_time
async def test_a_batch_api_hiccup_is_retried_and_a_refusal_ends_the_job_in_one_line(
    sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Reading a batch fails with a 500 twice: the one retry layer tries again and the job
    ends answered. Creating a batch is refused (400): the job stops with a JobError that
    names the step, the refusal, and that the same command resumes, in one line (what the
    CLI prints of a FanoutError, exit 2). Both escaped as openai exceptions (a traceback on the CLI, and a
    job meant to run for hours ended by one 500)."""
    from openai.resources.batches import AsyncBatches

    import fanout

    retrieve, create = AsyncBatches.retrieve, AsyncBatches.create
    failures = [_api_error(500, "upstream hiccup"), _api_error(500, "upstream hiccup")]

    async def flaky_retrieve(self: Any, *args: Any, **kwargs: Any) -> Any:
        if failures:
            raise failures.pop()
        return await retrieve(self, *args, **kwargs)

    monkeypatch.setattr(AsyncBatches, "retrieve", flaky_retrieve)
    src = _questions(tmp_path / "q.jsonl", 6)
    retry = fanout.Retry(initial_wait=0.01, max_wait=0.05)
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False, retry=retry)
        summary = JobSummary()
        await run_job(summary, fo, src, tmp_path / "a.jsonl", batch=True,
                      options=BatchOptions(poll_s=0.05))  # fmt: skip
        assert summary.answered == 6 and not failures

        async def refused_create(self: Any, *args: Any, **kwargs: Any) -> Any:
            raise _api_error(400, "token_limit_exceeded: the batch holds too many tokens")

        monkeypatch.setattr(AsyncBatches, "create", refused_create)
        with pytest.raises(fanout.JobError) as caught:
            await run_job(JobSummary(), fo, src, tmp_path / "b.jsonl", batch=True,
                          options=BatchOptions(poll_s=0.05))  # fmt: skip
        monkeypatch.setattr(AsyncBatches, "create", create)
    said = str(caught.value)
    assert "\n" not in said
    assert said.startswith("the Batch API failed to create the batch of ")
    assert "400 token_limit_exceeded" in said and "run the same command again" in said


@on_virtual_time
async def test_a_state_naming_a_batch_the_endpoint_does_not_have_says_how_to_go_on(
    sim: SimFactory, tmp_path: Path
) -> None:
    """A job stopped while its batch runs, resumed against another endpoint (one that
    never made that batch): running the same command again would fail the same way, and
    --overwrite would throw the recorded answers away. The one-line error says to point
    --base-url at the endpoint that made it or to delete the state, and deleting the
    state asks the questions again with nothing lost."""
    import anyio

    import fanout

    src, dst = _questions(tmp_path / "q.jsonl", 4), tmp_path / "a.jsonl"
    state = tmp_path / "a.jsonl.batches"
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=500) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        with anyio.move_on_after(5):
            await run_job(JobSummary(), fo, src, dst, batch=True,
                          options=BatchOptions(poll_s=0.05))  # fmt: skip
    assert "batch_id" in (state / "state.json").read_text()
    async with sim(time_scale=100, answer_tokens=3, batch_completion_s=1) as (_, client):
        fo = Fanout(client, model="m", policy=Policy(mode="split"), memory=False)
        with pytest.raises(fanout.JobError) as caught:
            await run_job(JobSummary(), fo, src, dst, batch=True,
                          options=BatchOptions(poll_s=0.05))  # fmt: skip
        said = str(caught.value)
        assert "\n" not in said and "404" in said
        assert "run the same command again" not in said
        assert "--base-url" in said and f"delete {state}" in said
        shutil.rmtree(state)
        summary = JobSummary()
        await run_job(summary, fo, src, dst, batch=True, options=BatchOptions(poll_s=0.05))
        assert summary.answered == 4
    assert sorted(r["id"] for r in _records(dst)) == list(range(4))
