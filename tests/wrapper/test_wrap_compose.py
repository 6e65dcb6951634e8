"""fanout.wrap(client) composes with what people already put on their client."""

from __future__ import annotations

from typing import cast

import instructor
import openai
import pytest
from langchain_openai import ChatOpenAI

import fanout
from fanout.sim import answer_for

from .._virtual import on_virtual_time
from ..conftest import SimFactory

TWO = "1. What is the capital of France?\n2. How many legs does a spider have?"


def _expected(text: str, tokens: int) -> str:
    d = fanout.detect(text)
    return d.layout([answer_for(d.group_prompt(g), tokens) for g in d.groups])


class TestWrappedClientIsTheClientsOwnClass:
    @on_virtual_time
    async def test_isinstance_holds_and_the_users_client_is_untouched(
        self, sim: SimFactory
    ) -> None:
        """The wrapped client is an AsyncOpenAI; the user's own client keeps the SDK's chat."""
        async with sim() as (_, client):
            sdk_completions = client.chat.completions
            wrapped = fanout.wrap(client)
            assert isinstance(wrapped, openai.AsyncOpenAI)
            assert isinstance(wrapped, fanout.wrapper.FanoutClient)
            assert type(client) is openai.AsyncOpenAI
            assert client.chat.completions is sdk_completions
            assert wrapped.chat.completions is not sdk_completions
            assert fanout.wrap(wrapped).client is client  # wrapping twice wraps once

    @on_virtual_time
    async def test_with_options_returns_a_wrapped_copy_sharing_the_limits(
        self, sim: SimFactory
    ) -> None:
        """with_options() keeps fan-out and the same limiter; the options reach the copy."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            other = wrapped.with_options(timeout=12.5)
            assert isinstance(other, openai.AsyncOpenAI)
            assert isinstance(other, fanout.wrapper.FanoutClient)
            assert other.timeout == 12.5
            shares = cast("fanout.wrapper.FanoutClient", other).fanout.limiter
            assert shares is cast("fanout.wrapper.FanoutClient", wrapped).fanout.limiter
            resp = await other.chat.completions.create(
                model="m", messages=[{"role": "user", "content": TWO}]
            )
            assert len(server.stats.requests) == 2
            assert resp.choices[0].message.content == _expected(TWO, 4)


class TestComposesWithLibraries:
    @on_virtual_time
    async def test_instructor_accepts_the_wrapped_client_and_calls_go_through_fanout(
        self, sim: SimFactory
    ) -> None:
        """instructor.from_openai(fanout.wrap(client)) works; a multi-question call fans out."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            patched = instructor.from_openai(fanout.wrap(client))
            resp = await patched.chat.completions.create(
                model="m", response_model=None, messages=[{"role": "user", "content": TWO}]
            )
            assert len(server.stats.requests) == 2
            assert resp.choices[0].message.content == _expected(TWO, 4)

    @on_virtual_time
    async def test_langchain_chat_openai_takes_the_wrapped_completions(
        self, sim: SimFactory
    ) -> None:
        """ChatOpenAI(async_client=wrapped.chat.completions).ainvoke fans a list out."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            llm = ChatOpenAI(model="m", api_key=lambda: "sim-key", base_url=server.base_url,
                             async_client=wrapped.chat.completions, max_retries=0)  # fmt: skip
            message = await llm.ainvoke(TWO)
            assert len(server.stats.requests) == 2
            assert message.content == _expected(TWO, 4)

    @on_virtual_time
    async def test_a_single_question_through_langchain_passes_straight_through(
        self, sim: SimFactory
    ) -> None:
        """One question: LangChain gets the endpoint's own raw response, headers included."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            llm = ChatOpenAI(model="m", api_key=lambda: "sim-key", base_url=server.base_url,
                             async_client=wrapped.chat.completions, max_retries=0,
                             include_response_headers=True)  # fmt: skip
            message = await llm.ainvoke("What is the capital of France?")
            assert len(server.stats.requests) == 1
            assert message.content == answer_for("What is the capital of France?", 4)
            assert "x-request-id" in message.response_metadata["headers"]


@pytest.fixture(autouse=True)
def _no_langsmith(monkeypatch: pytest.MonkeyPatch) -> None:
    """LangChain must not try to trace to its hosted service from the tests."""
    monkeypatch.setenv("LANGCHAIN_TRACING_V2", "false")
    monkeypatch.setenv("LANGSMITH_TRACING", "false")
