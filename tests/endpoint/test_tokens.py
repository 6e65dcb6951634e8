"""Token estimates before sending: tiktoken when its files are on disk, never a download;
what a request's estimate counts (a pydantic schema, tools, a message's tool calls)."""

from __future__ import annotations

import datetime
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from fanout.endpoint import tokens as _tokens
from fanout.endpoint.tokens import estimate_request_tokens, estimate_text_tokens
from fanout.planning import estimate_messages_tokens

MSG = [{"role": "user", "content": "hi"}]


def test_no_tiktoken_file_is_downloaded(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """With tiktoken installed and its cache empty, the estimate falls back to the
    documented rule and no connection leaves this machine (tiktoken would fetch its
    encoding from a public host)."""
    pytest.importorskip("tiktoken")
    hosts: list[Any] = []
    real = socket.getaddrinfo

    def record(host: Any, *args: Any, **kwargs: Any) -> Any:
        hosts.append(host)
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", record)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    _tokens._tiktoken_counter.cache_clear()
    try:
        text = "x" * 400
        tokens = estimate_messages_tokens([{"role": "user", "content": text}], "gpt-4o")
    finally:
        _tokens._tiktoken_counter.cache_clear()
    assert tokens == 100 + 3 + 3  # the documented estimate: 4 ASCII characters a token
    assert hosts == []
    import tiktoken.load

    assert tiktoken.load.read_file.__name__ == "read_file"  # put back as it was


@pytest.mark.parametrize(
    ("text", "tokens"),
    [("", 0), ("abcd", 1), ("abcde", 2), ("héllo", 2), ("日本語", 3), ("ab 日本 😀", 4)],
)
def test_the_fallback_counts_a_token_per_four_ascii_characters_and_one_per_other(
    text: str, tokens: int
) -> None:
    """The fallback estimate: ASCII characters four to a token (rounded up), every other
    character a token of its own."""
    from fanout.endpoint.tokens import estimate_text_tokens

    assert estimate_text_tokens(text) == tokens


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
