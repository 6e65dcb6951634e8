"""detector="llm": the model decomposes prompts the rules are unsure about.

No real model runs here, so a scripted one stands in: a loopback HTTP server that
answers decomposition requests with a canned JSON reply and other requests by
echoing the question. Everything else is real: the openai SDK over HTTP, fanout's
engine, and the validation of the model's reply.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from openai import AsyncOpenAI

import fanout
from fanout.detection._llm import _validate, detect_with_model
from fanout.sim._http import HTTPServer, Request, Responder

from .._virtual import on_virtual_time

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
