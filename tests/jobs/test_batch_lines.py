"""A batch's output file read back line by line (``jobs/_batch_lines.py``): a duplicated
custom_id, torn or non-object lines, a billed line without choices, a merged line with
missing, extra or duplicated keys. No line is dropped silently, no answer goes to the
wrong question, and every billed token is counted."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

import fanout
from fanout.engine.merging import build_merged
from fanout.jobs._batch_lines import read_file, read_line


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
