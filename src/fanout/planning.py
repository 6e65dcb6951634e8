"""The planner's parts, for those who want to look inside or drive it themselves.

``fanout.plan(...)`` and ``answers.report.plan`` give a :class:`Plan`; this module
has the types it is made of, the endpoint model that learns an endpoint's timing
(:class:`EndpointModel`, which a ``Fanout`` accepts as ``endpoint=``), the pure
planning function, and the token estimate the planner and the limiter use.
"""

from __future__ import annotations

from .core.config import DEFAULT_MAX_GROUP_SIZE as DEFAULT_MAX_GROUP_SIZE
from .core.plans import Budget as Budget
from .core.plans import Candidate as Candidate
from .core.plans import EndpointEstimate as EndpointEstimate
from .core.plans import GroupCheck as GroupCheck
from .core.plans import MergeChecks as MergeChecks
from .core.plans import Plan as Plan
from .core.plans import PlanInputs as PlanInputs
from .core.plans import PlanRevision as PlanRevision
from .endpoint.model import EndpointModel as EndpointModel
from .endpoint.tokens import estimate_messages_tokens as estimate_messages_tokens
from .engine.opening import HYPOTHESES as HYPOTHESES
from .engine.planning import check_layout as check_layout
from .engine.planning import make_plan as make_plan

__all__ = [
    "DEFAULT_MAX_GROUP_SIZE",
    "HYPOTHESES",
    "Budget",
    "Candidate",
    "EndpointEstimate",
    "EndpointModel",
    "GroupCheck",
    "MergeChecks",
    "Plan",
    "PlanInputs",
    "PlanRevision",
    "check_layout",
    "estimate_messages_tokens",
    "make_plan",
]
