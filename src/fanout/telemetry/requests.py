"""Telemetry of one request: the ``chat {model}`` span of an HTTP attempt, following the
GenAI semantic conventions, its metrics, and (only when the user opts in) the messages.
See ``_telemetry``."""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import openai

from ..core.logs import redact
from ..core.usage import clean_usage
from .calls import CALL, REQUEST, Api, CallRecord, capture_content, mark_error, server_of

if TYPE_CHECKING:
    from types import TracebackType

    from opentelemetry.trace import Span

__all__ = ["Attempt", "NoAttempt", "WatchedStream"]

T = TypeVar("T")


class NoAttempt:
    def __enter__(self) -> NoAttempt:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def done(self, completion: Any) -> None:
        return None

    def watch(self, stream: T) -> T:
        return stream


class Attempt:
    """One HTTP attempt: its span (when recorded) and its metrics."""

    __slots__ = ("_token", "api", "attempt", "attributes", "call", "capture", "client",
                 "completion", "finish_reasons", "finished", "kind", "limit_wait_s", "params",
                 "response_id", "response_model", "span", "start", "stream", "streaming", "texts",
                 "usage")  # fmt: skip

    def __init__(
        self,
        api: Api,
        client: Any,
        params: Mapping[str, Any],
        attempt: int,
        limit_wait_s: float | None,
        stream: bool,
    ) -> None:
        self.api = api
        self.client = client
        self.params = params
        self.attempt = attempt
        self.limit_wait_s = limit_wait_s
        self.stream = stream
        self.completion: Any = None
        self.streaming = False
        self.finished = False
        self.span: Span | None = None
        self.call: CallRecord | None = None
        self.kind = ("split", 1, False)
        self.start = 0.0
        self._token: Any = None
        self.capture = False
        self.attributes: dict[str, Any] | None = None
        # Streams only: what the chunks said.
        self.response_model: str | None = None
        self.response_id: str | None = None
        self.finish_reasons: dict[int, str] | None = None
        self.usage: Any = None
        self.texts: dict[int, list[str]] | None = None

    def __enter__(self) -> Attempt:
        api = self.api
        self.kind = REQUEST.get()
        self.call = CALL.get()
        model = str(self.params.get("model") or "")
        span = api.tracer.start_span(f"chat {model}", kind=api.CLIENT)
        if span.is_recording():
            self.span = span
            self.capture = capture_content()
            # Set with the response's in one go when the attempt ends (cheaper).
            self.attributes = self._start_attributes(model)
            self._token = api.context.attach(api.trace.set_span_in_context(span))
            if self.stream:
                self.finish_reasons = {}
                if self.capture:
                    self.texts = {}
        self.start = time.perf_counter()
        return self

    def _start_attributes(self, model: str) -> dict[str, Any]:
        mode, group_size, reask = self.kind
        host, port = server_of(self.client)
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.system": "openai",
            "gen_ai.request.model": model,
            "fanout.mode": mode,
            "fanout.group_size": group_size,
            "fanout.attempt": self.attempt,
        }
        if host is not None:
            attributes["server.address"] = host
            attributes["server.port"] = port
        if reask:
            attributes["fanout.reask"] = True
        if self.stream:
            attributes["fanout.stream"] = True
        if self.limit_wait_s:
            attributes["fanout.limit_wait_s"] = self.limit_wait_s
        params = self.params
        for name, key in (
            ("max_tokens", "max_tokens"),
            ("max_completion_tokens", "max_tokens"),
            ("temperature", "temperature"),
            ("top_p", "top_p"),
            ("seed", "seed"),
        ):
            value = params.get(name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                attributes[f"gen_ai.request.{key}"] = value
        if self.capture:
            system, messages = input_messages(params.get("messages") or ())
            if system:
                attributes["gen_ai.system_instructions"] = json.dumps(system, ensure_ascii=False)
            attributes["gen_ai.input.messages"] = json.dumps(messages, ensure_ascii=False)
        return attributes

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc is not None or not self.streaming:
            self.finish(exc)  # while the span is current: metric exemplars point to it
        if self._token is not None:
            self.api.context.detach(self._token)
            self._token = None

    def done(self, completion: Any) -> None:
        """The attempt's parsed ``ChatCompletion``."""
        self.completion = completion

    def watch(self, stream: T) -> T:
        """The opened stream, watched: the attempt ends with it."""
        self.streaming = True
        return WatchedStream(stream, self)  # type: ignore[return-value]

    def chunk(self, chunk: Any) -> None:
        if self.response_model is None:
            self.response_model = getattr(chunk, "model", None)
            self.response_id = getattr(chunk, "id", None)
        if chunk.usage is not None:
            self.usage = clean_usage(chunk.usage)  # counts, or None: never a bad metric
        for choice in chunk.choices or ():
            if choice.finish_reason and self.finish_reasons is not None:
                self.finish_reasons[choice.index] = choice.finish_reason
            if self.texts is not None and choice.delta.content:
                self.texts.setdefault(choice.index, []).append(choice.delta.content)

    def finish(self, exc: BaseException | None) -> None:
        if self.finished:
            return
        self.finished = True
        api = self.api
        duration = time.perf_counter() - self.start
        completion = self.completion
        if completion is not None:
            usage = completion.usage
            response_model = completion.model
        else:
            usage = self.usage
            response_model = self.response_model
        rate_limited = isinstance(exc, openai.RateLimitError)
        attributes, as_input, as_output = _metric_attributes(
            str(self.params.get("model") or ""),
            server_of(self.client),
            self.kind[0],
            response_model,
        )
        if usage is not None:
            api.tokens.record(usage.prompt_tokens, as_input)
            api.tokens.record(usage.completion_tokens, as_output)
        if self.limit_wait_s:  # only requests the limits held back: most wait not at all
            api.limit_wait.record(self.limit_wait_s, attributes)
        if self.attempt > 1:
            api.retries.add(1, attributes)
        if rate_limited:
            api.rate_limited.add(1, attributes)
        if self.call is not None:
            self.call.attempted(self.attempt, rate_limited, self.limit_wait_s, usage)
        span = self.span
        error = None
        if span is not None:
            self._end_attributes(span, usage, response_model)
            error = mark_error(api, span, exc)
            span.end()
        elif exc is not None and not isinstance(exc, (GeneratorExit, StopAsyncIteration)):
            error = type(exc).__qualname__
        if error is not None and error != "CancelledError":
            attributes = {**attributes, "error.type": error}
        api.duration.record(duration, attributes)

    def _end_attributes(self, span: Span, usage: Any, response_model: str | None) -> None:
        attributes = self.attributes if self.attributes is not None else {}
        completion = self.completion
        finish_reasons = self.finish_reasons or {}
        if completion is not None:
            reasons = [c.finish_reason for c in completion.choices if c.finish_reason]
            response_id = completion.id
        else:
            reasons = [finish_reasons[i] for i in sorted(finish_reasons)]
            response_id = self.response_id
        if response_model:
            attributes["gen_ai.response.model"] = response_model
        if response_id:
            attributes["gen_ai.response.id"] = response_id
        if reasons:
            attributes["gen_ai.response.finish_reasons"] = reasons
        if usage is not None:
            attributes["gen_ai.usage.input_tokens"] = usage.prompt_tokens
            attributes["gen_ai.usage.output_tokens"] = usage.completion_tokens
        if (completion is not None or self.texts is not None) and self.capture:
            attributes["gen_ai.output.messages"] = json.dumps(
                output_messages(completion, self.texts, finish_reasons), ensure_ascii=False
            )
        span.set_attributes(attributes)


_MetricAttributes = tuple[dict[str, Any], dict[str, Any], dict[str, Any]]
_metric_cache: dict[tuple[Any, ...], _MetricAttributes] = {}


def _metric_attributes(
    model: str, server: tuple[str | None, int | None], mode: str, response_model: str | None
) -> _MetricAttributes:
    """The attributes of an attempt's metric points (and of its input and output token
    counts): the same few for every request to one model, built once."""
    key = (model, server, mode, response_model)
    cached = _metric_cache.get(key)
    if cached is None:
        base: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "openai",
            "gen_ai.request.model": model,
            "fanout.mode": mode,
        }
        if server[0] is not None:
            base["server.address"], base["server.port"] = server
        if response_model:
            base["gen_ai.response.model"] = response_model
        cached = (
            base,
            {**base, "gen_ai.token.type": "input"},
            {**base, "gen_ai.token.type": "output"},
        )
        if len(_metric_cache) >= 256:
            _metric_cache.clear()
        _metric_cache[key] = cached
    return cached


class WatchedStream:
    """An SDK stream whose chunks an attempt reads as they pass; it ends the attempt."""

    def __init__(self, stream: Any, attempt: Attempt) -> None:
        self._stream = stream
        self._attempt = attempt

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __aiter__(self) -> WatchedStream:
        return self

    async def __anext__(self) -> Any:
        try:
            chunk = await self._stream.__anext__()
        except BaseException as exc:
            self._attempt.finish(None if isinstance(exc, StopAsyncIteration) else exc)
            raise
        self._attempt.chunk(chunk)
        return chunk

    async def close(self) -> None:
        try:
            await self._stream.close()
        finally:
            self._attempt.finish(None)


# --- content (only when the user opts in) ----------------------------------------------------
def _parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": redact(content)}]
    parts: list[dict[str, Any]] = []
    if isinstance(content, Sequence):
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                parts.append({"type": "text", "content": redact(str(part.get("text", "")))})
            elif isinstance(part, Mapping):
                parts.append({"type": str(part.get("type"))})
    return parts


def input_messages(messages: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    system: list[dict[str, Any]] = []
    inputs: list[dict[str, Any]] = []
    for message in messages:
        if not isinstance(message, Mapping):
            continue
        role = str(message.get("role"))
        parts = _parts(message.get("content"))
        if role in ("system", "developer"):
            system.extend(parts)
        else:
            inputs.append({"role": role, "parts": parts})
    return system, inputs


def output_messages(
    completion: Any, texts: dict[int, list[str]] | None, reasons: dict[int, str]
) -> list[dict[str, Any]]:
    if completion is not None:
        return [
            {
                "role": "assistant",
                "parts": _parts(c.message.content or ""),
                "finish_reason": c.finish_reason or "",
            }
            for c in completion.choices
        ]
    texts = texts or {}
    return [
        {
            "role": "assistant",
            "parts": _parts("".join(texts[i])),
            "finish_reason": reasons.get(i, ""),
        }
        for i in sorted(texts)
    ]
