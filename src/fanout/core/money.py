"""Money: what a usage costs in US dollars, and where the prices come from.

Prices come, in this order, from

1. a :class:`Pricing` given for the model (``pricing={"my-model": Pricing(...)}``),
2. a :class:`Pricing` given for the whole endpoint (``pricing=Pricing.free()`` for a
   server of your own),
3. pydantic's maintained price library, `genai-prices <https://pypi.org/project/genai-prices/>`_,
   from the data bundled with the installed version: it is never asked to fetch newer
   prices over the network (its ``UpdatePrices`` is never started),
4. else the price is unknown: the cost is ``None``, and a warning says so once per
   model in a process. No price is ever guessed.

Costs are :class:`~decimal.Decimal` US dollars (exact, as the price library gives
them); a JSONL job writes them as JSON numbers. Cached input tokens (the part of
``prompt_tokens`` the endpoint served from its prompt cache) are priced at their own
price. Tiers: ``"standard"``, ``"flex"`` and ``"batch"``; the library's exact tier
price where it has one, else half the standard price (OpenAI's discount for both).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field


class Usage(Protocol):
    """Token counts, as :class:`fanout.Usage` holds them."""

    @property
    def prompt_tokens(self) -> int: ...
    @property
    def completion_tokens(self) -> int: ...
    @property
    def cached_prompt_tokens(self) -> int: ...


__all__ = [
    "SIMULATOR_MODEL",
    "TIERS",
    "CostEstimate",
    "Pricing",
    "PricingSetting",
    "Tier",
    "cost_of",
    "price_known",
    "tier_of",
]

log = logging.getLogger("fanout")

Tier = Literal["standard", "flex", "batch"]
TIERS: tuple[Tier, ...] = ("standard", "flex", "batch")
_MILLION = Decimal(1_000_000)
_HALF = Decimal("0.5")

_NonNegative = Field(ge=0, allow_inf_nan=False)


class Pricing(BaseModel):
    """A price you set, in US dollars per million tokens: for a model the price library
    does not know, or one you pay another price for (a self-hosted server: zero).

    ::

        fanout.Pricing(input=0.15, cached_input=0.075, output=0.60)
        fanout.Pricing.free()

    ``cached_input``: the price of the prompt tokens the endpoint served from its cache
    (None: the ``input`` price). ``flex`` and ``batch``: the tier prices as a fraction of
    these (default half, as OpenAI charges)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: Decimal = _NonNegative
    output: Decimal = _NonNegative
    cached_input: Decimal | None = Field(default=None, ge=0, allow_inf_nan=False)
    flex: Decimal = Field(default=_HALF, ge=0, le=1, allow_inf_nan=False)
    batch: Decimal = Field(default=_HALF, ge=0, le=1, allow_inf_nan=False)

    def __init__(
        self,
        *,
        input: Decimal | float | str,
        output: Decimal | float | str,
        cached_input: Decimal | float | str | None = None,
        flex: Decimal | float | str = _HALF,
        batch: Decimal | float | str = _HALF,
    ) -> None:
        # Spelled out so that type checkers take the plain numbers people write.
        super().__init__(
            input=input, output=output, cached_input=cached_input, flex=flex, batch=batch
        )

    @classmethod
    def free(cls) -> Pricing:
        """Zero for every token: a server of your own."""
        return cls(input=Decimal(0), output=Decimal(0))

    def cost(
        self,
        prompt_tokens: int,
        cached_tokens: int,
        completion_tokens: int,
        tier: Tier = "standard",
    ) -> Decimal:
        cached_price = self.input if self.cached_input is None else self.cached_input
        cached = min(cached_tokens, prompt_tokens)
        total = (
            (prompt_tokens - cached) * self.input
            + cached * cached_price
            + completion_tokens * self.output
        ) / _MILLION
        factor = {"standard": Decimal(1), "flex": self.flex, "batch": self.batch}[tier]
        return total * factor


PricingSetting = Pricing | Mapping[str, Pricing] | None
"""What ``Fanout(pricing=...)`` takes: one price for every model of the endpoint, a
price per model name, or None (the price library alone)."""


@dataclass(frozen=True)
class CostEstimate:
    """What a way of sending the questions is estimated to cost, before anything is
    sent (``Plan.estimates``; ``fanout plan``, ``fanout run --dry-run``)."""

    label: str
    """The plan's label (``split``, ``groups of 4``, ``merged``), with ``(flex)`` or
    ``(batch)`` for the same requests at that tier."""
    tier: Tier
    requests: int
    est_prompt_tokens: int
    est_completion_tokens: int
    est_cost: Decimal | None
    """US dollars; None when the model's price is unknown."""
    est_wall_s: float | None
    """Estimated time; None for the batch tier (see ``time_note``)."""
    time_note: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "label": self.label,
            "tier": self.tier,
            "requests": self.requests,
            "est_prompt_tokens": self.est_prompt_tokens,
            "est_completion_tokens": self.est_completion_tokens,
            "est_cost_usd": None if self.est_cost is None else float(self.est_cost),
            "est_wall_s": None if self.est_wall_s is None else round(self.est_wall_s, 4),
            "time_note": self.time_note,
        }


def tier_of(params: Mapping[str, Any]) -> Tier:
    """The tier a request's ``create()`` parameters ask for (``service_tier="flex"``)."""
    tier = params.get("service_tier")
    return tier if tier in ("flex", "batch") else "standard"


# --- the price library -------------------------------------------------------------------
_lock = threading.Lock()
_library: dict[tuple[str, str | None, Tier], Any] = {}  # -> ModelPrice, or None if unknown
_warned: set[str] = set()


def _library_price(model: str, base_url: str | None, tier: Tier) -> tuple[Any, Decimal] | None:
    """(the library's ModelPrice, the factor to apply) for ``model`` at ``tier``, or None.

    The endpoint's URL picks the provider where the library knows it (api.openai.com,
    api.groq.com, ...); elsewhere the model's name does."""
    key = (model, base_url, tier)
    with _lock:
        if key in _library:
            return _library[key]  # type: ignore[no-any-return]
    from genai_prices import data_snapshot  # bundled data; its UpdatePrices is never started

    snapshot = data_snapshot.get_snapshot()
    found: tuple[Any, Decimal] | None = None
    for url in (base_url, None) if base_url else (None,):
        try:
            _provider, info = snapshot.find_provider_model(model, None, None, url)
        except LookupError:
            continue
        now = datetime.now(tz=timezone.utc)
        standard = info.get_prices(now)
        if tier == "standard":
            found = (standard, Decimal(1))
        else:
            priced = info.get_prices(now, {"service_tier": tier})
            found = (priced, Decimal(1)) if priced != standard else (standard, _HALF)
        break
    if found is not None:
        found = (_plain(found[0]), found[1])
    with _lock:
        _library[key] = found
    return found


def _plain(price: Any) -> Any:
    """The library's price as a :class:`Pricing` when it is a plain price per token for
    input, cached input and output, and nothing else (no tiers by prompt length): that
    is priced a hundred times faster; else the library's own price, as it is."""
    plain = {"input_mtok", "cache_read_mtok", "output_mtok"}
    values = {k: v for k, v in vars(price).items() if v is not None and not k.startswith("_")}
    per_token = {k: v for k, v in values.items() if k.endswith("_mtok")}
    if set(per_token) - plain or not all(isinstance(v, Decimal) for v in per_token.values()):
        return price
    if "input_mtok" not in per_token or "output_mtok" not in per_token:
        return price
    return Pricing(
        input=per_token["input_mtok"],
        output=per_token["output_mtok"],
        cached_input=per_token.get("cache_read_mtok"),
    )


SIMULATOR_MODEL = "sim-1"
"""The model fanout's simulator (``fanout sim``, ``fanout.sim``) serves by default: it
costs nothing, unless a ``pricing=`` of the call says otherwise."""


def _resolve(model: str, pricing: PricingSetting) -> Pricing | None:
    if isinstance(pricing, Pricing):
        return pricing
    own = pricing.get(model) if pricing is not None else None
    if own is None and model == SIMULATOR_MODEL:
        return Pricing.free()
    return own


def price_known(model: str, *, pricing: PricingSetting = None, base_url: str | None = None) -> bool:
    """Whether fanout can price ``model`` (a :class:`Pricing` or the price library)."""
    return (
        _resolve(model, pricing) is not None
        or _library_price(model, base_url, "standard") is not None
    )


def cost_of(
    usage: Usage,
    model: str,
    *,
    pricing: PricingSetting = None,
    tier: Tier = "standard",
    base_url: str | None = None,
) -> Decimal | None:
    """What ``usage`` of ``model`` costs in US dollars at ``tier``; None (and a warning,
    once per model) when its price is unknown. A usage of no tokens costs 0."""
    own = _resolve(model, pricing)
    if own is not None:
        return own.cost(
            usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens, tier
        )
    if usage.prompt_tokens == 0 and usage.completion_tokens == 0:
        return Decimal(0)
    found = _library_price(model, base_url, tier)
    if found is None:
        _warn_unknown(model)
        return None
    price, factor = found
    if isinstance(price, Pricing):  # plain per-token prices: priced here, fast
        return (
            price.cost(usage.prompt_tokens, usage.cached_prompt_tokens, usage.completion_tokens)
            * factor
        )
    from genai_prices import Usage as PriceUsage

    cached = min(usage.cached_prompt_tokens, usage.prompt_tokens)
    counted = PriceUsage(
        input_tokens=usage.prompt_tokens,
        cache_read_tokens=cached,
        output_tokens=usage.completion_tokens,
    )
    total: Decimal = price.calc_price(counted)["total_price"]
    return total * factor


def _warn_unknown(model: str) -> None:
    with _lock:
        if model in _warned:
            return
        _warned.add(model)
    log.warning(
        "no price known for model %r: its costs are unknown (None); give one with "
        "pricing=fanout.Pricing(input=..., output=...) (USD per million tokens), or "
        "fanout.Pricing.free() for a server of your own",
        model,
    )
