"""The two APIs the simulator speaks: Chat Completions (``POST /v1/chat/completions``)
and Responses (``POST /v1/responses``).

Everything else — the API key, limits, quota, faults, the engine's timing — is the
same for both (``_server.py``). Each API reads its request into the conversation the
model sees, composes the reply (``_reply.py``), and writes it whole or as its stream:
chat completion chunks ending in ``[DONE]``, or the Responses API's typed events
(``response.created`` ... ``response.output_text.delta`` ... ``response.completed``).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ._reply import Reply, Tool, compose, compose_chat

__all__ = ["CHAT", "RESPONSES", "Api", "Parsed"]


def _error(message: str, param: str | None = None, code: str | None = None) -> dict[str, Any]:
    return {
        "error": {"message": message, "type": "invalid_request_error", "param": param, "code": code}
    }


@dataclass
class Parsed:
    """A request, read: the conversation (as chat messages), and how to answer it."""

    payload: dict[str, Any]
    messages: list[Any]
    max_tokens: int | None
    stream: bool
    n: int = 1
    include_usage: bool = False
    id: str = ""
    sequence: int = 0
    """Events of its stream so far (the Responses API numbers them)."""
    created: int = field(default_factory=lambda: int(time.time()))

    @property
    def model(self) -> str:
        return str(self.payload["model"])


def _sse(obj: dict[str, Any], event: str | None = None) -> bytes:
    head = f"event: {event}\n".encode() if event else b""
    return head + b"data: " + json.dumps(obj, separators=(",", ":")).encode() + b"\n\n"


class Api:
    """What differs between the two APIs (see the module docstring)."""

    name = ""
    known: frozenset[str] = frozenset()

    def read(self, payload: dict[str, Any], response_format_ok: bool) -> Parsed | dict[str, Any]:
        """The request, or the 400 body that refuses it."""
        raise NotImplementedError

    def compose(self, parsed: Parsed, prompt: Any, question: str, answer_tokens: Any) -> Reply:
        raise NotImplementedError

    def body(self, parsed: Parsed, reply: Reply, usage: dict[str, Any]) -> dict[str, Any]:
        raise NotImplementedError

    def opening(self, parsed: Parsed, reply: Reply) -> list[bytes]:
        """What a stream starts with, before the first token."""
        return []

    def piece(self, parsed: Parsed, reply: Reply, text: str, *, first: bool) -> bytes:
        raise NotImplementedError

    def closing(self, parsed: Parsed, reply: Reply, usage: dict[str, Any]) -> list[bytes]:
        raise NotImplementedError


class _Chat(Api):
    name = "chat"
    known = frozenset(
        {
            "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p",
            "n", "stream", "stream_options", "stop", "presence_penalty", "frequency_penalty",
            "logit_bias", "logprobs", "top_logprobs", "user", "seed", "response_format", "tools",
            "tool_choice", "parallel_tool_calls", "metadata", "store", "service_tier",
            "reasoning_effort", "modalities", "prediction", "audio", "web_search_options",
            "prompt_cache_key", "safety_identifier", "verbosity", "functions", "function_call",
            "ignore_eos",
        }
    )  # fmt: skip

    def read(self, payload: dict[str, Any], response_format_ok: bool) -> Parsed | dict[str, Any]:
        messages = payload.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error("'messages' must be a non-empty array", "messages")
        if not isinstance(payload.get("model"), str):
            return _error("'model' is required", "model")
        n = payload.get("n") or 1
        max_tokens = payload.get("max_completion_tokens", payload.get("max_tokens"))
        if (
            not isinstance(n, int)
            or n < 1
            or (max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1))
        ):
            return _error("invalid 'n' or 'max_tokens'")
        if payload.get("response_format") is not None and not response_format_ok:
            return _error(
                "response_format is not supported by this model",
                "response_format",
                "unsupported_parameter",
            )
        include = bool((payload.get("stream_options") or {}).get("include_usage"))
        return Parsed(
            payload,
            messages,
            max_tokens,
            bool(payload.get("stream")),
            n,
            include,
            id=f"chatcmpl-{uuid.uuid4().hex[:24]}",
        )

    def compose(self, parsed: Parsed, prompt: Any, question: str, answer_tokens: Any) -> Reply:
        return compose_chat(parsed.payload, prompt, question, answer_tokens, parsed.max_tokens)

    def _chunk(
        self, parsed: Parsed, delta: dict[str, Any], finish: str | None, usage: Any = None
    ) -> bytes:
        obj: dict[str, Any] = {
            "id": parsed.id,
            "object": "chat.completion.chunk",
            "created": parsed.created,
            "model": parsed.model,
            "choices": []
            if usage is not None
            else [
                {"index": i, "delta": delta, "logprobs": None, "finish_reason": finish}
                for i in range(parsed.n)
            ],
        }
        if usage is not None or parsed.include_usage:
            obj["usage"] = usage
        return _sse(obj)

    def body(self, parsed: Parsed, reply: Reply, usage: dict[str, Any]) -> dict[str, Any]:
        choices = [
            {
                "index": i,
                "message": reply.message(),
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
            for i in range(parsed.n)
        ]
        return {
            "id": parsed.id,
            "object": "chat.completion",
            "created": parsed.created,
            "model": parsed.model,
            "choices": choices,
            "usage": usage,
            "system_fingerprint": "fp_fanout_sim",
        }

    def piece(self, parsed: Parsed, reply: Reply, text: str, *, first: bool) -> bytes:
        return self._chunk(parsed, reply.delta(text, first=first), None)

    def closing(self, parsed: Parsed, reply: Reply, usage: dict[str, Any]) -> list[bytes]:
        out = [self._chunk(parsed, {}, reply.finish_reason)]
        if parsed.include_usage:
            out.append(self._chunk(parsed, {}, None, usage=usage))
        return [*out, b"data: [DONE]\n\n"]


# --- the Responses API -------------------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and part.get("type") in ("input_text", "output_text", "text")
        )
    return ""


def _messages_of(payload: dict[str, Any]) -> list[dict[str, Any]] | None:
    """The conversation a Responses request holds (``instructions``, then ``input``), as
    chat messages; None if ``input`` is neither text nor a list of items."""
    messages: list[dict[str, Any]] = []
    if isinstance(payload.get("instructions"), str) and payload["instructions"]:
        messages.append({"role": "system", "content": payload["instructions"]})
    given = payload.get("input")
    if isinstance(given, str):
        return [*messages, {"role": "user", "content": given}]
    if not isinstance(given, list):
        return None
    for item in given:
        if not isinstance(item, dict):
            return None
        kind = item.get("type", "message")
        if kind == "message" and isinstance(item.get("role"), str):
            role = "system" if item["role"] == "developer" else item["role"]
            messages.append({"role": role, "content": _text_of(item.get("content"))})
        elif kind == "function_call":
            messages.append({"role": "assistant", "content": str(item.get("arguments", ""))})
        elif kind == "function_call_output":
            messages.append({"role": "tool", "content": _text_of(item.get("output"))})
    return messages


class _Responses(Api):
    name = "responses"
    known = frozenset(
        {
            "model", "input", "instructions", "max_output_tokens", "temperature", "top_p",
            "stream", "stream_options", "text", "tools", "tool_choice", "parallel_tool_calls",
            "metadata", "store", "user", "previous_response_id", "reasoning", "truncation",
            "include", "service_tier", "prompt_cache_key", "prompt_cache_retention",
            "safety_identifier", "background", "top_logprobs", "max_tool_calls", "conversation",
            "prompt",
        }
    )  # fmt: skip

    def read(self, payload: dict[str, Any], response_format_ok: bool) -> Parsed | dict[str, Any]:
        messages = _messages_of(payload)
        if not messages or not any(m["role"] != "system" for m in messages):
            return _error("'input' must be a string or a non-empty array of input items", "input")
        if not isinstance(payload.get("model"), str):
            return _error("'model' is required", "model")
        max_tokens = payload.get("max_output_tokens")
        if max_tokens is not None and (not isinstance(max_tokens, int) or max_tokens < 1):
            return _error("invalid 'max_output_tokens'", "max_output_tokens")
        fmt = (payload.get("text") or {}).get("format") or {}
        if fmt.get("type") in ("json_schema", "json_object") and not response_format_ok:
            return _error(
                "text.format json_schema is not supported by this model",
                "text.format",
                "unsupported_parameter",
            )
        return Parsed(
            payload,
            messages,
            max_tokens,
            bool(payload.get("stream")),
            id=f"resp_{uuid.uuid4().hex}",
        )

    def compose(self, parsed: Parsed, prompt: Any, question: str, answer_tokens: Any) -> Reply:
        payload = parsed.payload
        fmt = (payload.get("text") or {}).get("format") or {}
        kind = fmt.get("type") if fmt.get("type") in ("json_schema", "json_object") else None
        schema = fmt.get("schema") if isinstance(fmt.get("schema"), dict) else None
        tools = [
            Tool(t["name"], t.get("parameters") or {})
            for t in payload.get("tools") or ()
            if isinstance(t, dict)
            and t.get("type") == "function"
            and isinstance(t.get("name"), str)
        ]
        after_tool = bool(prompt) and prompt[-1][0] == "tool"
        return compose(
            question,
            (text for _, text in prompt),
            kind,
            schema,
            tools,
            payload.get("tool_choice"),
            after_tool=after_tool,
            answer_tokens=answer_tokens,
            max_tokens=parsed.max_tokens,
        )

    @staticmethod
    def _item_id(parsed: Parsed, reply: Reply) -> str:
        return ("fc_" if reply.call is not None else "msg_") + parsed.id[5:]

    def _item(self, parsed: Parsed, reply: Reply, *, done: bool) -> dict[str, Any]:
        status = "completed" if done else "in_progress"
        text = reply.text if done else ""
        if reply.call is not None:
            return {
                "type": "function_call",
                "id": self._item_id(parsed, reply),
                "call_id": reply.call.id,
                "name": reply.call.name,
                "arguments": text,
                "status": status,
            }
        content = [self._part(text)] if done else []
        return {
            "type": "message",
            "id": self._item_id(parsed, reply),
            "status": status,
            "role": "assistant",
            "content": content,
        }

    @staticmethod
    def _part(text: str) -> dict[str, Any]:
        return {"type": "output_text", "text": text, "annotations": [], "logprobs": []}

    def _response(
        self, parsed: Parsed, reply: Reply | None, usage: dict[str, Any] | None
    ) -> dict[str, Any]:
        payload = parsed.payload
        done = reply is not None
        incomplete = done and reply is not None and reply.finish_reason == "length"
        status = "incomplete" if incomplete else "completed" if done else "in_progress"
        return {
            "id": parsed.id,
            "object": "response",
            "created_at": parsed.created,
            "status": status,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"} if incomplete else None,
            "instructions": payload.get("instructions"),
            "model": parsed.model,
            "max_output_tokens": parsed.max_tokens,
            "output": [self._item(parsed, reply, done=True)] if reply is not None else [],
            "parallel_tool_calls": payload.get("parallel_tool_calls", True),
            "previous_response_id": payload.get("previous_response_id"),
            "temperature": payload.get("temperature", 1.0),
            "top_p": payload.get("top_p", 1.0),
            "text": payload.get("text") or {"format": {"type": "text"}},
            "tool_choice": payload.get("tool_choice", "auto"),
            "tools": payload.get("tools") or [],
            "truncation": payload.get("truncation", "disabled"),
            "store": payload.get("store", True),
            "metadata": payload.get("metadata") or {},
            "reasoning": payload.get("reasoning"),
            "usage": _usage(usage) if usage is not None else None,
        }

    def body(self, parsed: Parsed, reply: Reply, usage: dict[str, Any]) -> dict[str, Any]:
        return self._response(parsed, reply, usage)

    def _event(self, parsed: Parsed, kind: str, **fields: Any) -> bytes:
        parsed.sequence += 1
        return _sse({"type": kind, "sequence_number": parsed.sequence - 1, **fields}, kind)

    def opening(self, parsed: Parsed, reply: Reply) -> list[bytes]:
        head = self._response(parsed, None, None)
        where = {"output_index": 0, "item_id": self._item_id(parsed, reply)}
        out = [
            self._event(parsed, "response.created", response=head),
            self._event(parsed, "response.in_progress", response=head),
            self._event(
                parsed,
                "response.output_item.added",
                output_index=0,
                item=self._item(parsed, reply, done=False),
            ),
        ]
        if reply.call is None:
            out.append(
                self._event(
                    parsed,
                    "response.content_part.added",
                    **where,
                    content_index=0,
                    part=self._part(""),
                )
            )
        return out

    def piece(self, parsed: Parsed, reply: Reply, text: str, *, first: bool) -> bytes:
        where = {"output_index": 0, "item_id": self._item_id(parsed, reply)}
        if reply.call is not None:
            return self._event(
                parsed, "response.function_call_arguments.delta", **where, delta=text
            )
        return self._event(
            parsed, "response.output_text.delta", **where, content_index=0, delta=text, logprobs=[]
        )

    def closing(self, parsed: Parsed, reply: Reply, usage: dict[str, Any]) -> list[bytes]:
        where = {"output_index": 0, "item_id": self._item_id(parsed, reply)}
        if reply.call is not None:
            out = [
                self._event(
                    parsed,
                    "response.function_call_arguments.done",
                    **where,
                    name=reply.call.name,
                    arguments=reply.text,
                )
            ]
        else:
            out = [
                self._event(
                    parsed,
                    "response.output_text.done",
                    **where,
                    content_index=0,
                    text=reply.text,
                    logprobs=[],
                ),
                self._event(
                    parsed,
                    "response.content_part.done",
                    **where,
                    content_index=0,
                    part=self._part(reply.text),
                ),
            ]
        out.append(
            self._event(
                parsed,
                "response.output_item.done",
                output_index=0,
                item=self._item(parsed, reply, done=True),
            )
        )
        whole = self._response(parsed, reply, usage)
        end = "response.incomplete" if whole["status"] == "incomplete" else "response.completed"
        return [*out, self._event(parsed, end, response=whole)]


def _usage(usage: dict[str, Any]) -> dict[str, Any]:
    """A chat completion's usage as the Responses API reports it."""
    return {
        "input_tokens": usage["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": usage["prompt_tokens_details"]["cached_tokens"]},
        "output_tokens": usage["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["total_tokens"],
    }


CHAT: Api = _Chat()
RESPONSES: Api = _Responses()
