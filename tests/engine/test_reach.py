"""A call to an address where nothing listens stops after one request's retries, not
every question's (``engine/reach.py``). On virtual time: the retries' waits take no real
time; a refused connection on 127.0.0.1 is answered by the kernel at once."""

from __future__ import annotations

import asyncio
import socket

from openai import AsyncOpenAI

import fanout
from fanout.sim import SimConfig, serve

from .._virtual import on_virtual_time

QUESTIONS = [f"What is {i} + {i}?" for i in range(40)]
ATTEMPTS = fanout.Retry().max_attempts


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@on_virtual_time
async def test_a_call_where_nothing_listens_stops_after_one_question_s_retries() -> None:
    """40 questions to a closed port: one question retries (6 attempts); the other 39
    hold their next attempt (their first, if the probe failed before they went) until
    it gives up, then fail at once, each naming the URL: at most 45 attempts (240
    before, 12 s of real time)."""
    url = f"http://127.0.0.1:{_free_port()}/v1"
    client = AsyncOpenAI(base_url=url, api_key="k", max_retries=0)
    answers = await fanout.ask_many(
        QUESTIONS, client=client, model="m", policy="split", on_error="return", memory=False
    )
    await client.close()
    errors = [a.error for a in answers]
    assert all(e is not None for e in errors)
    assert [a.index for a in answers] == list(range(40))
    assert sum(a.attempts for a in answers) <= 40 + ATTEMPTS - 1
    probes = [a for a in answers if a.attempts == ATTEMPTS]
    assert len(probes) == 1 and "could not reach" in str(probes[0].error)
    held = [str(a.error) for a in answers if a.attempts <= 1]
    assert len(held) == 39
    assert all("could not connect" in e and f"127.0.0.1:{url.split(':')[2]}" in e for e in held)


@on_virtual_time
async def test_a_server_that_comes_up_during_the_probe_answers_every_question() -> None:
    """The server starts 1 s after the call (loop time), while the probe retries: the
    probe's answer lets the others go, and all 40 are answered."""
    port = _free_port()
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)

    async def late_server(up: asyncio.Event, done: asyncio.Event) -> None:
        await asyncio.sleep(1.0)
        async with serve(SimConfig(answer_tokens=3), port=port):
            up.set()
            await done.wait()

    up, done = asyncio.Event(), asyncio.Event()
    server = asyncio.create_task(late_server(up, done))
    try:
        answers = await fanout.ask_many(
            QUESTIONS, client=client, model="sim-1", policy="split", memory=False
        )
    finally:
        done.set()
        await server
        await client.close()
    assert up.is_set()
    assert all(a.error is None and a.text for a in answers)
    assert max(a.attempts for a in answers) > 1  # the probe was refused at first


@on_virtual_time
async def test_an_endpoint_that_answered_before_is_retried_question_by_question() -> None:
    """Once the endpoint has answered, a refused connection is a transient failure:
    each question retries on its own (a server restarting mid-job)."""
    port = _free_port()
    client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="k", max_retries=0)
    fo = fanout.Fanout(client, model="sim-1", policy="split", memory=False)
    async with serve(SimConfig(answer_tokens=3), port=port):
        first = await fo.ask_many(QUESTIONS[:2])
    assert all(a.error is None for a in first)
    later = await fo.ask_many(QUESTIONS[2:6], on_error="return")
    await client.close()
    assert [a.attempts for a in later] == [ATTEMPTS] * 4
    assert all("could not reach" in str(a.error) for a in later)
