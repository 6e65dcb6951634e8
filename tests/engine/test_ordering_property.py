"""Property: answer i always belongs to question i, whatever the latencies, faults and retries."""

from __future__ import annotations

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openai import AsyncOpenAI

import fanout
from fanout.sim import FAULT_KINDS, SimConfig, answer_for, serve

# Hangs need a client timeout to recover from; keep them out of the mix to stay fast.
RECOVERABLE = [k for k in FAULT_KINDS if k != "hang"]


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[str], list[int], dict[int, str], int]:
    n = draw(st.integers(min_value=1, max_value=25))
    lengths = draw(
        st.lists(st.integers(min_value=1, max_value=60), min_size=n, max_size=n)
    )  # empty is no answer
    # Some questions repeat on purpose: duplicates must be answered too.
    texts = [f"q{draw(st.integers(min_value=0, max_value=n))} {{{{tokens={t}}}}}" for t in lengths]
    schedule = draw(
        st.dictionaries(
            st.integers(min_value=1, max_value=2 * n), st.sampled_from(RECOVERABLE), max_size=n
        )
    )
    concurrency = draw(st.integers(min_value=1, max_value=8))
    return texts, lengths, schedule, concurrency


async def _run(texts: list[str], schedule: dict[int, str], concurrency: int) -> fanout.Answers:
    config = SimConfig(time_scale=1000, fault_schedule=schedule, rtt_s=0.01)
    async with serve(config) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="sim", timeout=5)
        try:
            return await fanout.ask_many(
                texts, client=client, model="m",
                limits=fanout.Limits(max_concurrency=concurrency),
                retry=fanout.Retry(max_attempts=20, initial_wait=0.001, max_wait=0.01),
            )  # fmt: skip
        finally:
            await client.close()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_answer_i_belongs_to_question_i(
    scenario: tuple[list[str], list[int], dict[int, str], int],
) -> None:
    """Random lengths, duplicates, faults and concurrency: every answer matches its question."""
    texts, _, schedule, concurrency = scenario
    answers = asyncio.run(_run(texts, schedule, concurrency))
    assert len(answers) == len(texts)
    for i, (answer, text) in enumerate(zip(answers, texts, strict=True)):
        assert answer.index == i
        assert answer.question == text
        tokens = int(text.split("=")[1].rstrip("}"))
        assert answer.text == answer_for(text, tokens)
