"""Replies cut short: by the endpoint's content filter (``finish_reason="content_filter"``,
with the text it let through) or at ``max_tokens``. A filtered reply is never passed off
as a whole answer: its answer says ``content_filter`` on every path (split, a merged
group, the wrapper, a job's record), the report counts it, and it is never cached. Over
real HTTP against a scripted model on 127.0.0.1 (``_scripted``, ``_reply_server``)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI

import fanout
from fanout.engine.merging import build_merged
from fanout.jobs import run_jsonl
from fanout.jobs._batch_lines import read_line

from .._reply_server import JSON, Reply, Request, serve_replies
from .._scripted import scripted_server
from .._virtual import on_virtual_time
from ..conftest import SimFactory
from ._merged_prompts import _layout, _listed

FILTERED = "How do I pick a lock?"
QUESTIONS = ["What is 2+2?", FILTERED, "Name a colour."]
PARTIAL = "Lock picking starts with"
"""What the filter lets through of the answer to ``FILTERED``."""


def _user(body: dict[str, Any]) -> str:
    return str(next(m["content"] for m in reversed(body["messages"]) if m["role"] == "user"))


def model(body: dict[str, Any]) -> str:
    """Every question answered (merged ones under their tags, in full); the answer to
    ``FILTERED``, asked alone, only as far as the filter lets it go."""
    listed = _listed(body)
    if listed:
        return _layout(body, {tag: f"merged: {question}" for tag, question in listed})
    user = _user(body)
    return PARTIAL if FILTERED in user else f"alone: {user}"


def content_filter(body: dict[str, Any]) -> str:
    """The filter cuts every reply to a request that holds ``FILTERED``, merged or not."""
    return "content_filter" if FILTERED in _user(body) else "stop"


def _fanout(server: Any, **config: Any) -> tuple[AsyncOpenAI, fanout.Fanout]:
    client = AsyncOpenAI(base_url=server.base_url, api_key="k")
    return client, fanout.Fanout(client, model="m", memory=False, **config)


@on_virtual_time
async def test_a_filtered_answer_keeps_its_text_says_content_filter_and_is_counted() -> None:
    """Asked alone: the text the filter let through is the answer, with its
    ``finish_reason``; the report counts it apart from the whole answers."""
    async with scripted_server(model, finish=content_filter) as server:
        client, fo = _fanout(server)
        answers = await fo.ask_many(QUESTIONS, policy="split")
        await client.close()
    assert answers.texts == ["alone: What is 2+2?", PARTIAL, "alone: Name a colour."]
    assert [a.finish_reason for a in answers] == ["stop", "content_filter", "stop"]
    report = answers.report
    assert report.answered == 3 and report.failed == 0
    assert report.filtered == 1 and report.cut_short == 0
    assert "1 answer cut short by the content filter" in str(report)


@on_virtual_time
async def test_answers_cut_at_max_tokens_are_counted_beside_the_filtered_ones(
    sim: SimFactory,
) -> None:
    """The report counts answers cut at ``max_tokens`` as well (none filtered)."""
    async with sim(time_scale=100, answer_tokens=20) as (_, client):
        fo = fanout.Fanout(client, model="m", memory=False, max_tokens=5)
        answers = await fo.ask_many(["What is X?", "What is Y?"], policy="split")
    assert [a.finish_reason for a in answers] == ["length", "length"]
    assert answers.report.cut_short == 2 and answers.report.filtered == 0
    assert "2 answers cut short at max_tokens" in str(answers.report)


@pytest.mark.parametrize("fmt", ["json", "text"])
@on_virtual_time
async def test_a_merged_reply_the_filter_cut_answers_none_of_its_questions(fmt: str) -> None:
    """The merged reply holds every section, whole, but the filter cut it somewhere:
    what it withheld is unknown, so none of its answers is taken. Each question is
    asked alone, and the one the filter cuts there says so."""
    async with scripted_server(model, finish=content_filter) as server:
        client, fo = _fanout(server)
        policy = fanout.Policy(mode="merge", merge_format=fmt)
        answers = await fo.ask_many(QUESTIONS, policy=policy)
        await client.close()
    assert len(_listed(server.requests[0])) == 3  # one merged request first
    assert answers.texts == ["alone: What is 2+2?", PARTIAL, "alone: Name a colour."]
    assert [a.finish_reason for a in answers] == ["stop", "content_filter", "stop"]
    assert [a.mode for a in answers] == ["split"] * 3
    assert answers.report.reasked == [0, 1, 2]
    assert answers.report.filtered == 1


@on_virtual_time
async def test_a_filtered_answer_is_never_cached_and_a_later_call_asks_again(
    tmp_path: Path,
) -> None:
    """With a cache, the whole answers are kept and the filtered one is not: the same
    call again sends one request, for the filtered question, and says it was filtered."""
    async with scripted_server(model, finish=content_filter) as server:
        client, fo = _fanout(server, temperature=0, cache=tmp_path / "c.sqlite3")
        first = await fo.ask_many(QUESTIONS, policy="split")
        sent = len(server.requests)
        second = await fo.ask_many(QUESTIONS, policy="split")
        await client.close()
    assert first.report.cache_hits == 0 and sent == 3
    assert server.user_messages()[sent:] == [FILTERED]  # asked again, alone
    assert [a.cached for a in second] == [True, False, True]
    assert second[1].text == PARTIAL and second[1].finish_reason == "content_filter"
    assert second.report.cache_hits == 2 and second.report.filtered == 1


@on_virtual_time
async def test_a_filtered_entry_already_in_the_cache_is_a_miss(tmp_path: Path) -> None:
    """An entry that says ``content_filter`` (kept by an earlier version) is not taken:
    the question is asked again."""
    path = tmp_path / "c.sqlite3"
    async with scripted_server(model) as server:  # nothing filtered: every answer kept
        client, fo = _fanout(server, temperature=0, cache=path)
        await fo.ask_many(QUESTIONS[:1], policy="split")
        with sqlite3.connect(path) as db:
            (key, value), *_ = list(db.execute("SELECT key, value FROM responses_v1"))
            entry = {**json.loads(value), "finish_reason": "content_filter"}
            db.execute("UPDATE responses_v1 SET value = ? WHERE key = ?",
                       (json.dumps(entry).encode(), key))  # fmt: skip
        again = await fo.ask_many(QUESTIONS[:1], policy="split")
        await client.close()
    assert server.user_messages() == [QUESTIONS[0], QUESTIONS[0]]
    assert not again[0].cached and again[0].finish_reason == "stop"


@pytest.mark.parametrize("mode", ["split", "merge"])
@on_virtual_time
async def test_a_jobs_record_of_a_filtered_answer_says_content_filter(
    tmp_path: Path, mode: str
) -> None:
    """``fanout run``'s record: the text the filter let through, ``finish_reason``
    ``content_filter``, split or from a merged group."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": q}) + "\n"
                           for i, q in enumerate(QUESTIONS)))  # fmt: skip
    async with scripted_server(model, finish=content_filter) as server:
        client, fo = _fanout(server, policy=fanout.Policy(mode=mode))
        summary = await run_jsonl(fo, src, dst)
        await client.close()
    assert summary.answered == 3
    records = {r["id"]: r for r in map(json.loads, dst.read_text().splitlines())}
    assert records[1]["answer"] == PARTIAL and records[1]["finish_reason"] == "content_filter"
    assert [records[i]["finish_reason"] for i in (0, 2)] == ["stop", "stop"]


def test_a_batch_line_of_a_merged_reply_the_filter_cut_answers_none_of_its_questions() -> None:
    """A batch's merged request whose reply the filter cut: no answer from it, and the
    usage it billed goes to its questions (they are asked again); a request of one
    question keeps its text and its ``finish_reason``."""
    questions = [fanout.Question(text=q, id=str(i)) for i, q in enumerate(QUESTIONS)]
    request = build_merged(QUESTIONS, "text", nonce="n")
    sections = {tag: f"merged: {q}" for tag, q in zip(request.tags, QUESTIONS, strict=True)}
    content = "".join(f"[{t}] {q}\n{a}\n" for (t, a), q in zip(sections.items(), QUESTIONS,
                                                                strict=True)) + "[n-end]"  # fmt: skip

    def line(text: str, finish: str) -> dict[str, Any]:
        body = {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
                "choices": [{"index": 0, "finish_reason": finish,
                             "message": {"role": "assistant", "content": text}}],
                "usage": {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15}}  # fmt: skip
        return {"id": "b", "response": {"status_code": 200, "request_id": "r", "body": body}}

    merged = {"merged": {"format": "text", "nonce": "n"}}
    ids = ["0", "1", "2"]
    whole, _ = read_line(line(content, "stop"), merged, ids, questions)
    assert sorted(whole) == ids  # the same reply, not filtered: every answer
    answered, lost = read_line(line(content, "content_filter"), merged, ids, questions)
    assert answered == {} and sorted(lost) == ids
    assert sum(u.total_tokens for u in lost.values()) == 15
    alone, _ = read_line(line(PARTIAL, "content_filter"), {"merged": None}, ["1"], questions[1:2])
    assert alone["1"].text == PARTIAL and alone["1"].finish_reason == "content_filter"


@pytest.mark.parametrize("prompt", [
    "1. What is 2+2?\n2. How do I pick a lock?\n3. Name a colour.",
    "1. How do I pick a lock?\n2. What is 2+2?\n3. Name a colour.",  # the live part
])  # fmt: skip
@on_virtual_time
async def test_a_wrapped_prompt_with_a_filtered_part_finishes_for_content_filter(
    prompt: str,
) -> None:
    """The wrapper's completion, whole or streamed (the first part streamed live, the
    others asked beside it), finishes for ``content_filter`` when a part was filtered,
    and its report counts it."""
    async with scripted_server(model, finish=content_filter) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        wrapped = fanout.wrap(client, memory=False, policy="split")
        messages: Any = [{"role": "user", "content": prompt}]
        whole = await wrapped.chat.completions.create(model="m", messages=messages)
        stream = await wrapped.chat.completions.create(model="m", messages=messages, stream=True)
        finishes = [c.choices[0].finish_reason async for c in stream if c.choices]
        await client.close()
    assert whole.choices[0].finish_reason == "content_filter"
    assert PARTIAL in (whole.choices[0].message.content or "")
    report = fanout.report_of(whole)
    assert report is not None and report.filtered == 1
    assert [f for f in finishes if f is not None] == ["content_filter"]


def _response(request: Request) -> Reply:
    """A Responses API reply, whole or as its stream's events: incomplete for the
    content filter when the input holds ``FILTERED``."""
    filtered = FILTERED in json.dumps(request.body.get("input"))
    text = PARTIAL if filtered else "an answer"
    body = {
        "id": "resp_1", "object": "response", "created_at": 0, "model": "m",
        "status": "incomplete" if filtered else "completed",
        "incomplete_details": {"reason": "content_filter"} if filtered else None,
        "output": [{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}],
        "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8},
    }  # fmt: skip
    if not request.body.get("stream"):
        return 200, JSON, json.dumps(body).encode()
    events: list[dict[str, Any]] = [
        {"type": "response.output_text.delta", "sequence_number": 0, "item_id": "msg_1",
         "output_index": 0, "content_index": 0, "delta": text, "logprobs": []},
        {"type": "response.incomplete" if filtered else "response.completed",
         "sequence_number": 1, "response": body},
    ]  # fmt: skip
    stream = "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return 200, "text/event-stream", stream.encode()


@pytest.mark.parametrize("stream", [False, True])
# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_a_wrapped_responses_call_with_a_filtered_part_is_incomplete_for_it(
    stream: bool,
) -> None:
    """``wrapped.responses.create``, whole or streamed: a part the filter cut makes the
    response ``incomplete`` with the reason ``content_filter`` (not
    ``max_output_tokens``)."""
    prompt = "1. What is 2+2?\n2. How do I pick a lock?\n3. Name a colour."
    with serve_replies(_response) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        wrapped = fanout.wrap(client, memory=False, policy="split")
        if stream:
            events = await wrapped.responses.create(model="m", input=prompt, stream=True)
            last = [event async for event in events][-1]
            assert last.type == "response.incomplete"
            response = last.response
        else:
            response = await wrapped.responses.create(model="m", input=prompt)
        await client.close()
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "content_filter"
    assert PARTIAL in response.output_text


@on_virtual_time
async def test_a_streamed_reply_the_filter_cut_is_marked_and_counted() -> None:
    """The wrapper's stream of a filtered reply ends with finish_reason content_filter."""
    async with scripted_server(lambda body: "partial", finish=lambda body: "content_filter") as s:
        client = AsyncOpenAI(base_url=s.base_url, api_key="k")
        wrapped = fanout.wrap(client, memory=False)
        stream = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Hello?"}], stream=True
        )
        finishes = [c.choices[0].finish_reason async for c in stream if c.choices]
        await client.close()
    assert "content_filter" in finishes, finishes


@on_virtual_time
async def test_a_filtered_answer_is_asked_again_not_cached(tmp_path: Path) -> None:
    """Filtered on one call: a second identical call asks again (never cached)."""
    async with scripted_server(lambda body: "partial", finish=lambda body: "content_filter") as s:
        client = AsyncOpenAI(base_url=s.base_url, api_key="k")
        fo = fanout.Fanout(client, model="m", memory=False, temperature=0,
                           cache=tmp_path / "c.sqlite3")  # fmt: skip
        first = await fo.ask_many(["Q?"], policy="split")
        second = await fo.ask_many(["Q?"], policy="split")
        await client.close()
    assert first.report.filtered == 1 and second.report.filtered == 1
    assert len(s.requests) == 2 and not second[0].cached
