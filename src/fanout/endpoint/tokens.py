"""Estimating a request's prompt tokens before it is sent.

If ``tiktoken`` is installed *and its encoding files are already cached* (in
``TIKTOKEN_CACHE_DIR``, or tiktoken's default cache), it counts the text. fanout
never makes tiktoken download them: it would reach a host other than the endpoint.
Otherwise a documented estimate is used:

* ASCII text: one token per 4 characters, rounded up (OpenAI's rule of thumb);
* any other character (CJK, Hangul, accented letters, emoji): one token each,
  which over-counts slightly for Latin scripts and is about right for CJK;
* plus 3 tokens per message and 3 per request for the chat format.

An estimate only decides how much of the tokens-per-minute budget to reserve;
the reservation is corrected with the usage the API reports.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = ["estimate_messages_tokens", "estimate_text_tokens"]

_PER_MESSAGE = 3
_PER_REQUEST = 3


@lru_cache(maxsize=8)
def _tiktoken_counter(model: str) -> Callable[[str], int] | None:
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        with _no_downloads():
            try:
                encoding = tiktoken.encoding_for_model(model)
            except KeyError:
                encoding = tiktoken.get_encoding("o200k_base")
    except Exception:  # no cached file, or a broken install
        return None

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return count


@contextlib.contextmanager
def _no_downloads() -> Iterator[None]:
    """tiktoken reads its encoding files from its cache, or downloads them: while
    fanout loads one, a download is refused instead (tiktoken then raises)."""
    import tiktoken.load

    read_file = tiktoken.load.read_file

    def cached_only(blobpath: str) -> bytes:
        if "://" in blobpath:
            raise OSError(f"fanout does not download tiktoken files ({blobpath})")
        return read_file(blobpath)

    tiktoken.load.read_file = cached_only
    try:
        yield
    finally:
        tiktoken.load.read_file = read_file


def estimate_text_tokens(text: str) -> int:
    """The fallback estimate for one piece of text (see the module docstring)."""
    # Counted in C: the ASCII characters are what survives an ASCII encoding.
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / 4) + (len(text) - ascii_chars)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Iterable):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def estimate_messages_tokens(
    messages: Iterable[Mapping[str, Any]], model: str | None = None, *, use_tiktoken: bool = True
) -> int:
    """Estimated prompt tokens of a chat request."""
    counter = _tiktoken_counter(model or "gpt-4o") if use_tiktoken else None
    count = counter or estimate_text_tokens
    total = _PER_REQUEST
    for message in messages:
        total += _PER_MESSAGE + count(_content_text(message.get("content")))
    return total
