"""detector="llm": the model decomposes prompts the rules are unsure about (the
middle band, 0.5 <= confidence < 0.8).

No real model runs here, so a scripted one stands in where the model's answer must be
a valid decomposition: a loopback HTTP server that answers decomposition requests with
a canned JSON reply and other requests by echoing the question; the band's cost and
fallback are shown on the simulator. Everything else is real: the openai SDK over
HTTP, fanout's engine, and the validation of the model's reply.
(benchmarks/detection_model.py measures it on a real model.)
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

from openai import AsyncOpenAI

import fanout
from fanout.detection._llm import (
    _validate,
    ask_decomposition,
    asks_the_model,
    detect_with_model,
    read_decomposition,
)
from fanout.sim._http import HTTPServer, Request, Responder

from .._virtual import on_virtual_time
from ..conftest import SimFactory

PROMPT = "Is raw cookie dough safe to eat? What are the risks? Also, what's the capital of Peru?"


@asynccontextmanager
async def scripted_model(
    decomposition: dict[str, Any],
) -> AsyncIterator[tuple[AsyncOpenAI, list[dict[str, Any]]]]:
    seen: list[dict[str, Any]] = []

    async def handle(request: Request, out: Responder) -> None:
        body = json.loads(request.body)
        seen.append(body)
        last = body["messages"][-1]["content"]
        content = json.dumps(decomposition) if "response_format" in body else f"answer to: {last}"
        await out.send_json(200, {}, {
            "id": "chatcmpl-scripted", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": content}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
        })  # fmt: skip

    server = HTTPServer(handle)
    await server.start()
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{server.port}/v1", api_key="scripted")
    try:
        yield client, seen
    finally:
        await client.close()
        await server.stop()


GOOD = {
    "preamble": "",
    "parts": [
        "Is raw cookie dough safe to eat? What are the risks?",
        "what's the capital of Peru?",
    ],
    "groups": [[0], [1]],
}


@on_virtual_time
async def test_the_model_decomposes_an_unsure_prompt() -> None:
    """Rules are unsure (sentences); the model's verbatim decomposition is used."""
    assert fanout.detect(PROMPT).confidence < 0.8
    async with scripted_model(GOOD) as (client, seen):
        fo = fanout.Fanout(client, model="m")
        detection = await detect_with_model(PROMPT, fo)
        assert detection.style == "llm"
        assert [q.text for q in detection.questions] == GOOD["parts"]
        assert detection.groups == [[0], [1]]
        assert seen[0]["response_format"]["type"] == "json_schema"


@on_virtual_time
async def test_a_reply_that_invents_a_part_is_not_trusted() -> None:
    """Parts not found verbatim in the prompt: the rules' detection is kept."""
    bad = {**GOOD, "parts": ["Is raw cookie dough safe?", "What is the capital of Chile?"]}
    async with scripted_model(bad) as (client, _):
        detection = await detect_with_model(PROMPT, fanout.Fanout(client, model="m"))
        assert detection.style != "llm"


def test_groups_must_cover_every_part_once() -> None:
    """Missing or repeated indices fail validation."""
    assert _validate(PROMPT, {**GOOD, "groups": [[0]]}) is None
    assert _validate(PROMPT, {**GOOD, "groups": [[0, 1], [1]]}) is None
    assert _validate(PROMPT, {**GOOD, "parts": []}) is None
    assert _validate(PROMPT, GOOD) is not None


@on_virtual_time
async def test_wrap_with_the_llm_detector_fans_out_what_the_model_found() -> None:
    """wrap(detector='llm'): one decomposition call, then one request per part."""
    async with scripted_model(GOOD) as (client, seen):
        wrapped = fanout.wrap(client, detector="llm", policy="split")
        result = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": PROMPT}]
        )
        assert len(seen) == 3  # the decomposition, then the two parts
        content = result.choices[0].message.content or ""
        assert content.startswith(
            "1. answer to: Is raw cookie dough safe to eat? What are the risks?"
        )
        assert "2. answer to: what's the capital of Peru?" in content


# --- the middle band, on the simulator ----------------------------------------------
# The simulator answers a json_schema request with JSON that fits the schema but whose
# strings are its own text, never parts of the prompt: its decomposition never
# validates, so what these show is the band's cost (one call more) and the fallback.

UNSURE = "How tall is Mont Blanc? How deep is Lake Baikal?"  # two questions, no cue: 0.62
SURE = "1. What is X?\n2. Explain Y."  # a numbered list, a marker per line: 0.95
SINGLE = "What is the capital of France?"  # 0.9


async def _requests_for(sim: SimFactory, detector: str, prompt: str) -> tuple[int, str]:
    async with sim(time_scale=100, answer_tokens=5) as (server, client):
        wrapped = fanout.wrap(client, detector=detector)
        result = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": prompt}]
        )
        return len(server.stats.requests), result.choices[0].message.content or ""


@on_virtual_time
async def test_a_prompt_in_the_band_costs_one_decomposition_call_and_keeps_the_rules_answer(
    sim: SimFactory,
) -> None:
    """Rules at 0.62: one structured call more; its reply does not validate, so the
    prompt is split as the rules split it and the answer is the rules' answer."""
    assert asks_the_model(fanout.detect(UNSURE))
    rules_requests, rules_text = await _requests_for(sim, "rules", UNSURE)
    llm_requests, llm_text = await _requests_for(sim, "llm", UNSURE)
    assert rules_requests == 2  # the two questions
    assert llm_requests == rules_requests + 1
    assert llm_text == rules_text


@on_virtual_time
async def test_the_simulator_s_decomposition_never_validates(sim: SimFactory) -> None:
    """Its JSON fits the schema, so the failure is the validation's: the rules stand."""
    async with sim(time_scale=100) as (_, client):
        fo = fanout.Fanout(client, model="m")
        reply = await ask_decomposition(UNSURE, fo)
        assert reply is not None and reply.error is None
        assert set(json.loads(reply.text or "")) == {"preamble", "parts", "groups"}
        assert read_decomposition(UNSURE, reply) is None
        assert (await detect_with_model(UNSURE, fo)).style != "llm"


@on_virtual_time
async def test_a_prompt_the_rules_are_sure_of_is_not_sent_to_the_model(sim: SimFactory) -> None:
    """A numbered list (0.95) and a single question (0.9) are above the band: the same
    requests with the model as without it."""
    for prompt in (SURE, SINGLE):
        assert not asks_the_model(fanout.detect(prompt))
        assert (await _requests_for(sim, "llm", prompt)) == (
            await _requests_for(sim, "rules", prompt)
        )


def test_the_band_is_half_open_from_0_5_to_below_llm_below() -> None:
    """0.5 is in, 0.8 (or llm_below) is out; a one-part prompt with one question mark
    is never sent, whatever its level."""
    two = fanout.detect(UNSURE)
    at = {c: asks_the_model(replace(two, confidence=c)) for c in (0.49, 0.5, 0.79, 0.8)}
    assert at == {0.49: False, 0.5: True, 0.79: True, 0.8: False}
    assert asks_the_model(replace(two, confidence=0.85), below=0.9)
    one = replace(fanout.detect(SINGLE), confidence=0.6)
    assert not asks_the_model(one)
