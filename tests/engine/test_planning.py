"""The cost model: learning an endpoint, and choosing plans (pure, no server)."""

from __future__ import annotations

import dataclasses
import random

import pytest

from fanout import Policy
from fanout.engine.planning import _partition
from fanout.planning import (
    Budget,
    EndpointEstimate,
    EndpointModel,
    MergeChecks,
    PlanInputs,
    make_plan,
)

BATCHING = EndpointEstimate(
    rtt_s=0.3, prefill_s_per_token=0.0002, decode_s_per_token=0.015,
    prefill_wait_s_per_token=0.000006, decode_wait_s_per_token=0.00045, observations=10,
)  # fmt: skip
SERIAL = EndpointEstimate(
    rtt_s=0.3, prefill_s_per_token=0.0002, decode_s_per_token=0.015,
    prefill_wait_s_per_token=0.0002, decode_wait_s_per_token=0.015, observations=10,
)  # fmt: skip


def inputs(
    n: int,
    *,
    answer: int = 200,
    endpoint: EndpointEstimate = BATCHING,
    budget: Budget | None = None,
    shared: int = 20,
    mergeable: list[bool] | None = None,
    concurrency: int = 64,
    cached: int = 0,
) -> PlanInputs:
    return PlanInputs(
        question_tokens=[15] * n,
        shared_prompt_tokens=shared,
        answer_tokens=[answer] * n,
        endpoint=endpoint,
        budget=budget or Budget(),
        max_concurrency=concurrency,
        mergeable=mergeable if mergeable is not None else [True] * n,
        cached_prompt_tokens=cached,
    )


class TestEndpointModel:
    def _simulate(self, model: EndpointModel, serial: bool, rng: random.Random) -> None:
        """Bursts of 5 requests of mixed length, as a server of either kind answers them."""
        for _ in range(8):
            lengths = [rng.choice([5, 20, 60, 120]) for _ in range(5)]
            if serial:
                order = list(range(5))
                rng.shuffle(order)  # served in arrival order, whatever their length
            else:
                order = sorted(range(5), key=lambda j: lengths[j])  # short ones finish first
            done_p = done_c = 0
            elapsed = 0.0
            for i in order:
                if serial:
                    elapsed += 500 * 0.0002 + lengths[i] * 0.01
                    latency = 0.1 + elapsed
                else:
                    latency = 0.1 + 500 * 0.0002 * 1.05 + lengths[i] * 0.01 * 1.1
                model.observe(prompt_tokens=500, completion_tokens=lengths[i], latency_s=latency,
                              others_prompt_tokens=done_p, others_completion_tokens=done_c)  # fmt: skip
                done_p += 500
                done_c += lengths[i]

    def test_a_serializing_server_is_recognised(self) -> None:
        """Requests that wait for each other give a slowdown near 1 per request."""
        model = EndpointModel()
        self._simulate(model, serial=True, rng=random.Random(1))
        est = model.estimate()
        assert est.slowdown_per_request > 0.7

    def test_a_batching_server_is_recognised(self) -> None:
        """Requests decoded together barely slow each other."""
        model = EndpointModel()
        self._simulate(model, serial=False, rng=random.Random(2))
        est = model.estimate()
        assert est.slowdown_per_request < 0.2
        assert est.decode_s_per_token == pytest.approx(0.011, rel=0.2)

    def test_priors_stand_until_there_is_data(self) -> None:
        """With no observations the estimate is the prior."""
        est = EndpointModel(rtt_s=0.5, decode_s_per_token=0.02).estimate()
        assert est.rtt_s == 0.5
        assert est.decode_s_per_token == 0.02
        assert est.observations == 0

    def test_answer_length_is_learned(self) -> None:
        """The typical answer length follows what the endpoint returns."""
        model = EndpointModel()
        for _ in range(30):
            model.observe_answer(12)
        assert model.answer_tokens == pytest.approx(12)

    def test_cached_prompt_tokens_cost_no_prefill_and_reveal_a_prefix_cache(self) -> None:
        """Responses that report cached prompt tokens: the prefill is fitted to the
        tokens the endpoint processed, and the estimate says the endpoint caches."""
        model = EndpointModel()
        assert not model.estimate().prefix_cache
        rng = random.Random(3)
        for _ in range(40):
            new, cached, out = rng.randint(10, 2000), rng.choice([0, 8000]), rng.randint(5, 200)
            model.observe(prompt_tokens=new + cached, completion_tokens=out,
                          latency_s=0.1 + new * 0.001 + out * 0.01, cached_prompt_tokens=cached)  # fmt: skip
        est = model.estimate()
        assert est.prefix_cache
        assert est.prefill_s_per_token == pytest.approx(0.001, rel=0.05)
        assert est.decode_s_per_token == pytest.approx(0.01, rel=0.05)


class TestPlans:
    def test_long_answers_on_a_batching_server_split(self) -> None:
        """5 x 200 tokens with ample limits: split, estimated several times faster."""
        plan = make_plan(inputs(5), Policy())
        assert plan.chosen.label == "split"
        merge = next(c for c in plan.candidates if c.label == "merge")
        assert merge.est_wall_s > 4 * plan.chosen.est_wall_s

    def test_a_tight_request_budget_merges(self) -> None:
        """3 requests per minute and one available now: merging avoids a minute of waiting."""
        plan = make_plan(inputs(5, answer=2, budget=Budget(requests_now=1, rpm=3)), Policy())
        assert plan.chosen.label == "merge"
        split = next(c for c in plan.candidates if c.label == "split")
        assert split.est_limit_wait_s > 60

    def test_merged_plans_are_costed_with_their_merge_checks(self) -> None:
        """Twelve one-word answers at 3 rpm (three requests now). Unchecked, groups of 4
        fit the three requests at hand. Not yet known to merge well, the first merged
        group is also asked four questions alone and every later group one, until
        agreement is established: requests the limit holds back, so each merged plan
        costs more, more so the more groups it has, and the plan takes groups of 6, the
        fewest checks. Once agreement is established, the checks cost no request."""
        base = inputs(12, answer=3, budget=Budget(requests_now=3, rpm=3))
        unchecked = make_plan(base, Policy())
        fresh = MergeChecks(first=True, counts=(0, 0, 0), threshold=0.75)
        checked = make_plan(dataclasses.replace(base, merge_checks=fresh), Policy())
        assert unchecked.chosen.label == "groups of 4"
        assert checked.chosen.label == "groups of 6"
        for before, after in zip(unchecked.candidates, checked.candidates, strict=True):
            if before.group_size > 1:
                assert after.est_wall_s > before.est_wall_s + 19  # a request's pacing at least
                assert after.est_prompt_tokens > before.est_prompt_tokens
            else:
                assert after == before  # split: nothing to check
        walls = [c.est_wall_s for c in checked.candidates if c.group_size > 1]
        assert walls == sorted(walls, reverse=True)
        established = MergeChecks(first=False, counts=(9, 9, 0), threshold=0.75)
        settled = make_plan(dataclasses.replace(base, merge_checks=established), Policy())
        assert settled.candidates == unchecked.candidates

    def test_room_not_yet_reported_is_spent_only_after_the_first_headers(self) -> None:
        """Five 1-token answers at 60 rpm behind a 2 s round trip, the endpoint said to
        take all five at once but not yet by its own headers (a remembered burst): the
        limiter streams the first request and holds the others until its headers come
        (or their slots of the even pacing, a second apart), so split is costed that
        way; once the room is reported, all five go at once. Merge, one request, does
        not wait, and wins while the room is unreported."""
        slow = EndpointEstimate(
            rtt_s=2.0, prefill_s_per_token=0.0002, decode_s_per_token=0.015,
            prefill_wait_s_per_token=0.000006, decode_wait_s_per_token=0.00045,
            observations=10,
        )  # fmt: skip
        reported = Budget(requests_now=5, rpm=60, room_known=True, burst_seen=5)
        unreported = Budget(requests_now=5, rpm=60, room_known=False, burst_seen=5)
        paced = Budget(requests_now=1, rpm=60, room_known=True)

        def split_s(budget: Budget) -> float:
            plan = make_plan(inputs(5, answer=1, endpoint=slow, budget=budget), Policy())
            return next(c for c in plan.candidates if c.label == "split").est_wall_s

        first_token = slow.request_s(20 + 15, 1)
        assert split_s(unreported) > split_s(reported) + 0.9 * first_token
        assert split_s(unreported) < split_s(paced)
        chosen = make_plan(inputs(5, answer=1, endpoint=slow, budget=unreported), Policy())
        assert chosen.chosen.label == "merge"
        assert make_plan(inputs(5, answer=1, endpoint=slow, budget=reported), Policy()
                         ).chosen.label == "split"  # fmt: skip

    def test_with_no_limits_known_the_others_wait_for_the_first_headers(self) -> None:
        """No limits configured and nothing sent yet: the limiter sends the first request
        alone and holds the others until its headers say whether there is a limit. Split
        is costed with that wait (a round trip: headers come before the first token) for
        all but the first request;
        merge, one request, does not wait and wins for three one-token answers behind a
        2 s round trip. Once the first headers are in, split goes at once again."""
        slow = EndpointEstimate(
            rtt_s=2.0, prefill_s_per_token=0.0002, decode_s_per_token=0.015,
            prefill_wait_s_per_token=0.000006, decode_wait_s_per_token=0.00045,
            observations=10,
        )  # fmt: skip
        waiting, heard = Budget(first_alone=True), Budget()

        def plan(budget: Budget) -> tuple[str, float]:
            made = make_plan(inputs(3, answer=1, endpoint=slow, budget=budget), Policy())
            return made.chosen.label, next(
                c.est_wall_s for c in made.candidates if c.label == "split"
            )

        assert plan(waiting)[1] > plan(heard)[1] + 0.9 * slow.rtt_s
        assert plan(waiting)[0] == "merge"
        assert plan(heard)[0] == "split"

    def test_a_serializing_server_merges_short_answers(self) -> None:
        """On a one-slot server, one request beats five queued ones for one-word answers."""
        plan = make_plan(inputs(5, answer=1, endpoint=SERIAL, shared=2000), Policy())
        assert plan.chosen.label == "merge"

    def test_cost_objective_takes_the_cheapest_plan_within_the_slack(self) -> None:
        """Near-equal times: cost picks fewer tokens; latency keeps the fastest."""
        ins = inputs(4, answer=5, shared=1500, endpoint=BATCHING)
        fastest = make_plan(ins, Policy(objective="latency"))
        cheap = make_plan(ins, Policy(objective="cost", latency_slack=5.0))
        assert cheap.chosen.est_tokens < fastest.chosen.est_tokens
        assert cheap.chosen.est_wall_s <= fastest.chosen.est_wall_s * 6

    def test_max_group_size_bounds_every_group(self) -> None:
        """No group is larger than max_group_size; groups differ by at most one."""
        plan = make_plan(inputs(11, endpoint=SERIAL, answer=1), Policy(max_group_size=4))
        sizes = [len(g) for g in plan.groups]
        assert max(sizes) <= 4
        assert max(sizes) - min(sizes) <= 1

    @pytest.mark.parametrize("mode", ["split", "merge", "auto"])
    def test_every_question_is_in_exactly_one_group(self, mode: str) -> None:
        """The groups partition the questions, whatever the mode."""
        mergeable = [i % 3 != 0 for i in range(17)]
        plan = make_plan(inputs(17, mergeable=mergeable, endpoint=SERIAL), Policy(mode=mode))
        flat = sorted(i for g in plan.groups for i in g)
        assert flat == list(range(17))
        for group in plan.groups:
            if len(group) > 1:
                assert all(mergeable[i] for i in group)

    def test_forced_modes_say_so(self) -> None:
        """split and merge modes give one candidate and say the policy asked for it."""
        split = make_plan(inputs(4), Policy(mode="split"))
        merge = make_plan(inputs(4), Policy(mode="merge"))
        assert [len(g) for g in split.groups] == [1, 1, 1, 1]
        assert merge.groups == [[0, 1, 2, 3]]
        assert "asked for" in split.reason

    def test_partition_is_contiguous_and_balanced(self) -> None:
        """Groups keep input order and near-equal sizes."""
        assert _partition(list(range(7)), 3) == [[0, 1, 2], [3, 4], [5, 6]]
        assert _partition([], 3) == []

    def test_a_cached_shared_prompt_is_not_paid_again_in_time(self) -> None:
        """A 20,000-token shared prompt on an endpoint whose prefills queue behind each
        other: sent fresh, merging (one prefill) is faster; once the endpoint has it
        cached, splitting is. The tokens are counted either way."""
        prefill_queues = EndpointEstimate(
            rtt_s=0.1, prefill_s_per_token=0.0002, decode_s_per_token=0.015,
            prefill_wait_s_per_token=0.0002, decode_wait_s_per_token=0.0005,
            observations=10, prefix_cache=True,
        )  # fmt: skip
        fresh = make_plan(inputs(5, answer=100, shared=20_000, endpoint=prefill_queues), Policy())
        cached = make_plan(
            inputs(5, answer=100, shared=20_000, endpoint=prefill_queues, cached=20_000), Policy()
        )
        assert fresh.chosen.label == "merge", fresh.reason
        assert cached.chosen.label == "split", cached.reason
        split_fresh = next(c for c in fresh.candidates if c.label == "split")
        split_cached = next(c for c in cached.candidates if c.label == "split")
        assert split_cached.est_prompt_tokens == split_fresh.est_prompt_tokens
        assert split_cached.est_wall_s < 0.2 * split_fresh.est_wall_s
        assert "shared prompt (20000 tokens) cached" in cached.reason


def test_requests_in_flight_are_expected_back_as_the_planner_costs_them() -> None:
    """``sent_until`` (a revision's ``sent_until_s``): a request of one question in flight
    is expected back when ``estimate_groups`` says one such request alone takes (its
    shared prompt, less the cached part, and its answer), from when it started; with
    several in flight, the latest of them. (One question is costed directly: a job's
    revisions ran ``estimate_groups`` for each of up to 64 in flight, per question.)"""
    from fanout import Question
    from fanout.engine.intake import Job
    from fanout.engine.planning import estimate_groups, question_tokens
    from fanout.engine.replanning import sent_until

    jobs = [Job(index=i, question=Question(text=f"What is {'x ' * (4 * i)}{i}?"), params={},
                key=str(i)) for i in range(3)]  # fmt: skip
    base = inputs(1, answer=120, endpoint=SERIAL, shared=300, cached=256)
    plan = make_plan(base, Policy(mode="split"))
    alone = [estimate_groups([[0]], dataclasses.replace(
        base, question_tokens=[question_tokens(job)], answer_tokens=[120]))[0]
        for job in jobs]  # fmt: skip
    starts = [0.0, 0.5, 0.2]
    assert sent_until(plan, [(starts[0], [jobs[0]])]) == pytest.approx(alone[0])
    expected = max(at + s for at, s in zip(starts, alone, strict=True))
    in_flight = [(at, [job]) for at, job in zip(starts, jobs, strict=True)]
    assert sent_until(plan, in_flight) == pytest.approx(expected)
    assert sent_until(plan, []) is None


def test_a_split_that_the_merge_checks_tie_says_so() -> None:
    """Three short answers at 3 rpm: merging them would save requests, but the checks ask
    of the merged group alone as well, so split and merge tie and split is chosen; the
    reason says the checks made the tie, not that the endpoint decodes in parallel."""
    budget = Budget(requests_now=1, rpm=3)
    checked = dataclasses.replace(inputs(3, answer=4, budget=budget),
                                  merge_checks=MergeChecks(first=True, counts=(0, 0, 0),
                                                           threshold=0.75))  # fmt: skip
    plan = make_plan(checked, Policy())
    assert plan.chosen.label == "split"
    assert "merge checks would ask" in plan.reason and "in parallel" not in plan.reason
    unchecked = make_plan(inputs(3, answer=4, budget=budget), Policy())
    assert unchecked.chosen.label != "split"
