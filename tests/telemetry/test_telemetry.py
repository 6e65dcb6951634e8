"""OpenTelemetry: the span tree and metrics of calls, with the SDK's in-memory exporters."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import AggregationTemporality, InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult
from opentelemetry.trace import SpanKind, StatusCode

import fanout
from fanout import telemetry as telemetry
from fanout.sim import answer_for
from fanout.telemetry import CAPTURE_CONTENT_ENV
from fanout.telemetry import requests as _telemetry_requests

from .._virtual import on_virtual_time

if TYPE_CHECKING:
    from ..conftest import SimFactory

KEY = "sk-test-0123456789abcdefSECRET"


class _Switch(Sampler):
    """Records everything while on; drops everything (non-recording spans) while off."""

    on = False

    def should_sample(self, *args: Any, **kwargs: Any) -> SamplingResult:
        return SamplingResult(Decision.RECORD_AND_SAMPLE if self.on else Decision.DROP)

    def get_description(self) -> str:
        return "switch"


@dataclass
class Otel:
    sampler: _Switch
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader

    def finished(self) -> list[ReadableSpan]:
        return list(self.spans.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.finished() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.finished()]
        return found[0]

    def points(self) -> dict[str, list[tuple[dict[str, Any], float]]]:
        """fanout's metric points since the last look: name -> (attributes, sum or value)."""
        out: dict[str, list[tuple[dict[str, Any], float]]] = {}
        data = self.reader.get_metrics_data()
        for rm in data.resource_metrics if data is not None else ():
            for sm in rm.scope_metrics:
                if sm.scope.name != "fanout":
                    continue
                for m in sm.metrics:
                    for dp in m.data.data_points:
                        value = getattr(dp, "sum", None)
                        value = dp.value if value is None else value  # type: ignore[union-attr]
                        out.setdefault(m.name, []).append((dict(dp.attributes or {}), value))
        return out


_PROVIDERS: Otel | None = None


@pytest.fixture
def otel() -> Iterator[Otel]:
    """The process-wide SDK providers (set once: the API allows no other), recording
    for this test only, their exporters emptied."""
    global _PROVIDERS
    if _PROVIDERS is None:
        sampler = _Switch()
        exporter = InMemorySpanExporter()
        provider = TracerProvider(sampler=sampler)
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        delta = AggregationTemporality.DELTA
        reader = InMemoryMetricReader(preferred_temporality={Counter: delta, Histogram: delta})
        metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
        _PROVIDERS = Otel(sampler, exporter, reader)
    _PROVIDERS.spans.clear()
    _PROVIDERS.reader.get_metrics_data()
    _PROVIDERS.sampler.on = True
    try:
        yield _PROVIDERS
    finally:
        _PROVIDERS.sampler.on = False
        _PROVIDERS.spans.clear()


def _children(spans: Sequence[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    assert parent.context is not None
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def _attrs(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def _all_values(spans: Sequence[ReadableSpan]) -> str:
    """Every attribute value of every span and event, as one string."""
    values: list[str] = []
    for s in spans:
        values.extend(str(v) for v in (s.attributes or {}).values())
        for event in s.events:
            values.extend(str(v) for v in (event.attributes or {}).values())
        values.append(str(s.status.description))
    return "\n".join(values)


GENAI_KEYS = {
    "gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.system", "gen_ai.request.model",
    "gen_ai.response.model", "gen_ai.response.id", "gen_ai.response.finish_reasons",
    "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", "server.address", "server.port",
    "fanout.mode", "fanout.group_size", "fanout.attempt",
}  # fmt: skip


class TestSpans:
    @on_virtual_time
    async def test_a_split_call_is_a_child_of_the_callers_span_with_a_client_span_per_request(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """ask_many (split): app -> fanout.ask_many -> one `chat m` CLIENT span per question."""
        qs = [f"split question {i}? {{{{tokens=5}}}}" for i in range(3)]
        async with sim(time_scale=100) as (server, client):
            with trace.get_tracer("app").start_as_current_span("app") as app:
                answers = await fanout.ask_many(qs, client=client, model="m", policy="split")
        spans = otel.finished()
        call = otel.one("fanout.ask_many")
        assert call.parent is not None and call.parent.span_id == app.get_span_context().span_id
        assert call.context is not None
        assert call.context.trace_id == app.get_span_context().trace_id
        attempts = _children(spans, call)
        assert [s.name for s in attempts] == ["chat m"] * 3
        by_input = {}
        for s in attempts:
            a = _attrs(s)
            assert s.kind == SpanKind.CLIENT
            assert a.keys() >= GENAI_KEYS, GENAI_KEYS - a.keys()
            assert a["gen_ai.operation.name"] == "chat"
            assert a["gen_ai.provider.name"] == "openai"
            assert a["gen_ai.request.model"] == "m"
            assert a["gen_ai.response.model"] == "m"
            assert a["gen_ai.response.finish_reasons"] == ("stop",)
            assert a["gen_ai.usage.output_tokens"] == 5
            assert (a["server.address"], a["server.port"]) == ("127.0.0.1", server.port)
            assert (a["fanout.mode"], a["fanout.group_size"], a["fanout.attempt"]) == (
                "split",
                1,
                1,
            )
            assert a.get("fanout.limit_wait_s", 0) >= 0  # set when the limits held it back
            assert "error.type" not in a
            by_input[a["gen_ai.response.id"]] = a
        assert len(by_input) == 3
        c = _attrs(call)
        report = answers.report
        assert report.plan is not None
        assert c["fanout.operation"] == "ask_many"
        assert c["fanout.policy"] == "split"
        assert (c["fanout.questions"], c["fanout.failed"]) == (3, 0)
        assert (c["fanout.requests"], c["fanout.retries"], c["fanout.rate_limited"]) == (3, 0, 0)
        assert c["fanout.usage.input_tokens"] == report.prompt_tokens
        assert c["fanout.usage.output_tokens"] == report.completion_tokens
        assert c["fanout.plan"] == report.plan.mode_label
        assert c["fanout.plan.revisions"] == 0
        assert [e.name for e in call.events] == ["fanout.plan"]

    @on_virtual_time
    async def test_a_merged_call_with_a_reask_shows_both_requests_and_the_reask(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """merge, reply cut by max_tokens: one merged span of 5, then split re-ask spans."""
        qs = [f"long {i} {{{{tokens=50}}}}" for i in range(5)]
        async with sim(time_scale=100) as (_server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", max_tokens=20, policy=fanout.Policy(mode="merge")
            )
        reasked = answers.report.reasked
        assert reasked
        call = otel.one("fanout.ask_many")
        attempts = _children(otel.finished(), call)
        merged = [s for s in attempts if _attrs(s)["fanout.mode"] == "merged"]
        again = [s for s in attempts if _attrs(s)["fanout.mode"] == "split"]
        assert len(merged) == 1
        assert _attrs(merged[0])["fanout.group_size"] == 5
        assert _attrs(merged[0])["gen_ai.response.finish_reasons"] == ("length",)
        assert "fanout.reask" not in _attrs(merged[0])
        assert len(again) == len(reasked)
        assert all(_attrs(s)["fanout.reask"] is True for s in again)
        assert all(s.start_time >= merged[0].end_time for s in again)  # type: ignore[operator]
        c = _attrs(call)
        assert c["fanout.reasked"] == len(reasked)
        assert c["fanout.requests"] == answers.report.requests == 1 + len(reasked)
        reask_events = [e for e in call.events if e.name == "fanout.reask"]
        assert len(reask_events) == 1
        assert dict(reask_events[0].attributes or {}) == {
            "fanout.reask.questions": len(reasked), "fanout.group_size": 5
        }  # fmt: skip

    @on_virtual_time
    async def test_retries_and_429s_are_sibling_attempt_spans_with_error_type(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """A 500 and 429s: failed attempts carry error.type and status ERROR; retries count up."""
        # fanout paces so as not to trip a limit: the 429 here is one the sim injects.
        async with sim(time_scale=20, answer_tokens=1, rtt_s=0,
                       fault_schedule={1: "500", 3: "429"}) as (_server, client):  # fmt: skip
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=10))
            answers = await fo.ask_many([f"q{i}?" for i in range(5)], policy="split")
        report = answers.report
        assert report.rate_limited >= 1
        call = otel.one("fanout.ask_many")
        attempts = _children(otel.finished(), call)
        assert len(attempts) == report.requests
        failed = [_attrs(s) for s in attempts if s.status.status_code == StatusCode.ERROR]
        kinds = sorted(a["error.type"] for a in failed)
        assert "InternalServerError" in kinds
        assert kinds.count("RateLimitError") == report.rate_limited
        assert {a["http.response.status_code"] for a in failed} == {429, 500}
        ok = [_attrs(s) for s in attempts if s.status.status_code != StatusCode.ERROR]
        assert len(ok) == 5
        assert all("error.type" not in a for a in ok)
        assert sum(1 for s in attempts if _attrs(s)["fanout.attempt"] > 1) == report.retries
        waits = [_attrs(s).get("fanout.limit_wait_s", 0.0) for s in attempts]
        assert sum(waits) == pytest.approx(report.limit_wait_s)
        assert max(waits) > 0  # waited out a 429
        c = _attrs(call)
        assert (c["fanout.requests"], c["fanout.retries"], c["fanout.rate_limited"]) == (
            report.requests, report.retries, report.rate_limited
        )  # fmt: skip
        assert c["fanout.limit_wait_s"] == pytest.approx(report.limit_wait_s)
        assert call.status.status_code != StatusCode.ERROR

    @on_virtual_time
    async def test_a_call_whose_questions_fail_is_an_error_span(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """PartialFailureError: the call span has status ERROR, error.type and the failures."""
        async with sim(time_scale=100, answer_tokens=2, fault_schedule={1: "500"}) as (_, client):
            with pytest.raises(fanout.PartialFailureError):
                await fanout.ask_many(["a?", "b?"], client=client, model="m", policy="split",
                                      retry=fanout.Retry(max_attempts=1))  # fmt: skip
        call = otel.one("fanout.ask_many")
        assert call.status.status_code == StatusCode.ERROR
        assert _attrs(call)["error.type"] == "PartialFailureError"
        assert _attrs(call)["fanout.failed"] == 1

    def test_a_plan_revised_by_a_later_batch_is_an_event_and_a_revision(self, otel: Otel) -> None:
        """Each batch's plan that differs from the one before is a fanout.plan event and a revision."""
        split = fanout.plan(["a?", "b?"], policy="split")
        merged = fanout.plan(["a?", "b?"], policy="merge")
        assert split.mode_label != merged.mode_label
        with telemetry.call_span("as_completed", "m", "auto"):
            for plan in (split, split, merged, merged):
                telemetry.planned(plan)
        call = otel.one("fanout.as_completed")
        a = _attrs(call)
        assert (a["fanout.plan"], a["fanout.plan.revisions"]) == (split.mode_label, 1)
        events = [dict(e.attributes or {}) for e in call.events if e.name == "fanout.plan"]
        assert [e["fanout.plan"] for e in events] == [split.mode_label, merged.mode_label]
        assert events[1]["fanout.plan.group_size"] == 2

    @on_virtual_time
    async def test_a_wrapped_streaming_call_ends_its_span_when_the_stream_ends(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """wrap + stream: app -> fanout.wrap -> (the live `chat m` stream, fanout.ask_many -> ...)."""
        text = "\n".join(
            f"{i}. Explain topic number {i} in detail. {{{{tokens=8}}}}" for i in (1, 2, 3)
        )
        async with sim(time_scale=100) as (_server, client):
            wrapped = fanout.wrap(client, policy="split")
            with trace.get_tracer("app").start_as_current_span("app") as app:
                stream = await wrapped.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": text}], stream=True
                )
            assert otel.named("fanout.wrap") == []  # open while the stream is
            pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        assert "".join(p or "" for p in pieces)
        spans = otel.finished()
        wrap = otel.one("fanout.wrap")
        assert wrap.parent is not None and wrap.parent.span_id == app.get_span_context().span_id
        children = _children(spans, wrap)
        assert sorted(s.name for s in children) == ["chat m", "fanout.ask_many"]
        live = next(s for s in children if s.name == "chat m")
        a = _attrs(live)
        assert a["fanout.stream"] is True
        assert a["gen_ai.response.finish_reasons"] == ("stop",)
        assert a["gen_ai.usage.output_tokens"] == 8
        rest = next(s for s in children if s.name == "fanout.ask_many")
        assert [s.name for s in _children(spans, rest)] == ["chat m", "chat m"]
        w = _attrs(wrap)
        assert w["fanout.questions"] == 3
        assert w["fanout.requests"] == 3
        assert w["fanout.usage.output_tokens"] == 24
        assert w["fanout.passed_through"] is False
        assert wrap.end_time is not None and live.end_time is not None
        assert wrap.end_time >= live.end_time

    @on_virtual_time
    async def test_a_wrapped_stream_closed_early_ends_its_span(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """Closing a wrapped stream part-way ends the call span and the live attempt."""
        text = "1. What is alpha? {{tokens=30}}\n2. What is beta? {{tokens=30}}"
        async with sim(time_scale=100) as (_server, client):
            wrapped = fanout.wrap(client, policy="split")
            stream = await wrapped.chat.completions.create(
                model="m", messages=[{"role": "user", "content": text}], stream=True
            )
            seen = 0
            async for _chunk in stream:
                seen += 1
                if seen == 3:  # the heading, then two pieces of the live answer
                    break
            await stream.close()
            assert otel.one("fanout.wrap").status.status_code != StatusCode.ERROR
            assert any(_attrs(s).get("fanout.stream") for s in otel.named("chat m"))

    @on_virtual_time
    async def test_a_wrapped_call_that_passes_through_is_marked_so(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """One question: the wrap span says it passed through, and has no request of its own."""
        async with sim(time_scale=100, answer_tokens=3) as (_server, client):
            await fanout.wrap(client).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "Just one question?"}]
            )
        wrap = otel.one("fanout.wrap")
        assert _attrs(wrap)["fanout.passed_through"] is True
        assert _children(otel.finished(), wrap) == []

    @on_virtual_time
    async def test_as_completed_is_one_call_span_that_ends_with_the_call(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """as_completed: one fanout.as_completed span over all requests; a break ends it too."""
        async with sim(time_scale=100, answer_tokens=3) as (_server, client):
            fo = fanout.Fanout(client, model="m", policy="split")
            seen = [a async for a in fo.as_completed([f"q{i}?" for i in range(4)])]
            assert len(seen) == 4
            call = otel.one("fanout.as_completed")
            assert len(_children(otel.finished(), call)) == 4
            assert _attrs(call)["fanout.questions"] == 4
            otel.spans.clear()
            gen = fo.as_completed([f"r{i}? {{{{tokens=40}}}}" for i in range(30)])
            async for _answer in gen:
                break
            await gen.aclose()
            assert otel.one("fanout.as_completed").status.status_code != StatusCode.ERROR


class TestContent:
    @on_virtual_time
    async def test_texts_and_the_key_are_absent_by_default(
        self, sim: SimFactory, otel: Otel, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Without the capture switch no question, answer, system prompt or key is recorded."""
        monkeypatch.delenv(CAPTURE_CONTENT_ENV, raising=False)
        qs = ["Where is Zanzibarite? {{tokens=4}}", "Why Quokkaland? {{tokens=4}}"]
        async with sim(time_scale=100, api_key=KEY) as (_server, client):
            await fanout.ask_many(qs, client=client, model="m", system="Be Terse-Xyz.")
            await fanout.ask_many(qs, client=client, model="m", policy="merge")
        async with sim(time_scale=100, api_key=KEY, fault_rates={"500": 1.0}) as (_s, client):
            with pytest.raises(fanout.PartialFailureError):
                await fanout.ask_many(["Fail Zanzibarite?"], client=client, model="m",
                                      retry=fanout.Retry(max_attempts=1))  # fmt: skip
        spans = otel.finished()
        assert spans
        values = _all_values(spans)
        for secret in ("Zanzibarite", "Quokkaland", "Terse-Xyz", KEY, KEY[-6:],
                       answer_for(qs[0], 4)):  # fmt: skip
            assert secret not in values
        assert not any(k.startswith(("gen_ai.input", "gen_ai.output", "gen_ai.system_instr"))
                       for s in spans for k in _attrs(s))  # fmt: skip

    @pytest.mark.parametrize("switch", ["true", "SPAN_ONLY"])
    @on_virtual_time
    async def test_texts_are_recorded_when_the_user_opts_in(
        self, sim: SimFactory, otel: Otel, monkeypatch: pytest.MonkeyPatch, switch: str
    ) -> None:
        """With the conventions' switch on, messages are recorded in their JSON shape; never the key."""
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, switch)
        q = "Where is Zanzibarite? {{tokens=4}}"
        async with sim(time_scale=100, api_key=KEY) as (_server, client):
            await fanout.ask_many([q], client=client, model="m", system="Be terse.")
        a = _attrs(otel.one("chat m"))
        assert json.loads(a["gen_ai.system_instructions"]) == [
            {"type": "text", "content": "Be terse."}
        ]
        assert json.loads(a["gen_ai.input.messages"]) == [
            {"role": "user", "parts": [{"type": "text", "content": q}]}
        ]  # fmt: skip
        assert json.loads(a["gen_ai.output.messages"]) == [{
            "role": "assistant", "parts": [{"type": "text", "content": answer_for(q, 4)}],
            "finish_reason": "stop",
        }]  # fmt: skip
        assert KEY not in _all_values(otel.finished())

    @on_virtual_time
    async def test_a_streamed_answer_is_recorded_whole_when_opted_in(
        self, sim: SimFactory, otel: Otel, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The live stream's attempt records the answer its chunks made up."""
        monkeypatch.setenv(CAPTURE_CONTENT_ENV, "true")
        text = "1. What is alpha? {{tokens=6}}\n2. What is beta? {{tokens=6}}"
        async with sim(time_scale=100) as (_server, client):
            stream = await fanout.wrap(client, policy="split").chat.completions.create(
                model="m", messages=[{"role": "user", "content": text}], stream=True
            )
            async for _chunk in stream:
                pass
        live = next(s for s in otel.named("chat m") if _attrs(s).get("fanout.stream"))
        (message,) = json.loads(_attrs(live)["gen_ai.output.messages"])
        assert message["finish_reason"] == "stop"
        first = fanout.detect(text)
        assert message["parts"][0]["content"] == answer_for(first.group_prompt(first.groups[0]), 6)


class TestMetrics:
    @on_virtual_time
    async def test_duration_and_token_usage_follow_the_conventions(
        self, sim: SimFactory, otel: Otel
    ) -> None:
        """gen_ai.client.operation.duration per attempt, gen_ai.client.token.usage by token type."""
        async with sim(time_scale=100, answer_tokens=7) as (server, client):
            answers = await fanout.ask_many(["a?", "b?"], client=client, model="m", policy="split")
        points = otel.points()
        durations = points["gen_ai.client.operation.duration"]
        assert len(durations) == 1  # one series: both requests share their attributes
        attrs, total = durations[0]
        assert attrs == {
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "m", "gen_ai.response.model": "m",
            "server.address": "127.0.0.1", "server.port": server.port, "fanout.mode": "split",
        }  # fmt: skip
        assert total > 0
        tokens = {a["gen_ai.token.type"]: v for a, v in points["gen_ai.client.token.usage"]}
        assert tokens == {"input": answers.report.prompt_tokens, "output": 14}

    @on_virtual_time
    async def test_retries_429s_and_reasks_are_counted(self, sim: SimFactory, otel: Otel) -> None:
        """fanout.limit_wait.duration, .retries, .rate_limited and .reasks add up to the reports."""
        # fanout paces so as not to trip a limit: the 429 here is one the sim injects.
        async with sim(time_scale=20, answer_tokens=1, rtt_s=0,
                       fault_schedule={1: "500", 3: "429"}) as (_server, client):  # fmt: skip
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=10))
            first = await fo.ask_many([f"q{i}?" for i in range(5)], policy="split")
        points = otel.points()
        waited = sum(v for _, v in points["fanout.limit_wait.duration"])
        assert waited == pytest.approx(first.report.limit_wait_s)
        assert waited > 0
        assert sum(v for _, v in points["fanout.retries"]) == first.report.retries
        assert sum(v for _, v in points["fanout.rate_limited"]) == first.report.rate_limited
        errors = {a.get("error.type") for a, _ in points["gen_ai.client.operation.duration"]}
        assert {"InternalServerError", "RateLimitError", None} <= errors
        async with sim(time_scale=100) as (_server, client):
            second = await fanout.ask_many(
                [f"long {i} {{{{tokens=50}}}}" for i in range(5)], client=client, model="m",
                max_tokens=20, policy="merge",
            )  # fmt: skip
        assert sum(v for _, v in otel.points()["fanout.reasks"]) == len(second.report.reasked)

    @on_virtual_time
    async def test_metric_attributes_are_low_cardinality(self, sim: SimFactory, otel: Otel) -> None:
        """No question, id or per-request value becomes a metric attribute: 20 questions, few series."""
        async with sim(time_scale=100, answer_tokens=2) as (_server, client):
            await fanout.ask_many([f"question {i}?" for i in range(20)], client=client, model="m",
                                  policy="split")  # fmt: skip
        allowed = {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model", "gen_ai.response.model", "gen_ai.token.type",
                   "server.address", "server.port", "error.type", "fanout.mode"}  # fmt: skip
        points = otel.points()
        for name, series in points.items():
            assert len(series) <= 2, name
            for attrs, _ in series:
                assert attrs.keys() <= allowed, (name, attrs)


class TestCost:
    @on_virtual_time
    async def test_nothing_is_built_for_spans_that_are_not_recorded(
        self, sim: SimFactory, otel: Otel, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Sampled out (as with no tracer provider): no span attributes are built, calls work."""
        otel.sampler.on = False

        def forbidden(*args: object, **kwargs: object) -> Any:
            raise AssertionError("built attributes for a span nobody records")

        monkeypatch.setattr(_telemetry_requests.Attempt, "_start_attributes", forbidden)
        monkeypatch.setattr(_telemetry_requests.Attempt, "_end_attributes", forbidden)
        monkeypatch.setattr("fanout.telemetry.CallRecord", forbidden)
        async with sim(time_scale=100, answer_tokens=2) as (_server, client):
            answers = await fanout.ask_many(["a?", "b?", "c?"], client=client, model="m",
                                            policy="merge", max_tokens=1)  # fmt: skip
            stream = await fanout.wrap(client).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "1. What is a?\n2. What is b?"}],
                stream=True,
            )  # fmt: skip
            async for _chunk in stream:
                pass
        assert answers.report.answered == 3
        assert otel.finished() == []


def _run_python(tmp_path: Path, *pieces: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "script.py"
    script.write_text("\n".join(textwrap.dedent(p) for p in pieces), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    return subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          timeout=90, env=env, cwd=tmp_path, check=False)  # fmt: skip


_CALLS = """
    import asyncio
    import fanout
    from fanout.sim import SimConfig, serve
    from openai import AsyncOpenAI

    async def main():
        async with serve(SimConfig(time_scale=100, answer_tokens=3)) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="k")
            answers = await fanout.ask_many(["a?", "b?"], client=client, model="m", policy="split")
            assert answers.report.answered == 2
            answers = await fanout.ask_many(["a?", "b?", "c?"], client=client, model="m",
                                            policy="merge", max_tokens=1)
            assert answers.report.answered == 3
            stream = await fanout.wrap(client).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "1. What is a?\\n2. What is b?"}],
                stream=True)
            assert [c async for c in stream]
            await client.close()

    asyncio.run(main())
"""


class TestWithoutTheSdk:
    def test_fanout_works_and_imports_nothing_without_opentelemetry(self, tmp_path: Path) -> None:
        """With `opentelemetry` not importable, calls, merges and wrapped streams all work."""
        result = _run_python(tmp_path, """
            import sys

            class Block:
                def find_spec(self, name, path=None, target=None):
                    if name == "opentelemetry" or name.startswith("opentelemetry."):
                        raise ImportError("blocked: " + name)
                    return None

            sys.meta_path.insert(0, Block())
        """, _CALLS, """
            from fanout.telemetry import calls as _telemetry_calls
            assert _telemetry_calls.load() is None
            assert not [m for m in sys.modules if m.startswith("opentelemetry")]
            print("ok")
        """)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "ok"

    def test_import_fanout_does_not_import_opentelemetry(self, tmp_path: Path) -> None:
        """`import fanout` leaves the API unloaded; with no provider set, calls record nothing."""
        result = _run_python(tmp_path, """
            import sys
            import fanout
            assert not [m for m in sys.modules if m.startswith("opentelemetry")]
        """, _CALLS, """
            from opentelemetry import trace
            assert not trace.get_current_span().is_recording()
            print("ok")
        """)  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == "ok"

    @pytest.mark.slow
    def test_opentelemetry_instrument_traces_the_cli(self, tmp_path: Path) -> None:
        """`opentelemetry-instrument fanout run` exports fanout's spans as OTEL_* says."""
        bin_dir = Path(sys.executable).parent
        instrument = shutil.which("opentelemetry-instrument", path=str(bin_dir))
        cli = shutil.which("fanout", path=str(bin_dir))
        if instrument is None or cli is None:
            pytest.skip("opentelemetry-instrument (opentelemetry-distro) is not installed")
        questions = tmp_path / "in.jsonl"
        questions.write_text("".join(json.dumps({"id": f"q{i}", "question": f"q{i}? {{{{tokens=3}}}}"}) + "\n"
                                     for i in range(3)))  # fmt: skip
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        env.update(OTEL_TRACES_EXPORTER="console", OTEL_METRICS_EXPORTER="none",
                   OTEL_LOGS_EXPORTER="none", OTEL_SERVICE_NAME="fanout-cli-test")  # fmt: skip
        result = subprocess.run(
            [instrument, cli, "run", str(questions), str(tmp_path / "out.jsonl"),
             "--sim-time-scale", "100", "--policy", "split", "--no-progress"],
            capture_output=True, text=True, timeout=120, env=env, check=False,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        assert '"name": "fanout.as_completed"' in result.stdout
        assert result.stdout.count('"name": "chat sim-1"') == 3
        assert "fanout-cli-test" in result.stdout
