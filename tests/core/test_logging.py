"""API keys never appear in logs, reports or errors."""

from __future__ import annotations

import asyncio
import json
import logging
import traceback
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

import fanout
from fanout.jobs import run_jsonl
from fanout.sim import SimConfig, serve

from .._virtual import on_virtual_time

SECRET = "sk-test-SECRET-do-not-log-4f9a2c"


@on_virtual_time
async def test_the_api_key_is_never_logged_reported_or_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Debug logs, the report and the errors of a call with failures hold no key."""
    caplog.set_level(logging.DEBUG, logger="fanout")
    config = SimConfig(time_scale=100, answer_tokens=3, fault_schedule={1: "500", 2: "500"})
    async with serve(config) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key=SECRET)
        fo = fanout.Fanout(client, model="m", retry=fanout.Retry(max_attempts=1))
        # A question that echoes the key back in an error message, as some servers do.
        answers = await fo.ask_many(["a?", "b?", f"what is {SECRET}?"], on_error="return")
        fanout.core.logs.configure(logging.DEBUG)
        logging.getLogger("fanout").debug("key in a message: %s", SECRET, extra={"field": SECRET})
        await client.close()
    assert answers.report.failed == 2
    texts = [caplog.text, repr(answers.report), answers.report.model_dump_json()]
    texts += [str(a.error) for a in answers if a.error is not None]
    for text in texts:
        assert SECRET not in text
    assert caplog.records, "something was logged"
    assert any("***" in r.getMessage() for r in caplog.records)


def test_redact_replaces_registered_secrets() -> None:
    """A registered key is replaced wherever it appears."""
    fanout.core.logs.register_secret("abcdef123456")
    assert fanout.core.logs.redact("token abcdef123456 here") == "token *** here"


# --- keys fanout was never given, echoed by a server --------------------------------
@asynccontextmanager
async def _echoing_server() -> AsyncIterator[str]:
    """An endpoint on 127.0.0.1 that refuses every request with a 400 quoting the
    request's Authorization header back, as some proxies and debug servers do."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
        headers = dict(line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line)
        length = int(next((v for k, v in headers.items() if k.lower() == "content-length"), 0))
        await reader.readexactly(length)
        auth = next(v for k, v in headers.items() if k.lower() == "authorization")
        body = json.dumps({"error": {"message": f"refused Authorization: {auth}",
                                     "type": "invalid_request_error", "code": None}}).encode()  # fmt: skip
        writer.write(b"HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\n"
                     b"Connection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))  # fmt: skip
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.close()
        await server.wait_closed()


CALLABLE_KEY = "sk-proj-FromACallable0123456789abcdef"
PLAIN_KEY = "sk-live-PlainKeyNeverShown987654321"


async def _key_from_a_vault() -> str:
    return CALLABLE_KEY


@pytest.mark.parametrize(
    ("api_key", "secret"),
    [(_key_from_a_vault, CALLABLE_KEY), (PLAIN_KEY, PLAIN_KEY)],
    ids=["callable", "plain"],
)
@on_virtual_time
async def test_an_echoed_key_is_redacted_in_everything_fanout_renders(
    api_key: Any, secret: str, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    """Whatever the key's source, a server echoing it back does not get it into the
    error, the answer's repr and dump, the traceback (through __cause__), the DEBUG
    log, a PartialFailureError, or a JSONL record."""
    caplog.set_level(logging.DEBUG, logger="fanout")
    src, dst = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    src.write_text(json.dumps({"id": 1, "question": "hi?"}) + "\n")
    async with _echoing_server() as base_url:
        client = AsyncOpenAI(base_url=base_url, api_key=api_key)
        fo = fanout.Fanout(client, model="m", retry=fanout.Retry(max_attempts=1))
        answers = await fo.ask_many(["a?", "b?"], on_error="return")
        with pytest.raises(fanout.PartialFailureError) as raised:
            await fo.ask_many(["c?"])
        await run_jsonl(fo, src, dst)
        await client.close()
    answer = answers[0]
    assert answer.error is not None
    assert "***" in str(answer.error), "the echoed key reached the error, redacted"
    rendered = [
        str(answer.error), repr(answer.error), repr(answer), str(answer.model_dump()),
        answer.model_dump_json(), "".join(traceback.format_exception(answer.error)),
        str(raised.value), repr(raised.value), "".join(traceback.format_exception(raised.value)),
        caplog.text, dst.read_text(),
    ]  # fmt: skip
    for text in rendered:
        assert secret not in text
        assert "Bearer sk-" not in text


class TestRedact:
    @pytest.mark.parametrize(
        ("text", "expected"),
        [
            ("key sk-proj-abc123DEF456ghi789 here", "key *** here"),
            ("Authorization: Bearer eyJhbGciOi.J9xx.sig", "Authorization: ***"),
            ("{'authorization': 'Bearer tok_0123456789'}", "{'authorization': '***'}"),
            ('{"Authorization": "Basic dXNlcjpwYXNz"}', '{"Authorization": "***"}'),
            ("sent with bearer abcdefgh12345678", "sent with bearer ***"),
            (
                "x-api-key=abcdefgh12345678 and api_key: 'zyxwvuts98765432'",
                "x-api-key=*** and api_key: '***'",
            ),
            ("redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"),
            ("https://user:pa55word@proxy.example/v1", "https://user:***@proxy.example/v1"),
        ],
    )
    def test_key_shaped_strings_are_masked(self, text: str, expected: str) -> None:
        """Keys, bearer tokens, Authorization headers and URL passwords: masked by shape."""
        assert fanout.core.logs.redact(text) == expected

    @pytest.mark.parametrize(
        "text",
        ["skip-this sk-1 task-sk-", "the bearer of bad news", "pass --api-key or set OPENAI_API_KEY",
         "redis://cache:6379/0", "question 3 failed after 2 attempt(s)"],
    )  # fmt: skip
    def test_ordinary_text_is_left_alone(self, text: str) -> None:
        """Words that merely resemble a key's surroundings are not masked."""
        assert fanout.core.logs.redact(text) == text

    def test_logs_are_redacted_with_no_key_registered(
        self, caplog: pytest.LogCaptureFixture
    ) -> None:
        """A key-shaped string in a record of a fanout logger, or in its traceback, is masked."""
        caplog.set_level(logging.DEBUG, logger="fanout")
        log = logging.getLogger("fanout.jobs")
        try:
            raise RuntimeError("echo: Bearer sk-abcdefghijklmnop1234")
        except RuntimeError:
            log.exception(
                "failed with %s", "sk-abcdefghijklmnop5678", extra={"k": "sk-abcdefghijklmnop9999"}
            )
        assert "sk-abcdefghijklmnop" not in caplog.text
        assert caplog.records[-1].k == "***"  # type: ignore[attr-defined]
