"""Several endpoints behind one ``Fanout`` (``engine/pool.py``): order, placement, cool-downs
and fallbacks, against simulators on virtual time."""

from __future__ import annotations

import asyncio
import dataclasses
import re

import pytest

import fanout
from fanout import Endpoint, Fanout
from fanout.sim import SimConfig, SimServer, answer_for
from fanout.testing import open_sim

from .._virtual import loop_time, on_virtual_time

TOKENS = 20


def questions(n: int) -> list[str]:
    return [f"Question {i} about something." for i in range(n)]


def pool(*sims: object, **settings: object) -> Fanout:
    eps = [
        Endpoint(client=sim.client, name=name)  # type: ignore[attr-defined]
        for sim, name in zip(sims, ("a", "b", "c"), strict=False)
    ]
    return Fanout(endpoints=eps, model="m", policy="split", **settings)  # type: ignore[arg-type]


class TestEndpointConfig:
    def test_an_endpoint_is_keyword_only_frozen_and_checked(self) -> None:
        """Endpoint takes keywords only, cannot be changed, and refuses what it cannot use."""
        with pytest.raises(TypeError):
            Endpoint("http://x/v1")  # type: ignore[call-arg]
        ep = Endpoint(base_url="http://127.0.0.1:9/v1", limits=fanout.Limits(rpm=60))
        with pytest.raises(dataclasses.FrozenInstanceError):
            ep.priority = 3  # type: ignore[misc]
        assert ep.label == "127.0.0.1:9"
        assert ep == Endpoint(base_url="http://127.0.0.1:9/v1", limits=fanout.Limits(rpm=60))
        for bad in (
            {},
            {"base_url": "http://x/v1", "client": object()},
            {"base_url": "http://x/v1", "priority": -1},
            {"base_url": "http://x/v1", "limits": {"rpm": 5}},
            {"base_url": "http://x/v1", "price": 0.1},
            {"base_url": "http://x/v1", "name": ""},
        ):
            with pytest.raises(fanout.ConfigError):
                Endpoint(**bad)

    def test_a_fanout_takes_a_client_or_endpoints_not_both(self) -> None:
        """One client, or several endpoints, with distinct names; the users' clients are
        not changed."""
        from openai import AsyncOpenAI

        client = AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key="k")
        with pytest.raises(fanout.ConfigError, match="not both"):
            Fanout(client, endpoints=[Endpoint(client=client)])
        with pytest.raises(fanout.ConfigError, match="called"):
            Fanout(endpoints=[Endpoint(client=client), Endpoint(client=client)])
        with pytest.raises(fanout.ConfigError, match="empty"):
            Fanout(endpoints=[])
        fo = Fanout(
            endpoints=[Endpoint(client=client, name="one"), Endpoint(base_url="http://h:1/v1")]
        )
        assert client.max_retries == 2  # the user's client keeps its own retries
        assert [e.label for e in fo.endpoints] == ["one", "h:1"]
        assert fo.member("one").limiter is not fo.member("h:1").limiter
        assert "endpoints=[one, h:1]" in repr(fo)

    def test_a_shared_budget_is_one_per_endpoint(self) -> None:
        """In redis, under the default namespace, each endpoint has a budget of its own."""
        limits = fanout.Limits(rpm=60, backend="redis://127.0.0.1:9/0")
        fo = Fanout(
            endpoints=[
                Endpoint(base_url="http://h:1/v1", limits=limits),
                Endpoint(base_url="http://h:2/v1", limits=limits),
            ]
        )
        spaces = {fo.member(n).limits.namespace for n in ("h:1", "h:2")}
        assert spaces == {"endpoint:h:1", "endpoint:h:2"}


@on_virtual_time
async def test_answers_come_back_in_input_order_with_the_endpoint_that_answered() -> None:
    """Each answer is its own question's, at its position, whichever endpoint answered;
    the report counts what each answered and says how the questions were placed."""
    async with (
        open_sim(slots=4, answer_tokens=TOKENS) as a,
        open_sim(slots=16, step_s=0.05, answer_tokens=TOKENS) as b,
    ):
        qs = questions(120)
        answers = await pool(a, b).ask_many(qs)
    assert [x.text for x in answers] == [answer_for(q, TOKENS) for q in qs]
    assert [x.index for x in answers] == list(range(120))
    by = {x.endpoint for x in answers}
    assert by == {"a", "b"}
    report = answers.report
    assert report.endpoints == {
        "a": sum(x.endpoint == "a" for x in answers),
        "b": sum(x.endpoint == "b" for x in answers),
    }
    assert sum(report.endpoints.values()) == 120
    assert report.requests == a.stats.completions + b.stats.completions == 120
    assert report.placements[0].startswith("0.00 s: ")
    assert "each where it is answered soonest" in report.placements[0]
    assert report.fallbacks == 0 and report.cooldowns == []


@on_virtual_time
async def test_a_wide_slow_replica_takes_work_beside_a_fast_narrow_one() -> None:
    """A fast replica with 8 slots and one four times slower with 64: the slow one's width
    makes it worth more than half the work; the call ends well before the fast one
    alone would have, and each endpoint was learned on its own."""
    n = 300
    async with (
        open_sim(slots=8, answer_tokens=TOKENS) as fast,
        open_sim(slots=64, step_s=0.06, answer_tokens=TOKENS) as slow,
    ):
        fo = pool(fast, slow)
        start = loop_time()
        answers = await fo.ask_many(questions(n))
        wall = loop_time() - start
        alone_start = loop_time()
        await Fanout(fast.client, model="m", policy="split").ask_many(questions(n))
        fast_alone = loop_time() - alone_start
    report = answers.report
    assert report.failed == 0 and report.rate_limited == 0
    assert report.endpoints["b"] > report.endpoints["a"] > 0
    assert wall < 0.7 * fast_alone
    # Each endpoint learned on its own: a's answers came in waves of its 8 slots, b's
    # never queued, and it was given more at once.
    last = report.placements[-1]
    assert "to a (8 slots" in last
    wide = re.search(r"to b \((\d+) slots", last)
    assert wide is not None and int(wide.group(1)) >= 32


@on_virtual_time
async def test_an_endpoint_stopped_mid_call_has_its_questions_answered_by_the_other() -> None:
    """One simulator stops while the call runs: every question is answered once, those
    it had in flight by the other; the report says which endpoint answered each, that
    one was cooled down, and how many questions were placed again."""
    n = 200
    async with (
        open_sim(slots=8, answer_tokens=TOKENS) as a,
        open_sim(slots=8, answer_tokens=TOKENS) as b,
    ):
        seen: list[int] = []
        stopped_at: list[int] = []

        async def stop_b_early(answer: fanout.Answer) -> None:
            seen.append(answer.index)
            if len(seen) == 40:
                stopped_at.append(len(b.stats.requests))
                asyncio.get_running_loop().create_task(b.server.stop())

        qs = questions(n)
        answers = await pool(a, b).ask_many(qs, on_answer=stop_b_early)
    assert sorted(seen) == list(range(n))  # each delivered once
    assert [x.text for x in answers] == [answer_for(q, TOKENS) for q in qs]
    report = answers.report
    assert report.failed == 0
    assert report.endpoints["a"] + report.endpoints["b"] == n
    assert report.endpoints["a"] > n // 2
    assert report.fallbacks > 0
    assert any(note.startswith("b cooled down") for note in report.cooldowns)
    printed = str(report)
    assert f"answered by a {report.endpoints['a']}, b {report.endpoints['b']}" in printed
    assert "b cooled down" in printed
    answered_by_b = {x.index for x in answers if x.endpoint == "b"}
    assert len(answered_by_b) == report.endpoints["b"] <= stopped_at[0]


@on_virtual_time
async def test_a_cooled_endpoint_is_tried_again_when_it_comes_back() -> None:
    """An endpoint that stopped answering is asked again after its cool-down: one
    question first, then its share once that one is answered."""
    n = 400
    config = SimConfig(slots=8, answer_tokens=TOKENS)
    async with open_sim(config) as a, open_sim(slots=2, answer_tokens=TOKENS) as b:
        port = a.server.port
        back: list[SimServer] = []

        async def restart() -> None:
            await a.server.stop()
            await asyncio.sleep(8)
            server = SimServer(config)
            await server.start(port)
            back.append(server)

        count = 0

        def on_answer(answer: fanout.Answer) -> None:
            nonlocal count
            count += 1
            if count == 30:
                asyncio.get_running_loop().create_task(restart())

        try:
            answers = await pool(a, b).ask_many(questions(n), on_answer=on_answer)
        finally:
            for server in back:
                await server.stop()
    report = answers.report
    assert report.failed == 0
    assert back and back[0].stats.completions > 30  # it took its share again
    notes = report.cooldowns
    assert any(note.startswith("a cooled down") for note in notes)
    assert "a answered again" in notes


@on_virtual_time
async def test_an_endpoint_out_of_quota_is_not_asked_again() -> None:
    """insufficient_quota takes an endpoint out for good: its questions go to the other,
    and neither this call nor the next sends it anything more."""
    async with (
        open_sim(slots=8, answer_tokens=TOKENS, quota_tokens=300) as a,
        open_sim(slots=8, answer_tokens=TOKENS) as b,
    ):
        fo = pool(a, b)
        first = await fo.ask_many(questions(100))
        sent = len(a.stats.requests)
        second = await fo.ask_many(questions(50))
        assert len(a.stats.requests) == sent  # nothing more sent to it
    assert first.report.failed == 0 and second.report.failed == 0
    assert any("a out: insufficient_quota" in note for note in first.report.cooldowns)
    assert a.stats.quota_exceeded <= 16  # what it held when the quota went, at most
    assert second.report.endpoints == {"a": 0, "b": 50}


@on_virtual_time
async def test_a_fallback_endpoint_is_asked_only_when_the_preferred_one_fails() -> None:
    """priority=1 is a fallback: nothing goes to it while the primary answers; with the
    primary down, it answers everything."""
    async with (
        open_sim(slots=8, answer_tokens=TOKENS) as primary,
        open_sim(slots=64, answer_tokens=TOKENS) as secondary,
    ):
        eps = [
            Endpoint(client=primary.client, name="primary"),
            Endpoint(client=secondary.client, name="secondary", priority=1),
        ]
        fo = Fanout(endpoints=eps, model="m", policy="split")
        healthy = await fo.ask_many(questions(40))
        assert secondary.stats.requests == []
        await primary.server.stop()
        down = await fo.ask_many(questions(40))
    assert healthy.report.endpoints == {"primary": 40, "secondary": 0}
    assert down.report.failed == 0
    assert down.report.endpoints == {"primary": 0, "secondary": 40}


@on_virtual_time
async def test_a_question_the_endpoint_refuses_is_not_sent_elsewhere() -> None:
    """A question's own failure (a 400: its parameters) fails it, once; only the
    endpoint's failures send a question elsewhere."""
    async with (
        open_sim(slots=8, answer_tokens=TOKENS) as a,
        open_sim(slots=8, answer_tokens=TOKENS) as b,
    ):
        too_long = fanout.Question(text="x " * 200_000)
        answers = await pool(a, b).ask_many(
            [too_long, *questions(10)], on_error="return", max_tokens=TOKENS
        )
    assert answers[0].error is not None
    assert answers.report.failed == 1 and answers.report.fallbacks == 0
    assert answers[0].endpoint in {"a", "b"}
    assert len(a.stats.requests) + len(b.stats.requests) == 11


@on_virtual_time
async def test_as_completed_and_plan_go_through_every_endpoint() -> None:
    """as_completed yields every question once, each with the endpoint that answered it;
    plan says how the questions would be placed, sending nothing."""
    async with (
        open_sim(slots=4, answer_tokens=TOKENS) as a,
        open_sim(slots=4, answer_tokens=TOKENS) as b,
    ):
        fo = pool(a, b)
        plan = fo.plan(questions(30))
        assert a.stats.requests == [] and b.stats.requests == []
        assert plan.reason.startswith("Placement: 30 questions")
        got = [answer async for answer in fo.as_completed(questions(30))]
    assert sorted(x.index for x in got) == list(range(30))
    assert {x.endpoint for x in got} == {"a", "b"}
    with pytest.raises(fanout.ConfigError, match="per endpoint"):
        _ = fo.limiter


@on_virtual_time
async def test_the_one_shot_ask_many_takes_endpoints() -> None:
    """fanout.ask_many(questions, endpoints=[...]) is a Fanout of several endpoints."""
    async with (
        open_sim(slots=4, answer_tokens=TOKENS) as a,
        open_sim(slots=4, answer_tokens=TOKENS) as b,
    ):
        eps = [Endpoint(client=a.client, name="a"), Endpoint(base_url=b.base_url, name="b")]
        answers = await fanout.ask_many(questions(40), endpoints=eps, model="m", policy="split")
    assert set(answers.report.endpoints) == {"a", "b"}


@on_virtual_time
async def test_a_call_whose_every_endpoint_is_down_ends_with_every_question_failed() -> None:
    """Nothing listens at either endpoint: the call does not wait for them for ever;
    each question fails, with what its last attempt met."""
    async with (
        open_sim(answer_tokens=TOKENS) as a,
        open_sim(answer_tokens=TOKENS) as b,
    ):
        await a.server.stop()
        await b.server.stop()
        start = loop_time()
        answers = await pool(a, b).ask_many(questions(10), on_error="return")
        took = loop_time() - start
    assert answers.report.failed == 10
    assert all(x.error is not None for x in answers)
    assert took < 300


@on_virtual_time
async def test_a_call_timeout_on_several_endpoints_keeps_what_was_answered() -> None:
    """timeout= bounds the call over every endpoint: what was answered is kept, the rest
    fails with a timeout, nothing is counted as placed again."""
    async with (
        open_sim(slots=2, answer_tokens=TOKENS) as a,
        open_sim(slots=2, answer_tokens=TOKENS) as b,
    ):
        answers = await pool(a, b).ask_many(questions(100), timeout=3.0, on_error="return")
    report = answers.report
    assert 0 < report.answered < 100
    timed_out = [x for x in answers if isinstance(x.error, fanout.QuestionTimeoutError)]
    assert len(timed_out) == report.failed == 100 - report.answered
    assert report.fallbacks == 0


@on_virtual_time
async def test_on_answer_raising_stops_the_call_on_several_endpoints() -> None:
    """The caller's on_answer raising stops every endpoint's requests: CallAbortedError,
    with the answers finished before it."""
    async with (
        open_sim(slots=4, answer_tokens=TOKENS) as a,
        open_sim(slots=4, answer_tokens=TOKENS) as b,
    ):

        def boom(answer: fanout.Answer) -> None:
            raise RuntimeError("stop")

        with pytest.raises(fanout.CallAbortedError) as caught:
            await pool(a, b).ask_many(questions(50), on_answer=boom)
    assert isinstance(caught.value.__cause__, RuntimeError)
    assert len(a.stats.requests) + len(b.stats.requests) < 50


@on_virtual_time
async def test_the_cost_objective_sends_everything_to_the_cheaper_endpoint() -> None:
    """Policy(objective="cost"): the free self-hosted endpoint answers every question,
    however much wider the priced one is; each answer is priced at its endpoint's price."""
    async with (
        open_sim(slots=4, answer_tokens=TOKENS) as local,
        open_sim(slots=64, answer_tokens=TOKENS) as hosted,
    ):
        eps = [
            Endpoint(client=hosted.client, name="hosted", price=fanout.Pricing(input=1, output=4)),
            Endpoint(client=local.client, name="local", price=fanout.Pricing.free()),
        ]
        policy = fanout.Policy(mode="split", objective="cost")
        answers = await Fanout(endpoints=eps, model="m", policy=policy).ask_many(questions(40))
        latency = await Fanout(endpoints=eps, model="m", policy="split").ask_many(questions(40))
    assert answers.report.endpoints == {"hosted": 0, "local": 40}
    assert answers.report.cost == 0
    assert latency.report.endpoints["hosted"] > 0
    assert all(x.cost and x.cost > 0 for x in latency if x.endpoint == "hosted")


@pytest.mark.parametrize("fault", ["503", "hang"])
def test_an_endpoint_that_fails_every_request_is_cooled_down(fault: str) -> None:
    """A 5xx streak, or requests that hang until their deadline: the endpoint is cooled
    down and its questions are answered by the other, each once."""

    @on_virtual_time
    async def run() -> None:
        async with (
            open_sim(slots=8, answer_tokens=TOKENS, fault_rates={fault: 1.0}) as bad,
            open_sim(slots=8, answer_tokens=TOKENS) as good,
        ):
            qs = questions(60)
            answers = await pool(bad, good).ask_many(qs, retry=fanout.Retry(attempt_timeout=5))
        assert [x.text for x in answers] == [answer_for(q, TOKENS) for q in qs]
        assert answers.report.endpoints == {"a": 0, "b": 60}
        assert any(note.startswith("a cooled down") for note in answers.report.cooldowns)
        assert answers.report.fallbacks > 0

    run()
