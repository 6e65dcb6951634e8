"""Estimating a request's prompt tokens before it is sent.

If ``tiktoken`` is installed *and its encoding files are already cached* (in
``TIKTOKEN_CACHE_DIR``, or tiktoken's default cache), it counts the text. fanout
never makes tiktoken download them: it would reach a host other than the endpoint.
Otherwise a documented estimate is used:

* ASCII text: one token per 4 characters, rounded up (OpenAI's rule of thumb);
* any other character (CJK, Hangul, accented letters, emoji): one token each,
  which over-counts slightly for Latin scripts and is about right for CJK;
* plus 3 tokens per message and 3 per request for the chat format.

A request is billed for more than its messages' text: ``estimate_request_tokens``
adds the JSON text of every other field the model reads (tool and function
definitions, the response format's schema, ``tool_choice``, a message's tool calls,
``extra_body``, ...), at one token per 3 ASCII characters (and one per other
character) when tiktoken cannot count it (JSON is dense in punctuation; the hosted APIs render tools more compactly than their
JSON, so this errs high). Images, audio and files are not counted: their tokens depend
on their size and the model, which the request does not say.

An estimate decides how much of the tokens-per-minute budget to reserve (corrected
with the usage the API reports) and a request's worst case under a spend cap.
"""

from __future__ import annotations

import contextlib
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import Any

__all__ = [
    "estimate_messages_tokens",
    "estimate_request_tokens",
    "estimate_text_tokens",
    "worst_request_tokens",
]

_PER_MESSAGE = 3
_PER_REQUEST = 3
_JSON_CHARS_PER_TOKEN = 3

# Request fields the model does not read as text: sampling, output and transport
# settings (counted elsewhere, as ``max_tokens`` is, or not billed at all). Every other
# field is counted as its JSON, so a new one errs on the side of reserving too much.
_NOT_PROMPT = frozenset(
    {
        "messages", "model", "max_tokens", "max_completion_tokens", "max_output_tokens", "n",
        "temperature", "top_p", "stream", "stream_options", "stop", "presence_penalty",
        "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user", "seed",
        "parallel_tool_calls", "metadata", "store", "service_tier", "reasoning_effort",
        "modalities", "prompt_cache_key", "safety_identifier", "verbosity", "timeout",
        "extra_headers", "extra_query", "prediction", "background",
        "truncation", "include", "previous_response_id",
    }
)  # fmt: skip


@lru_cache(maxsize=8)
def _tiktoken_counter(model: str, *, exact: bool = False) -> Callable[[str], int] | None:
    """tiktoken's count for ``model``'s encoding, else (not ``exact``) for o200k_base;
    None where tiktoken or its cached files are missing (or, ``exact``, where it does
    not know the model: not an OpenAI one)."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        with _no_downloads():
            try:
                encoding = tiktoken.encoding_for_model(model)
            except KeyError:
                if exact:
                    return None
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


def _json_text(value: Any) -> str:
    """``value`` as the JSON a request carries (a pydantic model class, as
    ``response_format=Model`` passes, as its JSON schema)."""

    def schema_of(obj: Any) -> Any:
        schema = getattr(obj, "model_json_schema", None)
        return schema() if callable(schema) else str(obj)

    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=schema_of)


def estimate_request_tokens(params: Mapping[str, Any], model: str | None = None) -> int:
    """Estimated prompt tokens a chat request is billed for: its messages' text (as
    :func:`estimate_messages_tokens`), each message's other fields (tool calls, names),
    and every request field the model reads, as its JSON (see the module docstring)."""
    counter = _tiktoken_counter(model or "gpt-4o")
    total = estimate_messages_tokens(params.get("messages") or [], model)
    return total + _fields_tokens(params, counter or _json_tokens)


def worst_request_tokens(params: Mapping[str, Any], model: str | None = None) -> int:
    """The most prompt tokens a request can be billed for, whatever the endpoint's
    tokenizer (a spend cap's worst case): where tiktoken knows ``model``'s own encoding
    (an OpenAI model, its files cached), its count, which is exact; else one token per
    UTF-8 byte of every text the model reads, which no byte-level tokenizer exceeds
    (the estimate's one per 4 characters was 2-4 times low on dense text, and a cap was
    passed by as much)."""
    exact = _tiktoken_counter(model or "", exact=True) if model else None
    if exact is not None:
        return estimate_request_tokens(params, model)
    total = _PER_REQUEST
    for message in params.get("messages") or []:
        if isinstance(message, Mapping):
            total += _PER_MESSAGE + _utf8_bytes(_content_text(message.get("content")))
    return total + _fields_tokens(params, _utf8_bytes)


def _utf8_bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _fields_tokens(params: Mapping[str, Any], count: Callable[[str], int]) -> int:
    """The tokens of a request's fields other than its messages' text, each as JSON."""
    messages = params.get("messages") or []
    total = 0
    extras: list[Any] = []
    for message in messages:
        if isinstance(message, Mapping):
            fields = {k: v for k, v in message.items() if k not in ("role", "content")}
            if any(v is not None for v in fields.values()):
                extras.append(fields)
    extra = params.get("extra_body")
    fields = {**params, **extra} if isinstance(extra, Mapping) else dict(params)
    fields.pop("extra_body", None)  # merged into the body by the SDK: counted as its fields
    rest = {k: v for k, v in fields.items() if k not in _NOT_PROMPT and v is not None}
    if rest:
        extras.append(rest)
    for extra in extras:
        total += count(_json_text(extra))
    return total


def _json_tokens(text: str) -> int:
    """The fallback estimate for JSON text: one token per 3 ASCII characters (dense in
    punctuation), one per other character (as for any text)."""
    ascii_chars = len(text) if text.isascii() else len(text.encode("ascii", "ignore"))
    return math.ceil(ascii_chars / _JSON_CHARS_PER_TOKEN) + (len(text) - ascii_chars)
