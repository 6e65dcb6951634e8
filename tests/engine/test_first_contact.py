"""The auto policy on first contact: nothing known of the endpoint or of the answers.

A one-shot ``fanout.ask_many`` (a fresh ``Fanout``, no memory) plans under hypotheses
of answer length and of the limits' room, may send a first wave alone, and re-plans
the questions not yet sent as responses come in (``_opening``, ``_dispatch``)."""

from __future__ import annotations

import pytest

import fanout
from fanout.core.config import MERGE_CHECK_SAMPLE
from fanout.planning import DEFAULT_MAX_GROUP_SIZE, Budget, EndpointModel, PlanInputs, make_plan
from fanout.sim import answer_for
from fanout.testing import cold_endpoint

from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory


class TestShortAnswersUnderARequestLimit:
    @on_virtual_time
    async def test_cold_one_shot_merges_once_the_answers_prove_short(self, sim: SimFactory) -> None:
        """200 three-token answers, 200 rpm policed over 3 s: auto sends a fraction of
        split's requests, in groups of at most 6, every answer its own and in order,
        and takes well under half of split's time (measured idle at time scale 1, with the
        merge checks carried by canaries: 0.24x, benchmarks/cold_start.py)."""
        scale = 10  # a slow clock: the request limit, not the CPU, sets the times
        questions = [f"Short question {i}?" for i in range(200)]
        settings = dict(time_scale=scale, rpm=200, limit_period_s=3, answer_tokens=3)
        limits = fanout.Limits(rpm=200 * scale)
        walls = {}
        for policy in ("split", "auto"):
            async with sim(**settings) as (_, client):
                _ = client.chat
                start = loop_time()
                answers = await fanout.ask_many(
                    questions, client=client, model="m", limits=limits, policy=policy
                )
                walls[policy] = loop_time() - start
            assert answers.texts == [answer_for(q, 3) for q in questions]
            assert [a.index for a in answers] == list(range(200))
            assert answers.report.rate_limited == 0
        report = answers.report
        # Groups of 6; a first wave; the first merge check's questions asked alone; then
        # each group checked by a canary (a question answered alone, for no request)
        # until agreement is established (the first check's answers and five more), and
        # one group in four after that.
        groups = -(-200 // DEFAULT_MAX_GROUP_SIZE)
        assert report.requests <= groups + 12 + MERGE_CHECK_SAMPLE + 1
        checks = report.merge_checks
        assert sum("as the group's canary" in c for c in checks) >= 5, checks
        # Thinned out once established: the checks that cost a request (a canary's costs
        # none, and one rides every group held for checks, compared whether due or not).
        assert sum("as the group's canary" not in c for c in checks) < groups
        assert report.plan is not None
        assert all(len(g) <= DEFAULT_MAX_GROUP_SIZE for g in report.plan.groups)
        opening = report.revisions[0].plan.reason  # planned, or a first wave sent, not knowing
        assert "Answer lengths unknown" in opening or "how long the answers are" in opening
        assert report.revisions[-1].answer_tokens is not None
        assert report.revisions[-1].answer_tokens < 10
        assert walls["auto"] < 0.5 * walls["split"], walls


class TestLongAnswers:
    @on_virtual_time
    async def test_cold_long_answers_are_still_split_in_one_plan(self, sim: SimFactory) -> None:
        """5 x 200-token answers, no limits: split at once, one plan, five requests."""
        async with sim(time_scale=20, answer_tokens=200) as (server, client):
            answers = await fanout.ask_many(
                [f"Explain topic {i}." for i in range(5)], client=client, model="m"
            )
        assert answers.report.plan is not None
        assert answers.report.plan.chosen.label == "split"
        assert len(answers.report.revisions) == 1
        assert len(server.stats.requests) == 5
        assert all(a.mode == "split" for a in answers)


class TestFirstWave:
    @on_virtual_time
    async def test_a_first_wave_goes_alone_and_nothing_is_sent_twice(self, sim: SimFactory) -> None:
        """20 long answers, 100 rpm, room not yet reported: a question or two go alone
        first (one streamed), the others are planned once its headers are in; each
        question reaches the server once, and every answer is its own."""
        scale = 50
        questions = [f"Question {i} of the wave {{{{tokens=200}}}}" for i in range(20)]
        async with sim(time_scale=scale, rpm=100) as (server, client):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=100 * scale),
                               endpoint=cold_endpoint(scale))  # fmt: skip
            answers = await fo.ask_many(questions)
            asked = sum(r.questions for r in server.stats.requests)
            streamed = sum(1 for r in server.stats.requests if r.stream)
        revisions = answers.report.revisions
        assert revisions[0].trigger.startswith("first wave")
        wave = revisions[0].questions
        assert wave in (1, 2)
        assert revisions[0].plan.chosen.requests == wave
        assert sum(r.questions for r in revisions[1:2]) == 20 - wave
        assert asked == 20  # each question once: nothing sent again
        assert streamed >= 1
        assert answers.texts == [answer_for(q, 200) for q in questions]
        assert answers.report.estimated_wall_s is not None

    @on_virtual_time
    async def test_the_final_estimate_counts_a_wave_still_in_flight_with_what_it_knows_then(
        self, sim: SimFactory
    ) -> None:
        """Five 1-token answers, 10 rpm: the first question goes alone, planned for a
        200-token answer (nothing is known yet), and the rest is planned once its headers
        are in, with that question still in flight. The call's estimate counts it as the
        final plan expects it now (short answers), not as the first wave did."""
        scale = 2
        questions = [f"Question {i} {{{{tokens=1}}}}" for i in range(5)]
        # (At 30 rpm the opening now splits at once: a merged plan would pay for its
        # merge checks' requests, so nothing is worth a first wave to decide.)
        async with sim(time_scale=scale, rpm=10, rtt_s=0.01) as (_, client):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=10 * scale),
                               endpoint=cold_endpoint(scale))  # fmt: skip
            answers = await fo.ask_many(questions)
        report = answers.report
        first, last = report.revisions[0], report.revisions[-1]
        assert first.trigger.startswith("first wave") and first.questions == 1
        assert last.sent_until_s is not None  # the wave's question was still in flight
        estimate = report.estimated_wall_s
        assert estimate == pytest.approx(max(last.est_end_s, last.sent_until_s))
        assert estimate is not None and estimate < first.est_end_s / 3
        assert answers.texts == [answer_for(q, 1) for q in questions]


class TestFirstToken:
    @on_virtual_time
    async def test_a_streamed_first_request_tells_the_decode_speed_from_the_round_trip(
        self, sim: SimFactory
    ) -> None:
        """Answers all 20 tokens long cannot tell a slow decode from a long round trip;
        the first request, streamed for its headers, can: its first token came a round
        trip after it was sent, its last 19 decode steps later. Time scale 10: decode
        1.5 ms per token (without the first token the fit put most of it in the round
        trip: 0.2-0.4 ms)."""
        async with sim(time_scale=10) as (server, client):
            fo = fanout.Fanout(client, model="m", memory=False)
            await fo.ask_many([f"Q{i} {{{{tokens=20}}}}" for i in range(8)], policy="split")
            assert server.stats.requests[0].stream
        decode = fo.endpoint.estimate().decode_s_per_token
        assert 0.75e-3 < decode < 3e-3, decode

    def test_a_stream_that_came_whole_or_after_hidden_tokens_teaches_no_first_token(
        self,
    ) -> None:
        """A buffering proxy makes the first token as late as the last; reasoning or a
        tool call before the first text hides how many tokens came before it; a first
        chunk of several tokens counts as its share of the text."""
        from openai.types.chat.chat_completion_chunk import ChoiceDelta

        from fanout.engine.transport import _FirstToken, _other_delta

        buffered = _FirstToken(at=1.0, last=1.0 + 19 * 1e-5, done=(0, 0), chars=4)
        streamed = _FirstToken(at=1.0, last=1.0 + 19 * 1.5e-3, done=(0, 0), chars=4)
        assert not buffered.spread(20, buffered.tokens_of(20, 80))
        assert streamed.spread(20, streamed.tokens_of(20, 80))
        assert _FirstToken(at=1.0, last=1.0, done=(0, 0), chars=20).tokens_of(20, 80) == 5
        assert _other_delta(ChoiceDelta.model_validate({"reasoning_content": "Let me think"}))
        assert not _other_delta(ChoiceDelta.model_validate({"role": "assistant", "content": ""}))


class TestGroupCap:
    def _inputs(self, n: int, rpm: float) -> PlanInputs:
        return PlanInputs(
            question_tokens=[10] * n,
            shared_prompt_tokens=3,
            answer_tokens=[3] * n,
            endpoint=EndpointModel().estimate(),
            budget=Budget(requests_now=1, rpm=rpm),
            max_concurrency=64,
            mergeable=[True] * n,
        )

    def test_merged_groups_hold_at_most_six_by_default(self) -> None:
        plan = make_plan(self._inputs(13, rpm=3), fanout.Policy(mode="merge"))
        assert [len(g) for g in plan.groups] == [5, 4, 4]
        assert fanout.Policy().max_group_size == DEFAULT_MAX_GROUP_SIZE == 6

    def test_the_reason_says_when_the_cap_costs_much(self) -> None:
        """200 short answers at 3 rpm: groups of 6 take ~34 request slots, one merge one;
        the reason names the cap and how to lift it; None lifts it."""
        capped = make_plan(self._inputs(200, rpm=3), fanout.Policy())
        assert capped.chosen.group_size == 6
        assert capped.uncapped is not None
        assert capped.uncapped.est_wall_s * 1.5 < capped.chosen.est_wall_s
        assert "capped at 6" in capped.reason and "max_group_size=None" in capped.reason
        free = make_plan(self._inputs(200, rpm=3), fanout.Policy(max_group_size=None))
        assert free.chosen.group_size > 6
        assert free.uncapped is None

    def test_no_note_when_the_cap_costs_little(self) -> None:
        plan = make_plan(self._inputs(12, rpm=10_000), fanout.Policy(mode="merge"))
        assert plan.uncapped is None
        assert "capped" not in plan.reason


@pytest.mark.parametrize("known", ["expected_tokens", "max_tokens"])
@on_virtual_time
async def test_known_answer_lengths_plan_once(known: str, sim: SimFactory) -> None:
    """With the answer length given (or bounded small), there is nothing to learn first."""
    extra = {"policy": fanout.Policy(expected_tokens=3)} if known == "expected_tokens" else {
        "max_tokens": 5}  # fmt: skip
    async with sim(time_scale=20, answer_tokens=3) as (_, client):
        answers = await fanout.ask_many(
            [f"q{i}" for i in range(40)], client=client, model="m", **extra
        )
    assert len(answers.report.revisions) == 1
    assert "Answer lengths unknown" not in answers.report.revisions[0].plan.reason


@on_virtual_time
async def test_a_first_wave_that_fails_does_not_hold_the_rest(sim: SimFactory) -> None:
    """The wave's requests fail for good (500, no retries): the rest is planned as
    soon as it is back, not after the wave's wait runs out (5 s at least), so the call
    takes about as long as the same call without the fault."""
    scale = 50
    questions = [f"Question {i} of the wave {{{{tokens=200}}}}" for i in range(20)]
    walls = {}
    wave = 0  # the first wave's size, seen in the run without faults
    for faulty in (False, True):
        faults = {i: "500" for i in range(1, wave + 1)} if faulty else {}
        async with sim(time_scale=scale, rpm=100, fault_schedule=faults) as (_, client):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=100 * scale),
                               endpoint=cold_endpoint(scale), retry=fanout.Retry(max_attempts=1),
                               on_error="return")  # fmt: skip
            start = loop_time()
            answers = await fo.ask_many(questions)
            walls[faulty] = loop_time() - start
        revisions = answers.report.revisions
        assert revisions[0].trigger.startswith("first wave")
        assert wave in (0, revisions[0].questions)  # the same opening both times
        wave = revisions[0].questions
    assert wave >= 1
    failed = [a.index for a in answers if a.error is not None]
    assert failed == list(range(wave))  # the wave's questions, each with its error, none lost
    assert all(
        a.text == answer_for(q, 200) for a, q in zip(answers, questions, strict=True) if a.ok
    )
    assert walls[True] < 4 * walls[False], walls


class TestNoLimitsConfigured:
    @on_virtual_time
    async def test_short_answers_merge_rather_than_wait_for_the_first_headers(
        self, sim: SimFactory
    ) -> None:
        """No ``Limits``: the first request goes alone and the others wait for its
        headers. Three one-token answers behind a 2 s round trip (the endpoint's speed
        known): split pays that wait on top of a round trip, one merged request does
        not, so auto merges, sends one request, and beats split (about 0.8x its time on
        the simulator, whose headers come half a round trip after the send; a slow clock,
        so that the client's CPU under load weighs little)."""
        scale = 4
        questions = [f"Short question {i}?" for i in range(3)]
        walls = {}
        for mode in ("split", "auto"):
            async with sim(time_scale=scale, rtt_s=2.0, answer_tokens=1) as (server, client):
                _ = client.chat
                known = EndpointModel(rtt_s=2.0 / scale, prefill_s_per_token=1e-5,
                                      decode_s_per_token=0.015 / scale)  # fmt: skip
                fo = fanout.Fanout(client, model="m", endpoint=known)
                policy = fanout.Policy(mode=mode, expected_tokens=1, merge_agreement=None)
                start = loop_time()
                answers = await fo.ask_many(questions, policy=policy)
                walls[mode] = loop_time() - start
            assert answers.texts == [answer_for(q, 1) for q in questions]
        report = answers.report
        assert report.plan is not None
        assert report.plan.chosen.label == "merge", report.plan.reason
        assert len(server.stats.requests) == 1
        assert walls["auto"] < 0.9 * walls["split"], walls
