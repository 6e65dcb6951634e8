"""API keys never appear in logs, reports or errors."""

from __future__ import annotations

import logging

import pytest
from openai import AsyncOpenAI

import fanout
from fanout.sim import SimConfig, serve

SECRET = "sk-test-SECRET-do-not-log-4f9a2c"


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
        fanout._logging.configure(logging.DEBUG)
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
    fanout._logging.register_secret("abcdef123456")
    assert fanout._logging.redact("token abcdef123456 here") == "token *** here"
