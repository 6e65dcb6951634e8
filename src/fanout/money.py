"""Money, public: prices, costs and the estimates of a plan (see docs/cost.md).

``fanout.Pricing`` is also at the top level; here are the rest: :func:`cost_of`
prices a :class:`~fanout.Usage` (the batch engineer's and your own code's way to
price a usage at a tier), and :class:`CostEstimate` is a row of ``Plan.estimates``.
"""

from __future__ import annotations

from .core.money import TIERS as TIERS
from .core.money import CostEstimate as CostEstimate
from .core.money import Pricing as Pricing
from .core.money import PricingSetting as PricingSetting
from .core.money import Tier as Tier
from .core.money import cost_of as cost_of
from .core.money import tier_of as tier_of

__all__ = ["TIERS", "CostEstimate", "Pricing", "PricingSetting", "Tier", "cost_of", "tier_of"]
