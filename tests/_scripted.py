"""A tiny OpenAI-compatible endpoint on 127.0.0.1 whose replies and headers a test
writes: for what the simulator will not do (absurd rate-limit headers, a model that
obeys a prompt injection or echoes the prompt back)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Finish", "Scripted", "response", "scripted_server"]

Reply = Callable[[dict[str, Any]], str]
"""The reply's content, from the request's JSON body."""

Finish = Callable[[dict[str, Any]], str]
"""The reply's ``finish_reason``, from the request's JSON body."""


@dataclass
class Scripted:
    """The running endpoint: its base URL, and the bodies of the requests it took."""

    base_url: str
    requests: list[dict[str, Any]] = field(default_factory=list)

    def user_messages(self) -> list[str]:
        """The last user message of every request, in arrival order."""
        return [
            next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user")
            for body in self.requests
        ]


def _chunk(content: str | None, finish: str | None, usage: dict[str, int] | None) -> bytes:
    delta = {"role": "assistant", "content": content} if content is not None else {}
    choices = [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else []
    body = {"id": "chatcmpl-s", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": choices, "usage": usage}  # fmt: skip
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def response(content: str, *, streamed: bool, extra: bytes = b"", finish: str = "stop") -> bytes:
    """A whole HTTP response carrying ``content`` as a chat completion (an SSE stream
    if ``streamed``) that finished for ``finish``, with ``extra`` header lines; the
    connection closes after it."""
    usage = {"prompt_tokens": 10, "completion_tokens": max(1, len(content) // 4),
             "total_tokens": 10 + max(1, len(content) // 4)}  # fmt: skip
    if streamed:
        payload = (_chunk(content, None, None) + _chunk(None, finish, None)
                   + _chunk(None, None, usage) + b"data: [DONE]\n\n")  # fmt: skip
        kind = b"text/event-stream"
    else:
        payload = json.dumps({
            "id": "chatcmpl-s", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}],
            "usage": usage,
        }).encode()  # fmt: skip
        kind = b"application/json"
    return (b"HTTP/1.1 200 OK\r\nContent-Type: " + kind + b"\r\nConnection: close\r\n"
            + extra + b"Content-Length: %d\r\n\r\n" % len(payload) + payload)  # fmt: skip


def _refusal(code: int) -> bytes:
    payload = json.dumps(
        {"error": {"message": f"refused ({code})", "type": "invalid_request_error"}}
    ).encode()
    return (
        b"HTTP/1.1 %d Refused\r\nContent-Type: application/json\r\nConnection: close\r\n"
        b"Content-Length: %d\r\n\r\n" % (code, len(payload)) + payload
    )


@asynccontextmanager
async def scripted_server(
    reply: Reply,
    headers: Mapping[str, str] | None = None,
    delay: Callable[[dict[str, Any]], float] | None = None,
    finish: Finish | None = None,
    status: Callable[[dict[str, Any]], int] | None = None,
) -> AsyncIterator[Scripted]:
    """Serve ``reply`` (streamed when the request asks for a stream) with ``headers``
    added to every response; one request per connection. With ``delay``, a response's
    headers go at once and its body ``delay(body)`` seconds later (a slow reply). With
    ``finish``, a reply's ``finish_reason`` is ``finish(body)`` (else ``"stop"``). With
    ``status``, a request for which it is not 200 is refused with that status and an
    OpenAI-style error body instead."""
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items()).encode()
    state = Scripted(base_url="")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()
            return
        lines = head.split("\r\n")
        fields = {k.lower(): v for k, v in (ln.split(": ", 1) for ln in lines[1:] if ": " in ln)}
        body = json.loads(await reader.readexactly(int(fields.get("content-length", 0))) or b"{}")
        state.requests.append(body)
        code = status(body) if status is not None else 200
        if code != 200:
            writer.write(_refusal(code))
            await writer.drain()
            writer.close()
            return
        whole = response(reply(body), streamed=bool(body.get("stream")), extra=extra,
                         finish=finish(body) if finish is not None else "stop")  # fmt: skip
        try:
            if delay is not None:  # the headers at once, the reply after the delay
                head_end = whole.index(b"\r\n\r\n") + 4
                writer.write(whole[:head_end])
                await writer.drain()
                await asyncio.sleep(delay(body))
                whole = whole[head_end:]
            writer.write(whole)
            await writer.drain()
        except ConnectionError:
            pass  # the client went away (a call's timeout): nothing to answer
        finally:
            writer.close()  # also when the server closes on a delayed reply

    handlers: set[asyncio.Task[None]] = set()

    async def tracked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        handlers.add(task)
        try:
            await handle(reader, writer)
        finally:
            handlers.discard(task)

    server = await asyncio.start_server(tracked, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    state.base_url = f"http://127.0.0.1:{port}/v1"
    try:
        yield state
    finally:
        server.close()
        for task in list(handlers):  # replies still delayed: cut, their sockets closed
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        await server.wait_closed()
