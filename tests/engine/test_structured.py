"""Structured outputs: questions sharing a ``response_format`` (a JSON schema, or a
pydantic model) merge under a composed schema; each item is checked against the
caller's schema, one that does not fit is asked alone, and ``Answer.parsed`` holds
the checked value, merged or split alike."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal

import jsonschema
import pytest
from openai import AsyncOpenAI
from pydantic import BaseModel

import fanout

from .._scripted import scripted_server
from .._virtual import on_virtual_time

if TYPE_CHECKING:
    from ..conftest import SimFactory


class Sentiment(BaseModel):
    label: Literal["positive", "negative", "neutral"]


class Place(BaseModel):
    name: str
    population: int


class Extraction(BaseModel):
    """A model with a nested one: its JSON schema has ``$defs`` and references."""

    city: Place
    mentioned: list[Place]


LABEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": ["positive", "negative", "neutral"]}},
    "required": ["label"],
    "additionalProperties": False,
}
RAW_FORMAT = {
    "type": "json_schema",
    "json_schema": {"name": "sentiment", "strict": True, "schema": LABEL_SCHEMA},
}
SENTENCES = [f"Classify the sentiment of review {i}: it was fine, I guess." for i in range(6)]


def _merged_body(body: dict[str, Any]) -> bool:
    user = next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
    return "Answer each of the following" in user


# --- the composed schema, as sent --------------------------------------------------------
@on_virtual_time
async def test_a_merged_structured_request_is_sent_the_composed_schema() -> None:
    """One property per question, keyed "<tag> <question's first line>", each a $ref to
    the caller's schema kept once under $defs; all required, no other allowed; strict
    as the caller's was."""
    labels = iter(["positive", "negative", "neutral"])

    def reply(body: dict[str, Any]) -> str:
        keys = body["response_format"]["json_schema"]["schema"]["required"]
        return json.dumps({key: {"label": next(labels)} for key in keys})

    async with scripted_server(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            SENTENCES[:3], policy="merge", response_format=RAW_FORMAT
        )
        await client.close()
    assert len(server.requests) == 1
    sent = server.requests[0]["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    schema = sent["json_schema"]["schema"]
    keys = list(schema["properties"])
    assert len(keys) == 3
    for key, question in zip(keys, SENTENCES[:3], strict=True):
        assert key.endswith(" " + question)  # "<tag> <anchor>"
    assert schema["required"] == keys and schema["additionalProperties"] is False
    refs = {prop["$ref"] for prop in schema["properties"].values()}
    assert len(refs) == 1
    name = refs.pop().removeprefix("#/$defs/")
    assert schema["$defs"][name] == LABEL_SCHEMA
    assert [a.parsed for a in answers] == [
        {"label": x} for x in ("positive", "negative", "neutral")
    ]
    assert [a.text for a in answers] == [json.dumps({"label": x}) for x in
                                         ("positive", "negative", "neutral")]  # fmt: skip


@on_virtual_time
async def test_a_model_with_nested_models_composes_to_a_schema_whose_references_resolve() -> None:
    """The model's own $defs are lifted to the composed root: a reply that fills the
    composed schema validates against it, and each item parses into the model."""
    item = {"city": {"name": "Lyon", "population": 500000},
            "mentioned": [{"name": "Paris", "population": 2000000}]}  # fmt: skip
    sent: list[dict[str, Any]] = []

    def reply(body: dict[str, Any]) -> str:
        sent.append(body["response_format"])
        keys = body["response_format"]["json_schema"]["schema"]["required"]
        return json.dumps({key: item for key in keys})

    async with scripted_server(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            ["Extract the cities: Lyon, near Paris.", "Extract the cities: Lyon again."],
            policy="merge", response_format=Extraction,
        )  # fmt: skip
        await client.close()
    composed = sent[0]["json_schema"]
    assert composed["strict"] is True  # the SDK's strict schema of the model stays strict
    jsonschema.Draft202012Validator.check_schema(composed["schema"])
    keys = composed["schema"]["required"]
    jsonschema.validate({key: item for key in keys}, composed["schema"])
    with pytest.raises(jsonschema.ValidationError):  # the references do resolve
        jsonschema.validate({key: {**item, "city": {"name": 1}} for key in keys},
                            composed["schema"])  # fmt: skip
    assert len(server.requests) == 1
    assert all(isinstance(a.parsed, Extraction) for a in answers)
    assert answers[0].parsed == Extraction.model_validate(item)


@on_virtual_time
async def test_a_schema_that_is_not_strict_compatible_is_merged_without_strict() -> None:
    """Strict mode needs every object closed and all its properties required: a schema
    with an optional property is composed with strict false."""
    loose = {"type": "object", "properties": {"label": {"type": "string"},
                                              "why": {"type": "string"}}, "required": ["label"]}  # fmt: skip
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "strict": True, "schema": loose}}

    def reply(body: dict[str, Any]) -> str:
        keys = body["response_format"]["json_schema"]["schema"]["required"]
        return json.dumps({key: {"label": "ok"} for key in keys})

    async with scripted_server(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            SENTENCES[:2], policy="merge", response_format=fmt
        )
        await client.close()
    assert server.requests[0]["response_format"]["json_schema"]["strict"] is False
    assert [a.parsed for a in answers] == [{"label": "ok"}, {"label": "ok"}]


# --- on the simulator -----------------------------------------------------------------------
@on_virtual_time
async def test_classification_with_a_pydantic_model_merges_and_parses(sim: SimFactory) -> None:
    """Six classifications with a model: fewer requests than questions, every parsed
    value an instance of the model, and each the one its question gets alone."""
    async with sim(time_scale=50) as (_server, client):
        fo = fanout.Fanout(client, model="m", memory=False)
        alone = await fo.ask_many(SENTENCES, policy="split", response_format=Sentiment)
        merged = await fo.ask_many(SENTENCES, policy="merge", response_format=Sentiment)
    assert merged.report.requests < len(SENTENCES)
    assert all(a.mode == "merged" for a in merged)
    assert all(isinstance(a.parsed, Sentiment) for a in [*alone, *merged])
    assert [a.parsed for a in merged] == [a.parsed for a in alone]
    assert len({a.parsed.label for a in alone}) > 1  # the labels differ: order is checked
    assert [a.text for a in merged] == [a.text for a in alone]


@on_virtual_time
async def test_classification_with_a_raw_json_schema_merges_and_parses(sim: SimFactory) -> None:
    """The same with a JSON schema: the parsed values are JSON values valid for it."""
    async with sim(time_scale=50) as (_server, client):
        fo = fanout.Fanout(client, model="m", memory=False)
        alone = await fo.ask_many(SENTENCES, policy="split", response_format=RAW_FORMAT)
        merged = await fo.ask_many(SENTENCES, policy="merge", response_format=RAW_FORMAT)
    assert merged.report.requests < len(SENTENCES)
    for answer in merged:
        jsonschema.validate(answer.parsed, LABEL_SCHEMA)
        assert json.loads(answer.text or "") == answer.parsed
    assert [a.parsed for a in merged] == [a.parsed for a in alone]


@on_virtual_time
async def test_auto_merges_structured_questions_once_the_merge_check_agrees(
    sim: SimFactory,
) -> None:
    """Under a tight request limit auto merges classifications too, after the merge
    check (counted apart, as "schema")."""
    questions = [f"Classify review {i}: fine. {{{{tokens=2}}}}" for i in range(12)]
    async with sim(time_scale=10, rpm=6) as (_server, client):
        fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=60), memory=False)
        answers = await fo.ask_many(
            questions, policy=fanout.Policy(expected_tokens=4), response_format=Sentiment
        )
    assert answers.report.requests < len(questions)
    assert any(a.mode == "merged" for a in answers)
    assert all(isinstance(a.parsed, Sentiment) for a in answers)
    for check in answers.report.merge_checks:
        n = check.split(" ", 1)[0]
        assert check.startswith(f"{n} of {n} merged answers (schema)"), check
    compared, agreed, wrong = fo.endpoint.merge_agreement("schema") or (0, 0, 0)
    assert compared >= 4 and agreed == compared and wrong == 0


def test_the_planner_may_merge_a_structured_format_but_not_json_object() -> None:
    """A json_schema format or a model merges; json_object (no schema to compose) and
    tools still do not; nor does a structured format where merges are tagged text."""
    fo = fanout.Fanout(AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k"),
                       model="m", memory=False)  # fmt: skip
    for fmt in (RAW_FORMAT, Sentiment):
        plan = fo.plan(SENTENCES, policy="merge", response_format=fmt)
        assert len(plan.groups) < len(SENTENCES), fmt
    assert len(fo.plan(SENTENCES, policy="merge",
                       response_format={"type": "json_object"}).groups) == len(SENTENCES)  # fmt: skip
    text = fanout.Policy(mode="merge", merge_format="text")
    assert len(fo.plan(SENTENCES, policy=text, response_format=Sentiment).groups) == len(SENTENCES)


# --- items that do not fit ------------------------------------------------------------------
@on_virtual_time
async def test_an_item_that_fails_validation_or_its_anchor_is_asked_alone() -> None:
    """Merged: the second item's label is not in the enum, the third is under the first
    question's words: both are asked alone with the caller's own format and answered."""

    def reply(body: dict[str, Any]) -> str:
        if not _merged_body(body):
            assert body["response_format"] == RAW_FORMAT  # alone: the caller's own format
            return json.dumps({"label": "negative"})
        keys = body["response_format"]["json_schema"]["schema"]["required"]
        wrong_anchor = keys[2].split(" ", 1)[0] + " " + SENTENCES[0]
        return json.dumps({keys[0]: {"label": "positive"}, keys[1]: {"label": "maybe"},
                           wrong_anchor: {"label": "neutral"}})  # fmt: skip

    async with scripted_server(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            SENTENCES[:3], policy="merge", response_format=RAW_FORMAT
        )
        await client.close()
    assert [a.mode for a in answers] == ["merged", "split", "split"]
    assert [a.parsed for a in answers] == [{"label": "positive"}, {"label": "negative"},
                                           {"label": "negative"}]  # fmt: skip
    assert sum(_merged_body(b) for b in server.requests) == 1 and len(server.requests) == 3
    assert answers.report.reasked == [1, 2]


@on_virtual_time
async def test_an_answer_alone_that_never_fits_fails_with_structured_output_error() -> None:
    """Alone, a reply that does not fit the model is retried; one that never does is
    the question's StructuredOutputError, naming why, with the reply kept."""

    def reply(body: dict[str, Any]) -> str:
        return '{"label": "so-so"}'

    async with scripted_server(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            SENTENCES[:1], response_format=Sentiment, on_error="return",
            retry=fanout.Retry(max_attempts=2, initial_wait=0.01),
        )  # fmt: skip
        await client.close()
    error = answers[0].error
    assert isinstance(error, fanout.StructuredOutputError)
    assert error.reply == '{"label": "so-so"}' and "label" in error.reason
    assert error.attempts == 2 and len(server.requests) == 2
    assert answers[0].parsed is None


def test_a_json_schema_format_without_a_schema_is_a_config_error() -> None:
    fo = fanout.Fanout(AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k"),
                       model="m", memory=False)  # fmt: skip
    with pytest.raises(fanout.ConfigError, match="schema"):
        fo.plan(["q"], response_format={"type": "json_schema", "json_schema": {"name": "x"}})
    with pytest.raises(fanout.ConfigError, match="no JSON schema"):
        fo.plan(["q"], response_format={"type": "json_schema",
                                        "json_schema": {"name": "x", "schema": {"type": 5}}})  # fmt: skip


@on_virtual_time
async def test_a_question_with_its_own_model_is_answered_alone_and_parsed(
    sim: SimFactory,
) -> None:
    """A Question's own response_format (a model) is sent as its JSON schema, alone,
    and its answer parsed; the call's other questions are untouched."""
    async with sim(time_scale=50) as (_server, client):
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            [fanout.Question(text=SENTENCES[0], params={"response_format": Sentiment}),
             "What is the capital of France?"],
            policy="merge",
        )  # fmt: skip
    assert isinstance(answers[0].parsed, Sentiment) and answers[0].mode == "split"
    assert answers[1].parsed is None and answers[1].text


@on_virtual_time
async def test_a_tool_call_answers_a_question_with_tools_and_a_structured_format(
    sim: SimFactory,
) -> None:
    """With tools= too, a reply of tool calls alone is the answer (nothing to parse),
    not a structured output that failed; tools keep the questions apart."""
    tool = {"type": "function", "function": {"name": "lookup", "parameters": {
        "type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}}}  # fmt: skip
    async with sim(time_scale=50) as (_server, client):
        answers = await fanout.Fanout(client, model="m", memory=False).ask_many(
            SENTENCES[:2], tools=[tool], response_format=Sentiment, policy="merge",
            on_error="return",
        )  # fmt: skip
    assert [a.error for a in answers] == [None, None]
    assert all(a.tool_calls and a.parsed is None and a.mode == "split" for a in answers)
