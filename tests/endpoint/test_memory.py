"""The endpoint memory: what one ``Fanout`` learned, the next one (in this process or
another) starts from; over real HTTP to the simulator on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

import fanout
from fanout import Limits
from fanout.core.config import DEFAULT_MAX_GROUP_SIZE, MERGE_CHECK_SAMPLE
from fanout.endpoint.memory import STALE_AFTER_S, EndpointMemory, endpoint_key
from fanout.endpoint.model import EndpointModel, EndpointSnapshot

from .._virtual import on_virtual_time
from ..conftest import SimFactory

SHORT = [f"Question {i}: what is {i} plus one? {{{{tokens=3}}}}" for i in range(40)]
MANY = [f"Question {i}: what is {i} minus one? {{{{tokens=3}}}}" for i in range(200)]
# The scenario: 200 requests per minute, policed over 3 s (10 at a time), which
# makes 3-token answers merged many times faster than split whatever the decode speed.
# Without a limit the choice hangs on the decode speed, which answers all 3 tokens long
# cannot tell from the round trip: priors and machine load decide it there.
LIMITED = {"time_scale": 20, "rpm": 200, "limit_period_s": 3}


def _files(directory: Path) -> list[Path]:
    return sorted(p for p in directory.iterdir()) if directory.exists() else []


def _memory_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "endpoint memory" in r.getMessage()]  # fmt: skip


async def _learn(client: AsyncOpenAI, directory: Path, model: str = "sim-1") -> fanout.Fanout:
    """A Fanout that has answered SHORT one question per request, with memory on."""
    fo = fanout.Fanout(client, model=model, memory=directory)
    await fo.ask_many(SHORT, policy="split")
    return fo


class TestRoundTrip:
    async def test_a_second_fanout_starts_where_the_first_stopped(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Same base URL and model: the same estimate, answer length and learned limits."""
        async with sim(time_scale=20, rpm=6000, tpm=10_000_000) as (_, client):
            first = await _learn(client, tmp_path)
            second = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            assert second.endpoint.estimate().observations == 0  # loaded at the first call
            await second.ask_many(["warm? {{tokens=3}}"], policy="split")
        # what the first learned, and its own response (and first token, if streamed)
        learned = first.endpoint.estimate().observations
        assert learned >= len(SHORT)
        assert learned + 1 <= second.endpoint.estimate().observations <= learned + 2
        assert second.endpoint.answer_tokens == pytest.approx(3.0)
        assert second.limiter.state().rpm == first.limiter.state().rpm == 6000 * 20
        assert second.limiter.state().rpm_learned

    @on_virtual_time
    async def test_the_estimate_comes_back_exactly(self, sim: SimFactory, tmp_path: Path) -> None:
        """A dry run of a new Fanout plans with exactly the estimate the first one had,
        and plans merge for 3-token answers under a tight limit where a cold one splits.
        On virtual time: the merge-or-split choice weighs the decode speed learned from
        the first call, which on the wall clock a loaded machine slows (split was chosen
        once in a full suite)."""
        async with sim(**LIMITED) as (_, client):
            first = await _learn(client, tmp_path)
            cold = fanout.Fanout(client, model="sim-1", memory=False)
            warm = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            warm_plan = warm.plan(MANY)
        assert warm.endpoint.estimate() == first.endpoint.estimate()
        assert warm.endpoint.answer_tokens == first.endpoint.answer_tokens
        assert cold.plan(MANY).chosen.label == "split"
        assert warm_plan.chosen.label != "split"

    async def test_the_one_shot_ask_many_starts_warm(self, sim: SimFactory, tmp_path: Path) -> None:
        """``fanout.ask_many`` makes a new Fanout each call; the second call's first plan
        already knows the endpoint (its limits too)."""
        async with sim(**LIMITED) as (_, client):
            await fanout.ask_many(SHORT, client=client, model="sim-1", policy="split",
                                  memory=tmp_path)  # fmt: skip
            (saved,) = _files(tmp_path)
            learned = len(json.loads(saved.read_bytes())["endpoint"]["observations"])
            answers = await fanout.ask_many(MANY, client=client, model="sim-1",
                                            memory=tmp_path)  # fmt: skip
        plan = answers.report.plan
        assert plan is not None
        assert learned >= len(SHORT)
        # The first plan knows the endpoint (a merge check may add observations after it).
        assert answers.report.revisions[0].plan.inputs.endpoint.observations == learned

    @on_virtual_time
    async def test_the_one_shot_warm_plan_merges_under_the_learned_limit(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """The warm call's plan merges 3-token answers under the limit the first call met,
        from its first plan on: the first call's bursts, slower the more requests they
        held (a delay per request), do not make the endpoint look serializing."""
        async with sim(**LIMITED) as (_, client):
            await fanout.ask_many(SHORT, client=client, model="sim-1", policy="split",
                                  memory=tmp_path)  # fmt: skip
            answers = await fanout.ask_many(MANY, client=client, model="sim-1",
                                            memory=tmp_path)  # fmt: skip
        report = answers.report
        assert report.plan is not None
        labels = [revision.plan.chosen.label for revision in report.revisions]
        assert "split" not in labels, [revision.plan.reason for revision in report.revisions]
        # A request per merged group, the merge check's sample asked alone, and at most
        # one spot-checked question of each group asked alone besides (split: 200).
        groups = math.ceil(len(MANY) / DEFAULT_MAX_GROUP_SIZE)
        assert report.requests <= 2 * groups + MERGE_CHECK_SAMPLE
        assert sum(a.mode == "merged" for a in answers) >= len(MANY) - groups - MERGE_CHECK_SAMPLE

    async def test_a_refused_response_format_is_remembered(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """An endpoint that refused ``response_format`` is sent tagged text from the start."""
        async with sim(time_scale=20, supports_response_format=False) as (server, client):
            fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            await fo.ask_many(SHORT[:4], policy="merge")
            assert server.stats.requests[0].status == 400
            again = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            server.reset_stats()
            await again.ask_many(SHORT[4:8], policy="merge")
            assert [r.status for r in server.stats.requests] == [200]

    async def test_configured_limits_win_over_remembered_ones(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """A remembered rpm never replaces the one the user gave."""
        async with sim(time_scale=20, rpm=6000) as (_, client):
            first = await _learn(client, tmp_path)
            fo = fanout.Fanout(client, model="sim-1", memory=tmp_path, limits=Limits(rpm=60_000))
            fo.plan(SHORT)
        assert fo.endpoint.estimate().observations == first.endpoint.estimate().observations
        assert fo.limiter.state().rpm == 60_000
        assert not fo.limiter.state().rpm_learned

    async def test_the_room_for_a_burst_is_remembered(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """An endpoint that took 20 requests at once under a 20-rpm limit: a later
        ``Fanout`` plans with that burst before its first request, instead of weighing
        whether the endpoint paces one per 3 s (and opening with a question alone to
        find out): five long answers go split, all at once."""
        async with sim(rpm=20) as (_, client):
            first = fanout.Fanout(client, model="sim-1", memory=tmp_path, limits=Limits(rpm=20))
            await first.ask_many(SHORT[:2], policy="split")
            later = fanout.Fanout(client, model="sim-1", memory=tmp_path, limits=Limits(rpm=20))
            plan = later.plan(SHORT[:5], policy=fanout.Policy(expected_tokens=100))
        assert plan.inputs.budget.burst_seen == 20
        assert plan.chosen.label == "split" and "first wave" not in plan.reason


class TestWhoseMemory:
    async def test_another_model_or_base_url_starts_cold(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """The memory is per base URL and model."""
        async with sim(time_scale=20) as (_, client):
            await _learn(client, tmp_path)
            other_model = fanout.Fanout(client, model="sim-2", memory=tmp_path)
            other_model.plan(SHORT)
            async with sim(time_scale=20) as (_, other_client):
                other_url = fanout.Fanout(other_client, model="sim-1", memory=tmp_path)
                other_url.plan(SHORT)
        assert other_model.endpoint.estimate().observations == 0
        assert other_url.endpoint.estimate().observations == 0
        assert other_model.endpoint.answer_tokens is None

    def test_the_key_leaves_credentials_query_and_slash_out(self) -> None:
        """User, password, query and fragment are no part of the key; host case is not."""
        key = endpoint_key("https://me:pw@API.example.com:8443/v1/?token=x#f", "m")
        assert key == "https://api.example.com:8443/v1 m"
        assert endpoint_key("http://[::1]:8000/v1", "m") == "http://[::1]:8000/v1 m"

    async def test_no_api_key_or_credential_is_written(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """The document holds neither the API key nor the URL's password."""
        secret = "sk-memory-test-0123456789abcdef"
        async with sim(time_scale=20) as (server, _):
            url = server.base_url.replace("http://", "http://someone:hunter2pass@")
            client = AsyncOpenAI(base_url=url, api_key=secret)
            try:
                await _learn(client, tmp_path)
            finally:
                await client.close()
        (path,) = _files(tmp_path)
        data = path.read_bytes()
        assert secret.encode() not in data
        assert b"hunter2pass" not in data
        assert b"someone" not in data
        assert json.loads(data)["key"].startswith("http://127.0.0.1:")


class TestSwitch:
    async def test_memory_false_writes_nothing(
        self, sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``memory=False``: nothing is read or written, even with the variables set."""
        monkeypatch.setenv("FANOUT_MEMORY", "1")
        monkeypatch.setenv("FANOUT_MEMORY_DIR", str(tmp_path))
        async with sim(time_scale=20) as (_, client):
            fo = fanout.Fanout(client, model="sim-1", memory=False)
            await fo.ask_many(SHORT[:5], policy="split")
        assert _files(tmp_path) == []

    @pytest.mark.parametrize("value", ["0", "off", "False", "no"])
    async def test_the_environment_variable_turns_it_off(
        self, sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
    ) -> None:
        """``FANOUT_MEMORY=0`` (or off, false, no) turns the default memory off."""
        monkeypatch.setenv("FANOUT_MEMORY", value)
        monkeypatch.setenv("FANOUT_MEMORY_DIR", str(tmp_path))
        async with sim(time_scale=20) as (_, client):
            await fanout.ask_many(SHORT[:5], client=client, model="sim-1", policy="split")
        assert _files(tmp_path) == []

    async def test_the_environment_chooses_the_directory(
        self, sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Memory on by default; ``FANOUT_MEMORY_DIR`` says where its files go."""
        monkeypatch.delenv("FANOUT_MEMORY")
        monkeypatch.setenv("FANOUT_MEMORY_DIR", str(tmp_path / "mem"))
        async with sim(time_scale=20) as (_, client):
            await fanout.ask_many(SHORT[:5], client=client, model="sim-1", policy="split")
        assert len(_files(tmp_path / "mem")) == 1

    def test_the_default_directory_is_the_user_cache(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """Without a variable, the files go to platformdirs' user cache directory."""
        import platformdirs

        monkeypatch.delenv("FANOUT_MEMORY")
        monkeypatch.delenv("FANOUT_MEMORY_DIR")
        memory = EndpointMemory(None, "http://127.0.0.1:9/v1")
        assert memory.directory == Path(platformdirs.user_cache_dir("fanout")) / "endpoints"

    def test_a_bad_setting_is_a_config_error(self) -> None:
        """``memory=`` takes True, False, None or a directory."""
        client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="x")
        with pytest.raises(fanout.ConfigError, match="memory must be"):
            fanout.Fanout(client, model="m", memory=3)  # type: ignore[arg-type]


class TestBadFiles:
    @pytest.mark.parametrize(
        "damage", ["corrupt", "version", "stale", "foreign", "bad_values", "fifo"]
    )
    async def test_a_bad_document_is_ignored_with_one_warning(
        self, sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
    ) -> None:
        """Unreadable, another format version, a week old, for another endpoint, with
        nonsense inside, or a FIFO in its place (whose open blocked the call): one
        warning, a cold start, the call answers, and a good document replaces it."""
        async with sim(time_scale=20) as (_, client):
            await _learn(client, tmp_path)
            (path,) = _files(tmp_path)
            doc = json.loads(path.read_bytes())
            if damage == "corrupt":
                path.write_bytes(path.read_bytes()[:100])
            elif damage == "fifo":
                path.unlink()
                os.mkfifo(path)
            else:
                if damage == "version":
                    doc["version"] = 99
                elif damage == "stale":
                    doc["saved_at"] = time.time() - STALE_AFTER_S - 3600
                elif damage == "foreign":
                    doc["key"] = doc["key"].replace("sim-1", "sim-2")
                else:
                    doc["endpoint"]["observations"][3][4] = "slow"
                path.write_text(json.dumps(doc))
            caplog.clear()
            fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            answers = await fo.ask_many(SHORT[:3], policy="split")
        assert len(answers.texts) == 3
        assert len(_memory_warnings(caplog)) == 1, caplog.text
        # cold: only this call's three responses (and its first token, if streamed)
        assert fo.endpoint.estimate().observations in (3, 4)
        saved = json.loads(path.read_bytes())["endpoint"]["observations"]
        assert len(saved) == fo.endpoint.estimate().observations

    async def test_a_failed_write_leaves_the_old_file_whole(
        self, sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch,
    ) -> None:  # fmt: skip
        """A write that fails half-way: the old document is intact, no temporary file
        is left, one warning, and the call still answers."""
        async with sim(time_scale=20) as (_, client):
            await _learn(client, tmp_path)
            (path,) = _files(tmp_path)
            before = path.read_bytes()

            def broken_fsync(fd: int) -> None:
                raise OSError(28, "No space left on device")

            monkeypatch.setattr("fanout.endpoint.memory.os.fsync", broken_fsync)
            caplog.clear()
            fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            await fo.ask_many(SHORT[:3], policy="split")
            await fo.ask_many(SHORT[3:6], policy="split")
        assert path.read_bytes() == before
        assert _files(tmp_path) == [path]
        warnings = _memory_warnings(caplog)
        assert len(warnings) == 1
        assert "No space left" in warnings[0]

    async def test_an_unusable_directory_fails_no_call(
        self, sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A memory directory that cannot be made (a file is in the way): one warning."""
        blocker = tmp_path / "not-a-dir"
        blocker.write_text("x")
        async with sim(time_scale=20) as (_, client):
            fo = fanout.Fanout(client, model="sim-1", memory=blocker / "mem")
            first = await fo.ask_many(SHORT[:3], policy="split")
            second = await fo.ask_many(SHORT[3:6], policy="split")
        assert len(first.texts) == len(second.texts) == 3
        assert len(_memory_warnings(caplog)) == 1

    async def test_stale_documents_are_pruned_and_nothing_else(
        self, sim: SimFactory, tmp_path: Path
    ) -> None:
        """Saving deletes week-old documents of fanout's naming; other files stay."""
        old = time.time() - STALE_AFTER_S - 3600
        theirs, stale = tmp_path / "notes.json", tmp_path / f"{'a' * 64}.json"
        for path in (theirs, stale):
            path.write_text("{}")
            os.utime(path, (old, old))
        async with sim(time_scale=20) as (_, client):
            await _learn(client, tmp_path)
        assert theirs.exists()
        assert not stale.exists()
        assert len(_files(tmp_path)) == 2


class TestEndpointSnapshot:
    def test_a_restored_model_estimates_the_same(self) -> None:
        """Replaying a snapshot gives the same fit, answer length and prefix caching."""
        model = EndpointModel()
        for i in range(40):
            model.observe(prompt_tokens=100 + i, completion_tokens=3 + i % 7, latency_s=0.2 + i / 100,
                          others_prompt_tokens=i, others_completion_tokens=2 * i,
                          cached_prompt_tokens=10 if i == 5 else 0)  # fmt: skip
            model.observe_answer(3 + i % 7)
        snapshot = json.loads(json.dumps(model.snapshot()))
        again = EndpointModel()
        again.restore(snapshot)
        assert again.estimate() == model.estimate()
        assert again.answer_tokens == model.answer_tokens
        assert again.estimate().prefix_cache

    @pytest.mark.parametrize(
        "change",
        [{"version": 2}, {"fields": ["latency_s"]}, {"answer_tokens": -1},
         {"observations": [[1, 2, 3, 4, float("nan")]]}, {"prefix_cache": None}],
    )  # fmt: skip
    def test_a_bad_snapshot_changes_nothing(self, change: dict[str, object]) -> None:
        """A snapshot of another layout or with bad values raises ValueError, untouched."""
        model = EndpointModel()
        model.observe(prompt_tokens=10, completion_tokens=3, latency_s=0.5)
        snapshot = {**model.snapshot(), **change}
        fresh = EndpointModel()
        with pytest.raises(ValueError, match=r"."):
            fresh.restore(snapshot)
        assert fresh.estimate().observations == 0
        assert fresh.answer_tokens is None


async def test_a_second_fanout_run_plans_merge_from_its_first_request(
    sim: SimFactory, tmp_path: Path
) -> None:
    """The issue's acceptance: two ``fanout run`` processes against one endpoint, 200
    questions with 3-token answers, the endpoint allowing 200 requests per minute
    policed over 3 s, no ``Limits`` given. The first starts cold: its first request goes alone
    (to learn the limits, and how long the answers are); the second starts from what
    the first learned and merges from its first request, every request merged."""
    src = tmp_path / "questions.jsonl"
    src.write_text("".join(
        json.dumps({"id": i, "question": f"What is {i} plus one? {{{{tokens=3}}}}"}) + "\n"
        for i in range(200)
    ))  # fmt: skip
    env = {**os.environ, "FANOUT_MEMORY": "1", "FANOUT_MEMORY_DIR": str(tmp_path / "memory")}

    async def run(base_url: str, output: Path) -> list[dict[str, object]]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "fanout", "run", str(src), str(output), "--base-url", base_url,
            "--model", "sim-1", "--api-key", "sk-acceptance-key-0123456789", "--no-progress",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        _, err = await asyncio.wait_for(proc.communicate(), 90)
        assert proc.returncode == 0, err.decode()
        return [json.loads(line) for line in output.read_bytes().splitlines()]  # noqa: ASYNC240

    async with sim(**LIMITED) as (server, _):
        cold = await run(server.base_url, tmp_path / "cold.jsonl")
        cold_requests = list(server.stats.requests)
        server.reset_stats()
        warm = await run(server.base_url, tmp_path / "warm.jsonl")
        warm_requests = list(server.stats.requests)
    assert len(cold) == len(warm) == 200
    assert cold_requests[0].questions == 1  # cold: the first goes alone, to learn
    # Warm: merged from the first request, but for at most one streamed question ahead
    # of them when the limits' room is unknown (a probe of the room, not of the answers).
    # Where the cold run never merged, the warm one checks merging first
    # (Policy.merge_agreement): its sample asked alone, then merged requests, each with
    # at most one question spot-checked alone besides.
    sizes = [r.questions for r in warm_requests]
    merged = [size for size in sizes if size > 1]
    assert sizes[0] > 1 or sizes[1] > 1, sizes
    assert len(sizes) - len(merged) <= 1 + MERGE_CHECK_SAMPLE + len(merged), sizes
    assert len(warm_requests) < len(cold_requests)
    assert sum(record["mode"] == "merged" for record in warm) >= 200 - len(sizes) + len(merged)
    (memory,) = _files(tmp_path / "memory")
    assert b"sk-acceptance-key" not in memory.read_bytes()


class TestCommandLine:
    async def test_no_memory_leaves_nothing_behind(self, sim: SimFactory, tmp_path: Path) -> None:
        """``fanout run --no-memory`` neither reads nor writes a memory."""
        src = tmp_path / "q.jsonl"
        src.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                               for i, q in enumerate(SHORT[:5])))  # fmt: skip
        env = {**os.environ, "FANOUT_MEMORY": "1", "FANOUT_MEMORY_DIR": str(tmp_path / "memory")}
        async with sim(time_scale=20) as (server, _):
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "fanout", "run", str(src), str(tmp_path / "a.jsonl"),
                "--base-url", server.base_url, "--model", "sim-1", "--api-key", "k",
                "--no-progress", "--no-memory", env=env, stderr=asyncio.subprocess.PIPE,
            )  # fmt: skip
            _, err = await asyncio.wait_for(proc.communicate(), 60)
        assert proc.returncode == 0, err.decode()
        assert _files(tmp_path / "memory") == []

    async def test_plan_says_its_estimate_was_remembered(
        self, sim: SimFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str],
    ) -> None:  # fmt: skip
        """``fanout plan --base-url`` plans with what an earlier run learned, and says so."""
        from fanout.cli.main import main

        monkeypatch.setenv("FANOUT_MEMORY", "1")
        monkeypatch.setenv("FANOUT_MEMORY_DIR", str(tmp_path))
        src = tmp_path / "q.jsonl"
        src.write_text("".join(json.dumps({"question": q}) + "\n" for q in MANY))
        async with sim(time_scale=20) as (server, client):
            first = await _learn(client, tmp_path)
            assert main(["plan", "--file", str(src), "--base-url", server.base_url,
                         "--model", "sim-1"]) == 0  # fmt: skip
        out = capsys.readouterr().out
        learned = first.endpoint.estimate().observations
        assert learned >= len(SHORT)
        assert f"{learned} observations remembered from earlier runs" in out


def test_send_times_kept_through_many_processes_still_load() -> None:
    """Each process restores the endpoint memory, counts its own send times from after
    the remembered ones (plus a gap of 1e6 s) and saves them: the latest send time grows
    by about 1e6 s a process, and past 1e7 (``_MAX_VALUE``) the saved snapshot no longer
    validates, so the whole endpoint memory is ignored on the next run."""
    snapshot = None
    for generation in range(15):
        model = EndpointModel()
        if snapshot is not None:
            model.restore(EndpointSnapshot.model_validate(snapshot))
        clock = 5000.0 + generation  # this process's monotonic clock
        for i in range(4):
            model.observe(prompt_tokens=20, completion_tokens=50, latency_s=0.5,
                          sent_at=clock + 0.1 * i)  # fmt: skip
        snapshot = model.snapshot()
        EndpointSnapshot.model_validate(snapshot)  # what the next process loads


@on_virtual_time
async def test_the_endpoint_memory_still_loads_after_a_dozen_runs(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Twelve Fanouts, one after another, each starting from the endpoint memory the one
    before saved (as twelve runs of ``fanout run`` would): every one of them loads it.
    Each run's send times are kept 1e6 s after the remembered ones, so the eleventh
    memory holds send times past 1e7 s and is ignored ("bad values")."""
    caplog.set_level(logging.WARNING, logger="fanout")
    async with sim(time_scale=20) as (_, client):
        for run in range(12):
            fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
            await fo.ask_many([f"run {run} question {i} {{{{tokens=3}}}}" for i in range(3)],
                              policy="split")  # fmt: skip
    ignored = [r.getMessage() for r in caplog.records if "endpoint memory" in r.getMessage()]
    assert ignored == []


# --- a document with values out of place is refused whole -------------------------------
FEW = SHORT[:6]  # the first six of SHORT


def _damage(doc: dict[str, Any], damage: str) -> None:
    if damage == "endpoint-string":
        doc["endpoint"] = "x"
    elif damage == "endpoint-null":
        doc["endpoint"] = None
    elif damage == "endpoint-list":
        doc["endpoint"] = [1]
    elif damage == "answer-tokens-1e308":
        doc["endpoint"]["answer_tokens"] = 1e308
    elif damage == "observation-true":
        doc["endpoint"]["observations"][0][1] = True
    else:  # a key of the document of another type
        doc["json_schema_refused"] = "no"


DAMAGES = ["endpoint-string", "endpoint-null", "endpoint-list", "answer-tokens-1e308",
           "observation-true", "refused-string"]  # fmt: skip


@pytest.mark.parametrize("damage", DAMAGES)
@on_virtual_time
async def test_a_document_with_values_out_of_place_is_ignored_with_one_warning(
    sim: SimFactory, tmp_path: Path, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    """``"endpoint": "x"``, ``null`` or ``[1]``, ``answer_tokens: 1e308``, ``true`` for
    a token count: one warning naming what is wrong, a cold start, the call answers,
    and a good document replaces the bad one."""
    async with sim(time_scale=20) as (_, client):
        first = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        await first.ask_many(FEW, policy="split")
        (path,) = _files(tmp_path)
        doc = json.loads(path.read_bytes())
        _damage(doc, damage)
        path.write_text(json.dumps(doc))
        caplog.clear()
        fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        answers = await fo.ask_many(FEW[:3], policy="split")
    assert len(answers.texts) == 3
    (warning,) = _memory_warnings(caplog)
    assert "bad values" in warning
    assert fo.endpoint.estimate().observations in (3, 4)  # cold: this call's own
    again = json.loads(path.read_bytes())
    assert len(again["endpoint"]["observations"]) == fo.endpoint.estimate().observations


# wall clock: redis-server is another process; on virtual time the loop
# jumps to the client's socket timeout while it waits for redis's reply
async def test_a_bad_document_in_redis_breaks_no_process(
    sim: SimFactory, redis_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A bad document kept in redis (for a week): the next process warns once, answers,
    and saves a good one in its place, which the process after it loads warm."""
    import redis

    limits = Limits(rpm=60_000, backend=redis_url, namespace="memory-hardening")
    async with sim(time_scale=20) as (_, client):
        first = fanout.Fanout(client, model="sim-1", limits=limits, memory=True)
        await first.ask_many(FEW, policy="split")
        store = redis.Redis.from_url(redis_url)
        try:
            (key,) = store.keys("fanout:memory-hardening:memory:*")
            doc = json.loads(store.get(key))  # type: ignore[arg-type]
            doc["endpoint"] = "x"
            store.set(key, json.dumps(doc), px=store.pttl(key))
            caplog.clear()
            second = fanout.Fanout(client, model="sim-1", limits=limits, memory=True)
            answers = await second.ask_many(FEW[:3], policy="split")
            assert len(answers.texts) == 3
            assert len(_memory_warnings(caplog)) == 1
            assert isinstance(json.loads(store.get(key))["endpoint"], dict)  # type: ignore[arg-type]
            caplog.clear()
            third = fanout.Fanout(client, model="sim-1", limits=limits, memory=True)
            await third.ask_many(FEW[3:4], policy="split")
        finally:
            store.close()
    for fo in (first, second, third):
        await fo.limiter.aclose()  # type: ignore[attr-defined]
    assert _memory_warnings(caplog) == []
    assert third.endpoint.estimate().observations > second.endpoint.estimate().observations


@pytest.mark.parametrize(
    "change",
    [{"answer_tokens": 1e308}, {"answer_tokens": True},
     {"observations": [[1, 2, 3, 4, True]]}, {"observations": [[1e308, 2, 3, 4, 0.5]]},
     {"merge_outcomes": [True, 5]}],
)  # fmt: skip
def test_a_snapshot_with_absurd_numbers_changes_nothing(change: dict[str, object]) -> None:
    """A snapshot holding ``1e308`` tokens, or ``true`` for a number, raises ValueError
    and leaves the model as it was: nothing in it can overflow a plan later."""
    model = EndpointModel()
    model.observe(prompt_tokens=10, completion_tokens=3, latency_s=0.5)
    snapshot = {**model.snapshot(), **change}
    fresh = EndpointModel()
    with pytest.raises(ValueError, match=r"."):
        fresh.restore(snapshot)
    assert fresh.estimate().observations == 0
    assert fresh.answer_tokens is None
    assert fresh.merge_failure_rate == EndpointModel().merge_failure_rate
