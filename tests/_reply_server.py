"""A tiny OpenAI-shaped HTTP server on 127.0.0.1 whose replies a test chooses, byte for
byte: for the malformed, empty or hostile replies the simulator never sends.

It runs on a thread of its own (``http.server``), so the code under test may block its
own thread or event loop. ``reply(request)`` returns ``(status, content_type, body)``;
:func:`good` is a well-formed completion answering the question.
"""

from __future__ import annotations

import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ._virtual import on_a_virtual_loop

__all__ = [
    "Reply",
    "ReplyServer",
    "Request",
    "answer_to",
    "as_json",
    "completion",
    "good",
    "message_choice",
    "serve_replies",
    "sse",
]

Reply = tuple[int, str, bytes]
JSON = "application/json"


@dataclass
class Request:
    """What the server was sent: the body, the last message's text, the headers, and
    how many times this question came (1 for its first attempt)."""

    body: dict[str, Any]
    question: str
    headers: dict[str, str]
    attempt: int


def answer_to(question: str) -> str:
    return f"answer to {question}"


def completion(choices: Any = None, *, usage: Any = "default", **extra: Any) -> dict[str, Any]:
    """A chat completion body with these ``choices`` (as given: None, [], anything)."""
    body: dict[str, Any] = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": 1700000000,
        "model": "m",
        "choices": choices,
        **extra,
    }
    if usage == "default":
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    if usage is not None:
        body["usage"] = usage
    return body


def message_choice(**message: Any) -> dict[str, Any]:
    return {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", **message}}


def as_json(body: Any, status: int = 200) -> Reply:
    return status, JSON, json.dumps(body).encode()


def sse(*pieces: str, usage: Any = None) -> Reply:
    """A streamed reply: one chunk per piece of text, the last with ``finish_reason``,
    then the usage chunk if any, then ``[DONE]``."""
    head = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 1700000000,
            "model": "m"}  # fmt: skip
    events = [
        {**head, "choices": [{"index": 0, "delta": {"role": "assistant", "content": piece},
                              "finish_reason": "stop" if i == len(pieces) - 1 else None}]}
        for i, piece in enumerate(pieces)
    ]  # fmt: skip
    if usage is not None:
        events.append({**head, "choices": [], "usage": usage})
    body = "".join(f"data: {json.dumps(event)}\n\n" for event in events) + "data: [DONE]\n\n"
    return 200, "text/event-stream", body.encode()


def good(request: Request, **usage: Any) -> Reply:
    """A well-formed answer to the request's question (streamed if it asked so)."""
    if request.body.get("stream"):
        words = answer_to(request.question).split(" ")
        pieces = [w if i == 0 else f" {w}" for i, w in enumerate(words)]
        counts = usage or {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        return sse(*pieces, usage=counts)
    body = completion([message_choice(content=answer_to(request.question))])
    if usage:
        body["usage"] = usage
    return as_json(body)


@dataclass
class ReplyServer:
    reply: Callable[[Request], Reply]
    port: int = 0
    seen: Counter[str] = field(default_factory=Counter)
    requests: list[Request] = field(default_factory=list)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def _question_of(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content")
    return content if isinstance(content, str) else json.dumps(content)


@contextmanager
def serve_replies(reply: Callable[[Request], Reply]) -> Iterator[ReplyServer]:
    """Serve ``reply`` on 127.0.0.1 (any port) for the duration of the block. Its
    replies come from a thread: not for a test on virtual time, whose loop would move
    its clock to the client's timeout while the thread answers (``tests/_virtual.py``)."""
    if on_a_virtual_loop():
        raise RuntimeError("serve_replies answers from a thread: run this test on the wall clock")
    state = ReplyServer(reply)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            question = _question_of(body)
            with lock:
                state.seen[question] += 1
                request = Request(body, question, dict(self.headers.items()),
                                  state.seen[question])  # fmt: skip
                state.requests.append(request)
            status, content_type, payload = state.reply(request)
            self.send_response(status)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    class Server(ThreadingHTTPServer):
        daemon_threads = True
        request_queue_size = 256  # every question's connection at once (the default is 5)

        def handle_error(self, request: Any, client_address: Any) -> None:
            return None  # a client that hung up (a cancelled attempt) is no failure here

    server = Server(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                              daemon=True)  # fmt: skip
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
