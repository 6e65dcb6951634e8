"""The simulator speaks the OpenAI API: shapes, streaming, merged prompts, limits, faults."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING

import httpx
import openai
import pytest

from fanout.limits import parse_duration
from fanout.sim import answer_for, count_tokens, go_duration

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

    from fanout.testing import SimHandle

    from ..conftest import SimFactory

MSG: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What is a token?"}]


class TestShapes:
    async def test_completion_has_openai_shape_and_consistent_usage(self, sim: SimFactory) -> None:
        """usage.completion_tokens equals the tokens in the content; finish_reason is stop."""
        async with sim(time_scale=100, answer_tokens=37) as (_, client):
            r = await client.chat.completions.create(model="sim-1", messages=MSG)
            content = r.choices[0].message.content
            assert content == answer_for("What is a token?", 37)
            assert r.usage is not None
            assert r.usage.completion_tokens == count_tokens(content) == 37
            assert r.usage.total_tokens == r.usage.prompt_tokens + 37
            assert r.choices[0].finish_reason == "stop"
            assert r.object == "chat.completion"

    async def test_max_tokens_truncates_with_finish_reason_length(self, sim: SimFactory) -> None:
        """An answer longer than max_tokens is cut to exactly max_tokens tokens."""
        async with sim(time_scale=100, answer_tokens=50) as (_, client):
            r = await client.chat.completions.create(model="m", messages=MSG, max_tokens=10)
            assert r.choices[0].finish_reason == "length"
            assert r.usage is not None
            assert r.usage.completion_tokens == 10
            assert count_tokens(r.choices[0].message.content or "") == 10

    @pytest.mark.fanout_sim(model="my-sim")
    async def test_models_endpoint_lists_the_model(self, fanout_sim: SimHandle) -> None:
        """GET /v1/models answers in the SDK's list shape."""
        models = await fanout_sim.client.models.list()
        assert [m.id for m in models.data] == ["my-sim"]

    async def test_a_base_url_without_v1_gets_a_404_as_real_servers_give(
        self, sim: SimFactory
    ) -> None:
        """The API is under /v1 (as on vLLM, Ollama and the hosted APIs): a client whose
        base URL leaves it out gets a 404 that says so (the simulator answered it, and
        the same client then failed against a real server)."""
        async with sim(time_scale=100) as (server, client):
            bare = client.with_options(base_url=server.base_url.removesuffix("/v1"), max_retries=0)
            with pytest.raises(openai.NotFoundError, match="under /v1"):
                await bare.chat.completions.create(model="m", messages=MSG)
            with pytest.raises(openai.NotFoundError, match="under /v1"):
                await bare.responses.create(model="m", input="hi")
            with pytest.raises(openai.NotFoundError, match="under /v1"):
                await bare.models.list()
            assert (await client.chat.completions.create(model="m", messages=MSG)).choices

    async def test_unknown_parameter_is_refused_and_recorded(self, sim: SimFactory) -> None:
        """A parameter the API does not know gets 400, and the stats name it."""
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(openai.BadRequestError, match="fanout"):
                await client.chat.completions.create(
                    model="m",
                    messages=MSG,
                    extra_body={"fanout": "split"},
                )
            assert server.stats.unknown_params["fanout"] == 1

    async def test_stats_endpoint_reports_each_request(self, sim: SimFactory) -> None:
        """GET /sim/stats lists arrival, admission, first token, finish and tokens."""
        async with sim(time_scale=100, answer_tokens=5) as (server, client):
            await client.chat.completions.create(model="m", messages=MSG)
            async with httpx.AsyncClient() as http:
                stats = (await http.get(f"http://127.0.0.1:{server.port}/sim/stats")).json()
            (req,) = stats["requests"]
            assert req["status"] == 200
            assert req["completion_tokens"] == 5
            assert req["arrival"] <= req["admitted"] <= req["first_token"] <= req["finished"]
            assert stats["peak_running"] == 1


class TestStreaming:
    async def test_stream_delivers_tokens_then_a_usage_chunk(self, sim: SimFactory) -> None:
        """stream=True: content arrives in several chunks and a final usage chunk follows."""
        async with sim(time_scale=50, answer_tokens=20) as (_, client):
            stream = await client.chat.completions.create(
                model="m",
                messages=MSG,
                stream=True,
                stream_options={"include_usage": True},
            )
            pieces: list[str] = []
            usage = None
            finish = None
            async for chunk in stream:
                if chunk.usage is not None:
                    usage = chunk.usage
                for choice in chunk.choices:
                    pieces.append(choice.delta.content or "")
                    finish = choice.finish_reason or finish
            assert "".join(pieces) == answer_for("What is a token?", 20)
            assert len([p for p in pieces if p]) > 5
            assert usage is not None
            assert usage.completion_tokens == 20
            assert finish == "stop"


class TestMergedPrompts:
    PROMPT = (
        "Answer each question separately.\n1. What is A?\n2. What is B? {{tokens=7}}\n3. What is C?"
    )

    async def test_numbered_sections_answer_every_question(self, sim: SimFactory) -> None:
        """Without response_format the answers come back as numbered sections."""
        async with sim(time_scale=100, answer_tokens=12) as (_, client):
            r = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": self.PROMPT}]
            )
            content = r.choices[0].message.content or ""
            assert content == "\n\n".join(
                [
                    "1. " + answer_for("What is A?", 12),
                    "2. " + answer_for("What is B? {{tokens=7}}", 7),
                    "3. " + answer_for("What is C?", 12),
                ]
            )
            assert r.usage is not None
            assert r.usage.completion_tokens == count_tokens(content)

    async def test_an_end_line_the_prompt_asks_for_closes_the_sections(
        self, sim: SimFactory
    ) -> None:
        """'end the reply with the line [x-end]' is followed, like an instructed model would."""
        prompt = "Answer each; end the reply with the line [ab12-end].\n[ab12-1] A?\n[ab12-2] B?"
        async with sim(time_scale=100, answer_tokens=3) as (_, client):
            r = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": prompt}]
            )
        content = r.choices[0].message.content or ""
        assert (
            content
            == f"[ab12-1] {answer_for('A?', 3)}\n\n[ab12-2] {answer_for('B?', 3)}\n[ab12-end]"
        )

    async def test_json_schema_is_filled_in_property_order(self, sim: SimFactory) -> None:
        """With a json_schema response_format the reply is JSON matching it."""
        schema = {
            "type": "object",
            "properties": {
                "q1": {"type": "string"},
                "q2": {"type": "string"},
                "q3": {"type": "string"},
            },
            "required": ["q1", "q2", "q3"],
            "additionalProperties": False,
        }
        async with sim(time_scale=100, answer_tokens=12) as (_, client):
            r = await client.chat.completions.create(
                model="m",
                messages=[{"role": "user", "content": self.PROMPT}],
                response_format={
                    "type": "json_schema",
                    "json_schema": {"name": "a", "schema": schema},
                },
            )
            data = json.loads(r.choices[0].message.content or "")
            assert data == {
                "q1": answer_for("What is A?", 12),
                "q2": answer_for("What is B? {{tokens=7}}", 7),
                "q3": answer_for("What is C?", 12),
            }


class TestRateLimits:
    async def test_headers_parse_and_count_down(self, sim: SimFactory) -> None:
        """x-ratelimit-* are present, parse (Go durations) and remaining falls per request."""
        async with sim(time_scale=1, answer_tokens=1, rpm=100, tpm=100_000, rtt_s=0) as (_, client):
            remaining = []
            for _ in range(3):
                raw = await client.chat.completions.with_raw_response.create(
                    model="m", messages=MSG
                )
                h = raw.headers
                assert h["x-ratelimit-limit-requests"] == "100"
                assert h["x-ratelimit-limit-tokens"] == "100000"
                for name in ("x-ratelimit-reset-requests", "x-ratelimit-reset-tokens"):
                    assert parse_duration(h[name]) is not None, h[name]
                remaining.append(int(h["x-ratelimit-remaining-requests"]))
                assert int(h["x-ratelimit-remaining-tokens"]) < 100_000
            assert remaining[0] > remaining[1] > remaining[2]

    async def test_over_the_limit_gets_429_with_retry_after(self, sim: SimFactory) -> None:
        """Past the RPM budget: 429 rate_limit_exceeded with retry-after and retry-after-ms."""
        async with sim(time_scale=1, answer_tokens=1, rpm=2, rtt_s=0) as (server, client):
            bare = client.with_options(max_retries=0)
            await bare.chat.completions.create(model="m", messages=MSG)
            await bare.chat.completions.create(model="m", messages=MSG)
            with pytest.raises(openai.RateLimitError) as info:
                await bare.chat.completions.create(model="m", messages=MSG)
            err = info.value
            assert err.code == "rate_limit_exceeded"
            assert float(err.response.headers["retry-after"]) >= 1
            assert 20_000 <= float(err.response.headers["retry-after-ms"]) <= 30_000
            assert server.stats.rate_limited == 1

    async def test_token_limit_charges_max_tokens(self, sim: SimFactory) -> None:
        """TPM charges prompt + max_tokens x n at admission."""
        async with sim(time_scale=1, answer_tokens=1, tpm=1000, rtt_s=0) as (_, client):
            bare = client.with_options(max_retries=0)
            await bare.chat.completions.create(model="m", messages=MSG, max_tokens=900)
            with pytest.raises(openai.RateLimitError):
                await bare.chat.completions.create(model="m", messages=MSG, max_tokens=900)

    async def test_spent_quota_answers_insufficient_quota(self, sim: SimFactory) -> None:
        """After quota_tokens are used, every request gets 429 insufficient_quota."""
        async with sim(time_scale=100, answer_tokens=50, quota_tokens=60) as (server, client):
            bare = client.with_options(max_retries=0)
            await bare.chat.completions.create(model="m", messages=MSG)
            with pytest.raises(openai.RateLimitError) as info:
                await bare.chat.completions.create(model="m", messages=MSG)
            assert info.value.code == "insufficient_quota"
            assert server.stats.quota_exceeded == 1

    def test_go_durations_round_trip(self) -> None:
        """The sim's duration format parses back to the same seconds."""
        for seconds in (0.012, 0.5, 1.0, 59.25, 90.0, 360.0, 3725.5):
            text = go_duration(seconds)
            parsed = parse_duration(text)
            assert parsed is not None
            assert abs(parsed - seconds) < 0.001 + seconds * 0.001, (seconds, text)
        assert go_duration(360) == "6m0s"
        assert parse_duration("1m30s") == 90


class TestFaults:
    @pytest.mark.parametrize(
        ("kind", "error"),
        [
            ("500", openai.InternalServerError),
            ("502", openai.InternalServerError),
            ("503", openai.InternalServerError),
            ("408", openai.APIStatusError),
            ("reset", openai.APIConnectionError),
            ("hang", openai.APITimeoutError),
            ("malformed", json.JSONDecodeError),
            ("stream_cut", openai.APIConnectionError),
        ],
    )
    async def test_each_fault_reaches_the_sdk_as_the_matching_error(
        self, sim: SimFactory, kind: str, error: type[Exception]
    ) -> None:
        """A scheduled fault on request 1 makes the SDK raise its matching exception."""
        async with sim(time_scale=100, fault_schedule={1: kind}, timeout=1.0) as (server, client):
            bare = client.with_options(max_retries=0)
            with pytest.raises(error) as info:
                await bare.chat.completions.create(model="m", messages=MSG)
            if kind == "408":
                assert isinstance(info.value, openai.APIStatusError)
                assert info.value.status_code == 408
            assert server.stats.faults[kind] == 1
            # The next request is fine.
            r = await bare.chat.completions.create(model="m", messages=MSG)
            assert r.choices[0].message.content

    async def test_a_cut_stream_ends_without_done(self, sim: SimFactory) -> None:
        """stream_cut closes an SSE stream half-way; the SDK sees a broken stream."""
        async with sim(time_scale=100, fault_schedule={1: "stream_cut"}, answer_tokens=40) as (
            _,
            client,
        ):
            bare = client.with_options(max_retries=0)
            stream = await bare.chat.completions.create(model="m", messages=MSG, stream=True)
            got = ""
            failure: BaseException | None = None
            try:
                async for chunk in stream:
                    for choice in chunk.choices:
                        got += choice.delta.content or ""
            except Exception as exc:  # the transport's "incomplete chunked read"
                failure = exc
            assert failure is not None, f"stream finished although it was cut: {got!r}"
            assert 0 < count_tokens(got) < 40

    async def test_fault_rates_are_seeded_and_roughly_honoured(self, sim: SimFactory) -> None:
        """A 20 % 500-rate over 200 requests injects about 40 faults."""
        async with sim(time_scale=1000, answer_tokens=1, fault_rates={"500": 0.2}, seed=7) as (
            server,
            client,
        ):
            bare = client.with_options(max_retries=0)

            async def one() -> bool:
                try:
                    await bare.chat.completions.create(model="m", messages=MSG)
                except openai.InternalServerError:
                    return False
                return True

            results = await asyncio.gather(*[one() for _ in range(200)])
            failures = results.count(False)
            assert failures == server.stats.faults["500"]
            assert 20 <= failures <= 60


class TestApiKey:
    @pytest.mark.fanout_sim(time_scale=100, api_key="sk-right-key-1234")
    async def test_a_wrong_key_gets_the_hosted_apis_401(self, fanout_sim: SimHandle) -> None:
        """With SimConfig(api_key=...), another key gets 401 invalid_api_key in the
        OpenAI error body, without the key in clear; the right key is served."""
        server, right = fanout_sim
        wrong = right.with_options(api_key="sk-wrong-key-9876", max_retries=0)
        with pytest.raises(openai.AuthenticationError) as info:
            await wrong.chat.completions.create(model="m", messages=MSG)
        assert info.value.status_code == 401
        assert info.value.code == "invalid_api_key"
        assert info.value.type == "invalid_request_error"
        assert "Incorrect API key provided: sk-**********9876." in info.value.message
        assert "wrong-key" not in info.value.message
        async with httpx.AsyncClient() as http:
            raw = await http.get(f"{server.base_url}/models")
        assert raw.status_code == 401
        assert set(raw.json()) == {"error"}
        assert set(raw.json()["error"]) == {"message", "type", "param", "code"}
        r = await right.chat.completions.create(model="m", messages=MSG)
        assert r.choices[0].message.content
        assert [m.id for m in (await right.models.list()).data] == ["sim-1"]
        assert [rec.status for rec in server.stats.requests] == [401, 200]

    @pytest.mark.fanout_sim(time_scale=100, api_key="right")
    async def test_fanout_does_not_retry_a_wrong_key(self, fanout_sim: SimHandle) -> None:
        """What a user trying a wrong key sees through fanout: one request, an error
        caused by the SDK's AuthenticationError, no retry."""
        import fanout

        client = fanout_sim.client.with_options(api_key="wrong")
        answers = await fanout.ask_many(["a?"], client=client, model="m", on_error="return")
        assert isinstance(answers[0].error, fanout.QuestionError)
        assert isinstance(answers[0].error.__cause__, openai.AuthenticationError)
        assert answers[0].attempts == 1
        assert len(fanout_sim.stats.requests) == 1

    def test_an_empty_key_is_refused(self) -> None:
        """SimConfig(api_key="") is a configuration error, not "accept nothing"."""
        from fanout.sim import SimConfig

        with pytest.raises(ValueError, match="api_key"):
            SimConfig(api_key="")


async def test_client_disconnect_drops_the_sequence(sim: SimFactory) -> None:
    """A client that gives up frees its slot: nothing is left running on the server."""
    async with sim(time_scale=1, answer_tokens=2000) as (server, client):
        with pytest.raises(openai.APITimeoutError):
            await client.with_options(max_retries=0, timeout=0.5).chat.completions.create(
                model="m",
                messages=MSG,
            )
        for _ in range(50):
            if server.stats.in_flight == 0:
                break
            await asyncio.sleep(0.02)
        assert server.stats.in_flight == 0
        assert server._engine.running == 0
        assert server.stats.requests[0].disconnected


def test_the_sim_binds_loopback_only() -> None:
    """base_url points at 127.0.0.1."""
    from fanout.sim import SimServer

    assert SimServer().base_url.startswith("http://127.0.0.1:")
