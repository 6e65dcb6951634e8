"""``wrapped.responses``: the Responses API through the wrapped client.

``wrapped.responses.create(...)`` splits an ``input`` that holds several independent
questions, as ``chat.completions.create`` does its last message: each part is asked
through the Responses API (``api="responses"``), with the ``instructions`` and the
earlier input items, and the answers come back as one ``Response`` whose
``output_text`` holds them in the user's own numbering (``stream=True``: the Responses
API's events, the first part live). Anything else — one question, tools, a
structured ``text.format``, ``previous_response_id``, a conversation, background
mode, input that is not text — goes straight through to the wrapped client.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from .. import telemetry as telemetry
from ..core.models import Question
from ._parts import (
    REPORT_FIELD,
    FanoutStream,
    Passed,
    RawResponse,
    StreamEnd,
    finish_of,
    pop_policy,
    raise_failures,
)

if TYPE_CHECKING:
    from ..core.config import Policy
    from ..detection._detector import Detection
    from ..engine.facade import Fanout

__all__ = ["Responses", "Splitter"]


class Splitter(Protocol):
    """What ``wrapped.responses`` needs of the wrapped client (``FanoutClient``): the
    user's client, its ``Fanout``, the decision to split a conversation's last message,
    and the parts' answers as one stream."""

    client: Any
    fanout: Fanout

    async def _plan_split(
        self, kwargs: Mapping[str, Any]
    ) -> tuple[Detection, list[Any]] | None: ...

    def stream_parts(
        self,
        detection: Detection,
        questions: list[Question],
        model: str,
        policy: Policy | None,
        kwargs: dict[str, Any],
        render: Callable[[AsyncIterator[str | StreamEnd]], AsyncIterator[Any]],
        *,
        api: str = "chat",
    ) -> FanoutStream: ...


_INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
"""A ``finish_reason`` that makes a response ``incomplete``, and the reason it gives."""

# What a split call may carry: each is given to every part (Chat Completions names on
# the left where they differ, see engine/responses.py).
_SPLITTABLE = frozenset(
    {"model", "input", "instructions", "max_output_tokens", "temperature", "top_p", "metadata",
     "store", "user", "service_tier", "parallel_tool_calls", "prompt_cache_key",
     "prompt_cache_retention", "safety_identifier", "reasoning", "text", "stream",
     "extra_headers", "extra_query", "extra_body", "timeout"}
)  # fmt: skip


class _RawResponses:
    def __init__(self, owner: Splitter) -> None:
        self._owner = owner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.responses.with_raw_response, name)

    async def create(self, **kwargs: Any) -> Any:
        """``responses.with_raw_response.create`` with fan-out (LangChain calls it)."""
        return await _create(self._owner, kwargs, raw=True)


class Responses:
    """``wrapped.responses``: ``create`` fans out; everything else is the client's own."""

    def __init__(self, owner: Splitter) -> None:
        self._owner = owner
        self.with_raw_response = _RawResponses(owner)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._owner.client.responses, name)

    async def create(self, **kwargs: Any) -> Any:
        """``responses.create`` with fan-out; ``fanout=`` as for ``chat.completions.create``."""
        return await _create(self._owner, kwargs)


async def _create(owner: Splitter, kwargs: dict[str, Any], *, raw: bool = False) -> Any:
    with telemetry.call_span("wrap", kwargs.get("model")):
        result = await _answer(owner, dict(kwargs), raw=raw)
    if isinstance(result, Passed):
        return result.value
    return RawResponse(result) if raw else result


def _text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list) and all(
        isinstance(p, Mapping) and p.get("type") in ("input_text", "output_text", "text")
        for p in content
    ):
        return "\n".join(str(p.get("text", "")) for p in content)
    return None  # images, files, ...: not ours to take apart


def _conversation(given: Any) -> list[dict[str, Any]] | None:
    """``input`` as chat messages (text only, the last one the user's); else None."""
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    if not isinstance(given, list) or not given:
        return None
    messages = []
    for item in given:
        if not isinstance(item, Mapping) or item.get("type", "message") != "message":
            return None  # a tool call, its output, reasoning: passed through
        role, text = item.get("role"), _text(item.get("content"))
        if role not in ("user", "assistant", "system", "developer") or text is None:
            return None
        messages.append({"role": "system" if role == "developer" else role, "content": text})
    return messages if messages[-1]["role"] == "user" else None


def _chat_kwargs(kwargs: dict[str, Any]) -> dict[str, Any] | None:
    """The call's Responses arguments as the Chat Completions arguments the engine
    takes (it translates them back), or None if one has no place in a split call."""
    if set(kwargs) - _SPLITTABLE:
        return None
    out = {
        k: v
        for k, v in kwargs.items()
        if k not in ("input", "instructions", "text", "reasoning", "max_output_tokens")
    }
    text = kwargs.get("text")
    if text is not None:
        fmt = text.get("format") if isinstance(text, Mapping) else None
        if (
            not isinstance(text, Mapping)
            or set(text) - {"format", "verbosity"}
            or (fmt is not None and (not isinstance(fmt, Mapping) or fmt.get("type") != "text"))
        ):
            return None  # a structured answer: one, in the caller's schema
        if text.get("verbosity") is not None:
            out["verbosity"] = text["verbosity"]
    reasoning = kwargs.get("reasoning")
    if reasoning is not None:
        if not isinstance(reasoning, Mapping) or set(reasoning) - {"effort"}:
            return None
        out["reasoning_effort"] = reasoning.get("effort")
    if kwargs.get("max_output_tokens") is not None:
        out["max_tokens"] = kwargs["max_output_tokens"]
    return out


async def _answer(owner: Splitter, kwargs: dict[str, Any], *, raw: bool) -> Any:
    policy = pop_policy(kwargs)
    messages = _conversation(kwargs.get("input"))
    instructions = kwargs.get("instructions")
    chat = _chat_kwargs(kwargs)
    split = None
    if (
        messages is not None
        and chat is not None
        and (instructions is None or isinstance(instructions, str))
    ):
        split = await owner._plan_split({**chat, "messages": messages})
    if split is None:
        responses = owner.client.responses
        send = responses.with_raw_response.create if raw else responses.create
        return Passed(await send(**kwargs))
    detection, context = split
    model = chat.pop("model")  # type: ignore[union-attr]
    stream = bool(chat.pop("stream", False))  # type: ignore[union-attr]
    # The instructions lead the context (a system message, sent back as instructions):
    # parts that share them may still be merged.
    shared = [{"role": "system", "content": instructions}] if instructions else []
    questions = [
        Question(
            text=detection.group_prompt(group), context=tuple(dict(m) for m in [*shared, *context])
        )
        for group in detection.groups
    ]
    telemetry.note_parts(len(questions))
    if stream:
        return _stream(owner, detection, questions, model, policy, instructions, chat or {})
    answers = await owner.fanout.ask_many(
        questions, model=model, policy=policy, on_error="return", api="responses", **chat or {}
    )
    raise_failures(answers)
    texts = [a.text or "" for a in answers]
    finish = finish_of(a.finish_reason for a in answers)
    usage = (
        answers.report.prompt_tokens,
        answers.report.completion_tokens,
        answers.report.cached_prompt_tokens,
    )
    response = _response(
        f"resp_fanout_{uuid.uuid4().hex}",
        model,
        instructions,
        detection.layout(texts),
        finish,
        usage,
    )
    setattr(response, REPORT_FIELD, answers.report)
    return response


def _item(response_id: str, text: str | None) -> dict[str, Any]:
    done = text is not None
    content: list[dict[str, Any]] = []
    if text is not None:
        content.append({"type": "output_text", "text": text, "annotations": []})
    return {
        "type": "message",
        "id": f"msg_{response_id[5:]}",
        "role": "assistant",
        "status": "completed" if done else "in_progress",
        "content": content,
    }


def _response_data(
    response_id: str,
    model: str,
    instructions: str | None,
    text: str | None,
    finish: str | None,
    usage: tuple[int, int, int] | None,
) -> dict[str, Any]:
    reason = _INCOMPLETE.get(finish or "")
    status = "in_progress" if finish is None else "incomplete" if reason else "completed"
    return {
        "id": response_id,
        "object": "response",
        "created_at": time.time(),
        "model": model,
        "status": status,
        "error": None,
        "instructions": instructions,
        "incomplete_details": {"reason": reason} if reason else None,
        "output": [_item(response_id, text)] if text is not None else [],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": None
        if usage is None
        else {
            "input_tokens": usage[0],
            "input_tokens_details": {"cached_tokens": usage[2]},
            "output_tokens": usage[1],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage[0] + usage[1],
        },
    }


def _build(type_: Any, data: dict[str, Any]) -> Any:
    """The SDK's model of ``data``, built as the SDK builds what it receives (no
    validation: a field a later SDK adds is not required of us)."""
    from openai._models import construct_type

    return construct_type(type_=type_, value=data)


def _response(*args: Any) -> Any:
    from openai.types.responses import Response

    return _build(Response, _response_data(*args))


def _stream(
    owner: Splitter,
    detection: Detection,
    questions: list[Question],
    model: str,
    policy: Any,
    instructions: str | None,
    kwargs: dict[str, Any],
) -> FanoutStream:
    """The Responses API's stream of events for a split call: created, the message and
    its text part opened, the text's deltas (the first part live), then the text, the
    part, the message and the response done, with the usage of every part."""
    response_id = f"resp_fanout_{uuid.uuid4().hex}"
    from openai.types.responses import ResponseStreamEvent

    where = {"item_id": f"msg_{response_id[5:]}", "output_index": 0}
    part = {"type": "output_text", "text": "", "annotations": []}

    async def events(pieces: AsyncIterator[str | StreamEnd]) -> AsyncIterator[Any]:
        number = 0

        def event(kind: str, **fields: Any) -> Any:
            nonlocal number
            number += 1
            data = {"type": kind, "sequence_number": number - 1, **fields}
            return _build(ResponseStreamEvent, data)

        opened = _response_data(response_id, model, instructions, None, None, None)
        yield event("response.created", response=opened)
        yield event("response.in_progress", response=opened)
        yield event("response.output_item.added", output_index=0, item=_item(response_id, None))
        yield event("response.content_part.added", **where, content_index=0, part=part)
        written: list[str] = []
        async for piece in pieces:
            if not isinstance(piece, StreamEnd):
                if piece:
                    written.append(piece)
                    yield event(
                        "response.output_text.delta",
                        **where,
                        content_index=0,
                        delta=piece,
                        logprobs=[],
                    )
                continue
            text = "".join(written)
            yield event(
                "response.output_text.done", **where, content_index=0, text=text, logprobs=[]
            )
            yield event(
                "response.content_part.done", **where, content_index=0, part={**part, "text": text}
            )
            yield event("response.output_item.done", output_index=0, item=_item(response_id, text))
            usage = (piece.prompt_tokens, piece.completion_tokens, 0)
            whole = _response_data(response_id, model, instructions, text, piece.finish, usage)
            kind = "response.incomplete" if piece.finish in _INCOMPLETE else "response.completed"
            yield event(kind, response=whole)

    return owner.stream_parts(detection, questions, model, policy, kwargs, events, api="responses")
