"""Replies no endpoint should send, sent over real HTTP on 127.0.0.1: a 200 with no
choices or an HTML page, an empty answer, a refusal, tool calls, usage that is not
numbers. The rule: every question gets its answer or an error naming it, no answer goes
to another question, and one bad reply never stops the others."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

import fanout
from fanout.sim import serve

from .._reply_server import (
    Reply,
    Request,
    answer_to,
    as_json,
    completion,
    good,
    message_choice,
    serve_replies,
    sse,
)

QUESTIONS = [f"Question number {i}?" for i in range(20)]
BAD = QUESTIONS[7]
FAST = fanout.Retry(max_attempts=3, initial_wait=0.01, max_wait=0.05)

MALFORMED: dict[str, Any] = {
    "choices null, an error at 200": completion(
        None, usage=None, error={"message": "upstream overloaded", "type": "server_error"}
    ),
    "only an error at 200": {"error": {"message": "upstream overloaded", "code": 503}},
    "a choice with no message": completion([{"index": 0, "finish_reason": "stop"}]),
    "choices not a list": completion("nope"),
}
HTML = b"<html><body><h1>502 Bad Gateway</h1></body></html>"


def client_for(base_url: str) -> AsyncOpenAI:
    return AsyncOpenAI(base_url=base_url, api_key="x")


def only(bad: Reply, *, times: int | None = None, question: str = BAD) -> Any:
    """Answer every question well, except ``question``: ``bad`` (its first ``times``
    attempts, or always)."""

    def reply(request: Request) -> Reply:
        if request.question == question and (times is None or request.attempt <= times):
            return bad
        return good(request)

    return reply


async def ask(base_url: str, questions: list[str] = QUESTIONS, **kwargs: Any) -> fanout.Answers:
    async with client_for(base_url) as client:
        return await fanout.ask_many(
            questions, client=client, model="m", policy="split",
            on_error="return", retry=FAST, **kwargs,
        )  # fmt: skip


async def drain(stream: Any) -> str:
    """The text of a streamed completion."""
    pieces: list[str] = []
    async for chunk in stream:
        pieces.extend(c.delta.content or "" for c in chunk.choices)
    return "".join(pieces)


def assert_the_others_answered(answers: fanout.Answers, bad: str = BAD) -> fanout.Answer:
    """Every question but ``bad`` has its own answer; returns ``bad``'s."""
    assert len(answers) == len(QUESTIONS)
    for answer, question in zip(answers, QUESTIONS, strict=True):
        assert answer.question == question
        if question != bad:
            assert answer.error is None, answer.error
            assert answer.text == answer_to(question)
    return answers[QUESTIONS.index(bad)]


class TestMalformedReplies:
    """Item 4: a 200 whose body has no usable choices."""

    @pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
    async def test_a_malformed_200_fails_its_question_alone_after_retries(self, body: Any) -> None:
        with serve_replies(only(as_json(body))) as server:
            answers = await ask(server.base_url)
        failed = assert_the_others_answered(answers)
        assert isinstance(failed.error, fanout.MalformedResponseError)
        assert failed.error.index == QUESTIONS.index(BAD)
        assert f"question {QUESTIONS.index(BAD)}" in str(failed.error)
        assert failed.attempts == FAST.max_attempts  # retried like any unreadable body
        assert server.seen[BAD] == FAST.max_attempts
        assert answers.report.failed == 1
        assert answers.report.answered == len(QUESTIONS) - 1

    async def test_the_error_a_proxy_put_in_a_200_is_in_the_message(self) -> None:
        body = MALFORMED["choices null, an error at 200"]
        with serve_replies(only(as_json(body))) as server:
            answers = await ask(server.base_url)
        assert "upstream overloaded" in str(assert_the_others_answered(answers).error)

    @pytest.mark.parametrize("body", MALFORMED.values(), ids=MALFORMED.keys())
    async def test_a_malformed_200_once_is_retried_and_answered(self, body: Any) -> None:
        with serve_replies(only(as_json(body), times=1)) as server:
            answers = await ask(server.base_url)
        answer = assert_the_others_answered(answers)
        assert answer.error is None
        assert answer.text == answer_to(BAD)
        assert answer.attempts == 2

    async def test_wrap_retries_a_malformed_part_and_answers_every_part(self) -> None:
        prompt = "1. What is the capital of France?\n2. What is the boiling point of water?"
        parts = fanout.detect(prompt)
        second = parts.group_prompt(parts.groups[1])
        bad = as_json(MALFORMED["only an error at 200"])
        with serve_replies(only(bad, times=1, question=second)) as server:
            async with client_for(server.base_url) as client:
                result = await fanout.wrap(client, retry=FAST).chat.completions.create(
                    model="m", messages=[{"role": "user", "content": prompt}]
                )
        content = result.choices[0].message.content or ""
        assert answer_to(second) in content
        assert answer_to(parts.group_prompt(parts.groups[0])) in content

    def test_fanout_run_answers_the_rest_and_a_rerun_does_not_stop(self, tmp_path: Path) -> None:
        """`fanout run`: the other 19 answered, the bad one a failure record (exit 1,
        not the abort's 2); running again asks only that one, and stops no more."""
        src = tmp_path / "in.jsonl"
        dst = tmp_path / "out.jsonl"
        src.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                               for i, q in enumerate(QUESTIONS)))  # fmt: skip
        with serve_replies(only(as_json(MALFORMED["only an error at 200"]))) as server:
            command = [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--no-progress",
                       "--base-url", server.base_url, "--api-key", "x", "--model", "m",
                       "--policy", "split"]  # fmt: skip
            for run in (1, 2):
                proc = subprocess.run(command, capture_output=True, text=True, timeout=90)
                assert proc.returncode == 1, (run, proc.returncode, proc.stderr[-2000:])
                records = [json.loads(line) for line in dst.read_text().splitlines()]
                last = {r["id"]: r for r in records}
                assert len(last) == len(QUESTIONS)
                for i, q in enumerate(QUESTIONS):
                    if q == BAD:
                        assert last[i]["answer"] is None
                        assert "MalformedResponseError" in last[i]["error"]
                    else:
                        assert last[i] == {**last[i], "answer": answer_to(q), "error": None}
            assert len(records) == len(QUESTIONS) + 1  # the rerun asked only the failed one


class TestEmptyReplies:
    """Item 5: an empty reply is no answer."""

    async def test_empty_choices_are_retried_then_an_empty_answer_error(self) -> None:
        with serve_replies(only(as_json(completion([])))) as server:
            answers = await ask(server.base_url)
        failed = assert_the_others_answered(answers)
        assert isinstance(failed.error, fanout.EmptyAnswerError)
        assert failed.text is None
        assert failed.attempts == FAST.max_attempts

    async def test_empty_content_is_retried_and_answered(self) -> None:
        empty = as_json(completion([message_choice(content="")]))
        with serve_replies(only(empty, times=2)) as server:
            answers = await ask(server.base_url)
        answer = assert_the_others_answered(answers)
        assert (answer.error, answer.text, answer.attempts) == (None, answer_to(BAD), 3)

    async def test_a_refusal_is_a_refusal_error_carrying_its_text_not_retried(self) -> None:
        refusal = "I'm sorry, I can't help with that."
        reply = as_json(completion([message_choice(content=None, refusal=refusal)]))
        with serve_replies(only(reply)) as server:
            answers = await ask(server.base_url)
        failed = assert_the_others_answered(answers)
        assert isinstance(failed.error, fanout.RefusalError)
        assert failed.error.refusal == refusal
        assert refusal in str(failed.error)
        assert failed.refusal == refusal
        assert failed.text is None
        assert failed.attempts == 1  # the same question is refused again

    async def test_tool_calls_nobody_asked_for_are_an_error_carrying_them(self) -> None:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
        reply = as_json(completion([message_choice(content=None, tool_calls=[call])]))
        with serve_replies(only(reply)) as server:
            answers = await ask(server.base_url)
        failed = assert_the_others_answered(answers)
        assert isinstance(failed.error, fanout.EmptyAnswerError)
        assert "get_weather" in str(failed.error)
        assert failed.tool_calls == [call]
        assert failed.text is None

    async def test_tool_calls_asked_for_are_the_answer(self) -> None:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
        reply = as_json(completion([message_choice(content=None, tool_calls=[call])]))
        with serve_replies(only(reply)) as server:
            answers = await ask(server.base_url, tools=tools)
        answer = assert_the_others_answered(answers)
        assert answer.error is None
        assert answer.text == ""
        assert answer.tool_calls == [call]
        assert answers[0].tool_calls == []

    async def test_wrap_never_returns_an_empty_section(self) -> None:
        prompt = "1. What is the capital of France?\n2. What is the boiling point of water?"
        parts = fanout.detect(prompt)
        second = parts.group_prompt(parts.groups[1])
        empty = as_json(completion([message_choice(content=None)]))
        with serve_replies(only(empty, question=second)) as server:
            async with client_for(server.base_url) as client:
                with pytest.raises(fanout.PartialFailureError) as info:
                    await fanout.wrap(client, retry=FAST).chat.completions.create(
                        model="m", messages=[{"role": "user", "content": prompt}]
                    )
        (error,) = info.value.errors
        assert isinstance(error, fanout.EmptyAnswerError)
        assert error.index == 1

    @pytest.mark.parametrize("whole", ["answered whole", "empty whole too"])
    async def test_wrap_streams_no_empty_first_section(self, whole: str) -> None:
        """stream=True: the first part streams live; a live stream that brings no text is
        asked again whole (judged like any part), and if that is empty too, the stream
        raises instead of showing an empty section."""
        prompt = "1. What is the capital of France?\n2. What is the boiling point of water?"
        parts = fanout.detect(prompt)
        first, second = (parts.group_prompt(g) for g in parts.groups)
        empty_whole = as_json(completion([message_choice(content="")]))

        def reply(request: Request) -> Reply:
            if request.question != first:
                return good(request)
            if request.body.get("stream"):
                return sse("")
            return empty_whole if whole == "empty whole too" else good(request)

        with serve_replies(reply) as server:
            async with client_for(server.base_url) as client:
                stream = await fanout.wrap(client, retry=FAST).chat.completions.create(
                    model="m", messages=[{"role": "user", "content": prompt}], stream=True
                )
                if whole == "empty whole too":
                    with pytest.raises(fanout.PartialFailureError) as info:
                        await drain(stream)
                    assert isinstance(info.value.errors[0], fanout.EmptyAnswerError)
                    assert "part 0" in str(info.value)
                    return
                text = await drain(stream)
        assert answer_to(first) in text
        assert text.index(answer_to(first)) < text.index(answer_to(second))

    async def test_wrap_passes_a_single_questions_reply_through_untouched(self) -> None:
        """One question is not fanout's to judge: the endpoint's own response, as sent."""
        empty = as_json(completion([message_choice(content="")]))
        question = "What is the capital of France?"
        with serve_replies(only(empty, question=question)) as server:
            async with client_for(server.base_url) as client:
                result = await fanout.wrap(client, retry=FAST).chat.completions.create(
                    model="m", messages=[{"role": "user", "content": question}]
                )
            assert server.seen[question] == 1
        assert result.choices[0].message.content == ""
        assert fanout.report_of(result) is None

    async def test_a_job_counts_an_empty_reply_as_failed_and_reruns_it(
        self, tmp_path: Path
    ) -> None:
        """In a job, an empty reply is a failure record (never ``"answer": ""`` with no
        error), so running the job again asks it again."""
        src = tmp_path / "in.jsonl"
        dst = tmp_path / "out.jsonl"
        src.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                               for i, q in enumerate(QUESTIONS[:4])))  # fmt: skip
        bad = QUESTIONS[2]
        empty = as_json(completion([message_choice(content=None)]))
        fixed = False

        def reply(request: Request) -> Reply:
            return empty if request.question == bad and not fixed else good(request)

        with serve_replies(reply) as server:
            async with client_for(server.base_url) as client:
                fo = fanout.Fanout(client, model="m", policy="split", retry=FAST)
                first = await fanout.jobs.run_jsonl(fo, src, dst)
                records = [json.loads(line) for line in dst.read_text().splitlines()]
                (failed,) = [r for r in records if r["id"] == 2]
                assert failed["answer"] is None
                assert "EmptyAnswerError" in failed["error"]
                assert (first.answered, first.failed) == (3, 1)
                fixed = True
                again = await fanout.jobs.run_jsonl(fo, src, dst)
        assert (again.answered, again.retried_failed) == (1, 1)
        record = json.loads(dst.read_text().splitlines()[-1])
        assert (record["id"], record["answer"], record["error"]) == (2, answer_to(bad), None)

    async def test_a_job_record_keeps_the_tool_calls_asked_for(self, tmp_path: Path) -> None:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "get_weather", "arguments": "{}"}}  # fmt: skip
        tools = [{"type": "function", "function": {"name": "get_weather", "parameters": {}}}]
        src = tmp_path / "in.jsonl"
        dst = tmp_path / "out.jsonl"
        src.write_text(json.dumps({"id": 1, "question": "Weather?", "tools": tools}) + "\n")
        reply = as_json(completion([message_choice(content=None, tool_calls=[call])]))
        with serve_replies(lambda request: reply) as server:
            async with client_for(server.base_url) as client:
                fo = fanout.Fanout(client, model="m", policy="split", retry=FAST)
                await fanout.jobs.run_jsonl(fo, src, dst)
        record = json.loads(dst.read_text())
        assert (record["answer"], record["error"], record["tool_calls"]) == ("", None, [call])


class TestUnreadableBodies:
    """Item 10: a 200 whose body is an HTML page."""

    async def test_an_html_200_is_retried_then_a_clear_error(self) -> None:
        with serve_replies(only((200, "text/html", HTML))) as server:
            answers = await ask(server.base_url)
        failed = assert_the_others_answered(answers)
        assert isinstance(failed.error, fanout.MalformedResponseError)
        assert failed.attempts == FAST.max_attempts
        message = str(failed.error)
        assert "not a chat completion" in message
        assert "502 Bad Gateway" in message  # what the endpoint sent, to see why
        assert "attribute" not in message

    async def test_an_html_200_once_is_retried_and_answered(self) -> None:
        with serve_replies(only((200, "text/html", HTML), times=1)) as server:
            answers = await ask(server.base_url)
        answer = assert_the_others_answered(answers)
        assert (answer.error, answer.text, answer.attempts) == (None, answer_to(BAD), 2)


class TestBadUsage:
    """Item 11: a usage block that is not counts never costs an answer."""

    @pytest.mark.parametrize(
        "usage",
        [
            {"prompt_tokens": "ten", "completion_tokens": "5", "total_tokens": "15"},
            {"prompt_tokens": [], "completion_tokens": {}},
            {"prompt_tokens": 10, "completion_tokens": 5,
             "prompt_tokens_details": {"cached_tokens": "lots"}},
            "not an object",
        ],
        ids=["strings", "containers", "cached not a number", "a string"],
    )  # fmt: skip
    async def test_unreadable_usage_keeps_the_answer(self, usage: Any) -> None:
        def reply(request: Request) -> Reply:
            if request.question != BAD:
                return good(request)
            return as_json(completion([message_choice(content=answer_to(BAD))], usage=usage))

        with serve_replies(reply) as server:
            answers = await ask(server.base_url)
        answer = assert_the_others_answered(answers)
        assert (answer.error, answer.text, answer.attempts) == (None, answer_to(BAD), 1)
        assert answers.report.prompt_tokens >= 10 * (len(QUESTIONS) - 1)

    async def test_numbers_sent_as_strings_are_counted(self) -> None:
        usage = {"prompt_tokens": "12", "completion_tokens": "7", "total_tokens": "19"}

        def reply(request: Request) -> Reply:
            return as_json(completion([message_choice(content=answer_to(request.question))],
                                      usage=usage))  # fmt: skip

        with serve_replies(reply) as server:
            answers = await ask(server.base_url, QUESTIONS[:3])
        assert [a.text for a in answers] == [answer_to(q) for q in QUESTIONS[:3]]
        assert [a.usage.prompt_tokens for a in answers] == [12, 12, 12]
        assert answers.report.completion_tokens == 21

    async def test_negative_usage_never_makes_the_report_negative(self) -> None:
        def reply(request: Request) -> Reply:
            if request.question != BAD:
                return good(request)
            return good(request, prompt_tokens=-1000, completion_tokens=-50, total_tokens=-1050)

        with serve_replies(reply) as server:
            answers = await ask(server.base_url)
        answer = assert_the_others_answered(answers)
        assert answer.error is None
        assert answer.usage.prompt_tokens >= 0
        assert answer.usage.completion_tokens >= 0
        assert answers.report.prompt_tokens == 10 * (len(QUESTIONS) - 1)
        assert answers.report.completion_tokens == 5 * (len(QUESTIONS) - 1)


class TestSyncInTheServingLoop:
    """Item 12: ask_many_sync from the event loop that serves the endpoint."""

    @pytest.mark.timeout(60)
    @pytest.mark.parametrize("kind", ["async client", "sync client"])
    async def test_it_raises_a_clear_error_at_once(self, kind: str) -> None:
        import openai

        async with serve() as server:
            client: Any = (
                openai.AsyncOpenAI(base_url=server.base_url, api_key="x")
                if kind == "async client"
                else openai.OpenAI(base_url=server.base_url, api_key="x")
            )
            # Short deadlines: without the check the call would not hang for minutes,
            # it would fail with timeouts, which is not the error asked for.
            quick = fanout.Retry(max_attempts=1, attempt_timeout=1.0)
            with pytest.raises(fanout.LoopDeadlockError, match="event loop") as info:
                fanout.ask_many_sync(["What is X?"], client=client, model="m", retry=quick)
            assert server.base_url.rsplit(":", 1)[1].split("/")[0] in str(info.value)
            assert server.stats.requests == []  # nothing was sent
            client.close() if kind == "sync client" else await client.close()

    @pytest.mark.timeout(60)
    async def test_a_server_on_another_loop_is_fine(self) -> None:
        """The check refuses only the loop that serves: a server on its own thread's loop
        answers ask_many_sync called from this one."""
        with serve_replies(good) as server:
            answers = fanout.ask_many_sync(["What is X?"], client=client_for(server.base_url),
                                           model="m")  # fmt: skip
        assert answers.texts == [answer_to("What is X?")]
