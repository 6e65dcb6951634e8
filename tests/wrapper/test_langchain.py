"""LangChain's ChatOpenAI on a wrapped client, the setup docs/wrap.md gives, against the
simulator over real HTTP: ainvoke, abatch, astream and with_structured_output (issue 25,
items 1 and 2)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_openai import ChatOpenAI
from pydantic import BaseModel

import fanout
from fanout.sim import answer_for

from ..conftest import SimFactory

TWO = "1. What is the capital of France?\n2. How many legs does a spider have?"


class Spider(BaseModel):
    """What a spider is like."""

    name: str
    legs: int


def _expected(text: str, tokens: int) -> str:
    d = fanout.detect(text)
    return d.layout([answer_for(d.group_prompt(g), tokens) for g in d.groups])


def _chat(server: Any, client: Any, **options: Any) -> ChatOpenAI:
    """The documented setup (docs/wrap.md): both of LangChain's async clients are the
    wrapped one, and its sync client is given the wrapped client's endpoint and key."""
    wrapped = fanout.wrap(client)
    return ChatOpenAI(
        model="m",
        async_client=wrapped.chat.completions,
        root_async_client=wrapped,
        base_url=str(wrapped.base_url),
        api_key=wrapped.api_key,
        max_retries=0,
        **options,
    )


class TestChatOpenAIOnAWrappedClient:
    async def test_ainvoke_fans_a_list_out(self, sim: SimFactory) -> None:
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            message = await _chat(server, client).ainvoke(TWO)
            assert message.content == _expected(TWO, 4)
            assert len(server.stats.requests) == 2

    async def test_sync_invoke_goes_to_the_wrapped_client_s_endpoint(
        self, sim: SimFactory, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """``invoke`` (LangChain's sync client, which fanout does not wrap) with no
        OPENAI_API_KEY or OPENAI_BASE_URL set: one request to the wrapped client's
        endpoint, passed through whole (it failed for want of a key, and with one went
        to api.openai.com). Run from a thread: the simulator answers on this loop."""
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            llm = _chat(server, client)
            message = await asyncio.to_thread(llm.invoke, TWO)
            batch = await asyncio.to_thread(llm.batch, ["What is A?", "What is B?"])
            assert isinstance(message.content, str) and message.content
            assert all(isinstance(m.content, str) and m.content for m in batch)
            assert len(server.stats.requests) == 3  # unsplit: the sync client is not fanout's

    async def test_abatch_fans_each_prompt_out_under_one_set_of_limits(
        self, sim: SimFactory
    ) -> None:
        three = "1. What is A?\n2. What is B?\n3. What is C?"
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            messages = await _chat(server, client).abatch([TWO, three])
            assert [m.content for m in messages] == [_expected(TWO, 4), _expected(three, 4)]
            assert len(server.stats.requests) == 5

    async def test_astream_reads_every_part_with_usage(self, sim: SimFactory) -> None:
        """astream runs each step under asyncio.wait_for (another task each time): every
        part comes, in order, and the usage chunk sums every request's."""
        async with sim(time_scale=100, answer_tokens=6) as (server, client):
            llm = _chat(server, client, stream_usage=True)
            text = ""
            completion_tokens = 0
            async for chunk in llm.astream(TWO):
                text += str(chunk.content)
                if chunk.usage_metadata:
                    completion_tokens += chunk.usage_metadata["output_tokens"]
            assert text == _expected(TWO, 6)
            assert completion_tokens == sum(r.completion_tokens for r in server.stats.requests)
            assert len(server.stats.requests) == 2

    async def test_with_structured_output_answers_with_the_model(self, sim: SimFactory) -> None:
        """The json_schema method (LangChain's default) goes through
        root_async_client.chat.completions.with_raw_response.parse: one request, whose
        reply fits the schema, the same for the same question."""
        async with sim(time_scale=100) as (server, client):
            llm = _chat(server, client).with_structured_output(Spider)
            first = await llm.ainvoke("Describe a spider.")
            again = await llm.ainvoke("Describe a spider.")
            assert isinstance(first, Spider)
            assert first == again
            assert len(server.stats.requests) == 2

    async def test_with_structured_output_by_function_calling(self, sim: SimFactory) -> None:
        """method="function_calling": the simulator answers with a call of the tool."""
        async with sim(time_scale=100) as (server, client):
            llm = _chat(server, client).with_structured_output(Spider, method="function_calling")
            spider = await llm.ainvoke("Describe a spider.")
            assert isinstance(spider, Spider)

    # LangChain dumps the SDK's parsed stream events, whose `parsed` field is typed None:
    # pydantic warns (langchain-openai 1.7, openai 3.3); the values are right.
    @pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
    async def test_with_structured_output_streamed(self, sim: SimFactory) -> None:
        """astream on a structured model goes through root_async_client.beta.chat.completions.stream."""
        async with sim(time_scale=100) as (server, client):
            llm = _chat(server, client).with_structured_output(Spider)
            streamed = [part async for part in llm.astream("Describe a spider.")]
            whole = await llm.ainvoke("Describe a spider.")
            assert streamed
            assert streamed[-1] == whole


class TestTheWrappedClientsBetaNamespace:
    async def test_beta_chat_completions_create_fans_out(self, sim: SimFactory) -> None:
        """wrapped.beta.chat.completions is fanout's, as wrapped.chat.completions is."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            reply = await wrapped.beta.chat.completions.create(
                model="m", messages=[{"role": "user", "content": TWO}]
            )
            assert reply.choices[0].message.content == _expected(TWO, 4)
            assert len(server.stats.requests) == 2

    async def test_parse_passes_through_and_fills_the_model(self, sim: SimFactory) -> None:
        """parse (its own response_format: one answer in the caller's schema) passes
        straight through, on chat and on beta.chat, with .parsed filled."""
        async with sim(time_scale=100) as (server, client):
            wrapped = fanout.wrap(client)
            messages: Any = [{"role": "user", "content": TWO}]
            for completions in (wrapped.chat.completions, wrapped.beta.chat.completions):
                parsed = await completions.parse(
                    model="m", messages=messages, response_format=Spider
                )
                assert isinstance(parsed.choices[0].message.parsed, Spider)
            assert len(server.stats.requests) == 2


@pytest.fixture(autouse=True)
def _no_langsmith(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangChain must not try to trace to its hosted service from the tests."""
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
