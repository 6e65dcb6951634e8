"""Money: each answer's and each report's cost, prices and their overrides, spend caps,
and the estimates of ``Fanout.plan``. Against the simulator over real HTTP."""

from __future__ import annotations

import logging
import subprocess
import sys
from decimal import Decimal
from typing import Any

import pytest

import fanout
from fanout import Pricing, Usage
from fanout.engine.spending import Pricer, worst_case
from fanout.money import cost_of

from .._virtual import on_virtual_time
from ..conftest import SimFactory

MINI = {"input": Decimal("0.15"), "cached": Decimal("0.075"), "output": Decimal("0.6")}


def _mini(usage: Usage) -> Decimal:
    """gpt-4o-mini's price (USD per million tokens), by hand."""
    cached = usage.cached_prompt_tokens
    return (
        (usage.prompt_tokens - cached) * MINI["input"]
        + cached * MINI["cached"]
        + usage.completion_tokens * MINI["output"]
    ) / 1_000_000


def test_cached_input_tokens_are_priced_at_their_own_price() -> None:
    """A million prompt tokens, half of them from the cache: the cached half at the
    cached price; the library's price for gpt-4o-mini."""
    usage = Usage(prompt_tokens=1_000_000, cached_prompt_tokens=500_000, completion_tokens=0)
    assert cost_of(usage, "gpt-4o-mini") == Decimal("0.075") + Decimal("0.0375")


def test_flex_and_batch_tiers_cost_half_the_standard_price() -> None:
    """OpenAI's flex and batch tiers: half the standard price (the library's exact price
    where it has one, else half); a Pricing's tiers likewise."""
    usage = Usage(prompt_tokens=1000, completion_tokens=1000)
    for model in ("gpt-4o-mini", "gpt-5-mini"):
        standard = cost_of(usage, model)
        assert standard is not None
        assert cost_of(usage, model, tier="flex") == standard / 2
        assert cost_of(usage, model, tier="batch") == standard / 2
    own = Pricing(input=1, output=3)
    assert cost_of(usage, "mine", pricing=own) == Decimal("0.004")
    assert cost_of(usage, "mine", pricing=own, tier="batch") == Decimal("0.002")


def test_the_price_library_is_never_asked_over_the_network() -> None:
    """Prices come from the bundled data: with every socket connection refused, in a
    fresh interpreter, costs are still known."""
    code = (
        "import socket\n"
        "def refuse(*a, **k):\n    raise OSError('no network in this test')\n"
        "socket.socket.connect = refuse\nsocket.create_connection = refuse\n"
        "import fanout\n"
        "u = fanout.Usage(prompt_tokens=10, completion_tokens=10)\n"
        "print(fanout.money.cost_of(u, 'gpt-4o-mini'), fanout.money.cost_of(u, 'gpt-4.1'))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["0.0000075", "0.0001"]


@on_virtual_time
async def test_each_answer_and_the_report_cost_their_usage(sim: SimFactory) -> None:
    """Split and merged: each answer's cost is its usage at the model's price (a merged
    request's shared out like its usage); the report's is their sum."""
    async with sim(time_scale=100, answer_tokens=30) as (_server, client):
        for policy in ("split", "merge"):
            fo = fanout.Fanout(client, model="gpt-4o-mini", policy=policy, memory=False)
            answers = await fo.ask_many([f"What is {i}?" for i in range(6)])
            assert {a.mode for a in answers} == {"split" if policy == "split" else "merged"}
            for a in answers:
                assert a.cost == _mini(a.usage) and a.cost > 0
            r = answers.report
            assert r.cost == sum(a.cost or 0 for a in answers)
            assert r.cost == _mini(Usage(prompt_tokens=r.prompt_tokens,
                                         completion_tokens=r.completion_tokens))  # fmt: skip
            assert f"cost: ${r.cost:.6f}" in str(r)


@on_virtual_time
async def test_a_pricing_overrides_the_library_per_model_and_per_endpoint(
    sim: SimFactory,
) -> None:
    """``pricing={model: Pricing}`` prices a model the library does not know;
    ``pricing=Pricing.free()`` makes a known one free (a server of your own)."""
    async with sim(time_scale=100, answer_tokens=20) as (_server, client):
        own = Pricing(input=2, output=10)
        fo = fanout.Fanout(client, model="house-llm", pricing={"house-llm": own}, memory=False)
        answers = await fo.ask_many(["What is A?", "What is B?"], policy="split")
        for a in answers:
            want = (a.usage.prompt_tokens * 2 + a.usage.completion_tokens * 10) / Decimal(10**6)
            assert a.cost == want
        fo = fanout.Fanout(client, model="gpt-4o-mini", pricing=Pricing.free(), memory=False)
        answers = await fo.ask_many(["What is A?"])
        assert answers[0].usage.total_tokens > 0 and answers.report.cost == 0


@on_virtual_time
async def test_an_unknown_price_is_none_and_said_once(
    sim: SimFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """No price known: every cost is None, never a guess, and one warning names the
    model however many answers there are."""
    async with sim(time_scale=100, answer_tokens=20) as (_server, client):
        fo = fanout.Fanout(client, model="nobody-prices-me-7b", memory=False)
        with caplog.at_level(logging.WARNING, logger="fanout"):
            answers = await fo.ask_many([f"What is {i}?" for i in range(4)], policy="split")
            await fo.ask_many(["What is it?"])
    assert [a.cost for a in answers] == [None] * 4
    assert answers.report.cost is None
    said = [r for r in caplog.records if "no price known" in r.getMessage()]
    assert len(said) == 1 and "nobody-prices-me-7b" in said[0].getMessage()


@on_virtual_time
async def test_the_simulator_s_model_costs_nothing_without_a_warning(
    sim: SimFactory, caplog: pytest.LogCaptureFixture
) -> None:
    """``sim-1``, the model ``fanout sim`` serves, is priced at zero (every call against
    the simulator warned of an unknown price); a ``pricing=`` given for it still counts."""
    async with sim(time_scale=100, answer_tokens=20) as (_server, client):
        with caplog.at_level(logging.WARNING, logger="fanout"):
            answers = await fanout.Fanout(client, model="sim-1", memory=False).ask_many(
                ["What is 1?", "What is 2?"], policy="split"
            )
        priced = fanout.Fanout(
            client, model="sim-1", memory=False, pricing=Pricing(input=1, output=1)
        )
        paid = await priced.ask_many(["What is 3?"], policy="split")
    assert answers.report.cost == 0 and [a.cost for a in answers] == [0, 0]
    assert not [r for r in caplog.records if "no price known" in r.getMessage()]
    assert paid.report.cost is not None and paid.report.cost > 0


@on_virtual_time
async def test_a_call_s_max_cost_stops_within_one_request_of_the_cap(sim: SimFactory) -> None:
    """``max_cost`` on a call: the spend never passes the cap and stops within one
    request's worst case of it; the questions not sent fail with BudgetExceededError
    naming them, and nothing else was sent."""
    cap = Decimal("0.0003")
    async with sim(time_scale=100, answer_tokens=40) as (server, client):
        fo = fanout.Fanout(client, model="gpt-4o-mini", memory=False)
        answers = await fo.ask_many([f"What is {i}?" for i in range(30)], policy="split",
                                    max_tokens=60, max_cost=cap, on_error="return")  # fmt: skip
        sent = len(server.stats.requests)
    spent = answers.report.cost
    assert spent is not None and spent <= cap
    worst = _mini(Usage(prompt_tokens=40, completion_tokens=60))  # prompt with margin
    assert cap - spent < worst
    unsent = [a for a in answers if a.error is not None]
    assert unsent and all(isinstance(a.error, fanout.BudgetExceededError) for a in unsent)
    assert all(f"question {a.index}:" in str(a.error) and a.attempts == 0 for a in unsent)
    assert sent == len(answers) - len(unsent)


@on_virtual_time
async def test_a_fanout_s_max_cost_spans_its_calls(sim: SimFactory) -> None:
    """``Fanout(max_cost=...)``: its calls share the cap; once spent, a later call
    sends nothing and every question fails with BudgetExceededError."""
    async with sim(time_scale=100, answer_tokens=40) as (server, client):
        fo = fanout.Fanout(client, model="gpt-4o-mini", max_cost=0.0002, memory=False,
                           max_tokens=60)  # fmt: skip
        first = await fo.ask_many([f"What is {i}?" for i in range(20)], policy="split",
                                  on_error="return")  # fmt: skip
        before = len(server.stats.requests)
        second = await fo.ask_many(["And what is X?"], on_error="return")
        assert len(server.stats.requests) == before
    assert fo.spend_cap is not None and fo.spend_cap.spent <= Decimal("0.0002")
    assert first.report.cost == fo.spend_cap.spent
    assert isinstance(second[0].error, fanout.BudgetExceededError)


@on_virtual_time
async def test_a_cap_on_a_model_without_a_price_is_refused_before_sending(
    sim: SimFactory,
) -> None:
    """A cap cannot be kept on an unknown price: a ConfigError, nothing sent."""
    async with sim(time_scale=100) as (server, client):
        fo = fanout.Fanout(client, model="nobody-prices-me-7b", memory=False)
        with pytest.raises(fanout.ConfigError, match="max_cost needs a price"):
            await fo.ask_many(["What is A?"], max_cost=1)
        assert server.stats.requests == []


def test_plan_estimates_the_cost_of_every_candidate_and_tier() -> None:
    """``fanout.plan`` prices each candidate, and the split one at the flex and batch
    tiers (half the price; the batch time is the Batch API's promise, not an estimate)."""
    questions = [fanout.Question(text=f"What is {i}?", expected_tokens=50) for i in range(12)]
    plan = fanout.plan(questions, model="gpt-4o-mini")
    by_label = {(e.label, e.tier): e for e in plan.estimates}
    split = by_label[("split", "standard")]
    assert split.est_cost == _mini(Usage(prompt_tokens=split.est_prompt_tokens,
                                         completion_tokens=split.est_completion_tokens))  # fmt: skip
    assert split.est_completion_tokens == 600
    assert by_label[("split (flex)", "flex")].est_cost == split.est_cost / 2
    batch = by_label[("split (batch)", "batch")]
    assert batch.est_cost == split.est_cost / 2 and batch.est_wall_s is None
    assert "24 h" in batch.time_note
    assert {c.label for c in plan.candidates} <= {e.label for e in plan.estimates}


@on_virtual_time
async def test_a_wrapped_stream_s_live_part_counts_against_the_spend_cap(sim: SimFactory) -> None:
    """``wrap(client, max_cost=...)`` and ``stream=True``: the first part, streamed live
    outside the engine, reserves its worst case and is settled with its usage like every
    other request, so the cap's spend is what the whole stream cost (before, the live
    part was neither checked nor counted); once the cap is spent, a stream's live part
    is not sent and the stream fails naming it (BudgetExceededError)."""
    text = "1. What is A? {{tokens=30}}\n2. What is B? {{tokens=5}}\n3. What is C? {{tokens=60}}"
    async with sim(time_scale=50) as (server, client):
        wrapped = fanout.wrap(client, max_cost=0.01, memory=False, max_tokens=80)
        cap = wrapped.fanout.spend_cap  # type: ignore[attr-defined]
        stream = await wrapped.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}], stream=True,
            stream_options={"include_usage": True},
        )  # fmt: skip
        usage = None
        async for chunk in stream:
            usage = chunk.usage or usage
        assert usage is not None and len(server.stats.requests) == 3
        assert cap.spent == _mini(Usage(prompt_tokens=usage.prompt_tokens,
                                        completion_tokens=usage.completion_tokens))  # fmt: skip
        assert cap.reserved == 0

        cap.spent = cap.cap  # spent: nothing more may be sent
        server.reset_stats()
        stream = await wrapped.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": text}], stream=True
        )
        with pytest.raises(fanout.PartialFailureError) as raised:
            _ = [chunk async for chunk in stream]
        assert server.stats.requests == []
    first = raised.value.answers[0]
    assert isinstance(first.error, fanout.BudgetExceededError)


@on_virtual_time
async def test_an_estimate_before_spending_assumes_200_token_answers_at_most_max_tokens(
    sim: SimFactory,
) -> None:
    """``Fanout.plan`` with nothing known of the answer lengths: each candidate is priced
    at 200-token answers (capped by ``max_tokens``), the assumption docs/cost.md states,
    not at the short answers a cold call's opening may commit to (4 tokens: an estimate
    25 to 50 times short, seen by a new user's `fanout run --dry-run`)."""
    questions = [f"What is {i} plus {i}?" for i in range(20)]
    async with sim(time_scale=100) as (_server, client):
        fo = fanout.Fanout(client, model="gpt-4o-mini", memory=False)
        uncapped = fo.plan(questions)  # auto: a cold call would send a first wave
        capped = fo.plan(questions, max_tokens=100)
        told = fo.plan(questions, policy=fanout.Policy(expected_tokens=7))
    split = [next(e for e in p.estimates if e.label == "split") for p in (uncapped, capped, told)]
    assert [e.est_completion_tokens for e in split] == [20 * 200, 20 * 100, 20 * 7]


def _weather_tools(count: int) -> list[dict[str, object]]:
    """``count`` function definitions of about 100 tokens each."""
    return [
        {"type": "function", "function": {
            "name": f"get_weather_{i}",
            "description": "Get the current weather in a given location, with units and details.",
            "parameters": {"type": "object", "required": ["location"], "properties": {
                "location": {"type": "string", "description": "The city and state, e.g. Paris, FR"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            }},
        }}
        for i in range(count)
    ]  # fmt: skip


def _big_schema(chars: int) -> dict[str, object]:
    """A JSON schema of one short field whose description runs to ``chars`` characters."""
    words = "The value, written out in full as the user would expect it to be. "
    properties = {"value": {"type": "string", "description": words * (chars // len(words))}}
    return {"type": "json_schema", "json_schema": {"name": "record", "schema": {
        "type": "object", "properties": properties, "required": ["value"],
        "additionalProperties": False}}}  # fmt: skip


@pytest.mark.parametrize(
    "billed",
    [
        {"tools": _weather_tools(50), "tool_choice": "none"},
        {"response_format": _big_schema(20_000)},
    ],
    ids=["tools", "json_schema"],
)
@on_virtual_time
async def test_a_spend_cap_reserves_the_definitions_a_request_is_billed_for(
    sim: SimFactory, billed: dict[str, Any]
) -> None:
    """Tool definitions and a response format's schema are billed as prompt tokens (the
    simulator bills them as the hosted APIs do): a request's worst case counts them, so
    three questions carrying ~5,000 tokens of them under a cap that one such request
    fits are answered one at most, the others refused before they are sent, and the
    spend never passes the cap (it reserved their ~50 tokens of text and spent 3x it)."""
    async with sim(time_scale=100, answer_tokens=3) as (server, client):
        fo = fanout.Fanout(client, model="gpt-4o-mini", memory=False)
        probe = await fo.ask_many(["What is A?"], policy="split", max_tokens=40, **billed)
        one = probe[0].cost
        assert one is not None and probe[0].usage.prompt_tokens > 4000
        cap = one * Decimal("1.5")
        answers = await fo.ask_many([f"What is {i}?" for i in range(3)], policy="split",
                                    max_tokens=40, max_cost=cap, on_error="return", **billed)  # fmt: skip
    spent = answers.report.cost
    assert spent is not None and spent <= cap, (spent, cap)
    refused = [a for a in answers if isinstance(a.error, fanout.BudgetExceededError)]
    assert len(refused) >= 2 and all(a.attempts == 0 for a in refused)
    assert len(server.stats.requests) <= 2  # the probe, and at most one under the cap


@on_virtual_time
async def test_answers_cut_by_max_tokens_do_not_shorten_a_later_estimate(
    sim: SimFactory,
) -> None:
    """Calls with ``max_tokens=5`` on 150-token answers (each cut at 5) teach no answer
    length: a later plan without the cap estimates the documented 200 tokens an answer,
    not 5 (a dry run after them was 12x low on cost and 86x on time). Answers that end on
    their own under the cap do teach theirs."""
    questions = [f"Why is the sky blue, part {i}?" for i in range(6)]

    def split_tokens(plan: fanout.planning.Plan) -> int:
        (row,) = [e for e in plan.estimates if e.label == "split" and e.tier == "standard"]
        return row.est_completion_tokens

    async with sim(time_scale=100, answer_tokens=150) as (_server, client):
        fo = fanout.Fanout(client, model="sim-1", memory=False)
        cut = await fo.ask_many(questions, policy="split", max_tokens=5)
        assert {a.finish_reason for a in cut} == {"length"}
        assert fo.endpoint.answer_tokens is None
        assert split_tokens(fo.plan(questions)) == 6 * 200
        whole = await fo.ask_many(questions, policy="split", max_tokens=400)
        assert {a.finish_reason for a in whole} == {"stop"}
        assert fo.endpoint.answer_tokens == pytest.approx(150)
        assert split_tokens(fo.plan(questions)) == pytest.approx(6 * 150, rel=0.05)


def test_fanout_plan_says_why_its_two_tables_count_answers_differently(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The README's ``fanout plan --rpm 3`` example: the plan table's answer tokens are
    what its time assumes (12), the cost table's the documented worst case (600); the
    output says so under the cost table instead of leaving two numbers that disagree."""
    from fanout.cli.main import main

    prompt = "1. Who wrote Hamlet? 2. What is the capital of France? 3. What is a prime number?"
    assert main(["plan", "--rpm", "3", prompt]) == 0
    out = capsys.readouterr().out
    plan_table, cost_table = out.split("est. cost")
    assert " 12 " in plan_table
    assert " 600 " in cost_table
    assert "answer tok: before any answer of this endpoint is measured" in cost_table


# --- a spend cap reserves the whole request: extra_body, n, predictions -------------------
OUT_ONLY = Pricer(pricing=Pricing(input=0, output=1_000_000))  # $1 per output token
MSG = [{"role": "user", "content": "hi"}]


def _out_tokens(params: dict[str, Any]) -> Decimal:
    """The output tokens a request's worst case reserves (input is free)."""
    return worst_case(OUT_ONLY, params, "m", None)


def test_extra_body_max_tokens_is_reserved_as_the_answer_cap() -> None:
    """extra_body is merged into the request body by the openai client, so a
    max_tokens there is the one the server obeys: the worst case must reserve it."""
    params = {"messages": MSG, "max_tokens": 10, "extra_body": {"max_tokens": 5000}}
    assert _out_tokens(params) >= 5000, _out_tokens(params)


def test_extra_body_n_multiplies_the_reserved_answers() -> None:
    """n in extra_body makes the server bill n answers: the worst case must count them."""
    params = {"messages": MSG, "max_tokens": 10, "extra_body": {"n": 5}}
    assert _out_tokens(params) >= 50, _out_tokens(params)


def test_n_multiplies_the_reserved_answers() -> None:
    assert _out_tokens({"messages": MSG, "max_tokens": 10, "n": 3}) == 30


def test_max_completion_tokens_is_reserved() -> None:
    assert _out_tokens({"messages": MSG, "max_completion_tokens": 77}) == 77


def test_a_zero_or_negative_max_tokens_reserves_the_uncapped_default_not_nothing() -> None:
    for bad in (0, -5):
        assert _out_tokens({"messages": MSG, "max_tokens": bad}) >= 1000


def test_a_prediction_is_reserved_as_output() -> None:
    pred = {"type": "content", "content": "z" * 400}
    assert _out_tokens({"messages": MSG, "max_tokens": 10, "prediction": pred}) >= 110


@on_virtual_time
async def test_extra_body_n_does_not_let_the_spend_pass_the_cap(sim: SimFactory) -> None:
    """End to end: max_tokens set, a cap that one request's worst case fits twice over;
    extra_body={'n': 5} makes each reply bill five answers. The spend must stay under
    the cap (docs: with max_cost and max_tokens set, the spend never passes it)."""
    price = Pricing(input=0, output=1000)
    async with sim(time_scale=100, answer_tokens=30) as (_, client):
        fo = fanout.Fanout(client, model="m", pricing=price, memory=False)
        one = worst_case(Pricer(pricing=price), {"model": "m", "max_tokens": 10, "messages":
                         [{"role": "user", "content": "What is 0?"}]}, "m", None)  # fmt: skip
        cap = one * 2
        answers = await fo.ask_many([f"What is {i}?" for i in range(4)], policy="split",
                                    max_tokens=10, extra_body={"n": 5}, max_cost=cap,
                                    on_error="return")  # fmt: skip
    spent = answers.report.cost
    assert spent is not None and spent <= cap, (spent, cap)


@on_virtual_time
async def test_concurrent_requests_with_tools_never_pass_the_cap(sim: SimFactory) -> None:
    """Twenty questions at once, each carrying ~2,000 tokens of tools, under a cap a
    few of them fit: the spend stays under it."""
    tools = [{"type": "function", "function": {"name": f"t{i}", "description": "word " * 400,
                                               "parameters": {"type": "object"}}}
             for i in range(4)]  # fmt: skip
    price = Pricing(input=1, output=1)
    async with sim(time_scale=100, answer_tokens=5) as (_, client):
        fo = fanout.Fanout(client, model="m", pricing=price, memory=False)
        probe = await fo.ask_many(["What is A?"], policy="split", max_tokens=20, tools=tools)
        one = probe[0].cost
        assert one is not None
        cap = one * Decimal("3.5")
        answers = await fo.ask_many([f"What is {i}?" for i in range(20)], policy="split",
                                    max_tokens=20, tools=tools, max_cost=cap,
                                    on_error="return")  # fmt: skip
    spent = answers.report.cost
    assert spent is not None and spent <= cap, (spent, cap)
    assert any(isinstance(a.error, fanout.BudgetExceededError) for a in answers)


@on_virtual_time
async def test_a_question_on_a_model_without_a_price_is_not_sent_under_a_cap(
    sim: SimFactory,
) -> None:
    """Under ``max_cost``, a question whose own ``params`` name a model with no known price
    fails with an error naming that model, and is not sent; the others go. (They were
    all sent, the cap counting them at $0.)"""
    async with sim(time_scale=50) as (server, client):
        fo = fanout.Fanout(client, model="gpt-4o-mini", memory=False, max_tokens=20,
                           max_cost=1.0, policy="split")  # fmt: skip
        questions = [
            fanout.Question(text="Q0?"),
            fanout.Question(text="Q1?", params={"model": "ft:my-own-model-xyz"}),
        ]
        answers = await fo.ask_many(questions, on_error="return")
        sent = len(server.stats.requests)
    assert answers[0].ok
    assert answers[1].error is not None and "ft:my-own-model-xyz" in str(answers[1].error)
    assert "not sent" in str(answers[1].error)
    assert sent == 1


@on_virtual_time
async def test_a_cap_holds_on_a_prompt_denser_in_tokens_than_the_estimate(
    sim: SimFactory,
) -> None:
    """A prompt of 400 punctuation marks, which the simulator (like real tokenizers on
    such text) bills at about a token each, where the estimate counts one per 4
    characters: under a cap of half its cost the question is not sent. Its worst case is
    counted at a token per byte where tiktoken does not know the model (it was reserved
    at ~130 tokens and spent $0.41 on a $0.20 cap)."""
    async with sim(time_scale=50) as (server, client):
        fo = fanout.Fanout(client, model="sim-1", memory=False, max_tokens=5, max_cost=0.2,
                           pricing=Pricing(input=1000, output=1000))  # fmt: skip
        answers = await fo.ask_many([",." * 200], on_error="return")
        sent = len(server.stats.requests)
    assert fo.spend_cap is not None and fo.spend_cap.spent <= Decimal("0.2")
    assert sent == 0 and isinstance(answers[0].error, fanout.BudgetExceededError)
