"""fanout.wrap(client): a drop-in AsyncOpenAI that fans multi-question prompts out."""

from __future__ import annotations

from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion

import fanout
from fanout.sim import answer_for

from .._reply_server import Reply, Request, answer_to, as_json, good, serve_replies
from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory

FIVE = "\n".join(
    f"{i}. Explain topic number {i} in detail. {{{{tokens=200}}}}" for i in range(1, 6)
)


def _expected_layout(text: str, tokens: int) -> str:
    d = fanout.detect(text)
    return d.layout([answer_for(d.group_prompt(g), tokens) for g in d.groups])


async def ask_with_the_sdk(client: AsyncOpenAI, text: str) -> ChatCompletion:
    """Code written against AsyncOpenAI: it must type-check with a wrapped client too."""
    return await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": text}]
    )


class TestWrap:
    @on_virtual_time
    async def test_five_questions_come_back_as_one_completion_much_faster(
        self, sim: SimFactory
    ) -> None:
        """One ChatCompletion, five answers in order, much faster than the unwrapped call
        (five 200-token answers decoded together instead of one after the other: about
        3-5x here; 2.76x once on a clean-clone run, so the bound is 2x)."""
        async with sim(time_scale=10) as (server, client):
            start = loop_time()
            plain = await ask_with_the_sdk(client, FIVE)
            plain_s = loop_time() - start
            wrapped = fanout.wrap(client)
            server.reset_stats()
            start = loop_time()
            result = await ask_with_the_sdk(wrapped, FIVE)
            wrapped_s = loop_time() - start
            assert isinstance(result, ChatCompletion)
            assert len(result.choices) == 1
            assert result.choices[0].message.content == _expected_layout(FIVE, 200)
            assert [line[:2] for line in (result.choices[0].message.content or "").split("\n\n")] == [
                "1.", "2.", "3.", "4.", "5."
            ]  # fmt: skip
            assert len(server.stats.requests) == 5
            assert result.usage is not None
            assert result.usage.completion_tokens == sum(
                r.completion_tokens for r in server.stats.requests
            )
            details = result.usage.prompt_tokens_details
            assert details is not None
            assert details.cached_tokens == 0  # this simulator caches no prompts
            assert plain_s / wrapped_s >= 2.0, (plain_s, wrapped_s)
            report = fanout.report_of(result)
            assert report is not None
            assert report.answered == 5
            assert plain.choices[0].message.content  # the unwrapped call answered all five in one

    @on_virtual_time
    async def test_a_single_question_passes_straight_through(self, sim: SimFactory) -> None:
        """One question: exactly one request, and the server's own response."""
        async with sim(time_scale=100, answer_tokens=5) as (server, client):
            result = await ask_with_the_sdk(fanout.wrap(client), "What is the capital of France?")
            assert len(server.stats.requests) == 1
            assert not result.id.startswith("chatcmpl-fanout")
            assert fanout.report_of(result) is None
            assert result.choices[0].message.content == answer_for(
                "What is the capital of France?", 5
            )

    @on_virtual_time
    async def test_a_call_without_a_model_gets_the_sdk_s_error_split_or_not(
        self, sim: SimFactory
    ) -> None:
        """No ``model=``: the SDK's own TypeError, whether the prompt holds one question or
        several (several raised a bare KeyError: 'model'); nothing is sent."""
        async with sim(time_scale=100, answer_tokens=5) as (server, client):
            wrapped = fanout.wrap(client)
            said = []
            for prompt in ("What is A?", "1. What is A?\n2. What is B?"):
                with pytest.raises(TypeError) as info:
                    await wrapped.chat.completions.create(  # type: ignore[call-overload]
                        messages=[{"role": "user", "content": prompt}]
                    )
                said.append(str(info.value))
            assert said[0] == said[1] and "model" in said[0]
            assert server.stats.requests == []

    @on_virtual_time
    async def test_streaming_yields_the_answers_in_order(self, sim: SimFactory) -> None:
        """stream=True: the first answer streams in pieces, then the rest in order, then usage."""
        text = (
            "1. What is A? {{tokens=30}}\n2. What is B? {{tokens=5}}\n3. What is C? {{tokens=60}}"
        )
        async with sim(time_scale=20) as (server, client):
            wrapped = fanout.wrap(client)
            stream = await wrapped.chat.completions.create(
                model="m", messages=[{"role": "user", "content": text}], stream=True,
                stream_options={"include_usage": True},
            )  # fmt: skip
            pieces: list[str] = []
            usage = None
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    pieces.append(choice.delta.content or "")
            d = fanout.detect(text)
            tokens = [30, 5, 60]
            assert "".join(pieces) == d.layout(
                [answer_for(d.group_prompt(g), t) for g, t in zip(d.groups, tokens, strict=True)]
            )
            assert len([p for p in pieces if p]) > 10  # the first answer came token by token
            assert usage is not None
            assert usage.completion_tokens == sum(
                r.completion_tokens for r in server.stats.requests
            )

    @on_virtual_time
    async def test_the_fanout_keyword_is_consumed_not_sent(self, sim: SimFactory) -> None:
        """fanout= and extra_body={'fanout': ...} choose the policy and never reach the API."""
        text = "1. What is A?\n2. What is B?"
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            merged = await wrapped.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": text}],
                extra_body={"fanout": "merge"},
            )
            assert len(server.stats.requests) == 1
            assert server.stats.requests[0].questions == 2
            server.reset_stats()
            await wrapped.chat.completions.create(  # type: ignore[call-overload]
                model="m", messages=[{"role": "user", "content": text}], fanout="split"
            )
            assert len(server.stats.requests) == 2
            assert not server.stats.unknown_params
            assert merged.choices[0].message.content

    @on_virtual_time
    async def test_conversations_that_cannot_be_split_pass_through(self, sim: SimFactory) -> None:
        """Tools, a caller's response_format, or n > 1: one call, unchanged."""
        text = "1. What is A?\n2. What is B?"
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            await wrapped.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": text}],
                response_format={"type": "json_object"},
            )
            await wrapped.chat.completions.create(
                model="m", messages=[{"role": "user", "content": text}], n=2
            )
            assert len(server.stats.requests) == 2

    @on_virtual_time
    async def test_history_is_sent_with_every_part(self, sim: SimFactory) -> None:
        """Earlier messages (system, previous turns) go with each part."""
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            wrapped = fanout.wrap(client)
            await wrapped.chat.completions.create(
                model="m",
                messages=[
                    {"role": "system", "content": "You are terse. " * 20},
                    {"role": "user", "content": "Hi"},
                    {"role": "assistant", "content": "Hello"},
                    {"role": "user", "content": "1. What is A?\n2. What is B?"},
                ],
                extra_body={"fanout": "split"},
            )
            prompts = [r.prompt_tokens for r in server.stats.requests]
            assert len(prompts) == 2
            assert min(prompts) > 40  # the system prompt and the earlier turns came along

    @on_virtual_time
    async def test_the_wrapper_forwards_and_never_mutates(self, sim: SimFactory) -> None:
        """.client is the user's client; other attributes are forwarded; retries untouched."""
        async with sim() as (_, client):
            wrapped = fanout.wrap(client)
            assert isinstance(wrapped, fanout.wrapper.FanoutClient)
            assert wrapped.client is client
            assert wrapped.base_url == client.base_url
            models = await wrapped.models.list()
            assert [m.id for m in models.data] == ["sim-1"]
            assert client.max_retries == 2
            assert wrapped.chat.completions.with_raw_response is not None

    @on_virtual_time
    async def test_a_failed_part_raises_with_every_answer(self, sim: SimFactory) -> None:
        """If a part fails for good, the error carries the other answers."""
        async with sim(time_scale=100, answer_tokens=3, fault_rates={"500": 1.0}) as (_, client):
            wrapped = fanout.wrap(client, retry=fanout.Retry(max_attempts=1))
            with pytest.raises(fanout.PartialFailureError) as info:
                await ask_with_the_sdk(wrapped, "1. What is A?\n2. What is B?")
            assert len(info.value.answers) == 2


# --- streamed split prompts whose parts fail ---------------------------------------------
_SPLIT = {"fanout": "split"}


async def _read(stream: Any, into: list[str]) -> None:
    """Read a wrapped stream to its end (or its error), keeping the text it brought."""
    async for chunk in stream:
        into.extend(c.delta.content or "" for c in chunk.choices)


# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_a_streamed_split_prompt_whose_middle_part_fails_carries_every_part() -> None:
    """Three parts streamed through fanout.wrap, the second refused with a 400: the
    stream fails with PartialFailureError carrying all three answers in the prompt's
    order (the streamed first part's text included), the failed one at index 1 and
    named as question 1, as the same prompt unstreamed would."""

    def reply(request: Request) -> Reply:
        if request.question == "Explain Y.":
            return as_json({"error": {"message": "no", "type": "invalid_request_error"}}, 400)
        return good(request)

    prompt = "1. What is X?\n2. Explain Y.\n3. Who is Z?"
    with serve_replies(reply) as server:
        async with AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as raw:
            client = fanout.wrap(raw, memory=False, limits=fanout.Limits(rpm=60_000))
            stream = await client.chat.completions.create(
                model="m", stream=True, extra_body=_SPLIT,
                messages=[{"role": "user", "content": prompt}],
            )  # fmt: skip
            seen: list[str] = []
            with pytest.raises(fanout.PartialFailureError) as info:
                await _read(stream, seen)
    answers = info.value.answers
    assert [a.index for a in answers] == [0, 1, 2]
    assert [a.question for a in answers] == ["What is X?", "Explain Y.", "Who is Z?"]
    assert answers[0].text == answer_to("What is X?") == "".join(seen).removeprefix("1. ")
    assert answers[2].text == answer_to("Who is Z?")
    error: Any = answers[1].error
    assert isinstance(error, fanout.QuestionError) and error.index == 1
    assert str(error).startswith("question 1 ")
    assert "part 1:" in str(info.value)
    assert answers.report.questions == 3 and answers.report.failed == 1


@on_virtual_time
async def test_a_stream_cut_inside_the_live_part_is_a_fanout_error_naming_it() -> None:
    """The simulator cuts the live part's stream half-way (and whichever of the first
    two requests is the other part's, which is retried): its first words have gone to
    the caller, so it is not asked again; the stream fails with PartialFailureError,
    not the HTTP library's RemoteProtocolError, naming question 0, with the other
    part's answer in it."""
    from fanout.testing import open_sim

    messages: list[Any] = [{"role": "user", "content": "1. What is X?\n2. Who wrote Hamlet?"}]
    schedule = {1: "stream_cut", 2: "stream_cut"}
    async with open_sim(time_scale=20, answer_tokens=30, fault_schedule=schedule) as sim:
        client = fanout.wrap(sim.client, memory=False, limits=fanout.Limits(rpm=60_000))
        stream = await client.chat.completions.create(
            model=sim.model, messages=messages, stream=True, extra_body=_SPLIT
        )
        seen: list[str] = []
        with pytest.raises(fanout.PartialFailureError) as info:
            await _read(stream, seen)
    first, second = info.value.answers
    text = "".join(seen)
    assert text.startswith("1. ") and len(text) > 3  # the live part's first words came
    error: Any = first.error
    assert isinstance(error, fanout.QuestionError) and error.index == 0
    assert "question 0" in str(error) and "stream broke" in str(error)
    assert "RemoteProtocolError" in type(error.__cause__).__name__
    assert second.error is None and second.text and second.question == "Who wrote Hamlet?"
