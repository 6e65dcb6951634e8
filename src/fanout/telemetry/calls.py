"""Telemetry's parts: the OpenTelemetry API (loaded once, if installed), the record of
one call and its span, and what every request span shares. See ``_telemetry``."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import openai

if TYPE_CHECKING:
    from types import TracebackType

    from opentelemetry.trace import Span

    from ..core.models import Answer
    from ..core.plans import Plan

__all__ = ["CALL", "CAPTURE_CONTENT_ENV", "REQUEST", "Api", "CallRecord", "capture_content",
           "load", "mark_error", "server_of"]  # fmt: skip

CAPTURE_CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_CAPTURE_ON = frozenset({"true", "1", "yes", "on", "span_only", "span_and_event"})

# The buckets the GenAI conventions advise.
_DURATION_BUCKETS = (0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48,
                     40.96, 81.92)  # fmt: skip
_TOKEN_BUCKETS = (1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                  16777216, 67108864)  # fmt: skip
_WAIT_BUCKETS = (0.001, 0.005, *_DURATION_BUCKETS)

Emit = Callable[["Answer"], Awaitable[None]]


class Api:
    """The OpenTelemetry API, its tracer, meter and instruments: loaded once."""

    def __init__(self) -> None:
        from opentelemetry import context, metrics, trace

        try:
            from importlib.metadata import version

            ours: str | None = version("llm-fanout")
        except Exception:  # pragma: no cover - an unusual install
            ours = None
        self.context = context
        self.trace = trace
        self.CLIENT = trace.SpanKind.CLIENT
        self.ERROR = trace.StatusCode.ERROR
        self.tracer = trace.get_tracer("fanout", ours)
        meter = metrics.get_meter("fanout", ours or "")
        self.duration = meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="GenAI operation duration",
            explicit_bucket_boundaries_advisory=_DURATION_BUCKETS,
        )
        self.tokens = meter.create_histogram(
            "gen_ai.client.token.usage",
            unit="{token}",
            description="Measures number of input and output tokens used",
            explicit_bucket_boundaries_advisory=_TOKEN_BUCKETS,
        )
        self.limit_wait = meter.create_histogram(
            "fanout.limit_wait.duration",
            unit="s",
            description="Time a request waited on fanout's rate limits before it was sent",
            explicit_bucket_boundaries_advisory=_WAIT_BUCKETS,
        )
        self.rate_limited = meter.create_counter(
            "fanout.rate_limited", unit="{response}", description="429 responses received"
        )
        self.retries = meter.create_counter(
            "fanout.retries", unit="{request}", description="Requests that were a retry"
        )
        self.reasks = meter.create_counter(
            "fanout.reasks",
            unit="{question}",
            description="Questions asked again alone after a merged reply missed their answer",
        )


_api: Api | None = None
_looked = False


def load() -> Api | None:
    """The API, or None when ``opentelemetry-api`` is not installed."""
    global _api, _looked
    if not _looked:
        _looked = True
        try:
            _api = Api()
        except ImportError:
            _api = None
    return _api


def capture_content() -> bool:
    return os.environ.get(CAPTURE_CONTENT_ENV, "").strip().lower() in _CAPTURE_ON


_server_cache: tuple[object, str | None, int | None] = (None, None, None)


def server_of(client: Any) -> tuple[str | None, int | None]:
    """``server.address`` and ``server.port`` of a client's ``base_url``."""
    global _server_cache
    url = getattr(client, "base_url", None)
    if url is _server_cache[0]:
        return _server_cache[1], _server_cache[2]
    host = getattr(url, "host", None) or None
    port = getattr(url, "port", None)
    if port is None and host is not None:
        port = 443 if getattr(url, "scheme", "https") == "https" else 80
    _server_cache = (url, host, port)
    return host, port


CALL: ContextVar[CallRecord | None] = ContextVar("fanout_call", default=None)
"""The recorded call the current task works for."""
REQUEST: ContextVar[tuple[str, int, bool]] = ContextVar(
    "fanout_request", default=("split", 1, False)
)
"""What the next request is: its mode, how many questions it carries, whether it is a re-ask."""


class CallRecord:
    """One call's span, and what its requests add up to."""

    def __init__(self, api: Api, span: Span, operation: str, parent: CallRecord | None) -> None:
        self.api = api
        self.operation = operation
        self.span = span
        self.parent = parent
        self.requests = self.retries = self.rate_limited = 0
        self.input_tokens = self.output_tokens = 0
        self.limit_wait_s = 0.0
        self.questions = self.failed = self.deduplicated = self.reasked = 0
        self.parts: int | None = None
        self.plan: str | None = None
        self.revisions = 0
        self.handed_over = False
        self._ended = False
        self._tokens: tuple[Any, Any] | None = None

    def __enter__(self) -> CallRecord:
        self._tokens = (
            self.api.context.attach(self.api.trace.set_span_in_context(self.span)),
            CALL.set(self),
        )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._tokens is not None:
            CALL.reset(self._tokens[1])
            self.api.context.detach(self._tokens[0])
        if exc is not None or not self.handed_over:
            self.end(exc)

    def observe(self, emit: Emit) -> Emit:
        """``emit``, counting the answers that go through it."""

        async def counted(answer: Answer) -> None:
            self.questions += 1
            if answer.error is not None:
                self.failed += 1
            if answer.shared_with is not None:
                self.deduplicated += 1
            await emit(answer)

        return counted

    def attempted(self, attempt: int, rate_limited: bool, wait: float | None, usage: Any) -> None:
        self.requests += 1
        self.retries += attempt > 1
        self.rate_limited += rate_limited
        if wait is not None:
            self.limit_wait_s += wait
        if usage is not None:
            self.input_tokens += usage.prompt_tokens or 0
            self.output_tokens += usage.completion_tokens or 0

    def planned(self, plan: Plan) -> None:
        label = plan.mode_label
        if label == self.plan:
            return
        if self.plan is None:
            self.span.set_attributes(
                {
                    "fanout.plan": label,
                    "fanout.plan.group_size": plan.chosen.group_size,
                    "fanout.plan.reason": plan.reason,
                }
            )
        else:
            self.revisions += 1
        self.plan = label
        self.span.add_event(
            "fanout.plan",
            {
                "fanout.plan": label,
                "fanout.plan.group_size": plan.chosen.group_size,
                "fanout.plan.requests": len(plan.groups),
                "fanout.plan.est_wall_s": plan.chosen.est_wall_s,
                "fanout.plan.reason": plan.reason,
            },
        )

    def end(self, exc: BaseException | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        parent = self.parent
        if parent is not None:
            parent.requests += self.requests
            parent.retries += self.retries
            parent.rate_limited += self.rate_limited
            parent.limit_wait_s += self.limit_wait_s
            parent.input_tokens += self.input_tokens
            parent.output_tokens += self.output_tokens
        span = self.span
        attributes: dict[str, Any] = {
            "fanout.requests": self.requests,
            "fanout.retries": self.retries,
            "fanout.rate_limited": self.rate_limited,
            "fanout.limit_wait_s": self.limit_wait_s,
            "fanout.usage.input_tokens": self.input_tokens,
            "fanout.usage.output_tokens": self.output_tokens,
        }
        if self.operation == "wrap":  # its questions are counted by the calls it makes
            attributes["fanout.passed_through"] = self.parts is None
            if self.parts is not None:
                attributes["fanout.questions"] = self.parts
        else:
            attributes["fanout.questions"] = self.questions
            attributes["fanout.failed"] = self.failed
            attributes["fanout.deduplicated"] = self.deduplicated
        if self.plan is not None:
            attributes["fanout.plan.revisions"] = self.revisions
        if self.reasked:
            attributes["fanout.reasked"] = self.reasked
        span.set_attributes(attributes)
        mark_error(self.api, span, exc)
        span.end()


def mark_error(api: Api, span: Span, exc: BaseException | None) -> str | None:
    """Mark ``span`` failed by ``exc`` (not by a cancellation or a closed stream)."""
    if exc is None or isinstance(exc, (GeneratorExit, StopAsyncIteration)):
        return None
    kind = type(exc).__qualname__
    if kind == "CancelledError":
        span.set_attribute("fanout.cancelled", True)
        return None
    span.set_attribute("error.type", kind)
    if isinstance(exc, openai.APIStatusError):
        span.set_attribute("http.response.status_code", exc.status_code)
    # The type only: an exception's message may hold what the user did not let through.
    span.set_status(api.ERROR, kind)
    return kind
