"""fanout.ray.answer on a local Ray (2 CPUs, on 127.0.0.1), against the simulator on
this test's loop and a real redis: one budget for every actor, every row answered
once (an actor killed mid-run included), bad input named."""

from __future__ import annotations

import os
import signal
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout import ConfigError, RedisUnavailableError

from ..conftest import SimFactory
from ._ray_cluster import PidClient, SimClient, local_ray, off_loop

pytestmark = pytest.mark.timeout(180)


@pytest.fixture(scope="module")
def ray_local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A local Ray for the module's tests (started once: 2–5 s)."""
    memory = tmp_path_factory.mktemp("ray-memory")
    key = "sk-ray" + uuid.uuid4().hex  # the key the actors find in their environment only
    os.environ["FANOUT_RAY_TEST_KEY"] = key
    try:
        # inherited by the workers from this process, as a node's own variables are:
        # not in the runtime_env, which Ray writes to its logs
        yield from local_ray({"FANOUT_MEMORY": "0", "FANOUT_MEMORY_DIR": str(memory)})
    finally:
        del os.environ["FANOUT_RAY_TEST_KEY"]


def _questions(n: int) -> list[dict[str, Any]]:
    return [{"id": i, "question": f"What is item {i}?"} for i in range(n)]


def _limits(rpm: float) -> fanout.Limits:
    """A namespace of the test's own in the module's redis."""
    return fanout.Limits(rpm=rpm, namespace=f"t-{uuid.uuid4().hex[:8]}")


def _connections(redis_url: str) -> int:
    import redis

    conn = redis.Redis.from_url(redis_url)
    try:
        return int(conn.info("stats")["total_connections_received"])
    finally:
        conn.close()


async def test_two_actors_share_one_redis_rpm_and_answer_every_row_once(
    ray_local: Any, sim: SimFactory, redis_url: str
) -> None:
    """2 actors, 600 rows, one 3,000-rpm budget in redis that the simulator polices
    over 5-second windows: 0 x 429, the budget binds (the rows take at least their
    share of a minute), and every row comes back once with its answer. Each actor
    keeps its redis connections from batch to batch (they were closed after every
    batch and opened again: more than one a request)."""
    import fanout.ray

    connections_before = _connections(redis_url)

    n, rpm = 600, 3000
    ds = ray_local.data.from_items(_questions(n))
    async with sim(time_scale=1, rpm=rpm, limit_period_s=5.0, answer_tokens=3, rtt_s=0.02) as (
        server,
        _,
    ):
        out = fanout.ray.answer(
            ds,
            client=SimClient(server.base_url),
            model="m",
            limits=_limits(rpm),
            redis_url=redis_url,
            policy="split",
            concurrency=2,
            batch_size=50,
        )
        start = time.monotonic()
        rows = await off_loop(out.take_all)
        wall = time.monotonic() - start
        rate_limited, sent = server.stats.rate_limited, len(server.stats.requests)
    ids = Counter(r["id"] for r in rows)
    assert len(rows) == n and set(ids) == set(range(n)) and max(ids.values()) == 1
    assert all(r["error"] is None for r in rows), next(r["error"] for r in rows if r["error"])
    assert all(r["answer"] for r in rows)
    assert rate_limited == 0
    assert sent == n
    # 600 requests at 50/s: at least ~10 s even with the first 5-second window's burst
    assert wall >= (n - rpm / 12) / (rpm / 60) * 0.9, wall
    summary = fanout.ray.summarize(rows)
    assert summary.answered == n and summary.requests == n and summary.rate_limited == 0
    opened = _connections(redis_url) - connections_before
    assert opened < n / 2, opened  # 1,052 before, 230 now (the cache's store is per batch)


async def test_an_actor_killed_mid_run_leaves_every_row_answered_once(
    ray_local: Any, sim: SimFactory, redis_url: str, tmp_path: Path
) -> None:
    """An actor's process killed (SIGKILL) while its batches are in flight: Ray
    restarts it and retries its task; every row is in the output exactly once, each
    with its answer, and the response cache of the run keeps most of what the dead
    try had paid for from being asked again."""
    import fanout.ray

    n, rpm = 500, 3000
    pids = tmp_path / "pids"
    pids.mkdir()
    ds = ray_local.data.from_items(_questions(n))
    async with sim(time_scale=1, rpm=rpm, limit_period_s=5.0, answer_tokens=3, rtt_s=0.02) as (
        server,
        _,
    ):
        out = fanout.ray.answer(
            ds,
            client=PidClient(server.base_url, str(pids)),
            model="m",
            limits=_limits(rpm),
            redis_url=redis_url,
            policy="split",
            concurrency=2,
            batch_size=25,
        )
        import asyncio

        job = asyncio.ensure_future(off_loop(out.take_all))
        while len(server.stats.requests) < 150 and not job.done():
            await asyncio.sleep(0.05)
        victim = sorted(pids.iterdir())[0]
        os.kill(int(victim.name), signal.SIGKILL)
        killed_at = len(server.stats.requests)
        rows = await job
        sent = len(server.stats.requests)
    assert 150 <= killed_at < n, "the kill came after the run ended"
    ids = Counter(r["id"] for r in rows)
    assert len(rows) == n and set(ids) == set(range(n)) and max(ids.values()) == 1
    assert all(r["error"] is None and r["answer"] for r in rows)
    assert len(list(pids.iterdir())) >= 3, "the killed actor was not started again"
    # what the dead try sent again: at most its batches in flight (4 x 25 rows)
    assert sent - n <= 100, sent


def test_without_redis_more_than_one_actor_is_refused(
    ray_local: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Two actors and no redis: refused before anything runs, saying why (each would
    pace a whole budget) and what to do; split_limits=True gives each half, loudly,
    and needs limits to split; limits in redis must be configured ones."""
    import fanout.ray

    ds = ray_local.data.from_items(_questions(4))
    client = SimClient("http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"2 actors with no redis.*redis_url="):
        fanout.ray.answer(ds, client=client, limits=fanout.Limits(rpm=600), concurrency=2)
    with caplog.at_level("WARNING", logger="fanout.ray"):
        fanout.ray.answer(ds, client=client, limits=fanout.Limits(rpm=600), concurrency=2,
                          split_limits=True)  # fmt: skip
    assert "each of the 2 actors paces 1/2 of the limits (rpm=300.0" in caplog.text
    with pytest.raises(ConfigError, match=r"split_limits=True needs Limits\(rpm=..."):
        fanout.ray.answer(ds, client=client, concurrency=2, split_limits=True)
    with pytest.raises(ConfigError, match=r"shared through redis must be configured"):
        fanout.ray.answer(ds, client=client, concurrency=2, redis_url="redis://127.0.0.1:1/0")


def test_a_missing_question_column_is_named(ray_local: Any) -> None:
    """A question column the dataset lacks: a ConfigError naming it and the columns
    it has, before any actor starts."""
    import fanout.ray

    ds = ray_local.data.from_items([{"id": 1, "prompt": "What is X?"}])
    with pytest.raises(ConfigError, match=r"question column 'question' is not in the dataset \(its columns: id, prompt\)"):  # fmt: skip
        fanout.ray.answer(ds, client=SimClient("http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigError, match=r"parameter column 'max_tokens' is not in"):
        fanout.ray.answer(ds, column="prompt", params=["max_tokens"],
                          client=SimClient("http://127.0.0.1:9/v1"))  # fmt: skip


def test_a_question_column_of_numbers_is_refused(ray_local: Any) -> None:
    """A question column of integers: refused, naming the column and its type."""
    import fanout.ray

    ds = ray_local.data.from_items([{"question": 5}, {"question": 6}])
    with pytest.raises(ConfigError, match=r"question column 'question' holds int64, not strings"):
        fanout.ray.answer(ds, client=SimClient("http://127.0.0.1:9/v1"))


def test_an_unreachable_redis_is_named(ray_local: Any) -> None:
    """A redis that does not answer: RedisUnavailableError naming it (password masked),
    on the driver, before any actor starts."""
    import fanout.ray

    ds = ray_local.data.from_items(_questions(2))
    with pytest.raises(RedisUnavailableError, match=r"redis://:\*\*\*@127\.0\.0\.1:1/0"):
        fanout.ray.answer(ds, client=SimClient("http://127.0.0.1:9/v1"),
                          limits=fanout.Limits(rpm=60),
                          redis_url="redis://:hunter2@127.0.0.1:1/0", concurrency=2)  # fmt: skip


async def test_per_row_parameters_and_bad_rows_come_back_in_their_rows(
    ray_local: Any, sim: SimFactory
) -> None:
    """Columns named in params= are each row's own create() parameters and system
    prompt (a null: the row has none); a row with a null question or a parameter
    create() would refuse gets an error naming it, and the others are answered."""
    import fanout.ray

    items = [
        {"id": "a", "question": "What is A?", "system": "Be brief.", "max_tokens": 7},
        {"id": "b", "question": None, "system": None, "max_tokens": None},
        {"id": "c", "question": "What is C?", "system": None, "max_tokens": -5},
        {"id": "d", "question": "What is D?", "system": None, "max_tokens": None},
    ]
    ds = ray_local.data.from_items(items)
    async with sim(time_scale=50, answer_tokens=20) as (server, _):
        out = fanout.ray.answer(ds, client=SimClient(server.base_url), model="m",
                                params=["system", "max_tokens"], id_column="id",
                                policy="split", cache=False)  # fmt: skip
        rows = {r["id"]: r for r in await off_loop(out.take_all)}
        sent = list(server.stats.requests)
    assert rows["a"]["error"] is None and rows["a"]["finish_reason"] == "length"
    assert rows["a"]["completion_tokens"] == 7
    assert rows["d"]["error"] is None and rows["d"]["completion_tokens"] == 20
    assert rows["b"]["answer"] is None
    assert rows["b"]["error"] == 'InputError: id "b": missing or empty question'
    assert rows["c"]["answer"] is None and rows["c"]["error"].startswith('InputError: id "c": ')
    assert "max_tokens" in rows["c"]["error"]
    assert len(sent) == 2, "rows that cannot be asked are not sent"
    assert rows["a"]["system"] == "Be brief." and rows["a"]["max_tokens"] == 7  # kept as given


async def test_a_batch_is_one_call_and_its_plan_comes_back_in_columns(
    ray_local: Any, sim: SimFactory
) -> None:
    """policy="merge": each batch of 6 rows is one ask_many call, sent as one merged
    request; every row says its batch, the plan and its reason, and the batch's
    figures, which summarize() totals once per batch."""
    import fanout.ray

    ds = ray_local.data.from_items(_questions(24), override_num_blocks=4)
    async with sim(time_scale=50, answer_tokens=8) as (server, _):
        out = fanout.ray.answer(ds, client=SimClient(server.base_url), model="m",
                                policy="merge", batch_size=6, cache=False)  # fmt: skip
        rows = await off_loop(out.take_all)
        sent = len(server.stats.requests)
    assert sorted(r["id"] for r in rows) == list(range(24))
    assert all(r["error"] is None and r["mode"] == "merged" for r in rows)
    batches = Counter(r["batch"] for r in rows)
    assert len(batches) == 4 and set(batches.values()) == {6}
    assert all(r["plan"] == "merge" and r["plan_reason"] for r in rows)
    assert all(r["batch_requests"] == 1 for r in rows)
    summary = fanout.ray.summarize(rows)
    assert summary.batches == 4 and summary.requests == sent == 4
    assert summary.plans == Counter({"merge": 4}) and summary.modes == Counter({"merged": 24})


async def test_the_api_key_stays_in_the_actor_environment(ray_local: Any, sim: SimFactory) -> None:
    """ClientSettings reads the key in the actor from its environment: the simulator
    accepts it, and it is in no repr of what Ray ships (the settings, the actor's
    spec) nor in any file of Ray's session logs."""
    import ray

    import fanout.ray
    from fanout.ray._actor import ActorSpec, Answerer

    key = os.environ["FANOUT_RAY_TEST_KEY"]  # set for the workers by the module fixture
    ds = ray_local.data.from_items(_questions(3))
    async with sim(time_scale=50, answer_tokens=4, api_key=key) as (server, _):
        settings = fanout.ray.ClientSettings(base_url=server.base_url,
                                             api_key_env="FANOUT_RAY_TEST_KEY")  # fmt: skip
        out = fanout.ray.answer(ds, client=settings, model="m", policy="split", cache=False)
        rows = await off_loop(out.take_all)
    assert all(r["error"] is None for r in rows), rows
    assert key not in repr(settings)
    spec = ActorSpec(client=settings, column="question", id_column=None, params=(),
                     model="m", system=None, limits=fanout.Limits(), retry=None,
                     policy="auto", memory=None, cache=None)  # fmt: skip
    assert key not in repr(spec) and key not in repr(Answerer(spec))
    node = ray._private.worker._global_node
    assert node is not None
    logs = Path(node.get_session_dir_path()) / "logs"
    leaked = [p for p in logs.rglob("*") if p.is_file() and key.encode() in p.read_bytes()]
    assert leaked == []


async def test_parquet_in_parquet_out_keeps_the_input_columns_and_adds_the_answers(
    ray_local: Any, sim: SimFactory, tmp_path: Path
) -> None:
    """The docs' worked example on local files: questions read from Parquet, answered,
    written to Parquet; read back, every row has its input columns and its answer, and
    summarize() on what was read back totals them."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    import fanout.ray

    src, dst = tmp_path / "questions.parquet", tmp_path / "answers"
    pq.write_table(pa.table({"id": [f"q{i}" for i in range(30)],
                             "question": [f"What is item {i}?" for i in range(30)],
                             "max_tokens": [5 + i % 3 for i in range(30)]}), src)  # fmt: skip
    async with sim(time_scale=50, answer_tokens=10) as (server, _):
        ds = ray_local.data.read_parquet(str(src))
        out = fanout.ray.answer(ds, client=SimClient(server.base_url), model="m",
                                id_column="id", params=["max_tokens"], batch_size=8,
                                cache=False)  # no run cache file left in the temp dir  # fmt: skip
        await off_loop(lambda: out.write_parquet(str(dst)))
    table = pq.read_table(dst)
    rows = table.to_pylist()
    assert sorted(r["id"] for r in rows) == sorted(f"q{i}" for i in range(30))
    assert {"id", "question", "max_tokens", *fanout.ray.ANSWER_COLUMNS} <= set(table.column_names)
    assert all(r["error"] is None and r["answer"] for r in rows)
    assert all(r["completion_tokens"] == r["max_tokens"] for r in rows)
    summary = fanout.ray.summarize(rows)
    assert summary.rows == summary.answered == 30 and summary.failed == 0


async def test_actors_plan_warm_from_what_another_actor_saved_in_redis(
    ray_local: Any, sim: SimFactory, redis_url: str
) -> None:
    """With the endpoint memory on, one actor's run leaves what it learned in the
    limits' redis; the two actors of the next run plan their first batches from it
    (their first plans are on measured figures), where two actors without the memory
    plan their first batches on priors (``plan_on_priors``: a batch's first plan, not
    its last, which may rest on the batch's own answers)."""
    import redis

    import fanout.ray

    namespace = f"t-{uuid.uuid4().hex[:8]}"
    items = [{"question": f"What is item {i}?"} for i in range(96)]
    ds = ray_local.data.from_items(items, override_num_blocks=2)
    on_priors: dict[str, list[bool]] = {}
    async with sim(time_scale=50, answer_tokens=6) as (server, _):
        for name, actors, memory in (("learn", 1, True), ("warm", 2, True), ("cold", 2, False)):
            out = fanout.ray.answer(ds, client=SimClient(server.base_url), model="m",
                                    limits=fanout.Limits(rpm=30_000, namespace=namespace),
                                    redis_url=redis_url, concurrency=actors, batch_size=48,
                                    memory=memory, cache=False)  # fmt: skip
            rows = await off_loop(out.take_all)
            assert all(r["error"] is None for r in rows)
            on_priors[name] = [r["plan_on_priors"] for r in rows]
    conn = redis.Redis.from_url(redis_url)
    try:
        assert conn.keys(f"fanout:{namespace}:memory:*"), "nothing was saved in redis"
    finally:
        conn.close()
    assert any(on_priors["learn"]), "the first run had nothing to start from"
    assert not any(on_priors["warm"]), "a warm actor planned its first batch on priors"
    assert any(on_priors["cold"]), "an actor without the memory knew the endpoint"
