"""Edge cases of the spend caps' reservations (extra_body, n, CJK in tools, pydantic
formats, concurrency), of a batch's output lines (duplicated ids, billed lines without
choices, torn lines) and state, of content-filter marking, and of the merged codec
(shares, repeats, missing or extra keys). Each test asserts the documented behaviour."""

from __future__ import annotations

import datetime
import json
import logging
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletion
from pydantic import BaseModel

import fanout
from fanout import Pricing
from fanout.endpoint.tokens import estimate_request_tokens, estimate_text_tokens
from fanout.engine.codec import merged_params, read_merged
from fanout.engine.merging import build_merged
from fanout.engine.spending import Pricer, worst_case
from fanout.jobs._batch_lines import read_file, read_line

from ._scripted import scripted_server
from ._virtual import on_virtual_time
from .conftest import SimFactory

OUT_ONLY = Pricer(pricing=Pricing(input=0, output=1_000_000))  # $1 per output token
MSG = [{"role": "user", "content": "hi"}]


def _out_tokens(params: dict[str, Any]) -> Decimal:
    """The output tokens a request's worst case reserves (input is free)."""
    return worst_case(OUT_ONLY, params, "m", None)


# --- 1. spend caps reserve the whole request --------------------------------------------


def test_extra_body_max_tokens_is_reserved_as_the_answer_cap() -> None:
    """extra_body is merged into the request body by the openai client, so a
    max_tokens there is the one the server obeys: the worst case must reserve it."""
    params = {"messages": MSG, "max_tokens": 10, "extra_body": {"max_tokens": 5000}}
    assert _out_tokens(params) >= 5000, _out_tokens(params)


def test_extra_body_n_multiplies_the_reserved_answers() -> None:
    """n in extra_body makes the server bill n answers: the worst case must count them."""
    params = {"messages": MSG, "max_tokens": 10, "extra_body": {"n": 5}}
    assert _out_tokens(params) >= 50, _out_tokens(params)


def test_n_multiplies_the_reserved_answers() -> None:
    assert _out_tokens({"messages": MSG, "max_tokens": 10, "n": 3}) == 30


def test_max_completion_tokens_is_reserved() -> None:
    assert _out_tokens({"messages": MSG, "max_completion_tokens": 77}) == 77


def test_a_zero_or_negative_max_tokens_reserves_the_uncapped_default_not_nothing() -> None:
    for bad in (0, -5):
        assert _out_tokens({"messages": MSG, "max_tokens": bad}) >= 1000


def test_a_prediction_is_reserved_as_output() -> None:
    pred = {"type": "content", "content": "z" * 400}
    assert _out_tokens({"messages": MSG, "max_tokens": 10, "prediction": pred}) >= 110


def test_a_pydantic_response_format_counts_its_schema() -> None:
    class Answer(BaseModel):
        a_rather_long_field_name_for_the_answer: str
        another_rather_long_field_name_for_the_score: int

    plain = estimate_request_tokens({"messages": MSG})
    with_model = estimate_request_tokens({"messages": MSG, "response_format": Answer})
    schema = json.dumps(Answer.model_json_schema())
    assert with_model - plain >= len(schema) // 4


def test_tools_with_values_json_cannot_encode_are_counted_without_a_crash() -> None:
    tools = [{"type": "function", "function": {"name": "f", "description": "d" * 300,
                                               "when": datetime.datetime(2024, 1, 1),
                                               "tags": {"x", "y"}}}]  # fmt: skip
    assert estimate_request_tokens({"messages": MSG, "tools": tools}) > 100


def test_a_messages_tool_calls_and_name_are_counted() -> None:
    call = {"id": "c1", "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"q": "x" * 900})}}  # fmt: skip
    messages = [{"role": "assistant", "content": None, "tool_calls": [call]}]
    assert estimate_request_tokens({"messages": messages}) >= 250


def test_a_cjk_tool_description_is_reserved_like_the_same_text_in_a_message() -> None:
    """tokens.py's own rule: a non-ASCII character is one token. The same 3,000 CJK
    characters in a tool's description must not be reserved as a third of that (the
    JSON rule of 3 characters a token is for ASCII JSON)."""
    cjk = "漢" * 3000
    as_text = estimate_request_tokens({"messages": [{"role": "user", "content": cjk}]})
    tool = {"type": "function", "function": {"name": "f", "description": cjk}}
    as_tool = estimate_request_tokens({"messages": [{"role": "user", "content": ""}],
                                       "tools": [tool]})  # fmt: skip
    assert as_tool >= estimate_text_tokens(cjk), (as_tool, as_text)


@on_virtual_time
async def test_extra_body_n_does_not_let_the_spend_pass_the_cap(sim: SimFactory) -> None:
    """End to end: max_tokens set, a cap that one request's worst case fits twice over;
    extra_body={'n': 5} makes each reply bill five answers. The spend must stay under
    the cap (docs: with max_cost and max_tokens set, the spend never passes it)."""
    price = Pricing(input=0, output=1000)
    async with sim(time_scale=100, answer_tokens=30) as (_, client):
        fo = fanout.Fanout(client, model="m", pricing=price, memory=False)
        one = worst_case(Pricer(pricing=price), {"model": "m", "max_tokens": 10, "messages":
                         [{"role": "user", "content": "What is 0?"}]}, "m", None)  # fmt: skip
        cap = one * 2
        answers = await fo.ask_many([f"What is {i}?" for i in range(4)], policy="split",
                                    max_tokens=10, extra_body={"n": 5}, max_cost=cap,
                                    on_error="return")  # fmt: skip
    spent = answers.report.cost
    assert spent is not None and spent <= cap, (spent, cap)


@on_virtual_time
async def test_concurrent_requests_with_tools_never_pass_the_cap(sim: SimFactory) -> None:
    """Twenty questions at once, each carrying ~2,000 tokens of tools, under a cap a
    few of them fit: the spend stays under it."""
    tools = [{"type": "function", "function": {"name": f"t{i}", "description": "word " * 400,
                                               "parameters": {"type": "object"}}}
             for i in range(4)]  # fmt: skip
    price = Pricing(input=1, output=1)
    async with sim(time_scale=100, answer_tokens=5) as (_, client):
        fo = fanout.Fanout(client, model="m", pricing=price, memory=False)
        probe = await fo.ask_many(["What is A?"], policy="split", max_tokens=20, tools=tools)
        one = probe[0].cost
        assert one is not None
        cap = one * Decimal("3.5")
        answers = await fo.ask_many([f"What is {i}?" for i in range(20)], policy="split",
                                    max_tokens=20, tools=tools, max_cost=cap,
                                    on_error="return")  # fmt: skip
    spent = answers.report.cost
    assert spent is not None and spent <= cap, (spent, cap)
    assert any(isinstance(a.error, fanout.BudgetExceededError) for a in answers)


# --- 3. batch output lines ---------------------------------------------------------------


def _body(content: str | None, finish: str = "stop", *, choices: bool = True) -> dict[str, Any]:
    return {"id": "c", "object": "chat.completion", "created": 0, "model": "m",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": content}}] if choices else [],
            "usage": {"prompt_tokens": 9, "completion_tokens": 6, "total_tokens": 15}}  # fmt: skip


def _line(cid: str, body: dict[str, Any], status: int = 200) -> str:
    return json.dumps(
        {
            "id": "b",
            "custom_id": cid,
            "response": {"status_code": status, "request_id": "r", "body": body},
        }
    )


def test_a_duplicate_custom_id_in_an_output_file_is_warned_about(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Two lines with one custom_id: one of them is dropped; that must not be silent
    (every line that is left out is warned about, naming the file and line)."""
    text = _line("a-1", _body("first")) + "\n" + _line("a-1", _body("second")) + "\n"
    with caplog.at_level(logging.WARNING):
        lines = read_file(text, "batch_1", "output", "file_1")
    assert list(lines) == ["a-1"]
    assert any("line 2" in r.getMessage() or "line 1" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]  # fmt: skip


def test_torn_and_non_object_lines_are_left_out_and_the_good_ones_kept(
    caplog: pytest.LogCaptureFixture,
) -> None:
    good = _line("a-1", _body("yes"))
    text = "\n".join([good, good[: len(good) // 2], "[1, 2]", '"str"', "null",
                      json.dumps({"custom_id": 5}), _line("a-2", _body("no"))])  # fmt: skip
    with caplog.at_level(logging.WARNING):
        lines = read_file(text, "batch_1", "output", "file_9")
    assert sorted(lines) == ["a-1", "a-2"]
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 5 and all("file_9" in m for m in messages), messages
    assert any("line 2" in m and "'a-1'" in m for m in messages), messages


def test_a_billed_line_without_choices_still_counts_its_usage() -> None:
    """A 200 line whose body has usage but no choice: billed, no answer. Its usage
    must be returned as lost so the job's spend counts it (module docstring: "so that a
    job's spend ... counts every request it paid for")."""
    q = fanout.Question(text="What is 1?", id="0")
    entry = json.loads(_line("a-1", _body(None, choices=False)))
    answered, lost = read_line(entry, {"merged": None}, ["0"], [q])
    assert answered == {}
    assert "0" in lost and lost["0"].total_tokens == 15, lost


def test_a_merged_line_with_missing_and_extra_keys_bills_every_token() -> None:
    """A JSON merged line answering 1 and 3, an unknown key besides, 2 missing: 1 and
    3 answered with their own text, 2 lost; the shares add up to the usage."""
    texts = ["What is 1?", "What is 2?", "What is 3?"]
    questions = [fanout.Question(text=t, id=str(i)) for i, t in enumerate(texts)]
    req = build_merged(texts, "json", nonce="n")
    keys = list(req.keys)
    content = json.dumps({keys[0]: "one", keys[2]: "three", "n-9 What is 9?": "nine"})
    entry = json.loads(_line("a-1", _body(content)))
    answered, lost = read_line(entry, {"merged": {"format": "json", "nonce": "n"}},
                               ["0", "1", "2"], questions)  # fmt: skip
    assert {k: a.text for k, a in answered.items()} == {"0": "one", "2": "three"}
    assert sorted(lost) == ["1"]
    total = sum(a.usage.total_tokens for a in answered.values()) + lost["1"].total_tokens
    assert total == 15


def test_a_merged_line_with_a_duplicated_key_attaches_no_answer_twice() -> None:
    """A reply giving one key twice (two different answers): whichever is kept, the
    other question is not answered by it, and nothing is attached to the wrong one."""
    texts = ["What is 1?", "What is 2?"]
    questions = [fanout.Question(text=t, id=str(i)) for i, t in enumerate(texts)]
    req = build_merged(texts, "json", nonce="n")
    k0 = req.keys[0]
    content = json.dumps({k0: "one"})[:-1] + ", " + json.dumps({k0: "two"})[1:]  # k0 twice
    entry = json.loads(_line("a-1", _body(content)))
    answered, lost = read_line(entry, {"merged": {"format": "json", "nonce": "n"}},
                               ["0", "1"], questions)  # fmt: skip
    assert "1" not in answered and "1" in lost
    assert set(answered) | set(lost) == {"0", "1"}


# --- 3b. state.json ----------------------------------------------------------------------


def _state_cli(tmp_path: Path, state: object) -> tuple[int, str]:
    import subprocess
    import sys

    src = tmp_path / "q.jsonl"
    src.write_text(json.dumps({"id": 0, "question": "What is 1?"}) + "\n")
    dst = tmp_path / "a.jsonl"
    from fanout.jobs._batch import batch_dir

    d = batch_dir(dst)
    d.mkdir(parents=True, exist_ok=True)
    (d / "state.json").write_text(json.dumps(state))
    proc = subprocess.run(
        [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--batch"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return proc.returncode, proc.stderr


@pytest.mark.parametrize("state", [
    {"version": 1, "chunks": [{"key": "k", "round": 1, "file": "c.jsonl", "file_id": None,
                               "batch_id": None, "state": "written",
                               "lines": {"x": {"ids": [], "merged": None}}}]},
    {"version": 1, "chunks": [{"key": "k", "round": 0, "file": "c.jsonl", "file_id": None,
                               "batch_id": None, "state": "written", "lines": {}}]},
    {"version": 2},
    {"version": 1, "deadline_at": "soon"},
])  # fmt: skip
def test_a_state_of_a_wrong_shape_is_one_error_line_exit_2(tmp_path: Path, state: Any) -> None:
    code, err = _state_cli(tmp_path, state)
    assert code == 2, (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err


def test_a_state_with_extra_keys_is_accepted(tmp_path: Path) -> None:
    """Extra keys (a newer fanout's, or a user's note) are no wrong shape: accepted."""
    from fanout.jobs._batch_state import check_state

    check_state({"version": 1, "chunks": [], "future": {"x": 1}}, tmp_path / "state.json")


# --- 4. content filter, cut parts --------------------------------------------------------


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


# --- 6. the merged codec -----------------------------------------------------------------


def _completion(content: str | None, finish: str = "stop", usage: tuple[int, int] = (100, 37)
                ) -> ChatCompletion:  # fmt: skip
    return ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                  "total_tokens": sum(usage)},
    })  # fmt: skip


@pytest.mark.parametrize("members", [1, 2, 3])
def test_shares_add_up_to_the_usage_with_a_canary_riding(members: int) -> None:
    texts = ["What is 1?", "What is 2?", "What is 3?"]
    req = build_merged(texts, "json", nonce="n")
    content = json.dumps(dict(zip(req.keys, ["a", "bb" * 50, "c"], strict=True)))
    reply = read_merged(req, _completion(content), None)
    shares = reply.shares(members)
    assert sum(s.prompt_tokens for s in shares) == 100
    assert sum(s.completion_tokens for s in shares) == 37


def test_merged_params_scale_max_completion_tokens_and_keep_context() -> None:
    req = build_merged(["What is 1?", "What is 2?"], "text", nonce="n")
    ctx = [{"role": "user", "content": "shared doc"}]
    params = merged_params(req, model="m", system="sys", create_kwargs={"max_completion_tokens": 50},
                           context=ctx)  # fmt: skip
    assert params["max_completion_tokens"] >= 100
    assert [m["content"] for m in params["messages"][:2]] == ["sys", "shared doc"]


def test_text_sections_out_of_order_go_to_their_own_tags() -> None:
    texts = ["What is 1?", "What is 2?"]
    req = build_merged(texts, "text", nonce="n")
    t1, t2 = req.tags
    content = f"[{t2}] What is 2?\ntwo\n[{t1}] What is 1?\none\n[n-end]"
    reply = read_merged(req, _completion(content), None)
    assert reply.found == {t1: "one", t2: "two"}


def test_a_filtered_merged_reply_answers_none_even_when_complete() -> None:
    texts = ["What is 1?", "What is 2?"]
    req = build_merged(texts, "json", nonce="n")
    content = json.dumps(dict(zip(req.keys, ["one", "two"], strict=True)))
    reply = read_merged(req, _completion(content, "content_filter"), None)
    assert reply.filtered and reply.found == {} and not reply.complete
    assert sum(s.total_tokens for s in reply.shares(2)) == 137


def test_a_merged_reply_with_null_or_non_string_values_answers_none_of_those() -> None:
    texts = ["What is 1?", "What is 2?", "What is 3?"]
    req = build_merged(texts, "json", nonce="n")
    k = list(req.keys)
    content = json.dumps({k[0]: None, k[1]: 2, k[2]: "three"})
    reply = read_merged(req, _completion(content), None)
    assert reply.found.get(req.tags[2]) == "three"
    assert req.tags[0] not in reply.found


@on_virtual_time
async def test_a_merged_group_answers_every_question_or_names_it(sim: SimFactory) -> None:
    """Nothing lost: a forced merge of eight questions, each gets an answer or an
    error naming it, and the answers' usage adds up to the report's."""
    qs = [f"What is {i}?" for i in range(8)]
    async with sim(time_scale=100, answer_tokens=8) as (_, client):
        fo = fanout.Fanout(client, model="m", memory=False)
        answers = await fo.ask_many(qs, policy="merge", max_tokens=30, on_error="return")
    assert len(answers) == 8
    for a in answers:
        assert a.text or (a.error is not None and f"question {a.index}" in str(a.error))
    assert sum(a.usage.total_tokens for a in answers) == answers.report.total_tokens
