"""Telemetry: OpenTelemetry spans and metrics, following the GenAI semantic conventions.

Optional: only ``opentelemetry-api`` is needed (``pip install llm-fanout[otel]``), and
the application chooses and configures the SDK. The API is imported by the first call
that could use it, never by ``import fanout``; without it every hook here is a no-op
that costs a function call. With the API but no tracer provider, spans are
non-recording and nothing is built for them; metrics go to whatever meter provider
is set (the API's default drops them).

What is recorded (docs/observability.md):

- a span per call: ``fanout.ask_many``, ``fanout.as_completed``, ``fanout.wrap``
  (questions, failures, the plan and its revisions, requests, retries, 429s, limit
  wait, tokens), a child of the caller's current span;
- under it, a ``chat {model}`` span (kind CLIENT) per HTTP attempt, with the GenAI
  attributes (``gen_ai.operation.name``, ``gen_ai.request.model``,
  ``gen_ai.response.model``, ``gen_ai.usage.*``, ``gen_ai.response.finish_reasons``,
  ``error.type``, ``server.address``/``server.port``) and fanout's own (``fanout.mode``,
  ``fanout.group_size``, ``fanout.attempt``, ``fanout.limit_wait_s``, ``fanout.reask``);
- the metrics ``gen_ai.client.operation.duration`` and ``gen_ai.client.token.usage``,
  and fanout's ``fanout.limit_wait.duration``, ``fanout.rate_limited``,
  ``fanout.retries`` and ``fanout.reasks``, with low-cardinality attributes only.

Message texts are recorded only when ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
asks for them; an API key never is.

These are the hooks the engine calls, each one line where it is used:
:func:`call_span` (the façade, the wrapper), :func:`attempt_span` (the transport),
:func:`planned` (dispatch), :func:`merged_request` and :func:`reasking` (execution),
:func:`note_parts` and :func:`follow` (the wrapper). The spans and metrics themselves
are built in ``_telemetry_calls`` and ``_telemetry_requests``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from .calls import CALL, CAPTURE_CONTENT_ENV, REQUEST, CallRecord, Emit, load
from .requests import Attempt, NoAttempt

if TYPE_CHECKING:
    from ..core.plans import Plan

__all__ = [
    "CAPTURE_CONTENT_ENV",
    "attempt_span",
    "call_span",
    "follow",
    "merged_request",
    "note_parts",
    "planned",
    "reasking",
]

T = TypeVar("T")


class _NoCall:
    """What :func:`call_span` gives when nothing is recorded."""

    def __enter__(self) -> _NoCall:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def observe(self, emit: Emit) -> Emit:
        return emit


_NO_CALL = _NoCall()
_NO_ATTEMPT = NoAttempt()


def call_span(operation: str, model: str | None, policy: str | None = None) -> CallRecord | _NoCall:
    """``with call_span("ask_many", model, policy) as call:`` — the span of one call, a
    child of the caller's current span, current while the call runs. ``call.observe(emit)``
    counts the answers. A stream handed to :func:`follow` ends the span when it ends."""
    api = load()
    if api is None:
        return _NO_CALL
    span = api.tracer.start_span(f"fanout.{operation}")
    if not span.is_recording():
        return _NO_CALL
    attributes: dict[str, Any] = {"fanout.operation": operation}
    if model:
        attributes["gen_ai.request.model"] = model
    if policy:
        attributes["fanout.policy"] = policy
    span.set_attributes(attributes)
    return CallRecord(api, span, operation, CALL.get())


def attempt_span(
    client: Any,
    params: Mapping[str, Any],
    attempt: int,
    limit_wait_s: float | None = None,
    *,
    stream: bool = False,
) -> Attempt | NoAttempt:
    """``with attempt_span(client, params, n, waited) as span:`` around one HTTP attempt
    on ``client``; ``span.done(completion)`` once it is parsed. For a stream,
    ``stream = span.watch(opened)``: the attempt then lasts until the stream ends or
    is closed."""
    api = load()
    if api is None:
        return _NO_ATTEMPT
    return Attempt(api, client, params, attempt, limit_wait_s, stream)


def planned(plan: Plan) -> None:
    """Dispatch chose ``plan`` for a batch: the call's plan, or a revision of it."""
    call = CALL.get()
    if call is not None:
        call.planned(plan)


def note_parts(parts: int) -> None:
    """The wrapper split a prompt into ``parts`` questions."""
    call = CALL.get()
    if call is not None:
        call.parts = parts


@contextlib.contextmanager
def _request_kind(kind: tuple[str, int, bool]) -> Iterator[None]:
    token = REQUEST.set(kind)
    try:
        yield
    finally:
        REQUEST.reset(token)


def merged_request(group_size: int) -> contextlib.AbstractContextManager[None]:
    """``with merged_request(k):`` — the requests sent inside carry ``k`` questions merged."""
    if load() is None:
        return contextlib.nullcontext()
    return _request_kind(("merged", group_size, False))


def reasking(
    questions: int, group_size: int, model: str
) -> contextlib.AbstractContextManager[None]:
    """``with reasking(n, k, model):`` — ``n`` questions of a merged group of ``k`` are asked
    again alone; the requests started inside are re-asks."""
    api = load()
    if api is None:
        return contextlib.nullcontext()
    api.reasks.add(questions, {"gen_ai.request.model": model})
    call = CALL.get()
    if call is not None:
        call.reasked += questions
        call.span.add_event(
            "fanout.reask", {"fanout.reask.questions": questions, "fanout.group_size": group_size}
        )
    return _request_kind(("split", 1, True))


class _Followed:
    """Chunks of a wrapped stream, read under its call's span; the span ends with them."""

    def __init__(self, call: CallRecord, chunks: AsyncIterator[Any]) -> None:
        self._call = call
        self._chunks = chunks
        self._context = call.api.trace.set_span_in_context(call.span)

    def __aiter__(self) -> _Followed:
        return self

    async def __anext__(self) -> Any:
        api = self._call.api
        token = api.context.attach(self._context)
        call_token = CALL.set(self._call)
        try:
            return await self._chunks.__anext__()
        except BaseException as exc:
            self._call.end(None if isinstance(exc, StopAsyncIteration) else exc)
            raise
        finally:
            CALL.reset(call_token)
            api.context.detach(token)

    async def aclose(self) -> None:
        try:
            aclose = getattr(self._chunks, "aclose", None)
            if aclose is not None:
                await aclose()
        finally:
            self._call.end()


def follow(chunks: AsyncIterator[T]) -> AsyncIterator[T]:
    """The chunks of a stream the current call returns: the call's span stays open
    until they end or are closed (``aclose``), and the requests they make are its
    children."""
    call = CALL.get()
    if call is None:
        return chunks
    call.handed_over = True
    return _Followed(call, chunks)
