"""Credentials the client sends never come back out of fanout: not in an error's
message or traceback, an answer's repr or JSON, a log line, or the caller's span."""

from __future__ import annotations

import json
import logging
import traceback
from typing import Any

import pytest
from openai import AsyncOpenAI
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import fanout

from .._reply_server import Reply, Request, as_json, serve_replies

# Named like credentials, and one that only looks like one (its name says nothing).
CLIENT_HEADERS = {
    "Ocp-Apim-Subscription-Key": "apim0123456789abcdefSUBKEY",
    "X-Auth-Token": "tok-Zq81xP0wLmAUTH",
    "X-Tenant-Ref": "f3a9c2e1b7d44e0a9c1b2d3e4f5a6b7c",
}
CALL_HEADERS = {"X-Session-Secret": "sess-77Hq2LwPzSECRET"}
SECRETS = [*CLIENT_HEADERS.values(), *CALL_HEADERS.values()]


def echo_headers(request: Request) -> Reply:
    """A 500 that echoes the request's headers, as some gateways do: as a mapping, and
    their bare values."""
    message = (
        f"upstream rejected the request; headers were {request.headers!r}; "
        f"values: {' '.join(request.headers.values())}"
    )
    return as_json({"error": {"message": message, "type": "server_error"}}, status=500)


def assert_no_secret(text: str, where: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} shows {secret!r}: {text[:2000]}"


def client_for(base_url: str) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=base_url, api_key="sk-test-0123456789",
                       default_headers=CLIENT_HEADERS)  # fmt: skip


ONE_TRY = fanout.Retry(max_attempts=1)


async def test_credential_headers_echoed_by_a_500_are_masked_in_every_rendering(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="fanout")
    with serve_replies(echo_headers) as server:
        async with client_for(server.base_url) as client:
            answers = await fanout.ask_many(
                ["What is X?"], client=client, model="m", retry=ONE_TRY, on_error="return",
                extra_headers=CALL_HEADERS,
            )  # fmt: skip
    assert all(secret in json.dumps(server.requests[0].headers) for secret in SECRETS)
    (answer,) = answers
    error = answer.error
    assert isinstance(error, fanout.QuestionError)
    assert "upstream rejected" in str(error.__cause__)  # the echo is there, masked
    renderings = {
        "str(error)": str(error),
        "repr(error)": repr(error),
        "traceback": "".join(traceback.format_exception(error)),
        "repr(answer)": repr(answer),
        "str(answer)": str(answer),
        "model_dump_json": answer.model_dump_json(),
        "the logs": caplog.text,
    }
    for where, text in renderings.items():
        assert_no_secret(text, where)


async def test_the_callers_span_holds_no_credential_header() -> None:
    """The caller's own span records fanout's exception (its status and its exception
    event, traceback included): no credential in them either."""
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("the-caller")
    with serve_replies(echo_headers) as server:
        async with client_for(server.base_url) as client:
            with pytest.raises(fanout.PartialFailureError), tracer.start_as_current_span("cell"):
                await fanout.ask_many(["What is X?"], client=client, model="m", retry=ONE_TRY,
                                      extra_headers=CALL_HEADERS)  # fmt: skip
    (span,) = exporter.get_finished_spans()
    assert span.status.description
    events: list[Any] = [dict(event.attributes or {}) for event in span.events]
    assert any("exception.stacktrace" in e for e in events)
    assert_no_secret(span.status.description, "the span's status")
    assert_no_secret(json.dumps(events), "the span's events")


async def test_wrap_masks_credential_headers_in_its_errors() -> None:
    prompt = "1. What is the capital of France?\n2. What is the boiling point of water?"
    with serve_replies(echo_headers) as server:
        async with client_for(server.base_url) as client:
            wrapped = fanout.wrap(client, retry=ONE_TRY)
            with pytest.raises(fanout.PartialFailureError) as info:
                await wrapped.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": prompt}],
                    extra_headers=CALL_HEADERS,
                )  # fmt: skip
    assert_no_secret("".join(traceback.format_exception(info.value)), "wrap's traceback")


def test_a_settings_header_under_a_credential_word_is_left_alone() -> None:
    """Name-based masking takes values, not words: ``X-Auth-Mode: enabled`` is a
    setting, and masking it would hide every "enabled" in every message."""
    from fanout.core.redact import redact, register_headers

    register_headers({"X-Auth-Mode": "enabled", "X-Api-Token": "t0k3n-abcdef"})
    assert redact("feature enabled") == "feature enabled"
    assert "t0k3n-abcdef" not in redact("sent t0k3n-abcdef")


@pytest.mark.parametrize(
    "backend",
    [
        "redis://h:6379/0?password=SECRET",
        "redis://h:6379/0?db=1&password=SECRET&ssl_cert_reqs=none",
        "rediss://user:SECRET@h:6379/0?password=SECRET",
        "redis://h:6379/0?token=SECRET",
    ],
)
def test_a_redis_password_in_the_url_query_is_masked(backend: str) -> None:
    limits = fanout.Limits(rpm=100, backend=backend)
    assert "SECRET" not in repr(limits)
    assert "SECRET" not in str(limits)
    assert "h:6379/0" in repr(limits)
    from fanout.limits import RedisLimiter

    assert "SECRET" not in repr(RedisLimiter(limits, backend))
    assert "SECRET" not in fanout.FanoutError(f"cannot reach {backend}").args[0]
