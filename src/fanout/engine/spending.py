"""Spending: the price of each answer, and the spend cap (``max_cost=``).

A cap is kept like the token limiter keeps tokens: before a request is sent its
worst case is *reserved* (its prompt, estimated with a margin, plus its
``max_tokens`` times ``n``, all at the full input and output price of its tier), and
when it is answered the reservation is *settled* with what its usage cost. A request
whose worst case does not fit waits for the requests in flight to settle; if it still
does not fit once none is in flight, it is not sent, and its question fails with
:class:`~fanout.BudgetExceededError`. So the spend never passes the cap (when every
request has ``max_tokens``), and stops within one request's worst case of it.

Settling: a reply with usage costs its usage; a reply without usage, or an attempt
that may have been billed without a reply (abandoned at its deadline, cut off, cancelled
after it was sent), costs its whole reservation; an error status (4xx, 5xx) costs
nothing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, TypeVar

import anyio
import openai

from ..core.exceptions import ConfigError
from ..core.models import Usage
from ..core.money import (
    Pricing,
    PricingSetting,
    Tier,
    cost_of,
    price_known,
    tier_of,
)
from ..core.params import answer_cap
from ..endpoint.tokens import estimate_text_tokens, worst_request_tokens

__all__ = [
    "OverBudgetError",
    "Pricer",
    "SpendCap",
    "call_caps",
    "check_max_cost",
    "check_pricing",
    "reserve_stream",
    "settle_stream",
    "spend_on",
    "worst_case",
]

T = TypeVar("T")

PROMPT_MARGIN = 1.1  # the prompt's estimate may be short of the server's count
PROMPT_MARGIN_TOKENS = 16
UNCAPPED_ANSWER_TOKENS = 1000  # reserved for an answer without max_tokens, before any was seen


class OverBudgetError(Exception):
    """A request was not sent: its worst case does not fit under a spend cap."""

    def __init__(self, cap: SpendCap, need: Decimal) -> None:
        super().__init__(
            f"not sent: its worst-case cost ${need:.6f} would pass the spend cap "
            f"max_cost=${cap.cap} (${cap.spent:.6f} spent)"
        )
        self.cap = cap
        self.need = need


def check_max_cost(value: object) -> Decimal | None:
    """``max_cost`` as a Decimal of US dollars (None: no cap); a ConfigError if it is no
    non-negative number."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, Decimal, str)):
        raise ConfigError(f"max_cost must be a number of US dollars, got {value!r}")
    try:
        amount = Decimal(str(value))
    except ArithmeticError:
        raise ConfigError(f"max_cost must be a number of US dollars, got {value!r}") from None
    if not amount.is_finite() or amount < 0:
        raise ConfigError(f"max_cost must be zero or more US dollars, got {value!r}")
    return amount


def check_pricing(pricing: object) -> PricingSetting:
    """``pricing=``: a :class:`Pricing`, a mapping of model names to one, or None."""
    if pricing is None or isinstance(pricing, Pricing):
        return pricing
    if isinstance(pricing, Mapping) and all(
        isinstance(k, str) and isinstance(v, Pricing) for k, v in pricing.items()
    ):
        return dict(pricing)
    raise ConfigError(
        "pricing must be a fanout.Pricing (every model of the endpoint) or a mapping of "
        f"model names to fanout.Pricing, got {type(pricing).__name__}"
    )


def call_caps(
    shared: SpendCap | None, max_cost: object, pricer: Pricer, model: str
) -> tuple[SpendCap, ...]:
    """The caps a call's requests must fit under: the ``Fanout``'s and the call's own
    (``max_cost``); a ConfigError if there is one and the model's price is unknown (a
    cap on an unknown price could not be kept)."""
    own = check_max_cost(max_cost)
    caps = tuple(c for c in (shared, None if own is None else SpendCap(own)) if c is not None)
    if caps and not pricer.known(model):
        raise ConfigError(
            f"max_cost needs a price for model {model!r}, and none is known: give one with "
            "pricing=fanout.Pricing(input=..., output=...) (USD per million tokens; on the "
            "command line, --price IN,OUT)"
        )
    return caps


@dataclass(eq=False)
class SpendCap:
    """A cap on what requests may cost, in US dollars: what they spent, and what the
    requests in flight hold reserved."""

    cap: Decimal
    spent: Decimal = Decimal(0)
    reserved: Decimal = Decimal(0)
    _waiters: list[anyio.Event] = field(default_factory=list)

    def fits(self, amount: Decimal) -> bool:
        return self.spent + self.reserved + amount <= self.cap

    def settle(self, reserved: Decimal, cost: Decimal) -> None:
        self.reserved -= reserved
        self.spent += cost
        waiters, self._waiters = self._waiters, []
        for event in waiters:
            event.set()

    async def changed(self) -> None:
        event = anyio.Event()
        self._waiters.append(event)
        await event.wait()


@dataclass(frozen=True)
class Pricer:
    """Prices usage for one ``Fanout``: its ``pricing=`` overrides, then the price
    library, for its endpoint's URL."""

    pricing: PricingSetting = None
    base_url: str | None = None

    def cost(self, usage: Usage, model: str, tier: Tier = "standard") -> Decimal | None:
        return cost_of(usage, model, pricing=self.pricing, tier=tier, base_url=self.base_url)

    def known(self, model: str) -> bool:
        return price_known(model, pricing=self.pricing, base_url=self.base_url)

    def of_params(self, usage: Usage, params: Mapping[str, Any], model: str) -> Decimal | None:
        """The cost of ``usage`` of a request sent with ``params``: its model and tier."""
        sent = params.get("model")
        return self.cost(usage, sent if isinstance(sent, str) else model, tier_of(params))


def worst_case(
    pricer: Pricer,
    params: Mapping[str, Any],
    model: str,
    answer_tokens: float | None,
    *,
    tier: Tier | None = None,
) -> Decimal:
    """The most a request sent with ``params`` is expected to cost: its prompt (with a
    margin: the messages and every other field billed as prompt, tools and the response
    format's schema among them, counted as ``worst_request_tokens`` does: exactly where
    tiktoken knows the model, else a token per byte) and its ``max_tokens``
    (else four times the answers seen, else 1000) times ``n``, plus a predicted output
    (``prediction``, billed as output where it is rejected), at the full price of its
    tier (``tier``, else the one its parameters ask for: a request in a batch is priced
    at the batch tier)."""
    prompt = worst_request_tokens(params, model)
    prompt = int(prompt * PROMPT_MARGIN) + PROMPT_MARGIN_TOKENS
    sent = body_of(params)  # extra_body's fields are the body's: the server obeys them
    cap = answer_cap(sent)
    if not isinstance(cap, int) or cap <= 0:
        cap = int(4 * answer_tokens) if answer_tokens else UNCAPPED_ANSWER_TOKENS
    n = sent.get("n")
    completion = cap * (n if isinstance(n, int) and n > 0 else 1) + _predicted(sent)
    usage = Usage(prompt_tokens=prompt, completion_tokens=completion)
    if tier is None:
        cost = pricer.of_params(usage, params, model)
    else:
        named = params.get("model")
        cost = pricer.cost(usage, named if isinstance(named, str) else model, tier)
    return cost if cost is not None else Decimal(0)


async def reserve_stream(
    caps: tuple[SpendCap, ...], pricer: Pricer, params: Mapping[str, Any], model: str
) -> Decimal:
    """Reserve the worst case of a request streamed outside ``spend_on`` (a wrapped
    stream's live part) on ``caps``: what to settle with :func:`settle_stream`; raises
    :class:`OverBudgetError` if it does not fit."""
    if not caps:
        return Decimal(0)
    need = worst_case(pricer, params, model, None)
    await _reserve(caps, need)
    return need


def settle_stream(
    caps: tuple[SpendCap, ...],
    pricer: Pricer,
    params: Mapping[str, Any],
    model: str,
    need: Decimal,
    usage: Usage,
    *,
    opened: bool,
) -> None:
    """Settle a :func:`reserve_stream` reservation: the stream's usage, else (cut before
    its usage came) the whole reservation if it opened, nothing if it never did."""
    cost = pricer.of_params(usage, params, model) if usage.total_tokens else None
    spent = cost if cost is not None else (need if opened else Decimal(0))
    for cap in caps:
        cap.settle(need, spent)


async def _reserve(caps: Iterable[SpendCap], need: Decimal) -> None:
    """Reserve ``need`` on every cap at once, waiting for requests in flight to settle;
    raises :class:`OverBudgetError` when a cap it does not fit holds nothing reserved."""
    caps = list(caps)
    while True:
        short = next((cap for cap in caps if not cap.fits(need)), None)
        if short is None:
            for cap in caps:
                cap.reserved += need
            return
        if short.reserved <= 0:
            raise OverBudgetError(short, need)
        await short.changed()


async def spend_on(
    caps: tuple[SpendCap, ...],
    pricer: Pricer | None,
    params: Mapping[str, Any],
    model: str,
    answer_tokens: float | None,
    usage_of: Callable[[], Usage],
    attempts_of: Callable[[], int],
    attempt: Callable[[], Awaitable[T]],
) -> T:
    """Run one attempt under the spend caps: reserve its worst case, then settle with
    what it cost (``usage_of``: the usage counted so far, read before and after)."""
    if not caps or pricer is None:
        return await attempt()
    named = params.get("model")
    # The call's model was checked for a price with its caps (``call_caps``); a
    # question's own model is checked here, before an attempt reserves anything.
    if isinstance(named, str) and named != model and not pricer.known(named):
        raise ConfigError(
            f"max_cost needs a price for model {named!r} (this question's model), and "
            "none is known: give one with pricing=fanout.Pricing(input=..., output=...) or "
            "pricing={model: Pricing(...)}; the question was not sent"
        )
    need = worst_case(pricer, params, model, answer_tokens)
    await _reserve(caps, need)
    usage_before, attempts_before = usage_of(), attempts_of()
    spent = need
    try:
        result = await attempt()
        added = _minus(usage_of(), usage_before)
        cost = pricer.of_params(added, params, model) if added.total_tokens else None
        spent = need if cost is None else cost
        return result
    except openai.APIStatusError:
        spent = Decimal(0)  # an error status is not billed
        raise
    except BaseException:
        if attempts_of() == attempts_before:
            spent = Decimal(0)  # never sent
        raise
    finally:
        for cap in caps:
            cap.settle(need, spent)


def body_of(params: Mapping[str, Any]) -> dict[str, Any]:
    """The request body ``params`` send: the SDK merges ``extra_body`` into it, its
    fields over the named ones."""
    extra = params.get("extra_body")
    body = {k: v for k, v in params.items() if k != "extra_body"}
    if isinstance(extra, Mapping):
        body.update(extra)
    return body


def _predicted(params: Mapping[str, Any]) -> int:
    """The tokens of a request's predicted output (``prediction``), each billed as an
    output token if the model does not use it."""
    prediction = params.get("prediction")
    if not isinstance(prediction, Mapping):
        return 0
    content = prediction.get("content")
    if isinstance(content, list):
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return estimate_text_tokens(content) if isinstance(content, str) else 0


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        prompt_tokens=after.prompt_tokens - before.prompt_tokens,
        completion_tokens=after.completion_tokens - before.completion_tokens,
        cached_prompt_tokens=after.cached_prompt_tokens - before.cached_prompt_tokens,
    )
