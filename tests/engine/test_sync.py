"""Synchronous code: a sync client is refused by Fanout, and ask_many_sync serves scripts
and notebooks (with or without a running event loop)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import openai
import pytest

import fanout
from fanout.sim import SimConfig, SimServer, answer_for, serve

if TYPE_CHECKING:
    from collections.abc import Iterator

    from ..conftest import SimFactory


@contextmanager
def sim_in_thread(**config: Any) -> Iterator[SimServer]:
    """A simulator served by its own event loop in another thread, so that the code
    under test may block its own thread (or its own loop)."""
    box: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> None:
        async with serve(SimConfig(**config)) as server:
            box.update(server=server, loop=asyncio.get_running_loop(), stop=asyncio.Event())
            ready.set()
            await box["stop"].wait()

    thread = threading.Thread(target=asyncio.run, args=(main(),), daemon=True)
    thread.start()
    assert ready.wait(10), "the simulator did not start"
    try:
        yield box["server"]
    finally:
        box["loop"].call_soon_threadsafe(box["stop"].set)
        thread.join(10)


QUESTIONS = ["What is X?", "Explain Y.", "Name Z."]


class TestSyncClient:
    async def test_fanout_refuses_a_sync_client_at_once_naming_async_openai(
        self, sim: SimFactory
    ) -> None:
        """Fanout(openai.OpenAI(...)) is a ConfigError naming AsyncOpenAI; nothing is sent."""
        async with sim(time_scale=100) as (server, _):
            sync_client = openai.OpenAI(base_url=server.base_url, api_key="k")
            with pytest.raises(fanout.ConfigError, match="AsyncOpenAI") as info:
                fanout.Fanout(sync_client, model="m")  # type: ignore[arg-type]
            assert "ask_many_sync" in str(info.value)
            with pytest.raises(fanout.ConfigError, match="AsyncOpenAI"):
                await fanout.ask_many(["q"], client=sync_client, model="m")  # type: ignore[arg-type]
            sync_client.close()
            assert server.stats.requests == []


class TestAskManySync:
    def test_a_plain_script_gets_its_answers_with_a_sync_or_async_client(self) -> None:
        """A script with no event loop calls ask_many_sync with an OpenAI or an
        AsyncOpenAI client and gets the answers in order."""
        script = (
            "import json, sys, openai, fanout\n"
            "url = sys.argv[1]\n"
            "qs = json.loads(sys.argv[2])\n"
            "sync_client = openai.OpenAI(base_url=url, api_key='k')\n"
            "a = fanout.ask_many_sync(qs, client=sync_client, model='m')\n"
            "b = fanout.ask_many_sync(qs, client=openai.AsyncOpenAI(base_url=url, api_key='k'), model='m')\n"
            "c = fanout.ask_many_sync(qs[:1], client=sync_client, model='m')\n"
            "print(json.dumps([a.texts, b.texts, c.texts, sync_client.max_retries]))\n"
        )
        with sim_in_thread(time_scale=100, answer_tokens=3) as server:
            done = subprocess.run(
                [sys.executable, "-c", script, server.base_url, json.dumps(QUESTIONS)],
                capture_output=True, text=True, timeout=60, check=False,
            )  # fmt: skip
        assert done.returncode == 0, done.stderr
        a, b, c, max_retries = json.loads(done.stdout)
        expected = [answer_for(q, 3) for q in QUESTIONS]
        assert a == b == expected
        assert c == expected[:1]
        assert max_retries == 2  # the user's client is untouched

    def test_it_works_where_an_event_loop_is_already_running(self) -> None:
        """Called from inside a running loop (a notebook cell), ask_many_sync runs the
        call on a worker thread's own loop instead of failing."""
        with sim_in_thread(time_scale=100, answer_tokens=3) as server:

            async def notebook_cell() -> list[list[str | None]]:
                sync_client = openai.OpenAI(base_url=server.base_url, api_key="k")
                async_client = openai.AsyncOpenAI(base_url=server.base_url, api_key="k")
                try:
                    a = fanout.ask_many_sync(QUESTIONS, client=sync_client, model="m")
                    b = fanout.ask_many_sync(QUESTIONS, client=async_client, model="m")
                    # The user's clients still work afterwards.
                    sync_client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": "still there?"}]
                    )
                    await async_client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": "still there?"}]
                    )
                finally:
                    sync_client.close()
                    await async_client.close()
                return [a.texts, b.texts]

            a, b = asyncio.run(notebook_cell())
        assert a == b == [answer_for(q, 3) for q in QUESTIONS]

    def test_the_async_client_it_builds_keeps_the_sync_clients_settings(self) -> None:
        """From an OpenAI client, ask_many_sync's AsyncOpenAI has the same key, base URL,
        organization, project, timeout, retries, default headers and query."""
        from fanout.engine.sync import async_client_for

        sync_client = openai.OpenAI(
            api_key="sk-x", base_url="http://127.0.0.1:9/v1", organization="org-1",
            project="proj-1", timeout=12.5, max_retries=4,
            default_headers={"X-Team": "a"}, default_query={"tag": "b"},
        )  # fmt: skip
        twin = async_client_for(sync_client)
        assert isinstance(twin, openai.AsyncOpenAI)
        assert twin.api_key == "sk-x"
        assert str(twin.base_url) == str(sync_client.base_url)
        assert (twin.organization, twin.project) == ("org-1", "proj-1")
        assert twin.timeout == 12.5
        assert twin.max_retries == 4
        assert twin.default_headers["X-Team"] == "a"
        assert twin.default_query["tag"] == "b"
        sync_client.close()
