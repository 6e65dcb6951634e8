"""The Responses API (issue 25, item 4): the simulator's ``POST /v1/responses``, whole and
streamed; ``ask_many(api="responses")``; and ``wrapped.responses.create`` splitting a
multi-question ``input``. Through the real SDK over HTTP."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import openai
import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

import fanout
from fanout.sim import answer_for, count_tokens

from .._virtual import on_virtual_time
from ..conftest import SimFactory

THREE = "1. What is A?\n2. What is B?\n3. What is C?"


def _expected(text: str, tokens: int) -> str:
    d = fanout.detect(text)
    return d.layout([answer_for(d.group_prompt(g), tokens) for g in d.groups])


class Weather(BaseModel):
    city: str
    days: int


class TestTheSimulatorsResponsesEndpoint:
    @on_virtual_time
    async def test_a_response_holds_the_answer_and_its_usage(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=6) as (server, client):
            response = await client.responses.create(
                model="m", input="What is X?", instructions="Be brief."
            )
            assert response.status == "completed"
            assert response.output_text == answer_for("What is X?", 6)
            assert response.usage is not None
            assert response.usage.output_tokens == 6
            assert response.usage.input_tokens == server.stats.requests[0].prompt_tokens
            assert server.stats.requests[0].api == "responses"

    @on_virtual_time
    async def test_max_output_tokens_makes_it_incomplete(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=20) as (_, client):
            response = await client.responses.create(model="m", input="Why?", max_output_tokens=4)
            assert response.status == "incomplete"
            assert response.incomplete_details is not None
            assert response.incomplete_details.reason == "max_output_tokens"
            assert count_tokens(response.output_text) == 4

    @on_virtual_time
    async def test_the_stream_is_the_responses_apis_events(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=8) as (_, client):
            whole = await client.responses.create(model="m", input="What is X?")
            stream = await client.responses.create(model="m", input="What is X?", stream=True)
            events: list[Any] = [event async for event in stream]
            kinds = [e.type for e in events]
            assert kinds[:4] == ["response.created", "response.in_progress",
                                 "response.output_item.added", "response.content_part.added"]  # fmt: skip
            assert kinds[-4:] == ["response.output_text.done", "response.content_part.done",
                                  "response.output_item.done", "response.completed"]  # fmt: skip
            deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
            assert len(deltas) == 8
            assert "".join(deltas) == whole.output_text
            assert [e.sequence_number for e in events] == list(range(len(events)))
            done: Any = events[-1]
            assert done.response.output_text == whole.output_text

    @on_virtual_time
    async def test_structured_output_and_tools(self, sim: SimFactory) -> None:
        """responses.parse(text_format=...) fills the model; a function tool is called
        with arguments that fit it, then its output gets a text answer."""
        async with sim(time_scale=100, answer_tokens=5) as (_, client):
            parsed = await client.responses.parse(model="m", input="Oslo?", text_format=Weather)
            assert isinstance(parsed.output_parsed, Weather)
            async with client.responses.stream(
                model="m", input="Oslo?", text_format=Weather
            ) as stream:
                final = await stream.get_final_response()
            assert final.output_parsed == parsed.output_parsed
            tool: Any = {"type": "function", "name": "get_weather",
                         "parameters": Weather.model_json_schema()}  # fmt: skip
            called = await client.responses.create(model="m", input="Oslo?", tools=[tool])
            call: Any = called.output[0]
            assert call.type == "function_call"
            assert call.name == "get_weather"
            Weather.model_validate_json(call.arguments)
            answered = await client.responses.create(
                model="m", tools=[tool],
                input=[{"role": "user", "content": "Oslo?"},
                       {"type": "function_call", "call_id": call.call_id, "name": call.name,
                        "arguments": call.arguments},
                       {"type": "function_call_output", "call_id": call.call_id,
                        "output": "12 degrees"}],
            )  # fmt: skip
            assert answered.output_text == answer_for("Oslo?", 5)

    @on_virtual_time
    async def test_an_unknown_parameter_is_refused(self, sim: SimFactory) -> None:
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(openai.BadRequestError, match="Unrecognized request argument"):
                await client.responses.create(model="m", input="Hi", extra_body={"bogus": 1})
            assert server.stats.unknown_params["bogus"] == 1


class TestAskManyThroughTheResponsesAPI:
    @pytest.mark.parametrize("policy", ["split", "merge"])
    @on_virtual_time
    async def test_the_answers_are_those_of_chat_completions(
        self, sim: SimFactory, policy: str
    ) -> None:
        questions = ["What is A?", "What is B?", "What is C?"]
        async with sim(time_scale=100, answer_tokens=6) as (server, client):
            chat = await fanout.ask_many(questions, client=client, model="m", policy=policy)
            server.reset_stats()
            answers = await fanout.ask_many(questions, client=client, model="m", policy=policy,
                                            api="responses", system="Be brief.")  # fmt: skip
            assert answers.texts == chat.texts
            assert {r.api for r in server.stats.requests} == {"responses"}
            assert answers.report.completion_tokens == sum(
                r.completion_tokens for r in server.stats.requests
            )
            assert len(server.stats.requests) == (3 if policy == "split" else 1)

    @on_virtual_time
    async def test_max_tokens_is_max_output_tokens_and_length_is_reported(
        self, sim: SimFactory
    ) -> None:
        async with sim(time_scale=100, answer_tokens=20) as (_, client):
            fo = fanout.Fanout(client, model="m", api="responses")
            answers = await fo.ask_many(["Why?"], max_tokens=3)
            assert answers[0].finish_reason == "length"
            assert count_tokens(answers[0].text or "") == 3

    @on_virtual_time
    async def test_a_chat_only_parameter_is_refused_before_anything_is_sent(
        self, sim: SimFactory
    ) -> None:
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(fanout.ConfigError, match="n= has no equivalent"):
                await fanout.ask_many(["x?"], client=client, model="m", api="responses", n=2)
            with pytest.raises(fanout.ConfigError, match="api must be"):
                await fanout.ask_many(["x?"], client=client, model="m", api="completions")
            assert server.stats.requests == []

    @on_virtual_time
    async def test_an_endpoint_without_structured_output_is_merged_with_tagged_text(
        self, sim: SimFactory
    ) -> None:
        async with sim(time_scale=100, answer_tokens=4, supports_response_format=False) as (
            server, client,
        ):  # fmt: skip
            answers = await fanout.ask_many(["a?", "b?", "c?"], client=client, model="m",
                                            policy="merge", api="responses")  # fmt: skip
            assert answers.texts == [answer_for(q, 4) for q in ("a?", "b?", "c?")]
            assert [r.status for r in server.stats.requests] == [400, 200]


class TestTheWrappedClientsResponses:
    @on_virtual_time
    async def test_a_multi_question_input_is_split(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=6) as (server, client):
            wrapped = fanout.wrap(client)
            response = await wrapped.responses.create(
                model="m", input=THREE, instructions="Be brief.", extra_body={"fanout": "split"}
            )
            assert response.output_text == _expected(THREE, 6)
            assert len(server.stats.requests) == 3
            assert {r.api for r in server.stats.requests} == {"responses"}
            report = fanout.report_of(response)
            assert report is not None
            assert report.requests == 3
            assert response.usage is not None
            assert response.usage.output_tokens == sum(
                r.completion_tokens for r in server.stats.requests
            )

    @on_virtual_time
    async def test_the_stream_is_events_with_the_first_part_live(self, sim: SimFactory) -> None:
        """Read step by step under asyncio.wait_for (each step in another task)."""
        async with sim(time_scale=100, answer_tokens=6) as (server, client):
            wrapped = fanout.wrap(client, limits=fanout.Limits(max_concurrency=2))
            items: Any = [{"role": "user", "content": [{"type": "input_text", "text": THREE}]}]
            stream: Any = await wrapped.responses.create(model="m", input=items, stream=True)
            events: list[Any] = []
            while True:
                try:
                    events.append(await asyncio.wait_for(stream.__anext__(), 5))
                except StopAsyncIteration:
                    break
            kinds = [e.type for e in events]
            assert kinds[0] == "response.created"
            assert kinds[-1] == "response.completed"
            deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
            assert deltas == _expected(THREE, 6)
            assert kinds.count("response.output_text.delta") > 6  # the first part token by token
            assert events[-1].response.output_text == deltas
            assert events[-1].response.usage.output_tokens == sum(
                r.completion_tokens for r in server.stats.requests
            )
            transport = wrapped.fanout._transport  # type: ignore[attr-defined]
            assert transport._slots.borrowed_tokens == 0

    @pytest.mark.parametrize(
        "extra",
        [
            {"input": "What is A?"},
            {"input": THREE, "text": {"format": {"type": "json_object"}}},
            {"input": THREE, "previous_response_id": "resp_1"},
            {"input": THREE, "tools": [{"type": "function", "name": "f", "parameters": {}}]},
        ],
        ids=["one-question", "structured", "previous-response", "tools"],
    )
    @on_virtual_time
    async def test_what_cannot_be_split_passes_through(
        self, sim: SimFactory, extra: dict[str, Any]
    ) -> None:
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            response = await fanout.wrap(client).responses.create(model="m", **extra)
            assert len(server.stats.requests) == 1
            assert not response.id.startswith("resp_fanout")
            assert fanout.report_of(response) is None

    @on_virtual_time
    async def test_langchain_with_the_responses_api(self, sim: SimFactory) -> None:
        """ChatOpenAI(use_responses_api=True) calls root_async_client.responses: split."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            llm = ChatOpenAI(model="m", api_key=lambda: "sim-key", base_url=server.base_url,
                             async_client=wrapped.chat.completions, root_async_client=wrapped,
                             use_responses_api=True, max_retries=0)  # fmt: skip
            message = await llm.ainvoke(THREE)
            assert message.text == _expected(THREE, 4)
            assert len(server.stats.requests) == 3


# wall clock: the job runs in another process (see tests/_virtual.py)
async def test_fanout_run_through_the_responses_api(sim: SimFactory, tmp_path: Path) -> None:
    """`fanout run --api responses`: every question answered, every request a response."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": f"q{i}?"}) + "\n" for i in range(6)))
    async with sim(time_scale=100, answer_tokens=3) as (server, _):
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "fanout", "run", str(src), str(dst), "--base-url",
            server.base_url, "--model", "m", "--api-key", "sim", "--api", "responses",
            "--no-progress", stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        _, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    records = [json.loads(line) for line in dst.read_text().splitlines()]
    assert sorted(r["answer"] for r in records) == sorted(answer_for(f"q{i}?", 3) for i in range(6))
    assert server.stats.requests
    assert {r.api for r in server.stats.requests} == {"responses"}


@pytest.fixture(autouse=True)
def _no_langsmith(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")


@on_virtual_time
async def test_a_responses_call_takes_the_responses_name_for_its_answer_cap(
    sim: SimFactory,
) -> None:
    """``api="responses", max_output_tokens=5`` caps each answer at 5 tokens (it said
    "did you mean 'max_tokens'?"); ``instructions=``, ``reasoning=``, and
    ``max_output_tokens=`` under Chat Completions, are one error naming fanout's name."""
    async with sim(time_scale=100, answer_tokens=20) as (server, client):
        answers = await fanout.ask_many(
            ["What is 2+2?", "Name a colour."], client=client, model="sim-1",
            api="responses", max_output_tokens=5, policy="split",
        )  # fmt: skip
        assert [a.usage.completion_tokens for a in answers] == [5, 5]
        assert [r.api for r in server.stats.requests] == ["responses"] * 2
        for kwargs, named in (
            ({"api": "responses", "instructions": "Be brief."}, "pass system="),
            ({"api": "responses", "reasoning": {"effort": "low"}}, "pass reasoning_effort="),
            ({"api": "chat", "max_output_tokens": 5}, "pass max_tokens="),
        ):
            with pytest.raises(fanout.ConfigError, match=named):
                await fanout.ask_many(["q?"], client=client, model="sim-1", **kwargs)
        with pytest.raises(fanout.ConfigError, match="both given"):
            await fanout.ask_many(["q?"], client=client, model="sim-1", api="responses",
                                  max_output_tokens=5, max_tokens=5)  # fmt: skip


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [("output_text", "text", None), ("output_text", "text", {"evil": 1}),
     ("refusal", "refusal", None)],
)  # fmt: skip
def test_a_responses_part_that_holds_no_string_is_an_unreadable_reply(
    kind: str, field: str, value: object
) -> None:
    """A text or refusal part whose value is not a string is a reply that cannot be read
    (retried, then the question's error), never its ``str()``: ``None`` became the
    answer "None" and ``{"evil": 1}`` the answer "{'evil': 1}"."""
    from fanout.engine.responses import completion_of
    from fanout.engine.retrying import UnreadableResponseError

    reply = {"object": "response", "status": "completed", "id": "r", "model": "m",
             "output": [{"type": "message", "content": [{"type": kind, field: value}]}]}  # fmt: skip
    with pytest.raises(UnreadableResponseError, match=field):
        completion_of(reply)


@on_virtual_time
async def test_a_question_s_own_parameter_the_responses_api_has_no_place_for_is_its_error(
    sim: SimFactory,
) -> None:
    """Under ``api="responses"``, a question whose own ``params`` hold ``n``, ``seed``,
    ``stop`` or ``logprobs`` fails with an error naming the parameter, before it is sent,
    as the call's own keyword arguments are refused; the other questions are answered.
    (They were dropped in silence: ``n=2`` gave one answer and no error.)"""
    async with sim(time_scale=100, answer_tokens=5) as (server, client):
        fo = fanout.Fanout(client, model="m", api="responses", memory=False, policy="split")
        questions = [fanout.Question(text="Q0?")] + [
            fanout.Question(text=f"Q{i}?", params={name: value})
            for i, (name, value) in enumerate(
                [("n", 2), ("seed", 7), ("stop", ["x"]), ("logprobs", True)], start=1
            )
        ]
        answers = await fo.ask_many(questions, on_error="return")
        sent = len(server.stats.requests)
    assert answers[0].ok and sent == 1
    for answer, name in zip(answers[1:], ["n", "seed", "stop", "logprobs"], strict=True):
        assert isinstance(answer.error, fanout.InvalidQuestionError), answer
        assert f"{name}= has no equivalent in the Responses API" in str(answer.error)
