"""The simulator answers structured output and tools like a model that follows them:
JSON that fits the schema, tool calls whose arguments fit the tool, deterministic per
question, streamed too (issue 25, item 3). Through the real SDK over HTTP."""

from __future__ import annotations

import json
from enum import Enum
from typing import Any, Literal

import instructor
import pytest
from openai.lib._pydantic import to_strict_json_schema
from pydantic import BaseModel, Field

import fanout
from fanout.sim import answer_for, count_tokens

from .._virtual import on_virtual_time
from ..conftest import SimFactory


class Colour(str, Enum):
    RED = "red"
    GREEN = "green"


class Leg(BaseModel):
    side: Literal["left", "right"]
    length_mm: float = Field(ge=1, le=50)


class Creature(BaseModel):
    """A creature, with the kinds of field people put in a response model."""

    name: str
    legs: int = Field(ge=0, le=12)
    venomous: bool
    colour: Colour
    nickname: str | None
    tags: list[str] = Field(min_length=1, max_length=3)
    limbs: list[Leg]
    score: float
    code: str = Field(max_length=6)


class Node(BaseModel):
    """A recursive model with bounds pydantic writes as exclusive ones and a step."""

    label: str
    weight: int = Field(gt=0, lt=100, multiple_of=5)
    ratio: float = Field(gt=0, le=1)
    children: list[Node]


class Weather(BaseModel):
    city: str
    days: int = Field(ge=1, le=7)


class Time(BaseModel):
    timezone: str


def _tool(model: type[BaseModel], name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "strict": True,
                                             "parameters": to_strict_json_schema(model)}}  # fmt: skip


TOOLS: Any = [_tool(Time, "get_time"), _tool(Weather, "get_weather")]


class TestResponseFormatJsonSchema:
    @on_virtual_time
    async def test_a_pydantic_model_is_answered_with_a_valid_instance(
        self, sim: SimFactory
    ) -> None:
        """parse(response_format=Model): every field fits (ints in range, enums, lists
        of objects, optional, max_length), the same for the same question."""
        async with sim(time_scale=100, answer_tokens=12) as (_, client):
            ask: Any = [{"role": "user", "content": "Describe a spider."}]
            first = await client.chat.completions.parse(
                model="m",
                messages=ask,
                response_format=Creature,
            )
            again = await client.chat.completions.parse(
                model="m",
                messages=ask,
                response_format=Creature,
            )
            other = await client.chat.completions.parse(
                model="m", messages=[{"role": "user", "content": "Describe a crab."}],
                response_format=Creature,
            )  # fmt: skip
            creature = first.choices[0].message.parsed
            assert isinstance(creature, Creature)
            assert 0 <= creature.legs <= 12
            assert 1 <= len(creature.tags) <= 3
            assert creature.name.startswith("ref ")
            assert creature == again.choices[0].message.parsed
            assert creature != other.choices[0].message.parsed
            assert first.usage is not None
            content = first.choices[0].message.content or ""
            assert first.usage.completion_tokens == count_tokens(content)

    @on_virtual_time
    async def test_a_recursive_model_with_exclusive_bounds_and_a_step(
        self, sim: SimFactory
    ) -> None:
        async with sim(time_scale=100, answer_tokens=8) as (_, client):
            reply = await client.chat.completions.parse(
                model="m", response_format=Node,
                messages=[{"role": "user", "content": "A tree?"}],
            )  # fmt: skip
            node = reply.choices[0].message.parsed
            assert isinstance(node, Node)
            assert node.weight % 5 == 0

    @on_virtual_time
    async def test_the_strings_share_the_answer_length(self, sim: SimFactory) -> None:
        """A structured answer is about as long as a plain one ({{tokens=N}} applies)."""
        async with sim(time_scale=100) as (_, client):
            reply = await client.chat.completions.parse(
                model="m", response_format=Weather,
                messages=[{"role": "user", "content": "Weather in Oslo? {{tokens=40}}"}],
            )  # fmt: skip
            weather = reply.choices[0].message.parsed
            assert weather is not None
            assert count_tokens(weather.city) == 40
            # A default 200-token answer: one string gets at most 50 of them.
            reply = await client.chat.completions.parse(
                model="m", response_format=Weather,
                messages=[{"role": "user", "content": "Weather in Oslo?"}],
            )  # fmt: skip
            capped = reply.choices[0].message.parsed
            assert capped is not None
            assert count_tokens(capped.city) == 50

    @on_virtual_time
    async def test_fanouts_merged_json_still_answers_each_question_in_its_place(
        self, sim: SimFactory
    ) -> None:
        """One string property per marked question: each answer fills its own place."""
        schema = {"type": "object", "additionalProperties": False, "required": ["a-1", "a-2"],
                  "properties": {"a-1": {"type": "string"}, "a-2": {"type": "string"}}}  # fmt: skip
        async with sim(time_scale=100, answer_tokens=5) as (_, client):
            reply = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": "Answer each.\n[a-1] What is A?\n[a-2] B?"}],
                response_format={"type": "json_schema",
                                 "json_schema": {"name": "answers", "schema": schema}},
            )  # fmt: skip
            data = json.loads(reply.choices[0].message.content or "")
            assert data == {"a-1": answer_for("What is A?", 5), "a-2": answer_for("B?", 5)}

    @on_virtual_time
    async def test_json_schema_streamed_adds_up_to_the_same_json(self, sim: SimFactory) -> None:
        """The SDK's stream helper gets the JSON token by token and parses it at the end."""
        async with sim(time_scale=100, answer_tokens=12) as (_, client):
            ask: Any = [{"role": "user", "content": "Describe a spider."}]
            whole = await client.chat.completions.parse(
                model="m", messages=ask, response_format=Creature
            )
            async with client.chat.completions.stream(
                model="m", messages=ask, response_format=Creature
            ) as stream:
                deltas = [e async for e in stream if e.type == "content.delta"]
                final = await stream.get_final_completion()
            assert len(deltas) > 10
            assert final.choices[0].message.parsed == whole.choices[0].message.parsed


class TestJsonObject:
    @on_virtual_time
    async def test_the_schema_the_prompt_shows_is_followed(self, sim: SimFactory) -> None:
        schema = json.dumps(Weather.model_json_schema())
        async with sim(time_scale=100) as (_, client):
            reply = await client.chat.completions.create(
                model="m", response_format={"type": "json_object"},
                messages=[{"role": "system", "content": f"Reply in JSON matching:\n{schema}"},
                          {"role": "user", "content": "Weather in Oslo?"}],
            )  # fmt: skip
            Weather.model_validate_json(reply.choices[0].message.content or "")

    @on_virtual_time
    async def test_without_a_schema_the_answer_is_a_json_object(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=6) as (_, client):
            reply = await client.chat.completions.create(
                model="m", response_format={"type": "json_object"},
                messages=[{"role": "user", "content": "What is X?"}],
            )  # fmt: skip
            assert json.loads(reply.choices[0].message.content or "") == {
                "answer": answer_for("What is X?", 6)
            }


class TestTools:
    @on_virtual_time
    async def test_the_named_tool_is_called_with_arguments_that_fit(self, sim: SimFactory) -> None:
        async with sim(time_scale=100) as (_, client):
            reply = await client.chat.completions.create(
                model="m", tools=TOOLS,
                tool_choice={"type": "function", "function": {"name": "get_weather"}},
                messages=[{"role": "user", "content": "Is it warm in Oslo?"}],
            )  # fmt: skip
            choice = reply.choices[0]
            assert choice.finish_reason == "tool_calls"
            assert choice.message.content is None
            calls = choice.message.tool_calls or []
            assert len(calls) == 1
            call: Any = calls[0]
            assert call.function.name == "get_weather"
            assert call.id.startswith("call_")
            Weather.model_validate_json(call.function.arguments)
            assert reply.usage is not None
            assert reply.usage.completion_tokens == count_tokens(call.function.arguments)

    @on_virtual_time
    async def test_auto_calls_the_tool_the_question_names_then_answers_its_result(
        self, sim: SimFactory
    ) -> None:
        """auto: the tool whose name the question mentions (else the first); once the
        tool's result is in the conversation, a text answer."""
        async with sim(time_scale=100, answer_tokens=5) as (_, client):
            ask: list[Any] = [{"role": "user", "content": "Call get_weather for Oslo."}]
            first = await client.chat.completions.create(model="m", tools=TOOLS, messages=ask)
            call: Any = (first.choices[0].message.tool_calls or [])[0]
            assert call.function.name == "get_weather"
            plain = await client.chat.completions.create(
                model="m",
                tools=TOOLS,
                messages=[{"role": "user", "content": "Hello?"}],
            )
            other: Any = (plain.choices[0].message.tool_calls or [])[0]
            assert other.function.name == "get_time"
            ask += [first.choices[0].message.model_dump(exclude_none=True),
                    {"role": "tool", "tool_call_id": call.id, "content": "12 degrees"}]  # fmt: skip
            second = await client.chat.completions.create(model="m", tools=TOOLS, messages=ask)
            assert second.choices[0].finish_reason == "stop"
            assert second.choices[0].message.content == answer_for("Call get_weather for Oslo.", 5)

    @on_virtual_time
    async def test_tool_choice_none_gets_text(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=5) as (_, client):
            reply = await client.chat.completions.create(
                model="m", tools=TOOLS, tool_choice="none",
                messages=[{"role": "user", "content": "What is X?"}],
            )  # fmt: skip
            assert reply.choices[0].message.content == answer_for("What is X?", 5)
            assert not reply.choices[0].message.tool_calls

    @on_virtual_time
    async def test_a_streamed_tool_call_adds_up_to_the_same_call(self, sim: SimFactory) -> None:
        async with sim(time_scale=100) as (_, client):
            params: Any = {"model": "m", "tools": TOOLS,
                           "messages": [{"role": "user", "content": "Weather: get_weather?"}]}  # fmt: skip
            whole = await client.chat.completions.create(**params)
            async with client.chat.completions.stream(**params) as stream:
                pieces = [
                    e async for e in stream if e.type == "tool_calls.function.arguments.delta"
                ]
                final = await stream.get_final_completion()
            streamed: Any = (final.choices[0].message.tool_calls or [])[0]
            expected: Any = (whole.choices[0].message.tool_calls or [])[0]
            assert len(pieces) > 3
            assert streamed.function.arguments == expected.function.arguments
            assert streamed.id == expected.id
            assert final.choices[0].finish_reason == "tool_calls"

    @on_virtual_time
    async def test_the_older_functions_parameter_gets_a_function_call(
        self, sim: SimFactory
    ) -> None:
        fn: Any = {"name": "get_time", "parameters": Time.model_json_schema()}
        async with sim(time_scale=100) as (_, client):
            reply = await client.chat.completions.create(
                model="m", functions=[fn], function_call={"name": "get_time"},
                messages=[{"role": "user", "content": "What time is it?"}],
            )  # fmt: skip
            choice = reply.choices[0]
            assert choice.finish_reason == "function_call"
            assert choice.message.function_call is not None
            Time.model_validate_json(choice.message.function_call.arguments)


@pytest.mark.parametrize(
    "mode", [instructor.Mode.TOOLS, instructor.Mode.JSON, instructor.Mode.JSON_SCHEMA]
)
@on_virtual_time
async def test_instructor_on_a_wrapped_client_gets_its_response_model(
    sim: SimFactory, mode: instructor.Mode
) -> None:
    """instructor.from_openai(fanout.wrap(client), mode=...) with a pydantic
    response_model: a valid instance, at the first attempt, the same for the same
    question."""
    async with sim(time_scale=100, answer_tokens=10) as (server, client):
        patched = instructor.from_openai(fanout.wrap(client), mode=mode)
        ask: Any = [{"role": "user", "content": "Describe a spider."}]
        creature = await patched.chat.completions.create(
            model="m", response_model=Creature, messages=ask, max_retries=0
        )
        again = await patched.chat.completions.create(
            model="m", response_model=Creature, messages=ask, max_retries=0
        )
        assert isinstance(creature, Creature)
        assert creature.model_dump() == again.model_dump()  # (each carries its raw response)
        assert len(server.stats.requests) == 2


@on_virtual_time
async def test_instructor_streams_a_partial_model(sim: SimFactory) -> None:
    """create_partial (TOOLS mode, streamed tool arguments): the model fills in piece by
    piece and ends whole."""
    async with sim(time_scale=100, answer_tokens=10) as (_, client):
        patched = instructor.from_openai(fanout.wrap(client), mode=instructor.Mode.TOOLS)
        ask: Any = [{"role": "user", "content": "Weather in Oslo?"}]
        partials = [p.model_dump() async for p in patched.chat.completions.create_partial(
            model="m", response_model=Weather, messages=ask, max_retries=0)]  # fmt: skip
        assert len(partials) > 3
        assert partials[0] != partials[-1]
        Weather.model_validate(partials[-1])
