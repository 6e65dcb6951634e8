"""Placement over several endpoints (``engine/placement.py``): a pure function, table tests."""

from __future__ import annotations

import pytest

from fanout.engine.placement import Capacity, finish_s, place


def cap(name: str, slots: int, request_s: float, **more: object) -> Capacity:
    return Capacity(name=name, slots=slots, request_s=request_s, **more)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("questions", "endpoints", "expected"),
    [
        # Two equal replicas: half each.
        (100, [cap("a", 8, 1.0), cap("b", 8, 1.0)], (52, 48)),
        # Same slots, one twice as fast: it takes two thirds (whole rounds of 8).
        (96, [cap("fast", 8, 1.0), cap("slow", 8, 2.0)], (64, 32)),
        # A fast replica of 8 slots and a slow one of 64: the slow one's width wins most.
        (500, [cap("fast", 8, 1.0), cap("slow", 64, 4.3)], (180, 320)),
        # Nothing to place.
        (0, [cap("a", 8, 1.0), cap("b", 8, 1.0)], (0, 0)),
    ],
)
def test_each_question_goes_where_it_is_answered_soonest(
    questions: int, endpoints: list[Capacity], expected: tuple[int, ...]
) -> None:
    """The counts of a few setups, and the wall they give is the smallest of any split."""
    placed = place(questions, endpoints)
    assert placed.counts == expected
    assert sum(placed.counts) == questions
    wall = max(placed.finish_s)
    for k in range(questions + 1):  # every static split of two endpoints does no better
        other = max(finish_s(endpoints[0], k), finish_s(endpoints[1], questions - k))
        assert wall <= other + 1e-9


def test_a_slower_replica_gets_work_once_the_faster_one_is_saturated() -> None:
    """A few questions all go to the fast replica; past what it can do in the slow one's
    time, the slow one takes the rest of its round."""
    endpoints = [cap("fast", 8, 1.0), cap("slow", 64, 4.0)]
    assert place(8, endpoints).counts == (8, 0)
    assert place(32, endpoints).counts == (32, 0)  # 4 rounds of the fast one: 4 s
    few, many = place(40, endpoints).counts
    assert many > 0 and few + many == 40


def test_what_an_endpoint_holds_already_counts() -> None:
    """An endpoint busy with earlier questions gets fewer of the new ones."""
    idle = place(64, [cap("a", 8, 1.0), cap("b", 8, 1.0)]).counts
    busy = place(64, [cap("a", 8, 1.0, load=32), cap("b", 8, 1.0)]).counts
    assert idle == (32, 32)
    assert busy == (16, 48)


def test_a_rate_limited_endpoint_gets_what_its_rate_lets_it_finish() -> None:
    """A hosted endpoint with many slots but 60 rpm (one a second) takes only what it can
    send by the time the unlimited one is done."""
    hosted = cap("hosted", 256, 1.0, rate_per_s=1.0)
    local = cap("local", 64, 4.0)
    k_hosted, k_local = place(500, [hosted, local]).counts
    assert k_hosted + k_local == 500
    wall = max(place(500, [hosted, local]).finish_s)
    assert k_hosted <= wall + 1  # one a second
    assert 20 <= k_hosted <= 40  # the local one needs 8 rounds of 4 s: ~32 s


def test_a_fallback_endpoint_gets_nothing_while_a_preferred_one_is_there() -> None:
    """Priority 1 is a fallback: the placement gives it nothing beside priority 0, and
    everything when it is alone (the pool offers it then)."""
    primary = cap("primary", 4, 5.0)
    secondary = cap("secondary", 64, 0.5, priority=1)
    placed = place(100, [primary, secondary])
    assert placed.counts == (100, 0)
    assert "a fallback" in placed.reason
    assert place(100, [secondary]).counts == (100,)


def test_the_cost_objective_places_on_the_cheapest_endpoints() -> None:
    """Under objective="cost", a free self-hosted endpoint takes every question, however
    slow; among equally cheap ones, the earliest finish decides."""
    hosted = cap("hosted", 256, 0.5, price=0.001)
    local = cap("local", 8, 4.0, price=0.0)
    local2 = cap("local2", 8, 4.0, price=0.0)
    assert place(50, [hosted, local], objective="cost").counts == (0, 50)
    both = place(50, [hosted, local, local2], objective="cost").counts
    assert both[0] == 0 and abs(both[1] - both[2]) <= 8
    assert place(50, [hosted, local], objective="latency").counts[0] > 40


def test_the_reason_says_what_each_endpoint_gets_and_why() -> None:
    """The placement's reason names each endpoint with its count and the estimates."""
    reason = place(100, [cap("gpu-a", 8, 1.0), cap("gpu-b", 64, 4.0, rate_per_s=2.0)]).reason
    assert reason.startswith("100 questions, each where it is answered soonest")
    assert "to gpu-a (8 slots, 1.00 s a request" in reason
    assert "to gpu-b (64 slots, 4.00 s a request, 120 rpm" in reason
