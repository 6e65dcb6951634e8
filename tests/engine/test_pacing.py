"""Pacing against an endpoint that polices like a hosted API, retries that are quick on
a healthy endpoint, and per-attempt deadlines, on virtual time (``tests/_virtual.py``):
the same sends at the same loop times every run. The figures on the wall clock are in
benchmarks/pacing.py."""

from __future__ import annotations

import math

import openai

import fanout

from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory


def _questions(n: int, tokens: int = 3) -> list[str]:
    return [f"question {i} {{{{tokens={tokens}}}}}" for i in range(n)]


class TestPolicedWindows:
    @on_virtual_time
    async def test_a_sliding_window_shorter_than_the_minute_is_never_overrun(
        self, sim: SimFactory
    ) -> None:
        """600 rpm policed as at most 10 in any 1 s: no 429, near the ideal time (on
        virtual time: ``_virtual.py``)."""
        n, per_window = 40, 10
        async with sim(rpm=600, limit_period_s=1.0, limit_policing="sliding",
                       answer_tokens=3, rtt_s=0.01) as (server, client):  # fmt: skip
            start = loop_time()
            answers = await fanout.ask_many(_questions(n), client=client, model="m",
                                            policy="split", limits=fanout.Limits(rpm=600))  # fmt: skip
            wall = loop_time() - start
        ideal = (math.ceil(n / per_window) - 1) * 1.0
        assert answers.report.answered == n
        # None: on the wall clock one in 40 was refused (allowed here until the limiter
        # read a burst's reported room as the endpoint saw it; on virtual time that
        # refusal came every run). 3.41 s against the ideal 3.0 here.
        assert server.stats.rate_limited == 0
        assert wall <= 1.2 * ideal, (wall, ideal)

    @on_virtual_time
    async def test_unknown_limits_are_learned_from_the_first_answer_without_a_429(
        self, sim: SimFactory
    ) -> None:
        """No Limits: the first request goes alone; its headers say 30 rpm over a
        sliding minute; 30 go, and the other 15 when the window ends (at most 3 % 429s:
        the minute lasts 3 s here, so the schedule's 2 % slack is only 60 ms)."""
        scale = 20.0  # the minute takes 3 s
        async with sim(time_scale=scale, rpm=30, limit_period_s=60.0, limit_policing="sliding",
                       answer_tokens=3) as (server, client):  # fmt: skip
            start = loop_time()
            answers = await fanout.ask_many(_questions(45), client=client, model="m",
                                            policy="split")  # fmt: skip
            wall = loop_time() - start
            first, second = server.stats.requests[0], server.stats.requests[1]
        assert answers.report.answered == 45
        # The target for an endpoint whose limits nobody gave: at most 3 % 429s.
        assert server.stats.rate_limited <= 0.03 * len(server.stats.requests)
        assert first.stream  # streamed, so that its headers come with its first token
        # The others wait for its headers, which the simulator sends when it takes the
        # request (before its first token: on virtual time the next request arrives then).
        assert first.admitted is not None and second.arrival >= first.admitted
        assert wall <= 1.5 * (60.0 / scale), wall

    @on_virtual_time
    async def test_a_tokens_per_minute_limit_policed_per_second_is_kept(
        self, sim: SimFactory
    ) -> None:
        """tpm equal to the endpoint's, policed per second, max_tokens charged on
        arrival: at most one 429."""
        tpm = 600 * 65
        async with sim(tpm=tpm, limit_period_s=1.0, limit_policing="sliding",
                       answer_tokens=3, rtt_s=0.01) as (server, client):  # fmt: skip
            answers = await fanout.ask_many(_questions(30), client=client, model="m",
                                            policy="split", max_tokens=50,
                                            limits=fanout.Limits(tpm=tpm))  # fmt: skip
        assert answers.report.answered == 30
        assert server.stats.rate_limited <= 1


class TestRetries:
    @on_virtual_time
    async def test_sporadic_faults_are_retried_at_once(self, sim: SimFactory) -> None:
        """20 % faults (500, 503, resets) on a healthy endpoint: nothing lost, about one
        retry per fault, and the call not much slower than without faults."""
        n = 200
        limits = fanout.Limits(max_concurrency=16)
        async with sim(time_scale=20, answer_tokens=10) as (_, client):
            clean_start = loop_time()
            await fanout.ask_many(_questions(n, 10), client=client, model="m", policy="split",
                                  limits=limits)  # fmt: skip
            clean = loop_time() - clean_start
        faults = {"500": 0.08, "503": 0.06, "reset": 0.06}
        async with sim(time_scale=20, answer_tokens=10, fault_rates=faults, seed=3) as (
            server,
            client,
        ):
            start = loop_time()
            answers = await fanout.ask_many(_questions(n, 10), client=client, model="m",
                                            policy="split", limits=limits, on_error="return")  # fmt: skip
            wall = loop_time() - start
            injected = sum(server.stats.faults.values())
        assert answers.report.answered == n
        assert injected > 0.1 * n
        assert answers.report.retries <= 1.5 * injected
        assert wall <= 3.0 * clean, (wall, clean)

    @on_virtual_time
    async def test_a_hung_attempt_is_abandoned_at_its_deadline_and_retried(
        self, sim: SimFactory
    ) -> None:
        """The endpoint never answers the 2nd request: it is given up after
        attempt_timeout and asked again, not held for the SDK's 600 s."""
        retry = fanout.Retry(attempt_timeout=0.5)
        async with sim(time_scale=50, answer_tokens=5, fault_schedule={2: "hang"}) as (
            _,
            client,
        ):
            start = loop_time()
            answers = await fanout.ask_many(_questions(4, 5), client=client, model="m",
                                            policy="split", retry=retry)  # fmt: skip
            wall = loop_time() - start
        assert answers.report.answered == 4
        assert answers.report.retries == 1
        assert wall < 5.0  # the deadline, a retry and the rest; not the client's 600 s

    def test_the_automatic_deadline_follows_what_the_endpoint_model_expects(self) -> None:
        """Auto: never under the floor; several times the expected time of a long
        answer; a fixed number or None as configured."""
        client = openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")
        fo = fanout.Fanout(client, model="m")
        transport = fo._transport
        auto = fanout.Retry()
        short = transport.deadline({"max_tokens": 5}, 10, auto)
        long = transport.deadline({"max_tokens": 8000}, 10, auto)
        assert short == auto.min_attempt_timeout
        assert long is not None and long > 4 * 8000 * 0.01  # the prior decode speed, x4
        assert transport.deadline({}, 10, fanout.Retry(attempt_timeout=7.5)) == 7.5
        assert transport.deadline({}, 10, fanout.Retry(attempt_timeout=None)) is None

    def test_the_automatic_deadline_counts_the_requests_in_flight_on_a_serializing_server(
        self,
    ) -> None:
        """A request sent behind 40 others on a server that runs one at a time waits for
        their answers: its deadline allows for them (the 79-question split on llama-server
        -np 4 was retried 11-51 times when the deadline did not); on a continuous-batching
        server the others barely delay it, and neither does its deadline grow much."""
        from fanout.planning import EndpointModel

        client = openai.AsyncOpenAI(api_key="x", base_url="http://127.0.0.1:9/v1")
        auto = fanout.Retry()
        serial = fanout.Fanout(client, model="m", endpoint=EndpointModel(
            rtt_s=0.05, decode_s_per_token=0.02, slowdown_per_request=1.0))._transport  # fmt: skip
        batching = fanout.Fanout(client, model="m", endpoint=EndpointModel(
            rtt_s=0.05, decode_s_per_token=0.02, slowdown_per_request=0.03))._transport  # fmt: skip
        alone = serial.deadline({"max_tokens": 24}, 20, auto)
        behind = serial.deadline({"max_tokens": 24}, 20, auto, others=40)
        assert alone == auto.min_attempt_timeout  # 0.5 s expected: the floor
        assert behind is not None and behind > 4 * 40 * 24 * 0.02  # their decoding, x4
        assert (
            batching.deadline({"max_tokens": 24}, 20, auto, others=40) == auto.min_attempt_timeout
        )

    def test_retry_budget_settings_are_checked(self) -> None:
        """Bad deadline or budget settings are configuration errors."""
        import pytest

        for bad in ({"attempt_timeout": -1}, {"budget": 2}, {"min_attempt_timeout": 0}):
            with pytest.raises(fanout.ConfigError):
                fanout.Retry(**bad)
