"""The Responses API at the edge: a request the engine built for Chat Completions, sent
as ``client.responses.create(...)``, and its reply read back as a chat completion.

The engine thinks in chat completions from intake to results (``messages``,
``max_tokens``, ``choices``, ``usage.prompt_tokens``): with ``api="responses"`` only the
transport changes, through these translations.

* :func:`to_responses`: the system messages at the start become ``instructions``, the
  rest ``input`` (tool calls and their results as ``function_call`` /
  ``function_call_output`` items); ``max_tokens`` is ``max_output_tokens``,
  ``response_format`` is ``text.format``, function tools are flattened,
  ``reasoning_effort`` is ``reasoning.effort``;
* :func:`completion_of`: ``output_text`` is the message's content, ``function_call``
  items its tool calls, ``status: incomplete`` for ``max_output_tokens`` the
  ``finish_reason: length``, ``input_tokens`` / ``output_tokens`` the usage;
* :func:`chunks_of`: the stream's ``response.output_text.delta`` events as chunks, the
  ``response.completed`` (or ``incomplete``) event as the finish and the usage.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any

from ..core.exceptions import ConfigError
from ..core.params import answer_cap
from .retrying import UnreadableResponseError

if TYPE_CHECKING:
    from openai import AsyncStream
    from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = [
    "APIS",
    "ResponsesStream",
    "chat_names",
    "check_responses_kwargs",
    "chunks_of",
    "completion_of",
    "to_responses",
]

APIS = ("chat", "responses")
"""The APIs a call can be sent through: Chat Completions, or Responses."""

_SAME = frozenset(
    {"model", "temperature", "top_p", "metadata", "store", "user", "service_tier",
     "parallel_tool_calls", "prompt_cache_key", "prompt_cache_retention", "safety_identifier",
     "top_logprobs", "extra_headers", "extra_query", "extra_body", "timeout", "stream"}
)  # fmt: skip
_RENAMED = frozenset(
    {"messages", "max_tokens", "max_completion_tokens", "response_format", "tools",
     "tool_choice", "reasoning_effort", "verbosity", "stream_options"}
)  # fmt: skip


_RESPONSES_NAMES = {
    "max_output_tokens": "max_tokens",
    "instructions": "system",
    "text": "response_format (and verbosity)",
    "reasoning": "reasoning_effort",
    "input": "the questions",
}
"""The Responses API's own names for what a fanout call takes under its chat name."""


def chat_names(params: Mapping[str, Any], api: str) -> dict[str, Any]:
    """``params`` with the Responses API's names a call may use under ``api="responses"``
    in their chat form: ``max_output_tokens`` is ``max_tokens``. Any other Responses
    name (under either API), and ``max_output_tokens`` under ``api="chat"``, is one
    ConfigError naming what to pass instead."""
    out = dict(params)
    for name, chat in _RESPONSES_NAMES.items():
        if name not in out:
            continue
        if name == "max_output_tokens" and api == "responses":
            if "max_tokens" in out or "max_completion_tokens" in out:
                raise ConfigError(
                    "max_output_tokens= and max_tokens= both given: pass one (fanout sends "
                    "max_tokens as max_output_tokens with api='responses')"
                )
            out["max_tokens"] = out.pop(name)
            continue
        sent = f"sent as {name} with api='responses'"
        raise ConfigError(
            f"{name}= is the Responses API's name: pass {chat}= (fanout builds the request "
            f"from it, {sent})"
            if chat != "the questions"
            else f"input= is the Responses API's name for the questions: pass them as "
            f"fanout's questions ({sent})"
        )
    return out


def check_responses_kwargs(params: Mapping[str, Any]) -> None:
    """Refuse, before anything is sent, a chat parameter the Responses API has no place
    for (``n``, ``stop``, ``seed``, penalties, ``logprobs``, ...)."""
    left = sorted(set(params) - _SAME - _RENAMED)
    if left:
        raise ConfigError(
            f"{left[0]}= has no equivalent in the Responses API (api='responses'): leave it "
            "out, or send the call through Chat Completions (api='chat')"
        )


def _part(part: Any, role: str) -> Any:
    if not isinstance(part, Mapping):
        return part
    kind = part.get("type")
    if kind == "text":
        return {
            "type": "output_text" if role == "assistant" else "input_text",
            "text": part.get("text", ""),
        }
    if kind == "image_url":
        image = part.get("image_url")
        url = image.get("url") if isinstance(image, Mapping) else image
        return {"type": "input_image", "image_url": url, "detail": "auto"}
    return dict(part)


def _input(messages: list[Any]) -> tuple[str | None, list[dict[str, Any]]]:
    """``instructions`` (the leading system messages) and ``input`` items."""
    instructions: list[str] = []
    items: list[dict[str, Any]] = []
    for message in messages:
        message = dict(message)
        role = str(message.get("role", "user"))
        content = message.get("content")
        if role in ("system", "developer") and not items and isinstance(content, str):
            instructions.append(content)
            continue
        if role == "tool":
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": message.get("tool_call_id"),
                    "output": content if isinstance(content, str) else str(content),
                }
            )
            continue
        if isinstance(content, list):
            content = [_part(part, role) for part in content]
        if content is not None and content != "":
            items.append({"role": role, "content": content})
        for call in message.get("tool_calls") or ():
            fn = call.get("function") or {}
            items.append(
                {
                    "type": "function_call",
                    "call_id": call.get("id"),
                    "name": fn.get("name"),
                    "arguments": fn.get("arguments", ""),
                }
            )
    return ("\n\n".join(instructions) or None), items


def to_responses(params: Mapping[str, Any]) -> dict[str, Any]:
    """The ``responses.create`` arguments for a chat completion request's ``params``."""
    out = {name: value for name, value in params.items() if name in _SAME}
    instructions, items = _input(list(params["messages"]))
    if instructions is not None:
        out["instructions"] = instructions
    out["input"] = items
    cap = answer_cap(params)
    if cap is not None:
        out["max_output_tokens"] = cap
    text: dict[str, Any] = {}
    fmt = params.get("response_format")
    if isinstance(fmt, Mapping):
        if fmt.get("type") == "json_schema":
            spec = dict(fmt.get("json_schema") or {})
            text["format"] = {"type": "json_schema", **spec}
        else:
            text["format"] = dict(fmt)
    if params.get("verbosity") is not None:
        text["verbosity"] = params["verbosity"]
    if text:
        out["text"] = text
    if params.get("reasoning_effort") is not None:
        out["reasoning"] = {"effort": params["reasoning_effort"]}
    tools = []
    for tool in params.get("tools") or ():
        fn = tool.get("function") if isinstance(tool, Mapping) else None
        tools.append({"type": "function", **fn} if isinstance(fn, Mapping) else dict(tool))
    if tools:
        out["tools"] = tools
    choice = params.get("tool_choice")
    if isinstance(choice, Mapping) and isinstance(choice.get("function"), Mapping):
        choice = {"type": "function", "name": choice["function"].get("name")}
    if choice is not None:
        out["tool_choice"] = choice
    return out


def _get(owner: Any, name: str, default: Any = None) -> Any:
    if isinstance(owner, Mapping):
        return owner.get(name, default)
    return getattr(owner, name, default)


def _usage(usage: Any) -> dict[str, Any] | None:
    if usage is None:
        return None
    prompt, completion = _get(usage, "input_tokens"), _get(usage, "output_tokens")
    cached = _get(_get(usage, "input_tokens_details"), "cached_tokens")
    reasoning = _get(_get(usage, "output_tokens_details"), "reasoning_tokens")
    total = prompt + completion if isinstance(prompt, int) and isinstance(completion, int) else None
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": total,
        "prompt_tokens_details": {"cached_tokens": cached},
        "completion_tokens_details": {"reasoning_tokens": reasoning},
    }


def _finish(response: Any, tool_calls: bool) -> str:
    if _get(response, "status") == "incomplete":
        reason = _get(_get(response, "incomplete_details"), "reason")
        return "content_filter" if reason == "content_filter" else "length"
    return "tool_calls" if tool_calls else "stop"


def _string(part: Any, field: str) -> str:
    """A content part's ``field``, which must be a string: anything else is a reply that
    cannot be read (not its ``str()`` taken for an answer: ``None`` is not "None")."""
    value = _get(part, field, "")
    if not isinstance(value, str):
        raise UnreadableResponseError(
            f"the reply's {_get(part, 'type')} part holds no string: {field}={value!r}"[:300]
        )
    return value


def completion_of(response: Any) -> ChatCompletion:
    """A Responses API reply read as a chat completion of one choice (unchecked: the
    transport checks it as it checks every reply)."""
    from openai.types.chat import ChatCompletion

    output = _get(response, "output")
    if not isinstance(output, list) or _get(response, "object") not in (None, "response"):
        shown = " ".join(str(response).split())[:200]
        raise UnreadableResponseError(f"the reply is not a response: {shown!r}")
    if _get(response, "status") == "failed":
        error = _get(response, "error")
        raise UnreadableResponseError(f"the response failed: {_get(error, 'message', error)}")
    texts: list[str] = []
    refusals: list[str] = []
    calls: list[dict[str, Any]] = []
    for item in output:
        kind = _get(item, "type")
        if kind == "message":
            for part in _get(item, "content") or ():
                if _get(part, "type") == "output_text":
                    texts.append(_string(part, "text"))
                elif _get(part, "type") == "refusal":
                    refusals.append(_string(part, "refusal"))
        elif kind == "function_call":
            calls.append(
                {
                    "id": _get(item, "call_id"),
                    "type": "function",
                    "function": {
                        "name": _get(item, "name"),
                        "arguments": _get(item, "arguments", ""),
                    },
                }
            )
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(texts) if texts or not calls else None,
        "refusal": "".join(refusals) or None,
    }
    if calls:
        message["tool_calls"] = calls
    created = _get(response, "created_at")
    return ChatCompletion.model_construct(
        id=str(_get(response, "id", "")),
        object="chat.completion",
        created=int(created) if isinstance(created, (int, float)) else int(time.time()),
        model=str(_get(response, "model", "")),
        choices=[_choice(message, _finish(response, bool(calls)))],
        usage=_usage(_get(response, "usage")),
    )


def _choice(message: dict[str, Any], finish: str) -> Any:
    from openai.types.chat import ChatCompletionMessage
    from openai.types.chat.chat_completion import Choice

    return Choice.model_construct(
        index=0,
        finish_reason=finish,
        logprobs=None,
        message=ChatCompletionMessage.model_validate(message),
    )


async def chunks_of(events: AsyncIterator[Any]) -> AsyncIterator[ChatCompletionChunk]:
    """A Responses API stream's events as chat completion chunks: its text deltas, then
    the finish, then the usage."""
    from openai.types.chat import ChatCompletionChunk

    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> Any:
        return ChatCompletionChunk.model_validate(
            {
                "id": "",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "",
                "choices": []
                if usage is not None
                else [{"index": 0, "delta": delta, "finish_reason": finish}],
                "usage": usage,
            }
        )

    calls = False
    async for event in events:
        kind = _get(event, "type")
        if kind == "response.output_text.delta":
            yield chunk({"role": "assistant", "content": _get(event, "delta", "")})
        elif kind == "response.output_item.added":
            calls = calls or _get(_get(event, "item"), "type") == "function_call"
        elif kind in ("response.completed", "response.incomplete", "response.failed"):
            response = _get(event, "response")
            if kind == "response.failed":
                error = _get(response, "error")
                raise UnreadableResponseError(
                    f"the response failed: {_get(error, 'message', error)}"
                )
            yield chunk({}, _finish(response, calls))
            usage = _usage(_get(response, "usage"))
            if usage is not None:
                yield chunk({}, usage=usage)


class ResponsesStream:
    """A Responses API stream read as chat completion chunks (``chunks_of``), with the
    SDK stream's ``response`` and ``close``."""

    def __init__(self, events: AsyncStream[Any]) -> None:
        self._events = events
        self._chunks = chunks_of(events)
        self.response = events.response

    def __aiter__(self) -> AsyncIterator[ChatCompletionChunk]:
        return self._chunks

    async def __anext__(self) -> ChatCompletionChunk:
        return await self._chunks.__anext__()

    async def close(self) -> None:
        await self._events.close()
