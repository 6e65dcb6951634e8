"""fanout against a real inference engine: llama.cpp's continuous-batching server.

The server is built from the llama-cpp-python source distribution (once, cached
outside the repository: tools/build_llama_server.sh) and loads a small random-weight
llama model written here (tools/llama_engine.py). Answers are nonsense text, but the
scheduling, KV cache and batched matrix work are real. Lengths are forced with
``max_tokens`` and the server's ``ignore_eos``.

Set FANOUT_SKIP_LLAMA=1 to skip these tests on a machine that cannot build it.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI, DefaultAsyncHttpxClient

import fanout
from fanout.profile import profile_endpoint

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import llama_engine

pytestmark = [
    pytest.mark.llama,
    pytest.mark.skipif(os.environ.get("FANOUT_SKIP_LLAMA") == "1", reason="FANOUT_SKIP_LLAMA=1"),
]

IGNORE_EOS = {"ignore_eos": True}


@pytest.fixture(scope="module")
def model() -> Path:
    llama_engine.CACHE.mkdir(parents=True, exist_ok=True)
    # The small model (26M parameters): on two CPU cores a bigger one is compute-bound,
    # and batching gains shrink (the benchmark uses 85M).
    return llama_engine.write_random_model(
        llama_engine.CACHE / "fanout-random-26m.gguf", n_embd=512, n_layer=8, n_head=8, n_ff=1408
    )


@pytest.fixture(scope="module")
def batching_server(model: Path) -> Iterator[str]:
    with llama_engine.llama_server(model, parallel=5) as url:
        yield url


@pytest.fixture(scope="module")
def single_slot_server(model: Path) -> Iterator[str]:
    with llama_engine.llama_server(model, parallel=1) as url:
        yield url


def _client(url: str) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=url, api_key="local", timeout=120)


async def _warm_up(fo: fanout.Fanout) -> None:
    """Let the Fanout see the endpoint, as a Fanout in use has."""
    lengths = [40, 5, 60, 20, 80, 10]
    for round_ in range(3):  # a handful of responses is too few to judge an endpoint by
        await fo.ask_many(
            [fanout.Question(text=f"Warm-up {round_}-{i}.", params={"max_tokens": t})
             for i, t in enumerate(lengths)],
            policy="split", extra_body=IGNORE_EOS,
        )  # fmt: skip


@pytest.mark.parametrize("which", ["batching_server", "single_slot_server"])
async def test_answers_are_complete_and_in_order(
    which: str, request: pytest.FixtureRequest
) -> None:
    """5 questions of different lengths through the real SDK: each answer has its own length."""
    url = request.getfixturevalue(which)
    client = _client(url)
    lengths = [8, 16, 24, 32, 40]
    questions = [
        fanout.Question(text=f"Tell me about item {i}.", params={"max_tokens": t})
        for i, t in enumerate(lengths)
    ]
    answers = await fanout.ask_many(
        questions, client=client, model="m", policy="split", extra_body=IGNORE_EOS
    )
    await client.close()
    assert [a.usage.completion_tokens for a in answers] == lengths
    assert [a.index for a in answers] == [0, 1, 2, 3, 4]
    assert all(a.finish_reason == "length" and a.text for a in answers)


class _ServerTimings:
    """Each chat completion's latency as the client saw it, beside its service as
    llama-server reports it (the ``timings`` of its reply: prompt and decode ms): the
    difference is the time it waited for a slot."""

    def __init__(self) -> None:
        self._sent: dict[int, float] = {}
        self.seen: list[tuple[float, float]] = []  # (latency s, service s)

    async def on_request(self, request: Any) -> None:  # the SDK's httpx request
        self._sent[id(request)] = time.perf_counter()

    async def on_response(self, response: Any) -> None:
        start = self._sent.pop(id(response.request), None)
        await response.aread()
        if start is None or not response.request.url.path.endswith("/chat/completions"):
            return
        timings = response.json().get("timings") or {}
        service_ms = float(timings.get("prompt_ms", 0.0)) + float(timings.get("predicted_ms", 0.0))
        self.seen.append((time.perf_counter() - start, service_ms / 1000))

    def waits_in_services(self) -> float:
        """The time the requests seen waited for a slot, in all, in median services."""
        service = statistics.median(s for _, s in self.seen)
        return sum(max(0.0, latency - s) for latency, s in self.seen) / service


async def test_split_runs_side_by_side_on_the_batching_server_and_queues_on_the_single_slot_one(
    batching_server: str, single_slot_server: str
) -> None:
    """5 x 48 tokens split: on ``-np 5`` the five run side by side (the server's own
    timings say no request waited for a slot, and their services, each as the server
    timed it, add up to several times the call's wall time: they overlapped); on ``-np 1``
    they queue (waits of 0 + 1 + 2 + 3 + 4 services when all five are sent at once, and
    services that add up to about the wall time). These hold whatever the cores' speed
    or load: they are what fanout sends and what the server did with it. How much faster
    five side by side are than five alone is the machine's, not fanout's: it is printed
    (0.69 against 0.85 of five alone on an idle machine; 1.26 against 0.95 in a CI
    rehearsal beside five other jobs on the two cores) and measured in benchmarks/."""
    found: dict[str, dict[str, Any]] = {}
    for name, url in (("np5", batching_server), ("np1", single_slot_server)):
        timings = _ServerTimings()
        http = DefaultAsyncHttpxClient(
            timeout=120, event_hooks={"request": [timings.on_request],
                                      "response": [timings.on_response]},
        )  # fmt: skip
        client = AsyncOpenAI(base_url=url, api_key="local", http_client=http)
        fo = fanout.Fanout(client, model="m", extra_body=IGNORE_EOS, memory=False)
        await fo.ask_many(["Warm-up."], policy="split", max_tokens=8)  # the first is slow
        alone_s = split_s = float("inf")
        waits: list[float] = []
        overlaps: list[float] = []
        for round_ in range(3):
            start = time.perf_counter()
            await fo.ask_many([f"Alone {round_}."], policy="split", max_tokens=48)
            alone_s = min(alone_s, time.perf_counter() - start)
            timings.seen.clear()
            start = time.perf_counter()
            await fo.ask_many([f"Part {round_}-{i}." for i in range(5)], policy="split",
                              max_tokens=48)  # fmt: skip
            wall = time.perf_counter() - start
            split_s = min(split_s, wall)
            assert len(timings.seen) == 5
            waits.append(timings.waits_in_services())
            overlaps.append(sum(service for _, service in timings.seen) / wall)
        found[name] = {"of_five_alone": split_s / (5 * alone_s), "waits": waits,
                       "overlap": overlaps}  # fmt: skip
        await client.close()
    print(f"split against five alone, and waits for a slot in services: {found}")
    assert max(found["np5"]["waits"]) < 1.0, found  # side by side
    assert min(found["np5"]["overlap"]) > 2.5, found  # about 5: all five at once
    assert min(found["np1"]["waits"]) > 3.0, found  # one after another
    assert max(found["np1"]["overlap"]) < 1.5, found  # about 1: never two at once


async def test_auto_splits_on_the_batching_server_and_plans_the_single_slot_one_serialised(
    batching_server: str, single_slot_server: str
) -> None:
    """After a few calls, the endpoint model tells the two servers apart: the planner
    costs five requests on ``-np 1`` at several times one (the model says so by a
    slowdown near 1, or by one slot learned, whose services then fit the prior's
    slowdown: issue 40's failure read the slowdown alone), on ``-np 5`` at about one;
    and auto splits on ``-np 5``. Measured here: about 3.1-5.0 against 1.1."""
    predicted = {}
    learned = {}
    for name, url in (("np5", batching_server), ("np1", single_slot_server)):
        client = _client(url)
        fo = fanout.Fanout(client, model="m", extra_body=IGNORE_EOS, memory=False)
        await _warm_up(fo)
        estimate = fo.endpoint.estimate()
        learned[name] = (round(estimate.slowdown_per_request, 2), estimate.slots)
        split = fanout.Policy(mode="split", expected_tokens=48)
        five = fo.plan([f"Question {i}." for i in range(5)], policy=split).chosen.est_wall_s
        one = fo.plan(["Question."], policy=split).chosen.est_wall_s
        predicted[name] = five / one
        if name == "np5":
            plan = fo.plan(
                [f"Question {i}." for i in range(5)], policy=fanout.Policy(expected_tokens=64)
            )
            assert plan.chosen.label == "split", plan.reason
        await client.close()
    print(f"learned (slowdown, slots): {learned}; five requests against one: {predicted}")
    assert predicted["np1"] > 2.5, (predicted, learned)
    assert predicted["np5"] < 2.0, (predicted, learned)


async def test_profiles_show_different_parallel_scaling(
    batching_server: str, single_slot_server: str
) -> None:
    """fanout profile: -np 1 takes concurrent requests one after another, -np 5 overlaps
    them; sending 8 at once shows how many slots each has."""
    profiles = {}
    for name, url in (("np5", batching_server), ("np1", single_slot_server)):
        client = _client(url)
        fo = fanout.Fanout(client, model="m")
        profiles[name] = await profile_endpoint(
            fo, max_requests=21, tokens=64, extra_body=IGNORE_EOS
        )
        await client.close()
    print(profiles["np5"].summary())
    print(profiles["np1"].summary())
    # Whether five slots pay on two CPU cores depends on the machine and its load (the
    # ``parallel`` verdict, a slope under 0.75, said yes in some idle runs and no in a CI
    # run: 0.79 per extra stream), so the servers are told apart by what they do, not by
    # a margin: -np 5 runs five requests at once and decodes them together in less than
    # five turns of one (3.9x in that run), -np 1 never decodes two together.
    np5, np1 = profiles["np5"], profiles["np1"]
    assert np5.parallel_slots == 5, np5.summary()
    assert np1.parallel_slots == 1, np1.summary()
    assert max(np5.decode_scaling) == 5, np5.decode_scaling
    assert np5.decode_scaling[5] < 5, np5.decode_scaling
    assert np1.decode_scaling == {1: 1.0}, np1.decode_scaling
    assert np1.slowdown_per_request > 0.5, np1.summary()
    assert not np1.parallel
    assert "take turns" in np1.summary()
    assert "take turns" not in np5.summary()
