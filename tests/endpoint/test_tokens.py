"""Token estimates before sending: tiktoken when its files are on disk, never a download."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from fanout.endpoint import tokens as _tokens
from fanout.planning import estimate_messages_tokens


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
