"""An endpoint memory document with values out of place (by hand, by another program,
by a bug) is validated whole before any of it is used: one warning, a cold start, and
the call answers; over real HTTP to the simulator on 127.0.0.1."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout import Limits
from fanout.endpoint.model import EndpointModel

from ._redis_server import redis_server
from ._virtual import on_virtual_time
from .conftest import SimFactory

SHORT = [f"Question {i}: what is {i} plus one? {{{{tokens=3}}}}" for i in range(6)]


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    yield from redis_server(tmp_path_factory.mktemp("redis"))


def _memory_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and "endpoint memory" in r.getMessage()]  # fmt: skip


def _files(directory: Path) -> list[Path]:
    return sorted(directory.iterdir())


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
        await first.ask_many(SHORT, policy="split")
        (path,) = _files(tmp_path)
        doc = json.loads(path.read_bytes())
        _damage(doc, damage)
        path.write_text(json.dumps(doc))
        caplog.clear()
        fo = fanout.Fanout(client, model="sim-1", memory=tmp_path)
        answers = await fo.ask_many(SHORT[:3], policy="split")
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
        await first.ask_many(SHORT, policy="split")
        store = redis.Redis.from_url(redis_url)
        try:
            (key,) = store.keys("fanout:memory-hardening:memory:*")
            doc = json.loads(store.get(key))  # type: ignore[arg-type]
            doc["endpoint"] = "x"
            store.set(key, json.dumps(doc), px=store.pttl(key))
            caplog.clear()
            second = fanout.Fanout(client, model="sim-1", limits=limits, memory=True)
            answers = await second.ask_many(SHORT[:3], policy="split")
            assert len(answers.texts) == 3
            assert len(_memory_warnings(caplog)) == 1
            assert isinstance(json.loads(store.get(key))["endpoint"], dict)  # type: ignore[arg-type]
            caplog.clear()
            third = fanout.Fanout(client, model="sim-1", limits=limits, memory=True)
            await third.ask_many(SHORT[3:4], policy="split")
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
