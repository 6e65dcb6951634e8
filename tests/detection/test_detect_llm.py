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

import pytest
from openai import AsyncOpenAI

import fanout
from fanout.core.exceptions import StructuredOutputError
from fanout.detection._llm import (
    DECOMPOSE_MAX_TOKENS,
    DECOMPOSE_MIN_TOKENS,
    _validate,
    ask_decomposition,
    asks_the_model,
    decomposition_cap,
    detect_with_model,
    read_decomposition,
)
from fanout.endpoint.tokens import estimate_text_tokens
from fanout.sim._http import HTTPServer, Request, Responder

from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory

PROMPT = "Is raw cookie dough safe to eat? What are the risks? Also, what's the capital of Peru?"


@asynccontextmanager
async def scripted_model(
    decomposition: dict[str, Any] | str,
) -> AsyncIterator[tuple[AsyncOpenAI, list[dict[str, Any]]]]:
    """A loopback server answering decomposition requests with ``decomposition`` (as
    JSON, or a string as it is) and others with "answer to: <question>"; ``seen``: the
    bodies of the requests it got."""
    seen: list[dict[str, Any]] = []
    reply = decomposition if isinstance(decomposition, str) else json.dumps(decomposition)

    async def handle(request: Request, out: Responder) -> None:
        body = json.loads(request.body)
        seen.append(body)
        last = body["messages"][-1]["content"]
        content = reply if "response_format" in body else f"answer to: {last}"
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


async def _requests_for(
    sim: SimFactory, detector: str, prompt: str, **settings: Any
) -> tuple[int, str]:
    settings.setdefault("answer_tokens", 5)
    async with sim(time_scale=100, **settings) as (server, client):
        wrapped = fanout.wrap(client, detector=detector)
        result = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": prompt}]
        )
        return len(server.stats.requests), result.choices[0].message.content or ""


async def _ask(wrapped: Any, prompt: str) -> str:
    result = await wrapped.chat.completions.create(
        model="m", messages=[{"role": "user", "content": prompt}]
    )
    return result.choices[0].message.content or ""


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
    """Its JSON fits the schema (and, its strings short, the cap), so the failure is the
    validation's: the rules stand."""
    async with sim(time_scale=100, answer_tokens=20) as (_, client):
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


# --- the decomposition call is bounded: a capped reply, one attempt, a short deadline -


def test_the_decomposition_cap_is_twice_the_prompt_s_estimate_and_64_from_128_to_1024() -> None:
    """Proportional to the prompt between a floor and a ceiling."""
    middle = "How tall is Mont Blanc, and why? " * 8  # 264 ASCII characters: 66 estimated
    assert estimate_text_tokens(middle) == 66
    assert decomposition_cap(middle) == 2 * 66 + 64
    assert decomposition_cap("a? b?") == DECOMPOSE_MIN_TOKENS == 128
    assert decomposition_cap("Why? " * 2000) == DECOMPOSE_MAX_TOKENS == 1024
    assert decomposition_cap("富士山有多高？琵琶湖有多深？" * 10) == 2 * 140 + 64  # one a character


@on_virtual_time
async def test_the_decomposition_request_carries_its_cap_and_the_answers_do_not() -> None:
    """Through wrap: the decomposition asks for at most decomposition_cap(prompt) tokens;
    the parts' requests are the user's (who set no max_tokens)."""
    async with scripted_model(GOOD) as (client, seen):
        wrapped = fanout.wrap(client, detector="llm", policy="split")
        await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": PROMPT}]
        )
        decomposition, *answers = seen
        assert "response_format" in decomposition
        assert decomposition["max_tokens"] == decomposition_cap(PROMPT) == 128
        assert len(answers) == 2 and all("max_tokens" not in a for a in answers)


def _long_decompositions(question: str) -> int:
    """Answer tokens for the simulator: the decomposition's strings at their longest
    (50 tokens each, past any cap of a short prompt), the answers short."""
    return 2000 if question.startswith("Split the user's message") else 5


@on_virtual_time
async def test_a_decomposition_reply_cut_at_its_cap_is_not_asked_again_and_the_rules_answer(
    sim: SimFactory,
) -> None:
    """The reply is cut at the cap (finish_reason "length", no whole JSON), asked
    once, and the prompt is answered as the rules split it."""
    cap = decomposition_cap(UNSURE)
    rules_requests, rules_text = await _requests_for(sim, "rules", UNSURE)
    async with sim(time_scale=100, answer_tokens=_long_decompositions) as (server, client):
        reply = await ask_decomposition(UNSURE, fanout.Fanout(client, model="m"))
        assert reply is not None and reply.attempts == 1
        assert isinstance(reply.error, StructuredOutputError)
        assert reply.usage.completion_tokens == cap
        text = await _ask(fanout.wrap(client, detector="llm"), UNSURE)
        first, decomposition, *answers = server.stats.requests
        assert first.completion_tokens == decomposition.completion_tokens == cap
        assert len(answers) == rules_requests
        assert text == rules_text


@pytest.mark.parametrize("fault", ["500", "503", "429"])
@on_virtual_time
async def test_a_failing_decomposition_call_is_made_once_and_the_rules_answer(
    sim: SimFactory, fault: str
) -> None:
    """A 500, a 503 or a 429 on the decomposition: not retried (the Fanout's Retry
    would retry each), the prompt answered as the rules split it."""
    rules_requests, rules_text = await _requests_for(sim, "rules", UNSURE)
    async with sim(time_scale=100, answer_tokens=5, fault_schedule={1: fault}) as (
        server,
        client,
    ):
        text = await _ask(fanout.wrap(client, detector="llm"), UNSURE)
        decomposition, *answers = server.stats.requests
        assert decomposition.fault == fault
        assert len(answers) == rules_requests
        assert all(a.status == 200 for a in answers)
        assert text == rules_text


@on_virtual_time
async def test_a_decomposition_that_hangs_is_abandoned_within_its_short_deadline(
    sim: SimFactory,
) -> None:
    """A decomposition never answered is given up after one attempt, sooner than the
    answers' 30 s floor (and the client's own 30 s timeout), and not sent again."""
    rules_requests, rules_text = await _requests_for(sim, "rules", UNSURE)
    async with sim(time_scale=100, answer_tokens=5, fault_schedule={1: "hang"}) as (
        server,
        client,
    ):
        wrapped = fanout.wrap(client, detector="llm")
        started = loop_time()
        text = await _ask(wrapped, UNSURE)
        took = loop_time() - started
        assert server.stats.requests[0].fault == "hang"
        assert len(server.stats.requests) == 1 + rules_requests
        assert text == rules_text
        assert 10 <= took < 30


@on_virtual_time
async def test_a_decomposition_reply_that_is_not_json_is_not_asked_again() -> None:
    """Fanout re-asks a structured answer that does not fit its schema; the
    decomposition is not re-asked: the rules decide."""
    async with scripted_model("Sure! Here are the parts: 1. Is raw cookie dough") as (
        client,
        seen,
    ):
        wrapped = fanout.wrap(client, detector="llm", policy="split")
        await _ask(wrapped, PROMPT)
        asked = [body for body in seen if "response_format" in body]
        assert len(asked) == 1
        assert len(seen) - 1 == len(fanout.detect(PROMPT).groups)
