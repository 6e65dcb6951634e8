"""fanout.ask_many / fanout.Fanout against the simulator, through the real openai SDK."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

import anyio
import openai
import pytest
from openai import AsyncOpenAI

import fanout
from fanout.sim import answer_for

from .._reply_server import Reply, Request, as_json, completion, serve_replies
from .._virtual import loop_time, on_virtual_time

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from ..conftest import SimFactory


def _questions(n: int, tokens: int = 200) -> list[str]:
    return [f"Question number {i}? {{{{tokens={tokens}}}}}" for i in range(n)]


def _expected(questions: list[str], tokens: int) -> list[str]:
    return [answer_for(q, tokens) for q in questions]


class TestSpeedAndConcurrency:
    @on_virtual_time
    async def test_five_questions_take_under_a_third_of_sequential_time(
        self, sim: SimFactory
    ) -> None:
        """5 x 200 tokens: fan-out < 0.35 x the same answers asked one after another."""
        qs = _questions(5)
        async with sim(time_scale=10) as (server, client):
            sequential = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=1))
            start = loop_time()
            await sequential.ask_many(qs)
            seq_s = loop_time() - start
            server.reset_stats()
            start = loop_time()
            answers = await fanout.ask_many(qs, client=client, model="m")
            fan_s = loop_time() - start
            assert fan_s < 0.35 * seq_s, (fan_s, seq_s)
            assert answers.texts == _expected(qs, 200)
            assert server.stats.peak_in_flight == 5
            assert answers.report.peak_concurrency == 5

    @on_virtual_time
    async def test_peak_concurrency_is_min_of_n_and_the_cap(self, sim: SimFactory) -> None:
        """20 questions with max_concurrency=4: the server never sees more than 4 at once."""
        qs = _questions(20, tokens=20)
        async with sim(time_scale=50) as (server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", limits=fanout.Limits(max_concurrency=4)
            )
            assert server.stats.peak_in_flight == 4
            assert answers.report.peak_concurrency == 4
            assert answers.texts == _expected(qs, 20)

    @on_virtual_time
    async def test_concurrent_calls_on_one_fanout_share_its_cap(self, sim: SimFactory) -> None:
        """Three ask_many calls at once on one Fanout(max_concurrency=3) stay at 3 in flight."""
        async with sim(time_scale=50) as (server, client):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=3))
            batches = [[f"batch {b} q {i} {{{{tokens=30}}}}" for i in range(6)] for b in range(3)]
            results = await asyncio.gather(*[fo.ask_many(b) for b in batches])
            assert server.stats.peak_in_flight == 3
            assert fo.peak_in_flight == 3
            for batch, answers in zip(batches, results, strict=True):
                assert answers.texts == _expected(batch, 30)


class TestRateLimits:
    @on_virtual_time
    async def test_configured_rpm_gives_no_429s(self, sim: SimFactory) -> None:
        """Sim polices 600 rpm per model second; the same rpm in Limits: 0 429s (window learned)."""
        scale = 10
        async with sim(time_scale=scale, rpm=600, limit_period_s=1.0, answer_tokens=3) as (
            server,
            client,
        ):
            limits = fanout.Limits(rpm=600 * scale, max_concurrency=100)
            answers = await fanout.ask_many(
                _questions(200, 3), client=client, model="m", limits=limits, policy="split"
            )
            assert server.stats.rate_limited == 0
            assert answers.report.rate_limited == 0
            assert answers.report.answered == 200
            # 200 requests at 100/s with a 10-request burst: close to 1.9 s.
            assert answers.report.wall_s > 1.5

    @on_virtual_time
    async def test_limits_are_learned_from_headers(self, sim: SimFactory) -> None:
        """No limits given: the engine learns the rpm from headers; 429s stay under 3 %."""
        scale = 10
        async with sim(time_scale=scale, rpm=300, limit_period_s=5.0, answer_tokens=3) as (
            server,
            client,
        ):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=8))
            answers = await fo.ask_many(_questions(150, 3))
            assert answers.report.answered == 150
            assert fo.limiter.state().rpm == 300 * scale
            assert fo.limiter.state().rpm_learned
            assert server.stats.rate_limited <= 0.03 * len(server.stats.requests)

    @on_virtual_time
    async def test_a_429_pauses_every_request_for_retry_after(self, sim: SimFactory) -> None:
        """After a 429 the whole Fanout waits out retry-after, then all answers arrive."""
        # The second request gets 429 with retry-after 1 s, whatever the limits say.
        async with sim(time_scale=1, answer_tokens=1, rtt_s=0, fault_schedule={2: "429"}) as (
            server,
            client,
        ):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=1))
            answers = await fo.ask_many(_questions(5, 1), on_error="return", policy="split")
            assert answers.report.answered == 5
            assert answers.report.rate_limited == 1
            assert answers.report.limit_wait_s > 0.9  # the retry waited out retry-after
            ok = [r for r in server.stats.requests if r.status == 200]
            assert len(ok) == 5
            assert ok[1].arrival - server.stats.requests[1].arrival >= 0.95

    @on_virtual_time
    async def test_insufficient_quota_fails_every_pending_question_without_sending(
        self, sim: SimFactory
    ) -> None:
        """insufficient_quota is account-wide: one request learns it, and every other
        question of the Fanout fails at once with QuotaExceededError, unsent."""
        async with sim(time_scale=100, quota_tokens=1, answer_tokens=5) as (server, client):
            # One at a time, so that no other request is already on its way.
            fo = fanout.Fanout(client, model="m", on_error="return",
                               limits=fanout.Limits(max_concurrency=1))  # fmt: skip
            await fo.ask_many(["warm up"])  # spends the quota
            server.reset_stats()
            answers = await fo.ask_many(_questions(4, 5), policy="split")
            assert len(server.stats.requests) == 1
            assert all(isinstance(a.error, fanout.QuotaExceededError) for a in answers)
            assert sorted(a.attempts for a in answers) == [0, 0, 0, 1]
            later = await fo.ask_many(["and another?"])
            assert isinstance(later[0].error, fanout.QuotaExceededError)
            assert "not sent" in str(later[0].error)
            assert len(server.stats.requests) == 1
            sent = next(a for a in answers if a.attempts == 1)
            assert isinstance(sent.error, fanout.QuotaExceededError)
            assert isinstance(sent.error.__cause__, openai.RateLimitError)
            for answer in answers:
                assert f"question {answer.index}" in str(answer.error)


class TestFaultsAndRetries:
    @on_virtual_time
    async def test_every_answer_arrives_in_order_despite_5xx_and_resets(
        self, sim: SimFactory
    ) -> None:
        """10 % 5xx and 5 % resets: all answers delivered in order; retries <= 1.3 x faults."""
        qs = _questions(300, 5)
        faults = {"500": 0.05, "503": 0.05, "reset": 0.05}
        async with sim(time_scale=100, fault_rates=faults, seed=3) as (server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", policy="split",
                retry=fanout.Retry(initial_wait=0.01, max_attempts=8),
            )  # fmt: skip
            assert answers.texts == _expected(qs, 5)
            injected = sum(server.stats.faults.values())
            assert injected > 20
            assert answers.report.retries <= 1.3 * injected
            assert answers.report.retries >= injected  # each fault cost one retry

    @on_virtual_time
    async def test_the_sdk_does_not_retry_on_top_of_fanout(self, sim: SimFactory) -> None:
        """Retry(max_attempts=3) against a server that always fails: exactly 3 requests."""
        async with sim(time_scale=100, fault_rates={"500": 1.0}) as (server, client):
            assert client.max_retries == 2
            answers = await fanout.ask_many(
                ["doomed"], client=client, model="m", on_error="return",
                retry=fanout.Retry(max_attempts=3, initial_wait=0.01),
            )  # fmt: skip
            assert len(server.stats.requests) == 3
            assert answers[0].attempts == 3
            assert isinstance(answers[0].error, fanout.QuestionError)
            assert isinstance(answers[0].error.__cause__, openai.InternalServerError)
            assert client.max_retries == 2  # the user's client is untouched

    @on_virtual_time
    async def test_client_errors_are_not_retried_and_name_their_question(
        self, sim: SimFactory
    ) -> None:
        """A 400 fails its own question at once; the others are answered and kept."""
        qs: list[fanout.QuestionLike] = [
            "fine 0",
            fanout.Question(text="bad one", params={"extra_body": {"bogus_param": 1}}),
            "fine 2",
        ]
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            with pytest.raises(fanout.PartialFailureError) as info:
                await fanout.ask_many(qs, client=client, model="m")
            answers = info.value.answers
            assert len(server.stats.requests) == 3
            assert answers[0].text == answer_for("fine 0", 4)
            assert answers[2].text == answer_for("fine 2", 4)
            assert answers[1].text is None
            (error,) = info.value.errors
            assert error.index == 1
            assert "question 1" in str(error)
            assert isinstance(error.__cause__, openai.BadRequestError)

    @on_virtual_time
    async def test_hung_requests_time_out_and_are_retried(self, sim: SimFactory) -> None:
        """A request that hangs is abandoned at the client's timeout and asked again."""
        async with sim(
            time_scale=100, fault_schedule={1: "hang"}, answer_tokens=3, timeout=0.5
        ) as (server, client):
            answers = await fanout.ask_many(
                ["will hang once"], client=client, model="m",
                retry=fanout.Retry(initial_wait=0.01),
            )  # fmt: skip
            assert answers[0].text == answer_for("will hang once", 3)
            assert answers[0].attempts == 2
            assert server.stats.faults["hang"] == 1


class TestCancellationAndTimeout:
    @on_virtual_time
    async def test_cancelling_the_caller_leaves_nothing_running(self, sim: SimFactory) -> None:
        """Cancel ask_many mid-flight: every request on the server is dropped promptly."""
        async with sim(time_scale=1, answer_tokens=5000) as (server, client):
            with anyio.move_on_after(0.5):
                await fanout.ask_many(_questions(10, 5000), client=client, model="m")
            for _ in range(100):
                if server.stats.in_flight == 0 and server._engine.running == 0:
                    break
                await asyncio.sleep(0.02)
            assert server.stats.peak_in_flight == 10
            assert server.stats.in_flight == 0
            assert server._engine.running == 0

    @on_virtual_time
    async def test_as_completed_under_a_timeout_with_a_slow_reader_loses_no_question(
        self, sim: SimFactory
    ) -> None:
        """200 questions through ``as_completed`` with ``timeout=3``, read at 0.2 s an
        answer: the answers back before the timeout wait in the stream for the reader,
        and the timeout comes while they do. Every question is still yielded exactly
        once, answered or failed with its timeout (118 of them were yielded nothing at
        all when a job counted as finished before its answer was handed over)."""
        questions = _questions(200, 2)
        seen: dict[int, int] = {}
        async with sim(time_scale=1, rtt_s=0.5) as (_server, client):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(max_concurrency=64))
            async for answer in fo.as_completed(questions, policy="split", timeout=3.0):
                seen[answer.index] = seen.get(answer.index, 0) + 1
                assert answer.error is None or isinstance(answer.error, fanout.QuestionTimeoutError)
                assert answer.error is not None or answer.text == answer_for(
                    questions[answer.index], 2
                )
                await anyio.sleep(0.2)
        assert sorted(seen) == list(range(200))
        assert set(seen.values()) == {1}

    @on_virtual_time
    async def test_timeout_keeps_finished_answers(self, sim: SimFactory) -> None:
        """timeout=: short answers are kept, long ones fail with QuestionTimeoutError."""
        qs = ["short {{tokens=5}}", "long {{tokens=5000}}", "short too {{tokens=5}}"]
        async with sim(time_scale=1, rtt_s=0.01) as (server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", timeout=1.0, on_error="return"
            )
            assert answers[0].text == answer_for(qs[0], 5)
            assert answers[2].text == answer_for(qs[2], 5)
            assert isinstance(answers[1].error, fanout.QuestionTimeoutError)
            assert answers.report.failed == 1
            for _ in range(100):
                if server.stats.in_flight == 0:
                    break
                await asyncio.sleep(0.02)
            assert server.stats.in_flight == 0


class TestInput:
    def test_a_question_built_by_hand_with_a_bad_value_is_a_value_error_naming_the_field(
        self,
    ) -> None:
        """``fanout.Question`` is a pydantic model: a wrong value raises pydantic's
        ValidationError (a ValueError), naming the field, as docs/api.md says."""
        from pydantic import ValidationError

        for bad, field, said in (({"text": 5}, "text", "valid string"),
                                 ({"text": " "}, "text", "text is empty"),
                                 ({"text": "a", "trusted": "maybe"}, "trusted", "valid boolean")):  # fmt: skip
            with pytest.raises(ValidationError) as info:
                fanout.Question(**bad)
            assert isinstance(info.value, ValueError)
            assert f"\n{field}\n" in str(info.value) and said in str(info.value)

    @on_virtual_time
    async def test_bad_input_is_refused_before_anything_is_sent(self, sim: SimFactory) -> None:
        """Empty or non-string questions name their index; nothing reaches the server."""
        async with sim(time_scale=100) as (server, client):
            with pytest.raises(fanout.InvalidQuestionError, match="question 1 is empty") as info:
                await fanout.ask_many(["ok", "  "], client=client, model="m")
            assert info.value.index == 1
            with pytest.raises(fanout.InvalidQuestionError, match="question 2 must be a str"):
                await fanout.ask_many(["a", "b", 3], client=client, model="m")  # type: ignore[list-item]
            with pytest.raises(fanout.InvalidQuestionError, match="not a single string"):
                await fanout.ask_many("What is X?", client=client, model="m")
            with pytest.raises(fanout.InvalidQuestionError, match="sequence"):
                await fanout.ask_many(42, client=client, model="m")  # type: ignore[arg-type]
            with pytest.raises(fanout.ConfigError, match="unknown policy"):
                await fanout.ask_many(["a"], client=client, model="m", policy="sideways")
            with pytest.raises(fanout.ConfigError, match="rpm"):
                fanout.Limits(rpm=-5)
            with pytest.raises(fanout.ConfigError, match="max_concurrency"):
                fanout.Limits(max_concurrency=0)
            with pytest.raises(fanout.ConfigError, match="max_attempts"):
                fanout.Retry(max_attempts=0)
            with pytest.raises(fanout.ConfigError, match="model"):
                await fanout.ask_many(["a"], client=client)
            assert server.stats.requests == []

    @on_virtual_time
    async def test_an_empty_list_returns_empty_answers(self, sim: SimFactory) -> None:
        """ask_many([]) sends nothing and returns zero answers."""
        async with sim() as (server, client):
            answers = await fanout.ask_many([], client=client, model="m")
            assert len(answers) == 0
            assert answers.report.requests == 0
            assert server.stats.requests == []

    @on_virtual_time
    async def test_identical_questions_are_sent_once(self, sim: SimFactory) -> None:
        """Duplicates share one request; each keeps its own index."""
        qs = ["same", "other", "same", "same"]
        async with sim(time_scale=100, answer_tokens=4) as (server, client):
            answers = await fanout.ask_many(qs, client=client, model="m")
            assert len(server.stats.requests) == 2
            assert answers.texts == [answer_for(q, 4) for q in qs]
            assert [a.index for a in answers] == [0, 1, 2, 3]
            assert answers[2].shared_with == 0
            assert answers[3].shared_with == 0
            assert answers.report.deduplicated == 2

    @on_virtual_time
    async def test_per_question_overrides_and_system_prompt_are_sent(self, sim: SimFactory) -> None:
        """Question.params override create() kwargs; system= becomes a system message."""
        async with sim(time_scale=100, answer_tokens=50) as (server, client):
            answers = await fanout.ask_many(
                ["plain", fanout.Question(text="capped", id="c", params={"max_tokens": 5})],
                client=client, model="m", system="Be brief.", max_tokens=20,
            )  # fmt: skip
            assert answers[0].usage.completion_tokens == 20
            assert answers[0].finish_reason == "length"
            assert answers[1].usage.completion_tokens == 5
            assert answers[1].id == "c"
            sys_tokens = [r.prompt_tokens for r in server.stats.requests]
            assert min(sys_tokens) > 10  # system + user messages both counted

    @pytest.mark.parametrize(("policy", "bound"), [("split", 2 * 10 + 1), ("auto", 256 + 2 * 10)])
    @on_virtual_time
    async def test_large_iterables_are_pulled_lazily(
        self, sim: SimFactory, policy: str, bound: int
    ) -> None:
        """A generator of 600 questions is consumed as the window frees, not all at
        once (auto plans chunks of 256)."""
        pulled = 0

        def gen() -> Iterator[str]:
            nonlocal pulled
            for i in range(600):
                pulled += 1
                yield f"item {i}"

        first_seen: list[int] = []

        def on_answer(_: fanout.Answer) -> None:
            if not first_seen:
                first_seen.append(pulled)

        async with sim(time_scale=1000, answer_tokens=2) as (server, client):
            limits = fanout.Limits(max_concurrency=10)
            answers = await fanout.ask_many(
                gen(), client=client, model="m", limits=limits, on_answer=on_answer, policy=policy
            )
            assert len(answers) == 600
            assert answers.texts[599] == answer_for("item 599", 2)
            assert first_seen[0] <= bound  # the in-flight window (and chunk), not the input
            assert server.stats.peak_in_flight <= 10

    @on_virtual_time
    async def test_async_iterables_work_and_keep_order(self, sim: SimFactory) -> None:
        """Questions from an async generator come back in their order."""

        async def agen() -> AsyncIterator[str]:
            for i in range(30):
                await asyncio.sleep(0)
                yield f"async item {i} {{{{tokens={30 - i}}}}}"

        async with sim(time_scale=100) as (_, client):
            answers = await fanout.ask_many(agen(), client=client, model="m")
            assert answers.texts == [
                answer_for(f"async item {i} {{{{tokens={30 - i}}}}}", 30 - i) for i in range(30)
            ]


class TestAsCompletedAndReport:
    @on_virtual_time
    async def test_as_completed_yields_in_finish_order_with_indices(self, sim: SimFactory) -> None:
        """Shorter answers come first; every index appears exactly once."""
        qs = [f"q{i} {{{{tokens={t}}}}}" for i, t in enumerate([400, 10, 200, 50])]
        async with sim(time_scale=20) as (_, client):
            fo = fanout.Fanout(client, model="m")
            got = [a async for a in fo.as_completed(qs)]
            assert [a.index for a in got] == [1, 3, 2, 0]
            for a in got:
                assert a.text == answer_for(qs[a.index], [400, 10, 200, 50][a.index])

    @on_virtual_time
    async def test_report_counts_requests_tokens_and_wall_time(self, sim: SimFactory) -> None:
        """The report's tokens equal what the server billed; requests equal what it saw."""
        async with sim(time_scale=100, answer_tokens=7, fault_schedule={2: "500"}) as (
            server,
            client,
        ):
            answers = await fanout.ask_many(
                _questions(6, 7), client=client, model="m", retry=fanout.Retry(initial_wait=0.01)
            )
            r = answers.report
            ok = [x for x in server.stats.requests if x.status == 200]
            assert r.requests == len(server.stats.requests) == 7
            assert r.retries == 1
            assert r.completion_tokens == sum(x.completion_tokens for x in ok) == 42
            assert r.prompt_tokens == sum(x.prompt_tokens for x in ok)
            assert r.wall_s > 0
            assert r.answered == 6
            assert all(a.request_ids for a in answers)

    @on_virtual_time
    async def test_the_planner_counts_a_system_prompt_the_endpoint_has_cached(
        self, sim: SimFactory
    ) -> None:
        """Once an endpoint has reported cached prompt tokens and this Fanout has sent
        the system prompt, the plan expects it cached; a new system prompt, or an
        endpoint without a cache, is expected to be prefilled."""
        system = "Background you must use. " * 300
        for caching in (True, False):
            async with sim(time_scale=100, answer_tokens=5, prefix_cache=caching) as (_, client):
                fo = fanout.Fanout(client, model="m", system=system)
                assert fo.plan(_questions(3, 5)).inputs.cached_prompt_tokens == 0
                for i in range(2):  # the second call finds the first one's prompt cached
                    await fo.ask_many([f"warm-up {i}"], policy="split")
                plan = fo.plan(_questions(3, 5))
                assert fo.endpoint.estimate().prefix_cache is caching
                shared = plan.inputs.shared_prompt_tokens
                assert plan.inputs.cached_prompt_tokens == (shared if caching else 0)
                other = fo.plan(_questions(3, 5), system="A different system prompt.")
                assert other.inputs.cached_prompt_tokens == 0

    @pytest.mark.parametrize("policy", ["split", "merge"])
    @on_virtual_time
    async def test_cached_prompt_tokens_are_reported_per_answer_and_in_total(
        self, sim: SimFactory, policy: str
    ) -> None:
        """An endpoint with a prompt cache reports the reused prompt tokens; each answer
        carries its share (merged: equal shares that add up) and the report the sum."""
        system = "Background you must use. " * 300
        async with sim(time_scale=100, answer_tokens=5, prefix_cache=True) as (_, client):
            fo = fanout.Fanout(client, model="m", system=system)
            await fo.ask_many(["warm the cache"], policy="split")  # the system prompt is seen
            answers = await fo.ask_many(_questions(4, 5), policy=policy)
        cached = [a.usage.cached_prompt_tokens for a in answers]
        assert all(c > 0 for c in cached), cached
        assert all(a.usage.cached_prompt_tokens < a.usage.prompt_tokens for a in answers)
        assert answers.report.cached_prompt_tokens == sum(cached)
        assert all(a.mode == ("merged" if policy == "merge" else "split") for a in answers)
        if policy == "merge":
            assert max(cached) - min(cached) <= 1
        # No cache, nothing reported.
        async with sim(time_scale=100, answer_tokens=5) as (_, client):
            plain = await fanout.ask_many(_questions(2, 5), client=client, model="m", system=system)
        assert plain.report.cached_prompt_tokens == 0


async def _drained(server: object) -> bool:
    """Wait (a bounded while) for the simulator to have no request in flight."""
    for _ in range(150):
        if server.stats.in_flight == 0:  # type: ignore[attr-defined]
            return True
        await asyncio.sleep(0.02)
    return False


class TestAbort:
    @staticmethod
    def _broken_input(enough: anyio.Event) -> AsyncIterator[str]:
        """10 short questions and 5 very long ones, then an error once ``enough`` is set."""

        async def gen() -> AsyncIterator[str]:
            for i in range(10):
                yield f"short {i} {{{{tokens=5}}}}"
            for i in range(5):
                yield f"long {i} {{{{tokens=5000}}}}"
            await enough.wait()
            raise RuntimeError("input broke")

        return gen()

    @on_virtual_time
    async def test_a_raising_input_iterator_keeps_the_finished_answers(
        self, sim: SimFactory
    ) -> None:
        """An input iterator that raises: CallAbortedError carries the finished answers and
        has the iterator's exception as its cause; the requests in flight are cancelled."""
        enough = anyio.Event()
        seen = 0

        def on_answer(_: fanout.Answer) -> None:
            nonlocal seen
            seen += 1
            if seen == 10:
                enough.set()

        async with sim(time_scale=1, rtt_s=0.01) as (server, client):
            with pytest.raises(fanout.CallAbortedError) as info:
                await fanout.ask_many(
                    self._broken_input(enough), client=client, model="m", policy="split",
                    on_answer=on_answer,
                )  # fmt: skip
            assert await _drained(server)
        err = info.value
        assert isinstance(err, fanout.FanoutError)
        assert type(err.__cause__) is RuntimeError
        assert str(err.__cause__) == "input broke"
        assert [a.index for a in err.answers] == list(range(10))
        assert err.answers.texts == [
            answer_for(f"short {i} {{{{tokens=5}}}}", 5) for i in range(10)
        ]
        assert err.answers.report.questions_read == 15
        assert not err.answers.report.input_exhausted
        assert "input" in str(err)

    @on_virtual_time
    async def test_a_raising_on_answer_keeps_the_finished_answers(self, sim: SimFactory) -> None:
        """on_answer raising on the 4th answer: CallAbortedError with the answers finished
        so far (that one included) and the callback's exception as its cause."""
        seen = 0

        def on_answer(_: fanout.Answer) -> None:
            nonlocal seen
            seen += 1
            if seen == 4:
                raise ValueError("callback broke")

        qs = [f"short {i} {{{{tokens={5 + i}}}}}" for i in range(4)] + _questions(4, 5000)
        async with sim(time_scale=1, rtt_s=0.01) as (server, client):
            with pytest.raises(fanout.CallAbortedError) as info:
                await fanout.ask_many(
                    qs, client=client, model="m", policy="split", on_answer=on_answer
                )
            assert await _drained(server)
        err = info.value
        assert type(err.__cause__) is ValueError
        assert sorted(a.index for a in err.answers) == [0, 1, 2, 3]
        assert [a.index for a in err.answers] == [0, 1, 2, 3]
        assert all(a.ok for a in err.answers)
        assert "on_answer" in str(err)

    @on_virtual_time
    async def test_as_completed_raises_call_aborted_after_yielding_what_finished(
        self, sim: SimFactory
    ) -> None:
        """as_completed over an input iterator that raises: every finished answer is
        yielded, then CallAbortedError with the iterator's exception as its cause."""
        enough = anyio.Event()
        got: list[fanout.Answer] = []
        async with sim(time_scale=1, rtt_s=0.01) as (server, client):
            fo = fanout.Fanout(client, model="m", policy="split")

            async def consume() -> None:
                async for answer in fo.as_completed(self._broken_input(enough)):
                    got.append(answer)
                    if len(got) == 10:
                        enough.set()

            with pytest.raises(fanout.CallAbortedError) as info:
                await consume()
            assert await _drained(server)
        assert type(info.value.__cause__) is RuntimeError
        assert sorted(a.index for a in got) == list(range(10))


class TestTimeoutReport:
    @pytest.mark.parametrize("policy", ["split", "merge"])
    @on_virtual_time
    async def test_questions_cut_off_after_they_were_sent_report_their_attempts(
        self, sim: SimFactory, policy: str
    ) -> None:
        """A question the call's timeout ends while its request is out reports 1 attempt."""
        qs = ["long one {{tokens=5000}}", "long two {{tokens=5000}}"]
        async with sim(time_scale=1, rtt_s=0.01) as (server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", timeout=0.5, on_error="return", policy=policy
            )
            assert len(server.stats.requests) == (2 if policy == "split" else 1)
        for answer in answers:
            assert isinstance(answer.error, fanout.QuestionTimeoutError)
            assert answer.attempts == 1
            assert answer.error.attempts == 1

    @on_virtual_time
    async def test_an_iterator_cut_off_by_timeout_says_how_much_was_read(
        self, sim: SimFactory
    ) -> None:
        """timeout= ends the reading of an iterator: the report counts the questions
        read and says the input was not read to its end; on_error='raise' raises."""

        async def slow() -> AsyncIterator[str]:
            for i in range(100):
                if i >= 5:
                    await asyncio.sleep(10)
                yield f"item {i}"

        async with sim(time_scale=100, answer_tokens=2) as (_, client):
            answers = await fanout.ask_many(
                slow(), client=client, model="m", timeout=0.5, on_error="return",
                policy="split",
            )  # fmt: skip
            assert len(answers) == 5
            assert answers.report.answered == 5
            assert answers.report.questions_read == 5
            assert answers.report.input_exhausted is False
            with pytest.raises(
                fanout.PartialFailureError, match="before the input was read to its end"
            ):
                await fanout.ask_many(slow(), client=client, model="m", timeout=0.5, policy="split")
            full = await fanout.ask_many(_questions(3, 2), client=client, model="m")
            assert full.report.questions_read == 3
            assert full.report.input_exhausted is True


class TestChoicesAndSerialization:
    @on_virtual_time
    async def test_n_returns_every_choice(self, sim: SimFactory) -> None:
        """n=3: the answer carries the three choices the usage paid for; text is the first."""
        async with sim(time_scale=100, answer_tokens=4) as (_, client):
            answers = await fanout.ask_many(["pick"], client=client, model="m", n=3)
            single = await fanout.ask_many(["one"], client=client, model="m")
        (answer,) = answers
        assert answer.choices == [answer_for("pick", 4)] * 3
        assert answer.text == answer.choices[0]
        assert answer.usage.completion_tokens == 12
        assert single[0].choices == [single[0].text]

    @on_virtual_time
    async def test_a_failed_answer_serializes_its_error_as_type_and_message(
        self, sim: SimFactory
    ) -> None:
        """model_dump_json on a failed answer works: the error as its type and message."""
        async with sim(time_scale=100, fault_rates={"500": 1.0}) as (_, client):
            answers = await fanout.ask_many(
                ["doomed"], client=client, model="m", on_error="return",
                retry=fanout.Retry(max_attempts=1),
            )  # fmt: skip
        dumped = json.loads(answers[0].model_dump_json())
        assert dumped["error"]["type"] == "QuestionError"
        assert dumped["error"]["message"] == str(answers[0].error)
        fine = answers[0].model_copy(update={"error": None})
        assert json.loads(fine.model_dump_json())["error"] is None


class TestUnreachableEndpoint:
    @on_virtual_time
    async def test_an_unreachable_endpoint_is_named_once_with_its_url(self) -> None:
        """Connection refused: the error names the base URL, says the index once, and
        PartialFailureError's cause is the first failure."""
        client = openai.AsyncOpenAI(api_key="k", base_url="http://127.0.0.1:9/v1")
        with pytest.raises(fanout.PartialFailureError) as info:
            await fanout.ask_many(
                ["anyone there?"], client=client, model="m",
                retry=fanout.Retry(max_attempts=2, initial_wait=0.01),
            )  # fmt: skip
        await client.close()
        message = str(info.value)
        assert "http://127.0.0.1:9/v1" in message
        assert message.count("question 0") == 1
        assert info.value.__cause__ is info.value.errors[0]
        assert isinstance(info.value.errors[0].__cause__, openai.APIConnectionError)


# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_choices_come_back_in_the_order_of_their_index() -> None:
    """``n=2`` with index 1 listed before index 0: ``text`` is choice 0's."""

    def reply(_: Request) -> Reply:
        choices = [
            {"index": 1, "finish_reason": "stop", "message": {"role": "assistant", "content": "SECOND"}},
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "FIRST"}},
        ]  # fmt: skip
        return as_json(completion(choices))

    with serve_replies(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.ask_many(["q?"], client=client, model="m", n=2, memory=False)
        await client.close()
    assert answers[0].text == "FIRST"
    assert answers[0].choices == ["FIRST", "SECOND"]


# wall clock: serve_replies answers from a thread (see tests/_virtual.py)
async def test_a_duplicate_of_a_failed_question_names_its_own_position() -> None:
    """The same failing question at positions 0 and 2: the copy's error has index 2 and
    its message says question 2 (asked once, as question 0), not 'question 0 failed'."""

    def reply(request: Request) -> Reply:
        if request.question == "bad?":
            return as_json({"error": {"message": "no", "type": "invalid_request_error"}}, 400)
        return as_json(completion([{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": "ok"}}]))  # fmt: skip

    with serve_replies(reply) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        answers = await fanout.ask_many(["bad?", "good?", "bad?"], client=client, model="m",
                                        on_error="return", memory=False)  # fmt: skip
        await client.close()
    error: Any = answers[2].error
    assert isinstance(error, fanout.QuestionError)
    assert error.index == 2
    assert str(error).startswith("question 2 failed")
    assert str(error).endswith("(asked once, as question 0)")
    assert str(answers[0].error).startswith("question 0")


async def test_a_refused_key_stops_the_rest_of_its_call_only(sim: SimFactory) -> None:
    """In the library: after a 401, the call's other questions are not sent (each
    fails naming the refusal); the next call on the same Fanout tries again (a key
    from a callable may have been renewed)."""
    async with sim(time_scale=100, answer_tokens=3, api_key="sk-right-key-0123456789") as (
        server,
        client,
    ):
        # One request at a time: those waiting when the 401 comes are not sent.
        fo = fanout.Fanout(client.with_options(api_key="wrong"), model="m", policy="split",
                           limits=fanout.Limits(max_concurrency=1))  # fmt: skip
        for _call in range(2):
            server.reset_stats()
            answers = await fo.ask_many([f"q{i}?" for i in range(12)], on_error="return")
            assert len(server.stats.requests) == 1
            assert all(a.error is not None for a in answers)
            not_sent = [a for a in answers if a.attempts == 0]
            assert len(not_sent) == 11
            assert all("refused with 401 invalid_api_key" in str(a.error) for a in not_sent)
