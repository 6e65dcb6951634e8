"""The endpoint model tells a batching server from a serializing one, from the
observations a ``Fanout`` makes of its warm-up waves (no server: the timing laws
of both kinds of server are simulated here, step by step)."""

from __future__ import annotations

import random

import pytest

from fanout.planning import EndpointModel

WAVE = [40, 5, 60, 20, 80, 10]  # the completion tokens of tests/test_llama.py's warm-up
PROMPT = 36


def _wave(
    slots: int, rng: random.Random, *, cold: bool, step_s: float, per_seq_s: float
) -> list[dict[str, float]]:
    """One wave of six requests sent together (the first a little ahead, as fanout's
    first request goes alone until its headers come) to a server of ``slots`` slots
    decoding one token for every running request per step of ``step_s + per_seq_s *
    (running - 1)``, a new request's prefill stalling the step. The sixth request on
    five slots waits for a free one. A cold wave (a fresh server) finds no prompt
    cached and pays a first-request cost. Each latency gets a few percent of noise."""
    rest = list(range(1, len(WAVE)))
    rng.shuffle(rest)  # the others arrive in any order
    order = [0, *rest]
    cached = [0 if cold else rng.choice([0, 18, 20, 35]) for _ in WAVE]
    prefill_s = 0.0002
    waiting = [i for i in order]
    running: dict[int, int] = {}  # request -> tokens left
    finish: dict[int, float] = {}
    t = 0.0
    while waiting or running:
        while waiting and len(running) < slots:
            i = waiting.pop(0)
            running[i] = WAVE[i]
            t += (PROMPT - cached[i]) * prefill_s + (0.006 if cold else 0.0)
        t += step_s + per_seq_s * (len(running) - 1)
        for i in list(running):
            running[i] -= 1
            if running[i] == 0:
                del running[i]
                finish[i] = t
    sent = {i: (0.0 if i == order[0] else 0.005) for i in order}
    out = []
    for i in sorted(order, key=lambda j: finish[j]):
        others = [j for j in order if j != i and sent[i] < finish[j] <= finish[i]]
        out.append({
            "prompt_tokens": PROMPT, "cached_prompt_tokens": cached[i],
            "completion_tokens": WAVE[i],
            "latency_s": (0.01 + finish[i] - sent[i]) * rng.uniform(0.95, 1.08),
            "others_prompt_tokens": sum(PROMPT - cached[j] for j in others),
            "others_completion_tokens": sum(WAVE[j] for j in others),
        })  # fmt: skip
    return out


def _learned_slowdown(slots: int, seed: int) -> float:
    """Three warm-up waves, as tests/test_llama.py sends them; a busy CPU: five
    requests decoding together take 2.2 times as long a step as one alone."""
    rng = random.Random(seed)
    model = EndpointModel()
    for wave in range(3):
        for obs in _wave(slots, rng, cold=wave == 0, step_s=0.0017, per_seq_s=0.0005):
            model.observe(**obs)  # type: ignore[arg-type]
    return model.estimate().slowdown_per_request


@pytest.mark.parametrize("seed", range(12))
def test_a_batching_server_with_a_queued_sixth_request_is_not_taken_for_a_serial_one(
    seed: int,
) -> None:
    """Six requests on five slots: the short ones finish during the long ones' lives
    and one waits for a slot, yet the server is seen to run them together, and a
    single-slot server running the same waves is seen to serialize."""
    batching = _learned_slowdown(5, seed)
    serial = _learned_slowdown(1, seed)
    assert batching < 0.3, (batching, serial)
    assert serial > 0.7, (batching, serial)


def test_the_slowdown_is_a_share_of_the_work_between_none_and_all() -> None:
    """However noisy the latencies, the delay a finished request caused is neither
    negative nor more than its own work."""
    rng = random.Random(7)
    model = EndpointModel()
    for _ in range(60):
        model.observe(prompt_tokens=rng.randint(10, 60), completion_tokens=rng.randint(1, 90),
                      latency_s=rng.uniform(0.01, 2.0), others_prompt_tokens=rng.randint(0, 300),
                      others_completion_tokens=rng.randint(0, 400))  # fmt: skip
        assert 0.0 <= model.estimate().slowdown_per_request <= 1.0


def test_merged_replies_that_fail_raise_the_learned_failure_rate() -> None:
    """A small prior before any merged reply; every question of a merged reply that
    could not be read counts against merging on this endpoint."""
    model = EndpointModel()
    assert 0 < model.estimate().merge_failure_rate < 0.05
    model.observe_merged(5, 0)
    model.observe_merged(5, 0)
    assert model.estimate().merge_failure_rate > 0.5
    for _ in range(100):
        model.observe_merged(5, 5)
    assert model.estimate().merge_failure_rate < 0.05


def test_answers_all_one_token_long_leave_the_decode_speed_near_its_prior() -> None:
    """Four one-token answers taking 30 ms each cannot tell a slow decode from a long
    round trip: the round trip takes the difference, and a merged reply (more tokens)
    is not costed as if each token took a tenth of the latency (a fit that split it
    evenly learned a decode 170x the prior's on the policy grid)."""
    model = EndpointModel(rtt_s=0.003, decode_s_per_token=0.00015, prefill_s_per_token=2e-6)
    for latency in (0.029, 0.031, 0.030, 0.030):
        model.observe(prompt_tokens=17, completion_tokens=1, latency_s=latency)
    est = model.estimate()
    assert est.decode_s_per_token < 2 * 0.00015
    assert 0.02 < est.rtt_s < 0.035


def _bursts_of_one_size(model: EndpointModel, rng: random.Random) -> None:
    """What a first call of 40 three-token answers under a limit of 10 requests per
    window teaches: bursts of 10 requests of one size sent together, each slower by a
    delay per request (connections opened, a busy client's CPU) for every other one
    that finished while it was in flight, then requests paced one or two at a time;
    a streamed first request adds its first token (a 1-token observation)."""
    model.observe(prompt_tokens=22, completion_tokens=1, latency_s=0.09)
    model.observe(prompt_tokens=22, completion_tokens=3, latency_s=0.10)
    for others in [*range(10), *range(10), *(rng.choice([0, 1, 2]) for _ in range(20))]:
        model.observe(prompt_tokens=22, completion_tokens=3, others_prompt_tokens=22 * others,
                      others_completion_tokens=3 * others,
                      latency_s=(0.03 + 0.018 * others) * rng.uniform(0.95, 1.05))  # fmt: skip


@pytest.mark.parametrize("seed", range(4))
def test_requests_of_one_size_slowed_per_request_are_not_taken_for_a_serial_endpoint(
    seed: int,
) -> None:
    """Requests all of one size cannot tell a delay per request from one per token: a
    burst slower the more requests it holds does not make the endpoint serializing (which
    would cost each token of a merged request as a delay to every other request), not
    even once a merged request or two came back; requests of several sizes still do."""
    rng = random.Random(seed)
    model = EndpointModel()
    _bursts_of_one_size(model, rng)
    assert model.estimate().slowdown_per_request < 0.1
    for _ in range(2):  # a merge check's merged request
        model.observe(prompt_tokens=190, completion_tokens=60, others_prompt_tokens=88,
                      others_completion_tokens=12, latency_s=0.06)  # fmt: skip
    assert model.estimate().slowdown_per_request < 0.1
    serial = EndpointModel()
    for i in range(30):  # one after another, of several sizes: each waits for the others
        sizes = [(22, 3), (120, 40), (60, 80)]
        done = sizes[: i % 3]
        p, c = sizes[i % 3]
        op, oc = sum(s[0] for s in done), sum(s[1] for s in done)
        serial.observe(prompt_tokens=p, completion_tokens=c, others_prompt_tokens=op,
                       others_completion_tokens=oc,
                       latency_s=0.03 + (p + op) * 2e-4 + (c + oc) * 0.002)  # fmt: skip
    assert serial.estimate().slowdown_per_request > 0.7


def test_merge_checks_of_structured_outputs_survive_a_snapshot() -> None:
    """Merge checks of structured outputs are counted under "schema": a snapshot that
    holds them loads into the next process's model (the snapshot's layout allowed only
    "json" and "text", so the whole remembered endpoint was refused, and overwritten)."""
    model = EndpointModel()
    model.observe_merge_check("schema", 4, 4, 0)
    model.observe_merge_check("json", 6, 5, 1)
    again = EndpointModel()
    again.restore(model.snapshot())
    assert again.merge_agreement("schema") == (4, 4, 0)
    assert again.merge_agreement("json") == (6, 5, 1)
