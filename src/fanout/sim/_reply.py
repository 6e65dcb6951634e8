"""What the simulated model writes for a request: text, JSON that fits the format asked
for, or a call of one of the request's tools; and how it goes out, whole or streamed.

Everything is deterministic per question. The rules, as an instruction-following
model would act (docs/simulator.md, "Content"):

- a ``json_schema`` format is answered with JSON that fits the schema
  (:func:`fanout.sim._schema.instance`); when the question holds several marked
  questions and the schema has one string property per question (fanout's merged
  format) or one array property, each question's answer fills its place; when it has
  one property per question, all of one schema (fanout's merged structured format),
  each is filled with the value the question gets alone;
- ``json_object`` is answered with an instance of the JSON schema the prompt shows
  (instructor's JSON mode puts one there), else ``{"answer": ...}``;
- with ``tools`` (or the older ``functions``), the model calls one: the tool
  ``tool_choice`` names; else, unless ``tool_choice`` is ``"none"`` or the last message
  is a tool's result (which gets a text answer), the first tool whose name the
  question mentions, or the first tool. Its arguments fit the tool's parameters.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ._schema import find_schema, instance
from ._text import (
    _TOKEN,
    answer_for,
    asks_echo,
    count_tokens,
    end_line,
    render_merged,
    split_questions,
    wanted_tokens,
)

__all__ = ["Reply", "Tool", "ToolCall", "compose", "compose_chat", "token_ends", "truncate"]


@dataclass(frozen=True)
class Tool:
    name: str
    parameters: dict[str, Any]


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Reply:
    """What the model writes. ``text`` is what is written token by token (and counted):
    the content, or the call's arguments."""

    text: str
    finish_reason: str
    parts: int = 1
    call: ToolCall | None = None
    legacy: bool = False
    """The call is a ``function_call`` (the older ``functions`` parameter)."""

    def message(self) -> dict[str, Any]:
        """The chat completion's ``message``."""
        if self.call is None:
            return {"role": "assistant", "content": self.text, "refusal": None}
        if self.legacy:
            return {
                "role": "assistant",
                "content": None,
                "function_call": {"name": self.call.name, "arguments": self.text},
            }
        return {
            "role": "assistant",
            "content": None,
            "refusal": None,
            "tool_calls": [
                {
                    "id": self.call.id,
                    "type": "function",
                    "function": {"name": self.call.name, "arguments": self.text},
                }
            ],
        }

    def delta(self, piece: str, *, first: bool) -> dict[str, Any]:
        """A streamed chunk's ``delta`` carrying ``piece`` of :attr:`text`."""
        call = self.call
        if call is None:
            return {"role": "assistant", "content": piece} if first else {"content": piece}
        head: dict[str, Any] = {"role": "assistant", "content": None} if first else {}
        if self.legacy:
            fn = {"name": call.name, "arguments": piece} if first else {"arguments": piece}
            return {**head, "function_call": fn}
        entry: dict[str, Any] = {"index": 0, "function": {"arguments": piece}}
        if first:
            entry = {
                "index": 0,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": piece},
            }
        return {**head, "tool_calls": [entry]}


def truncate(text: str, tokens: int) -> str:
    """The prefix of ``text`` holding its first ``tokens`` tokens."""
    if tokens <= 0:
        return ""
    for i, match in enumerate(_TOKEN.finditer(text)):
        if i == tokens - 1:
            return text[: match.end()]
    return text


def token_ends(text: str) -> list[int]:
    return [m.end() for m in _TOKEN.finditer(text)]


def chat_tools(payload: dict[str, Any]) -> tuple[list[Tool], bool]:
    """The functions a chat request offers, and whether they are the older ``functions``."""
    tools = []
    for tool in payload.get("tools") or ():
        fn = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            tools.append(Tool(fn["name"], fn.get("parameters") or {}))
    if tools:
        return tools, False
    for fn in payload.get("functions") or ():
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            tools.append(Tool(fn["name"], fn.get("parameters") or {}))
    return tools, bool(tools)


def compose_chat(
    payload: dict[str, Any],
    prompt: Sequence[tuple[str, str]],
    question: str,
    answer_tokens: Any,
    max_tokens: int | None,
) -> Reply:
    """The reply to a chat completion request (``prompt``: its (role, text) pairs)."""
    tools, legacy = chat_tools(payload)
    choice = payload.get("function_call") if legacy else payload.get("tool_choice")
    fmt = payload.get("response_format")
    kind, schema = None, None
    if isinstance(fmt, dict) and fmt.get("type") in ("json_schema", "json_object"):
        kind = fmt["type"]
        spec = fmt.get("json_schema")
        if isinstance(spec, dict) and isinstance(spec.get("schema"), dict):
            schema = spec["schema"]
    after_tool = bool(prompt) and prompt[-1][0] in ("tool", "function")
    reply = compose(
        question,
        (text for _, text in prompt),
        kind,
        schema,
        tools,
        choice,
        after_tool=after_tool,
        answer_tokens=answer_tokens,
        max_tokens=max_tokens,
        ignore_eos=bool(payload.get("ignore_eos")),
    )
    finish = (
        "function_call" if legacy and reply.finish_reason == "tool_calls" else reply.finish_reason
    )
    return Reply(reply.text, finish, reply.parts, reply.call, legacy)


def compose(
    question: str,
    texts: Iterable[str],
    kind: str | None,
    schema: dict[str, Any] | None,
    tools: Sequence[Tool],
    choice: Any,
    *,
    after_tool: bool,
    answer_tokens: Any,
    max_tokens: int | None,
    ignore_eos: bool = False,
) -> Reply:
    """The reply to ``question``. ``kind``: None (text), ``"json_schema"`` (with
    ``schema``) or ``"json_object"``; ``texts``: every message's text (where a
    ``json_object`` request's schema may be); ``choice``: the request's tool choice."""
    tokens = wanted_tokens(question, answer_tokens)
    parts = 1
    call = None
    tool = _pick_tool(tools, choice, question, after_tool=after_tool)
    if tool is not None:
        text = json.dumps(
            instance(tool.parameters, f"{question}\x00{tool.name}", tokens), ensure_ascii=False
        )
        digest = hashlib.sha256(f"{question}\x00{tool.name}".encode()).hexdigest()
        call = ToolCall(id=f"call_{digest[:24]}", name=tool.name, arguments=text)
    elif kind == "json_schema" and schema is not None:
        found = split_questions(question)
        if len(found) > 1 and _one_place_per_question(schema):
            parts = len(found)
            answers = [answer_for(p.text, wanted_tokens(p.text, answer_tokens)) for p in found]
            text = render_merged(found, answers, schema)
        elif len(found) > 1 and _one_schema_per_question(schema, len(found)):
            # fanout's merged structured format: each property the question's own value,
            # the same as it gets asked alone, under the key it was given.
            parts = len(found)
            text = json.dumps(
                {
                    key: instance(sub, p.text, wanted_tokens(p.text, answer_tokens), root=schema)
                    for (key, sub), p in zip(schema["properties"].items(), found, strict=True)
                },
                ensure_ascii=False,
            )
        else:
            text = json.dumps(instance(schema, question, tokens), ensure_ascii=False)
    elif kind is not None:  # json_object, or json_schema without a schema
        shown = find_schema(list(texts))
        value = instance(shown, question, tokens) if shown is not None else None
        if not isinstance(value, dict):
            value = {"answer": answer_for(question, tokens)}
        text = json.dumps(value, ensure_ascii=False)
    else:
        found = split_questions(question)
        parts = len(found)
        if parts == 1:
            if ignore_eos and max_tokens is not None:
                tokens = max_tokens  # like llama.cpp and vLLM: write until max_tokens
            text = answer_for(found[0].text, tokens)
        else:
            answers = [answer_for(p.text, wanted_tokens(p.text, answer_tokens)) for p in found]
            text = render_merged(
                found, answers, None, end=end_line(question), echo=asks_echo(question)
            )
    finish = "stop" if call is None else "tool_calls"
    if max_tokens is not None and count_tokens(text) > max_tokens:
        text = truncate(text, max_tokens)
        finish = "length"
    if call is not None:
        call = ToolCall(call.id, call.name, text)
    return Reply(text, finish, parts, call)


def _one_place_per_question(schema: dict[str, Any]) -> bool:
    """A schema with one string property per question, or one array property: where a
    model puts each of several answers (fanout's merged format is the first)."""
    props = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(props, dict) or not props:
        return False
    kinds = [(p or {}).get("type") if isinstance(p, dict) else None for p in props.values()]
    return all(k == "string" for k in kinds) or kinds == ["array"]


def _one_schema_per_question(schema: dict[str, Any], questions: int) -> bool:
    """An object schema with one property per question, all with the same schema (not a
    plain string): where a model writes each question's structured answer (fanout's
    merged structured format, whose properties all refer to the caller's schema)."""
    props = schema.get("properties")
    if schema.get("type") != "object" or not isinstance(props, dict) or len(props) != questions:
        return False
    subs = list(props.values())
    return all(sub == subs[0] for sub in subs) and subs[0] != {"type": "string"}


def _pick_tool(
    tools: Sequence[Tool], choice: Any, question: str, *, after_tool: bool
) -> Tool | None:
    if not tools or choice == "none":
        return None
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else choice.get("name")
        for tool in tools:
            if tool.name == name:
                return tool
        if choice.get("type") not in ("function", None):
            return None  # a built-in tool (web search, ...): not simulated
    elif choice != "required" and after_tool:
        return None  # a tool's result came back: the model answers
    lowered = question.lower()
    named = [tool for tool in tools if tool.name.lower() in lowered]
    return named[0] if named else tools[0]
