"""What a reply must be to count: a chat completion, an answer in it, usage as counts.

The SDK builds a response's model without validating it (``construct``), so a 200 can
come back as anything: an HTML page (a ``str``), a proxy's ``{"error": ...}`` with
``choices: null``, a choice without a message, usage in strings. The transport passes
every reply through :func:`checked_completion` before anything reads it:

* a body that is no chat completion raises :class:`UnreadableResponseError`, retried
  like a garbled body, then the question's :class:`~fanout.MalformedResponseError`;
* ``usage`` is read defensively (:func:`~fanout.core.usage.clean_usage`): counts that are not
  non-negative integers (or integer strings) make the usage unreported, never cost
  the answer.

A question asked alone is then judged (:func:`judge`): empty is not an answer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..core.usage import clean_usage
from .retrying import EmptyReplyError, RefusedReplyError, UnreadableResponseError

if TYPE_CHECKING:  # imported when a reply is read, not with fanout (see wrapper/_client.py)
    from openai.types.chat import ChatCompletion, ChatCompletionMessage

__all__ = ["checked_completion", "clean_usage", "completion_from_json", "judge", "tool_calls_of"]

_TOOL_PARAMS = frozenset({"tools", "functions"})


def _glimpse(value: object, limit: int = 200) -> str:
    """A short, one-line rendering of what came instead of a completion."""
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        text = value
    elif isinstance(value, (dict, list)):
        text = json.dumps(value, default=str, ensure_ascii=False)
    elif isinstance(value, BaseModel):
        text = json.dumps(value.model_dump(mode="json", warnings=False), ensure_ascii=False)
    else:
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= limit else f"{text[:limit]}..."


def _what_it_says(completion: object) -> str:
    """The ``error`` a proxy put in a 200, if any, as ``; it says: ...``."""
    error = getattr(completion, "error", None)
    if error is None:
        return ""
    message = error.get("message") if isinstance(error, Mapping) else None
    return f"; it says: {_glimpse(message if isinstance(message, str) else error)}"


@functools.cache
def _chat_types() -> tuple[type[ChatCompletion], type[Any], type[ChatCompletionMessage]]:
    """The SDK's completion, choice and message models, imported on first use (once:
    an import statement per reply is a cost on the hot path)."""
    from openai.types.chat import ChatCompletion, ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice

    return ChatCompletion, Choice, ChatCompletionMessage


def checked_completion(raw: object) -> ChatCompletion:
    """``raw``, the parsed body of a 200, if it is a chat completion with at least one
    choice, each with a message whose text fields are text; its usage cleaned
    (:func:`clean_usage`). Raises :class:`UnreadableResponseError` (retried) if it is
    no chat completion, :class:`EmptyReplyError` if its choices are empty."""
    completion_type, choice_type, message_type = _chat_types()
    if not isinstance(raw, completion_type):
        raise UnreadableResponseError(f"the reply is not a chat completion: {_glimpse(raw)!r}")
    choices = getattr(raw, "choices", None)
    if not isinstance(choices, list):
        raise UnreadableResponseError(
            f"the reply is not a chat completion: its choices are {_glimpse(choices)}"
            + _what_it_says(raw)
        )
    if not choices:
        raise EmptyReplyError("the reply has no choices (an empty list)" + _what_it_says(raw))
    for choice in choices:
        message = getattr(choice, "message", None)
        if not isinstance(choice, choice_type) or not isinstance(message, message_type):
            raise UnreadableResponseError(
                f"the reply is not a chat completion: a choice has no message: {_glimpse(choice)}"
            )
        for name in ("content", "refusal"):
            value = getattr(message, name, None)
            if value is not None and not isinstance(value, str):
                raise UnreadableResponseError(
                    f"the reply is not a chat completion: its message's {name} is "
                    f"{type(value).__name__}, not text"
                )
        if not isinstance(message.tool_calls, (list, type(None))):
            raise UnreadableResponseError(
                "the reply is not a chat completion: its message's tool_calls are no list"
            )
    raw.usage = clean_usage(getattr(raw, "usage", None))
    return raw


def completion_from_json(body: bytes) -> ChatCompletion:
    """The completion in a JSON body, read as the SDK reads one (without validating it),
    then checked (:func:`checked_completion`)."""
    from openai.types.chat import ChatCompletion

    try:
        data = json.loads(body)
    except ValueError:
        raise UnreadableResponseError(
            f"the reply is not a chat completion: {_glimpse(body)!r}"
        ) from None
    if not isinstance(data, dict):
        raise UnreadableResponseError(f"the reply is not a chat completion: {_glimpse(data)}")
    return checked_completion(ChatCompletion.construct(**data))


def tool_calls_of(message: ChatCompletionMessage) -> list[dict[str, Any]]:
    """The tool calls of a message as plain data (a legacy ``function_call`` as one)."""
    calls: list[dict[str, Any]] = []
    for call in message.tool_calls or []:
        if isinstance(call, BaseModel):
            calls.append(call.model_dump(mode="json", exclude_unset=True, warnings=False))
        elif isinstance(call, Mapping):
            calls.append(dict(call))
    function_call = getattr(message, "function_call", None)
    if isinstance(function_call, BaseModel):
        calls.append(
            {
                "type": "function",
                "function": function_call.model_dump(
                    mode="json", exclude_unset=True, warnings=False
                ),
            }
        )
    return calls


def _field(owner: object, name: str) -> object:
    if isinstance(owner, Mapping):
        return owner.get(name)
    return getattr(owner, name, None)


def _names(calls: list[dict[str, Any]]) -> str:
    names = [str(_field(call.get("function"), "name") or call.get("type") or "?") for call in calls]
    return ", ".join(names)


def judge(completion: ChatCompletion, params: Mapping[str, Any]) -> None:
    """Does the first choice answer the question asked alone with ``params``? It does
    when it holds text, or tool calls the request asked for (``tools=``). Raises
    :class:`RefusedReplyError` for a refusal, else :class:`EmptyReplyError` (retried
    unless the reply was cut at ``max_tokens`` or filtered, or holds tool calls the
    request offered no tools for: those would come back the same)."""
    choice = completion.choices[0]
    message = choice.message
    if message.content and message.content.strip():
        return
    calls = tool_calls_of(message)
    if calls and _TOOL_PARAMS & params.keys():
        return
    if message.refusal and message.refusal.strip():
        raise RefusedReplyError(message.refusal)
    if calls:
        raise EmptyReplyError(
            f"the reply held no text, only tool calls ({_names(calls)}) although the request "
            "offered no tools",
            retry=False,
            tool_calls=calls,
        )
    finish = choice.finish_reason
    if finish == "length":
        raise EmptyReplyError(
            "the reply was cut at max_tokens before any text (a reasoning model may have "
            "spent them all on reasoning): raise max_tokens",
            retry=False,
        )
    if finish == "content_filter":
        raise EmptyReplyError("the endpoint's content filter withheld the reply", retry=False)
    raise EmptyReplyError(f"the reply held no text (finish_reason {finish!r})")
