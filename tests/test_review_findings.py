"""What an adversarial review of the hardening found (its own hostile cases, written
before it read the fixes): body-read errors retried, choices in index order, and a
duplicate's error naming its own position."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from openai import AsyncOpenAI

import fanout
from fanout.engine.retrying import is_retryable

from ._reply_server import Reply, Request, answer_to, as_json, completion, good, serve_replies
from ._virtual import on_virtual_time


@pytest.mark.parametrize(
    "exc",
    [httpx2.ReadError("connection reset mid-body"), httpx2.RemoteProtocolError("peer closed"),
     httpx2.DecodingError("Error -3 while decompressing data")],
)  # fmt: skip
def test_an_error_while_reading_a_body_is_retried(exc: Exception) -> None:
    """The SDK wraps errors of sending a request, not of reading its body: a reset
    mid-body or a body that does not decompress is a connection error all the same."""
    assert is_retryable(exc)


def test_an_error_of_the_request_itself_is_not_retried() -> None:
    """An invalid URL (a bug of the caller's) is no connection error."""
    assert not is_retryable(httpx2.UnsupportedProtocol("no scheme"))


# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_choices_come_back_in_the_order_of_their_index() -> None:
    """``n=2`` with index 1 listed before index 0: ``text`` is choice 0's."""

    def reply(_: Request) -> Reply:
        choices = [
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "SECOND"}},
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "FIRST"}},
        ]  # fmt: skip
        return as_json(completion(choices))

    with serve_replies(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.ask_many(["q?"], client=client, model="m", n=2, memory=False)
        await client.close()
    assert answers[0].text == "FIRST"
    assert answers[0].choices == ["FIRST", "SECOND"]


# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_a_duplicate_of_a_failed_question_names_its_own_position() -> None:
    """The same failing question at positions 0 and 2: the copy's error has index 2 and
    its message says question 2 (asked once, as question 0), not 'question 0 failed'."""

    def reply(request: Request) -> Reply:
        if request.question == "bad?":
            return as_json({"error": {"message": "no", "type": "invalid_request_error"}}, 400)
        return as_json(completion([{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "ok"}}]))  # fmt: skip

    with serve_replies(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.ask_many(["bad?", "good?", "bad?"], client=client, model="m",
                                        on_error="return", memory=False)  # fmt: skip
        await client.close()
    error: Any = answers[2].error
    assert isinstance(error, fanout.QuestionError)
    assert error.index == 2
    assert str(error).startswith("question 2 failed")
    assert str(error).endswith("(asked once, as question 0)")
    assert str(answers[0].error).startswith("question 0")


@pytest.mark.parametrize(
    ("flags", "says"),
    [(["--base-url", "http://127.0.0.1:9/v1", "--model", "m"], "no API key"),
     (["--base-url", "http://127.0.0.1:9/v1", "--api-key", "k"], "--model is required"),
     (["--max-tokens", "0", "--sim-time-scale", "100"], "max_tokens must be a positive int")],
)  # fmt: skip
def test_a_run_that_cannot_start_for_an_option_exits_2(
    tmp_path: Any, flags: list[str], says: str
) -> None:
    """No key, no model with --base-url, or --max-tokens 0 (which the Python API refuses):
    one line and exit 2, the documented code for a bad option; nothing is answered."""
    import os
    import subprocess
    import sys

    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text('{"id": 1, "question": "hi?"}\n', encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    proc = subprocess.run([sys.executable, "-m", "fanout", "run", str(src), str(dst), *flags],
                          capture_output=True, text=True, env=env, timeout=120)  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert says in proc.stderr
    assert not dst.exists() or dst.read_text(encoding="utf-8") == ""


# --- round three: streamed split prompts whose parts fail ------------------------------
_SPLIT = {"fanout": "split"}


async def _read(stream: Any, into: list[str]) -> None:
    """Read a wrapped stream to its end (or its error), keeping the text it brought."""
    async for chunk in stream:
        into.extend(c.delta.content or "" for c in chunk.choices)


# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_a_streamed_split_prompt_whose_middle_part_fails_carries_every_part() -> None:
    """Three parts streamed through fanout.wrap, the second refused with a 400: the
    stream fails with PartialFailureError carrying all three answers in the prompt's
    order (the streamed first part's text included), the failed one at index 1 and
    named as question 1, as the same prompt unstreamed would."""

    def reply(request: Request) -> Reply:
        if request.question == "Explain Y.":
            return as_json({"error": {"message": "no", "type": "invalid_request_error"}}, 400)
        return good(request)

    prompt = "1. What is X?\n2. Explain Y.\n3. Who is Z?"
    with serve_replies(reply) as server:
        async with AsyncOpenAI(base_url=server.base_url, api_key="k", max_retries=0) as raw:
            client = fanout.wrap(raw, memory=False, limits=fanout.Limits(rpm=60_000))
            stream = await client.chat.completions.create(
                model="m", stream=True, extra_body=_SPLIT,
                messages=[{"role": "user", "content": prompt}],
            )  # fmt: skip
            seen: list[str] = []
            with pytest.raises(fanout.PartialFailureError) as info:
                await _read(stream, seen)
    answers = info.value.answers
    assert [a.index for a in answers] == [0, 1, 2]
    assert [a.question for a in answers] == ["What is X?", "Explain Y.", "Who is Z?"]
    assert answers[0].text == answer_to("What is X?") == "".join(seen).removeprefix("1. ")
    assert answers[2].text == answer_to("Who is Z?")
    error: Any = answers[1].error
    assert isinstance(error, fanout.QuestionError) and error.index == 1
    assert str(error).startswith("question 1 ")
    assert "part 1:" in str(info.value)
    assert answers.report.questions == 3 and answers.report.failed == 1


@on_virtual_time
async def test_a_stream_cut_inside_the_live_part_is_a_fanout_error_naming_it() -> None:
    """The simulator cuts the live part's stream half-way (and whichever of the first
    two requests is the other part's, which is retried): its first words have gone to
    the caller, so it is not asked again; the stream fails with PartialFailureError,
    not the HTTP library's RemoteProtocolError, naming question 0, with the other
    part's answer in it."""
    from fanout.testing import open_sim

    messages: list[Any] = [{"role": "user", "content": "1. What is X?\n2. Who wrote Hamlet?"}]
    schedule = {1: "stream_cut", 2: "stream_cut"}
    async with open_sim(time_scale=20, answer_tokens=30, fault_schedule=schedule) as sim:
        client = fanout.wrap(sim.client, memory=False, limits=fanout.Limits(rpm=60_000))
        stream = await client.chat.completions.create(
            model=sim.model, messages=messages, stream=True, extra_body=_SPLIT
        )
        seen: list[str] = []
        with pytest.raises(fanout.PartialFailureError) as info:
            await _read(stream, seen)
    first, second = info.value.answers
    text = "".join(seen)
    assert text.startswith("1. ") and len(text) > 3  # the live part's first words came
    error: Any = first.error
    assert isinstance(error, fanout.QuestionError) and error.index == 0
    assert "question 0" in str(error) and "stream broke" in str(error)
    assert "RemoteProtocolError" in type(error.__cause__).__name__
    assert second.error is None and second.text and second.question == "Who wrote Hamlet?"
