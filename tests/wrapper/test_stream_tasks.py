"""A split stream from the wrapped client works whichever task pulls it, and gives its
concurrency slots back when it fails or is abandoned (issue 25, item 1)."""

from __future__ import annotations

import asyncio
import gc
from typing import Any, cast

import pytest

import fanout

from .._virtual import on_virtual_time
from ..conftest import SimFactory

THREE = "1. What is the capital of France?\n2. How many legs does a spider have?\n3. Why is the sky blue?"


def _slots_taken(wrapped: Any) -> int:
    """Concurrency slots borrowed on the wrapped client's transport right now."""
    transport = cast("fanout.wrapper.FanoutClient", wrapped).fanout._transport
    return int(transport._slots.borrowed_tokens)


async def _read_with_a_short_patience(stream: Any) -> None:
    """Read on, each step in a task of its own, until a step takes more than 10 ms."""
    while True:
        await asyncio.wait_for(stream.__anext__(), 0.01)


async def _open(wrapped: Any) -> Any:
    return await wrapped.chat.completions.create(
        model="m", messages=[{"role": "user", "content": THREE}], stream=True
    )


class TestAStreamPulledFromOtherTasks:
    @on_virtual_time
    async def test_each_step_under_wait_for_reads_the_whole_answer(self, sim: SimFactory) -> None:
        """Every __anext__ in its own task (asyncio.wait_for, as langchain-openai does):
        the stream is read to its end, and the slots are all free afterwards."""
        async with sim(time_scale=100, answer_tokens=6) as (server, client):
            wrapped = fanout.wrap(client, limits=fanout.Limits(max_concurrency=2))
            stream = await _open(wrapped)
            pieces: list[str] = []
            while True:
                try:
                    chunk = await asyncio.wait_for(stream.__anext__(), 5)
                except StopAsyncIteration:
                    break
                pieces.extend(c.delta.content or "" for c in chunk.choices)
            text = "".join(pieces)
            assert text.startswith("1. ref ")
            assert "\n\n2. ref " in text
            assert "\n\n3. ref " in text
            assert len(server.stats.requests) == 3
            assert _slots_taken(wrapped) == 0

    @on_virtual_time
    async def test_each_step_as_its_own_task_reads_the_whole_answer(self, sim: SimFactory) -> None:
        """asyncio.create_task(it.__anext__()) for every step (Python 3.12's wait_for)."""
        async with sim(time_scale=100, answer_tokens=6) as (_, client):
            wrapped = fanout.wrap(client, limits=fanout.Limits(max_concurrency=2))
            stream = await _open(wrapped)
            pieces: list[str] = []
            while True:
                try:
                    chunk = await asyncio.create_task(stream.__anext__())
                except StopAsyncIteration:
                    break
                pieces.extend(c.delta.content or "" for c in chunk.choices)
            assert "\n\n3. ref " in "".join(pieces)
            assert _slots_taken(wrapped) == 0


class TestAStreamGivesItsSlotsBack:
    @on_virtual_time
    async def test_a_step_cancelled_midway_frees_the_slot_and_the_client_goes_on(
        self, sim: SimFactory
    ) -> None:
        """A wait_for that times out mid-stream ends the stream: its slot comes back, and
        the next plain call on the client (which needs both slots) does not hang."""
        async with sim(time_scale=1, answer_tokens=60) as (_, client):
            wrapped = fanout.wrap(client, limits=fanout.Limits(max_concurrency=2))
            stream = await _open(wrapped)
            await asyncio.wait_for(stream.__anext__(), 5)  # the heading
            await asyncio.wait_for(stream.__anext__(), 5)  # the live request's first text
            with pytest.raises(asyncio.TimeoutError):
                await _read_with_a_short_patience(stream)
            await stream.close()
            assert _slots_taken(wrapped) == 0
            reply = await asyncio.wait_for(
                wrapped.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "Why?"}], max_tokens=3
                ),
                20,
            )
            assert reply.choices[0].message.content

    @on_virtual_time
    async def test_an_abandoned_stream_gives_its_slot_back(self, sim: SimFactory) -> None:
        """A stream read once in another task and then dropped (never closed) gives its
        slot back once it is collected."""
        async with sim(time_scale=100, answer_tokens=40) as (_, client):
            wrapped = fanout.wrap(client, limits=fanout.Limits(max_concurrency=2))
            stream = await _open(wrapped)
            await asyncio.wait_for(stream.__anext__(), 5)
            await asyncio.wait_for(stream.__anext__(), 5)  # the live request is open
            assert _slots_taken(wrapped) >= 1
            del stream
            for _ in range(50):
                gc.collect()
                await asyncio.sleep(0.02)
                if _slots_taken(wrapped) == 0:
                    break
            assert _slots_taken(wrapped) == 0
