"""The simulator's timing model: continuous batching, slots, KV capacity, time scale."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from fanout.sim import SimConfig
from fanout.sim._engine import Engine

from .._virtual import loop_time, on_virtual_time

if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from openai.types.chat import ChatCompletionMessageParam

    from ..conftest import SimFactory


async def _ask(client: AsyncOpenAI, text: str) -> str:
    r = await client.chat.completions.create(
        model="sim-1", messages=[{"role": "user", "content": text}]
    )
    content = r.choices[0].message.content
    assert content is not None
    return content


async def _one_long_and_five_short(client: AsyncOpenAI) -> tuple[float, float]:
    start = loop_time()
    await _ask(client, "One long answer {{tokens=1000}}")
    one = loop_time() - start
    start = loop_time()
    await asyncio.gather(*[_ask(client, f"Short answer {i} {{{{tokens=200}}}}") for i in range(5)])
    return one, loop_time() - start


class TestBatching:
    @on_virtual_time
    async def test_five_concurrent_200_token_answers_take_about_a_fifth_of_one_1000_token_answer(
        self, sim: SimFactory
    ) -> None:
        """Default settings: 5 x 200 tokens in parallel < 0.35 x one 1000-token answer."""
        async with sim(time_scale=10) as (server, client):
            one, five = await _one_long_and_five_short(client)
            assert five < 0.35 * one, (one, five)
            assert server.stats.peak_running == 5

    @on_virtual_time
    async def test_a_server_with_one_slot_does_not_batch(self, sim: SimFactory) -> None:
        """slots=1: 5 x 200 tokens take more than 0.8 x one 1000-token answer."""
        async with sim(time_scale=10, slots=1) as (server, client):
            one, five = await _one_long_and_five_short(client)
            assert five > 0.8 * one, (one, five)
            assert server.stats.peak_running == 1

    @on_virtual_time
    async def test_kv_capacity_limits_how_many_sequences_run_at_once(self, sim: SimFactory) -> None:
        """Each request reserves prompt + answer tokens; only 3 fit in 700 tokens."""
        async with sim(time_scale=100, kv_capacity_tokens=700, answer_tokens=200) as (
            server,
            client,
        ):
            await asyncio.gather(*[_ask(client, f"q{i}") for i in range(8)])
            assert server.stats.peak_running == 3
            assert server.stats.peak_kv_tokens <= 700
            assert server.stats.completions == 8

    @on_virtual_time
    async def test_time_scale_runs_the_model_faster(self, sim: SimFactory) -> None:
        """The same request at time_scale=20 takes a fraction of the time at 2."""
        timings = []
        for scale in (2, 20):
            async with sim(time_scale=scale) as (_, client):
                start = loop_time()
                await _ask(client, "q {{tokens=100}}")
                timings.append(loop_time() - start)
        assert timings[1] < 0.3 * timings[0], timings

    @on_virtual_time
    async def test_a_stream_keeps_model_time_when_the_loop_cannot_wake_every_step(
        self, sim: SimFactory
    ) -> None:
        """At time scale 1000 a decode step lasts 15 us of wall time, less than one turn
        of the event loop: a streamed 4000-token answer (in chunks of 16 tokens, the
        granularity a stream keeps however late the engine's loop wakes) takes about as
        long as the same answer not streamed."""
        async with sim(time_scale=1000, rtt_s=0.0, stream_chunk_tokens=16) as (_, client):
            messages: list[ChatCompletionMessageParam] = [
                {"role": "user", "content": "q {{tokens=4000}}"}
            ]
            await client.chat.completions.create(model="sim-1", messages=messages)
            start = loop_time()
            await client.chat.completions.create(model="sim-1", messages=messages)
            plain = loop_time() - start
            start = loop_time()
            stream = await client.chat.completions.create(
                model="sim-1", messages=messages, stream=True
            )
            tokens = 0
            async for chunk in stream:
                tokens += sum(len(c.delta.content or "") > 0 for c in chunk.choices)
            streamed = loop_time() - start
        assert tokens > 0
        assert streamed < 3 * plain, (plain, streamed)

    @on_virtual_time
    async def test_prefill_delays_the_first_token_in_proportion_to_the_prompt(
        self, sim: SimFactory
    ) -> None:
        """A 20,000-token prompt at 5,000 tokens/s adds about 4 model seconds."""
        async with sim(time_scale=20, rtt_s=0.0) as (server, client):
            await _ask(client, "short {{tokens=1}}")
            await _ask(client, "word " * 20_000 + "{{tokens=1}}")
            short, long = server.stats.requests
            assert short.first_token is not None
            assert long.first_token is not None
            short_ttft = short.first_token - short.arrival
            long_ttft = long.first_token - long.arrival
            assert long_ttft > short_ttft + 0.6 * (4.0 / 20), (short_ttft, long_ttft)

    @on_virtual_time
    async def test_a_streamed_first_token_takes_the_whole_round_trip(self, sim: SimFactory) -> None:
        """Over a network every chunk takes the way back, the first as much as the last:
        a 1 s round trip (time scale 20: 50 ms) comes before the first token, and the
        other 19 tokens follow at the decode speed (15 ms each: 0.75 ms)."""
        async with sim(time_scale=20, rtt_s=1.0) as (_, client):
            start = loop_time()
            stream = await client.chat.completions.create(
                model="sim-1", messages=[{"role": "user", "content": "q {{tokens=20}}"}],
                stream=True,
            )  # fmt: skip
            first = last = None
            async for chunk in stream:
                if any(c.delta.content for c in chunk.choices):
                    last = loop_time() - start
                    first = first if first is not None else last
        assert first is not None and last is not None
        assert first > 0.9 * 1.0 / 20, first
        assert last - first < 0.5 * 1.0 / 20, (first, last)  # not another half round trip

    @on_virtual_time
    async def test_a_prefix_cache_prefills_only_what_is_new(self, sim: SimFactory) -> None:
        """prefix_cache=True: the same long prompt again is not prefilled again, and
        usage says how many prompt tokens were cached; off, nothing is cached."""
        long = "word " * 20_000
        for enabled in (True, False):
            async with sim(time_scale=20, rtt_s=0.0, prefix_cache=enabled) as (server, client):
                usages = []
                for question in (long + "first? {{tokens=1}}", long + "second? {{tokens=1}}"):
                    r = await client.chat.completions.create(
                        model="sim-1", messages=[{"role": "user", "content": question}]
                    )
                    assert r.usage is not None and r.usage.prompt_tokens_details is not None
                    usages.append(r.usage)
                first, second = server.stats.requests
                assert first.first_token is not None and second.first_token is not None
                ttfts = [first.first_token - first.arrival, second.first_token - second.arrival]
                cached = usages[1].prompt_tokens_details
                assert cached is not None
                if enabled:
                    # 20,000 shared tokens; the ending differs after the shared word.
                    assert 20_000 <= (cached.cached_tokens or 0) < usages[1].prompt_tokens
                    assert ttfts[1] < 0.2 * ttfts[0], ttfts
                else:
                    assert cached.cached_tokens == 0
                    assert ttfts[1] > 0.6 * ttfts[0], ttfts

    @on_virtual_time
    async def test_requests_admitted_together_each_prefill_what_they_share(
        self, sim: SimFactory
    ) -> None:
        """The cache holds only work already done: two requests with the same long
        system prompt arriving together both prefill it; one after them reuses it."""
        system = "word " * 10_000

        async def ask(client: AsyncOpenAI, text: str) -> int:
            r = await client.chat.completions.create(model="sim-1", messages=[
                {"role": "system", "content": system}, {"role": "user", "content": text}])  # fmt: skip
            assert r.usage is not None and r.usage.prompt_tokens_details is not None
            return r.usage.prompt_tokens_details.cached_tokens or 0

        async with sim(time_scale=20, rtt_s=0.0, prefix_cache=True, answer_tokens=2) as (_, client):
            together = await asyncio.gather(ask(client, "first?"), ask(client, "second?"))
            later = await ask(client, "third?")
        assert list(together) == [0, 0]
        assert later >= 10_000


class TestStepArithmetic:
    def test_steps_within_inverts_duration(self) -> None:
        """The closed form for 'how many steps fit' agrees with the step sum."""
        for a, c in ((0.015, 0.0), (0.015, 2e-6), (0.001, 1e-3)):
            for k in (0, 1, 2, 10, 999):
                t = Engine._duration(k, a, c)
                assert Engine._steps_within(t, a, c) == k
                assert Engine._steps_within(t + a * 0.5, a, c) == k

    def test_config_rejects_nonsense(self) -> None:
        """Bad SimConfig values fail at construction, naming the field."""
        import pytest

        with pytest.raises(ValueError, match="slots"):
            SimConfig(slots=0)
        with pytest.raises(ValueError, match="unknown fault kind"):
            SimConfig(fault_rates={"boom": 0.1})
        with pytest.raises(ValueError, match="time_scale"):
            SimConfig(time_scale=0)
