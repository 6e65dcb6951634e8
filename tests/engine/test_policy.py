"""Merge mode and the auto policy, end to end against the simulator."""

from __future__ import annotations

import pytest

import fanout
from fanout.planning import EndpointModel
from fanout.sim import answer_for

from .._virtual import loop_time, on_virtual_time
from ..conftest import SimFactory
from ._merged_prompts import HOSTILE


def _learned(*, serializes: bool) -> EndpointModel:
    """An endpoint model fed the responses of three warm-up calls of six requests sent
    together with a 2,100-token system prompt, timed as the simulator at time_scale=10
    would time them without noise (rtt 15 ms, prefill 20 us and decode 1.5 ms a token).
    A serializing endpoint makes each request wait for the work of those that finish
    before it; a batching one runs them side by side. Given, not measured, so that a
    decision test does not depend on how busy the machine is."""
    endpoint = EndpointModel()
    batch = [(2110, t) for t in (40, 5, 60, 20, 80, 10)]
    for _ in range(3):
        for prompt, completion in batch:
            others = [(p, c) for p, c in batch if c < completion]
            others_p, others_c = sum(p for p, _ in others), sum(c for _, c in others)
            latency = 0.015 + prompt * 2e-5 + completion * 0.0015
            if serializes:
                latency += others_p * 2e-5 + others_c * 0.0015
            endpoint.observe(prompt_tokens=prompt, completion_tokens=completion,
                             latency_s=latency, others_prompt_tokens=others_p,
                             others_completion_tokens=others_c)  # fmt: skip
    return endpoint


def _first_tokens(text: str, n: int) -> str:
    return " ".join(text.split()[:n])


class TestMergeMode:
    @pytest.mark.parametrize("fmt", ["json", "text"])
    @on_virtual_time
    async def test_hostile_questions_cannot_shift_answers(self, sim: SimFactory, fmt: str) -> None:
        """Questions holding 'Answer 2:', fake tags, lists or JSON: every answer stays put."""
        async with sim(time_scale=100, answer_tokens=9) as (server, client):
            policy = fanout.Policy(mode="merge", merge_format=fmt)
            answers = await fanout.ask_many(HOSTILE, client=client, model="m", policy=policy)
            assert len(server.stats.requests) == 1
            assert server.stats.requests[0].questions == len(HOSTILE)
            assert answers.texts == [answer_for(q, 9) for q in HOSTILE]
            assert {a.mode for a in answers} == {"merged"}
            assert answers.report.reasked == []

    @on_virtual_time
    async def test_usage_of_a_merged_request_is_apportioned_exactly(self, sim: SimFactory) -> None:
        """The answers' usage adds up to exactly what the server billed."""
        qs = [f"q{i} {{{{tokens={5 * (i + 1)}}}}}" for i in range(4)]
        async with sim(time_scale=100) as (server, client):
            answers = await fanout.ask_many(qs, client=client, model="m", policy="merge")
            (billed,) = server.stats.requests
            assert sum(a.usage.prompt_tokens for a in answers) == billed.prompt_tokens
            assert sum(a.usage.completion_tokens for a in answers) == billed.completion_tokens
            # Longer answers carry more of the completion tokens.
            shares = [a.usage.completion_tokens for a in answers]
            assert shares == sorted(shares)

    @on_virtual_time
    async def test_an_endpoint_without_response_format_falls_back_to_text(
        self, sim: SimFactory
    ) -> None:
        """A 400 on response_format switches this Fanout to tagged text, once."""
        qs = ["alpha?", "beta?", "gamma?"]
        async with sim(time_scale=100, answer_tokens=6, supports_response_format=False) as (
            server,
            client,
        ):
            fo = fanout.Fanout(client, model="m", policy="merge")
            first = await fo.ask_many(qs)
            assert first.texts == [answer_for(q, 6) for q in qs]
            assert [r.status for r in server.stats.requests] == [400, 200]
            assert server.stats.requests[0].error_code == "unsupported_parameter"
            server.reset_stats()
            second = await fo.ask_many(["delta?", "epsilon?"])
            assert second.report.failed == 0
            assert [r.status for r in server.stats.requests] == [200]

    @pytest.mark.parametrize("fmt", ["json", "text"])
    @on_virtual_time
    async def test_answers_cut_by_max_tokens_are_reasked_alone(
        self, sim: SimFactory, fmt: str
    ) -> None:
        """A merged reply truncated part-way still yields every answer."""
        qs = [f"long {i} {{{{tokens=50}}}}" for i in range(5)]
        async with sim(time_scale=100) as (_server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", max_tokens=20,
                policy=fanout.Policy(mode="merge", merge_format=fmt),
            )  # fmt: skip
            reasked = answers.report.reasked
            assert reasked, "the merged reply should have been cut"
            assert len(reasked) < 5
            for a in answers:
                full = answer_for(qs[a.index], 50)
                if a.index in reasked:
                    assert a.mode == "split"
                    assert a.text == _first_tokens(full, 20)
                    assert a.finish_reason == "length"
                else:
                    assert a.mode == "merged"
                    assert a.text == full

    @on_virtual_time
    async def test_a_failed_merged_request_is_asked_question_by_question(
        self, sim: SimFactory
    ) -> None:
        """If the merged request fails for good, each question is asked alone."""
        qs = ["one?", "two?", "three?"]
        async with sim(time_scale=100, answer_tokens=4, fault_schedule={1: "500"}) as (
            server,
            client,
        ):
            answers = await fanout.ask_many(
                qs, client=client, model="m", policy="merge", retry=fanout.Retry(max_attempts=1)
            )
            assert answers.texts == [answer_for(q, 4) for q in qs]
            assert answers.report.reasked == [0, 1, 2]
            assert len(server.stats.requests) == 4

    @on_virtual_time
    async def test_groups_of_k_send_ceil_n_over_k_requests(self, sim: SimFactory) -> None:
        """merge with max_group_size=2 on 5 questions: 3 merged requests, at once."""
        qs = [f"grouped {i}" for i in range(5)]
        async with sim(time_scale=100, answer_tokens=5) as (server, client):
            answers = await fanout.ask_many(
                qs, client=client, model="m", policy=fanout.Policy(mode="merge", max_group_size=2)
            )
            assert sorted(r.questions for r in server.stats.requests) == [1, 2, 2]
            assert server.stats.peak_in_flight == 3
            assert answers.texts == [answer_for(q, 5) for q in qs]

    @on_virtual_time
    async def test_questions_with_their_own_parameters_are_never_merged(
        self, sim: SimFactory
    ) -> None:
        """A Question with params or a system prompt goes alone; the rest merge."""
        qs: list[fanout.QuestionLike] = [
            "a?",
            fanout.Question(text="b?", params={"temperature": 0}),
            "c?",
        ]
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            answers = await fanout.ask_many(qs, client=client, model="m", policy="merge")
            assert [a.mode for a in answers] == ["merged", "split", "merged"]
            assert sorted(r.questions for r in server.stats.requests) == [1, 2]

    @on_virtual_time
    async def test_a_caller_response_format_prevents_merging(self, sim: SimFactory) -> None:
        """The caller's own response_format applies per answer: merging would break it."""
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            await fanout.ask_many(
                ["x?", "y?"], client=client, model="m", policy="merge",
                response_format={"type": "json_object"},
            )  # fmt: skip
            assert [r.questions for r in server.stats.requests] == [1, 1]


class TestAutoPolicy:
    @on_virtual_time
    async def test_long_answers_with_ample_limits_split_and_beat_merge(
        self, sim: SimFactory
    ) -> None:
        """5 x ~200 tokens: auto splits, and is about 4x faster than merging."""
        qs = [f"Explain topic {i}. {{{{tokens=200}}}}" for i in range(5)]
        async with sim(time_scale=10) as (_, client):
            fo = fanout.Fanout(client, model="m")
            start = loop_time()
            merged = await fo.ask_many(qs, policy="merge")
            merge_s = loop_time() - start
            start = loop_time()
            auto = await fo.ask_many(qs, policy="auto")
            auto_s = loop_time() - start
            assert auto.report.plan is not None
            assert auto.report.plan.chosen.label == "split"
            assert {a.mode for a in auto} == {"split"}
            assert merged.texts == auto.texts
            assert merge_s / auto_s > 3.5, (merge_s, auto_s)

    @on_virtual_time
    async def test_short_answers_behind_a_3_rpm_limit_merge(self, sim: SimFactory) -> None:
        """5 one-word answers, 3 requests per minute: one merged request."""
        scale = 10
        qs = [f"One word for colour {i}? {{{{tokens=1}}}}" for i in range(5)]
        async with sim(time_scale=scale, rpm=3) as (server, client):
            fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=3 * scale))
            # The cost model's choice (the merge check, tests/engine/test_merge_check.py, off).
            policy = fanout.Policy(expected_tokens=1, merge_agreement=None)
            answers = await fo.ask_many(qs, policy=policy)
            assert answers.report.plan is not None
            assert answers.report.plan.chosen.label == "merge", answers.report.plan.reason
            assert "rate limits" in answers.report.plan.reason
            assert len(server.stats.requests) == 1
            assert server.stats.rate_limited == 0
            assert answers.texts == [answer_for(q, 1) for q in qs]

    @on_virtual_time
    async def test_a_serializing_server_with_a_long_shared_prompt_merges_for_cost(
        self, sim: SimFactory
    ) -> None:
        """slots=1 and a 2,000-token system prompt: objective=cost merges, paying it once."""
        system = "Reference material. " + "lorem ipsum dolor " * 700
        async with sim(time_scale=10, slots=1) as (server, client):
            # What an earlier call would have taught the Fanout, given exactly: each
            # request waits for the whole work of those that finish before it.
            fo = fanout.Fanout(client, model="m", system=system,
                               endpoint=_learned(serializes=True))  # fmt: skip
            assert fo.endpoint.estimate().slowdown_per_request > 0.5
            qs = [
                fanout.Question(text=f"One word: item {i}? {{{{tokens=1}}}}", expected_tokens=1)
                for i in range(5)
            ]
            # The cost model's choice (the merge check, tests/engine/test_merge_check.py, off).
            answers = await fo.ask_many(
                qs, policy=fanout.Policy(objective="cost", merge_agreement=None)
            )
            plan = answers.report.plan
            assert plan is not None
            assert plan.chosen.label == "merge", plan.reason
            assert len(server.stats.requests) == 1
            split = next(c for c in plan.candidates if c.label == "split")
            assert plan.chosen.est_prompt_tokens < split.est_prompt_tokens / 3

    @on_virtual_time
    async def test_a_batching_server_with_the_same_questions_splits_for_latency(
        self, sim: SimFactory
    ) -> None:
        """The same one-word questions on a batching server: split is fastest."""
        system = "Reference material. " + "lorem ipsum dolor " * 700
        async with sim(time_scale=10) as (_, client):
            # What an earlier call would have taught the Fanout, given exactly (a timed
            # warm-up call learns the same, plus whatever load the machine is under):
            # concurrent requests that do not delay each other.
            fo = fanout.Fanout(client, model="m", system=system,
                               endpoint=_learned(serializes=False))  # fmt: skip
            assert fo.endpoint.estimate().slowdown_per_request < 0.5
            qs = [fanout.Question(text=f"One word: item {i}?", expected_tokens=1) for i in range(5)]
            plan = fo.plan(qs)
            assert plan.chosen.label == "split", plan.reason

    @on_virtual_time
    async def test_the_report_shows_the_plan_its_estimates_and_the_outcome(
        self, sim: SimFactory
    ) -> None:
        """Chosen plan, every candidate's time and tokens, inputs, reason, and the error."""
        async with sim(time_scale=50, answer_tokens=30) as (_, client):
            answers = await fanout.ask_many([f"q{i}" for i in range(6)], client=client, model="m")
            report = answers.report
            plan = report.plan
            assert plan is not None
            assert len(plan.candidates) >= 3
            assert all(c.est_wall_s > 0 and c.est_tokens > 0 for c in plan.candidates)
            assert {c.label for c in plan.candidates} >= {"split", "merge"}
            assert plan.reason
            assert len(plan.inputs.question_tokens) == 6
            # The final plan's estimate, counted from the call's start, of its questions
            # and of the requests still in flight when it was made.
            last = report.revisions[-1]
            assert last.plan is plan
            assert report.estimated_wall_s == pytest.approx(
                max(last.est_end_s, last.sent_until_s or 0.0)
            )
            assert (report.estimated_wall_s or 0) >= plan.chosen.est_wall_s
            assert report.estimate_error is not None
            assert report.policy == "auto"


class TestDryRunAndOverrides:
    @on_virtual_time
    async def test_plan_sends_nothing(self, sim: SimFactory) -> None:
        """Fanout.plan and fanout.plan only compute; the server sees no request."""
        async with sim() as (server, client):
            fo = fanout.Fanout(client, model="m")
            plan = fo.plan(["a?", "b?", "c?"], policy="merge")
            assert plan.chosen.label == "merge"
            assert plan.groups == [[0, 1, 2]]
            # four: two would merge into one request and ask one of them alone as its
            # merge check, two requests as split sends (the plan costs the check)
            free = fanout.plan(["a?", "b?", "c?", "d?"], limits=fanout.Limits(rpm=3))
            assert free.chosen.label == "merge", free.reason
            assert server.stats.requests == []

    @on_virtual_time
    async def test_a_dry_run_plans_each_distinct_request_once_as_the_call_sends_it(
        self, sim: SimFactory
    ) -> None:
        """Duplicates are answered by one request in a call; the dry run planned each
        copy (five requests for two distinct questions). An untrusted copy is a request
        of its own, as in a call."""
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            fo = fanout.Fanout(client, model="m")
            qs = ["a?", "b?", "a?", "a?", "b?"]
            plan = fo.plan(qs, policy="split")
            answers = await fo.ask_many(qs, policy="split")
            assert plan.chosen.requests == len(server.stats.requests) == 2
            assert answers.report.deduplicated == 3
            untrusted = [fanout.Question(text="a?"), fanout.Question(text="a?", trusted=False)]
            assert fo.plan(untrusted, policy="split").chosen.requests == 2

    @on_virtual_time
    async def test_a_per_call_policy_overrides_the_fanouts(self, sim: SimFactory) -> None:
        """Fanout(policy='merge') then ask_many(policy='split'): split wins for that call."""
        async with sim(time_scale=100, answer_tokens=3) as (server, client):
            fo = fanout.Fanout(client, model="m", policy="merge")
            answers = await fo.ask_many(["a?", "b?"], policy="split")
            assert [a.mode for a in answers] == ["split", "split"]
            assert len(server.stats.requests) == 2

    def test_policy_values_are_validated(self) -> None:
        """Unknown modes, objectives and formats, and bad sizes, fail at construction."""
        with pytest.raises(fanout.ConfigError, match="unknown policy"):
            fanout.Policy(mode="sideways")
        with pytest.raises(fanout.ConfigError, match="objective"):
            fanout.Policy(objective="vibes")
        with pytest.raises(fanout.ConfigError, match="merge_format"):
            fanout.Policy(merge_format="xml")
        with pytest.raises(fanout.ConfigError, match="max_group_size"):
            fanout.Policy(max_group_size=0)
        assert fanout.Policy.coerce("merge") == fanout.Policy(mode="merge")
        assert fanout.Policy(objective="cost").slack == 0.25
        assert fanout.Policy().slack == 0.05


@on_virtual_time
async def test_a_merged_group_answers_every_question_or_names_it(sim: SimFactory) -> None:
    """Nothing lost: a forced merge of eight questions, each gets an answer or an
    error naming it, and the answers' usage adds up to the report's."""
    qs = [f"What is {i}?" for i in range(8)]
    async with sim(time_scale=100, answer_tokens=8) as (_, client):
        fo = fanout.Fanout(client, model="m", memory=False)
        answers = await fo.ask_many(qs, policy="merge", max_tokens=30, on_error="return")
    assert len(answers) == 8
    for a in answers:
        assert a.text or (a.error is not None and f"question {a.index}" in str(a.error))
    assert sum(a.usage.total_tokens for a in answers) == answers.report.total_tokens
