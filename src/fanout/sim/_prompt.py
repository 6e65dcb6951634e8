"""Prompt accounting: how many tokens a conversation is, and how many of them a
server that caches prompt prefixes has already processed."""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from ._text import count_tokens

__all__ = ["MESSAGE_OVERHEAD", "PrefixCache", "Prompt", "definition_tokens", "read_prompt"]

MESSAGE_OVERHEAD = 3
"""Tokens per message for role and separators, as chat formats do."""
_BASE = 3  # tokens every prompt starts with (the assistant's turn marker)

Prompt = tuple[tuple[str, str], ...]
"""A conversation as (role, text) pairs."""


def read_prompt(messages: list[Any]) -> tuple[Prompt, str, int]:
    """(the conversation, its last user message, its prompt tokens)."""
    pairs: list[tuple[str, str]] = []
    last_user = ""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):  # content parts
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        text = content if isinstance(content, str) else ""
        role = str(message.get("role", "")) if isinstance(message, dict) else ""
        pairs.append((role, text))
        if role == "user":
            last_user = text
    total = _BASE + sum(MESSAGE_OVERHEAD + count_tokens(text) for _, text in pairs)
    return tuple(pairs), last_user, total


_DEFINITIONS = ("tools", "functions", "response_format", "text")
_CHARS_PER_DEFINITION_TOKEN = 4


def definition_tokens(payload: dict[str, Any]) -> int:
    """The prompt tokens a request's definitions are billed for, as the hosted APIs
    bill them: its tools and functions, its response format's schema (``text.format``
    on the Responses API), about four characters of their JSON a token."""
    fields = {k: payload[k] for k in _DEFINITIONS if payload.get(k) is not None}
    if not fields:
        return 0
    text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    return -(-len(text) // _CHARS_PER_DEFINITION_TOKEN)


def _common_chars(a: str, b: str) -> int:
    """Length of the common prefix of ``a`` and ``b`` (binary search on slices, so
    long prompts cost a few C-level comparisons)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _shared_tokens(a: Prompt, b: Prompt) -> int:
    """Tokens at the start of ``b`` that are the same as at the start of ``a``."""
    tokens = 0
    for (role_a, text_a), (role_b, text_b) in zip(a, b, strict=False):
        if role_a != role_b:
            break
        if text_a == text_b:
            tokens += MESSAGE_OVERHEAD + count_tokens(text_b)
            continue
        n = _common_chars(text_a, text_b)
        # The token that straddles the first difference is not shared.
        tokens += MESSAGE_OVERHEAD + max(0, count_tokens(text_b[:n]) - 1)
        break
    return tokens + _BASE if tokens else 0


class PrefixCache:
    """The last ``entries`` prompts the server processed. A new prompt's longest
    shared start with any of them is not prefilled again, as llama.cpp's slots,
    vLLM's automatic prefix caching and hosted prompt caching do; at least the
    prompt's last token is always computed."""

    def __init__(self, entries: int = 64) -> None:
        self._entries = entries
        self._seen: OrderedDict[Prompt, None] = OrderedDict()

    def cached(self, prompt: Prompt, prompt_tokens: int) -> int:
        """Tokens at the start of ``prompt`` already in the cache."""
        best = max((_shared_tokens(seen, prompt) for seen in self._seen), default=0)
        return min(best, max(0, prompt_tokens - 1))

    def remember(self, prompt: Prompt) -> None:
        """``prompt`` has been prefilled: later prompts may reuse its start."""
        self._seen[prompt] = None
        self._seen.move_to_end(prompt)
        while len(self._seen) > self._entries:
            self._seen.popitem(last=False)

    def lookup(self, prompt: Prompt, prompt_tokens: int) -> int:
        """:meth:`cached`, then :meth:`remember`."""
        hit = self.cached(prompt, prompt_tokens)
        self.remember(prompt)
        return hit
