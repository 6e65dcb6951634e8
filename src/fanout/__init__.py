"""fanout: answer many independent LLM questions fast and cheaply.

::

    import fanout
    from openai import AsyncOpenAI

    answers = await fanout.ask_many(["What is X?", "Explain Y."],
                                    client=AsyncOpenAI(), model="gpt-4o-mini")
"""

from __future__ import annotations

import importlib.metadata as _metadata

from ._config import Limits as Limits
from ._config import Policy as Policy
from ._config import Retry as Retry
from ._detect import DetectedQuestion as DetectedQuestion
from ._detect import Detection as Detection
from ._detect import detect as detect
from ._engine import Fanout as Fanout
from ._engine import QuestionLike as QuestionLike
from ._engine import ask_many as ask_many
from ._engine import plan as plan
from ._exceptions import ConfigError as ConfigError
from ._exceptions import FanoutError as FanoutError
from ._exceptions import InvalidQuestionError as InvalidQuestionError
from ._exceptions import JobError as JobError
from ._exceptions import PartialFailureError as PartialFailureError
from ._exceptions import QuestionError as QuestionError
from ._exceptions import QuestionTimeoutError as QuestionTimeoutError
from ._exceptions import QuotaExceededError as QuotaExceededError
from ._jobs import BadLine as BadLine
from ._jobs import JobSummary as JobSummary
from ._limiter import LimitState as LimitState
from ._limiter import LocalLimiter as LocalLimiter
from ._limiter import RateLimiter as RateLimiter
from ._limiter import parse_duration as parse_duration
from ._limiter_redis import RedisLimiter as RedisLimiter
from ._limiter_redis import RedisUnavailableError as RedisUnavailableError
from ._models import Answer as Answer
from ._models import Answers as Answers
from ._models import Question as Question
from ._models import Report as Report
from ._models import Usage as Usage
from ._planning import Budget as Budget
from ._planning import Candidate as Candidate
from ._planning import EndpointEstimate as EndpointEstimate
from ._planning import EndpointModel as EndpointModel
from ._planning import Plan as Plan
from ._planning import PlanInputs as PlanInputs
from ._profile import EndpointProfile as EndpointProfile
from ._tokens import estimate_messages_tokens as estimate_messages_tokens
from ._wrap import FanoutClient as FanoutClient
from ._wrap import FanoutStream as FanoutStream
from ._wrap import report_of as report_of
from ._wrap import wrap as wrap

try:
    __version__ = _metadata.version("llm-fanout")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "Answer",
    "Answers",
    "BadLine",
    "Budget",
    "Candidate",
    "ConfigError",
    "DetectedQuestion",
    "Detection",
    "EndpointEstimate",
    "EndpointModel",
    "EndpointProfile",
    "Fanout",
    "FanoutClient",
    "FanoutError",
    "FanoutStream",
    "InvalidQuestionError",
    "JobError",
    "JobSummary",
    "LimitState",
    "Limits",
    "LocalLimiter",
    "PartialFailureError",
    "Plan",
    "PlanInputs",
    "Policy",
    "Question",
    "QuestionError",
    "QuestionLike",
    "QuestionTimeoutError",
    "QuotaExceededError",
    "RateLimiter",
    "RedisLimiter",
    "RedisUnavailableError",
    "Report",
    "Retry",
    "Usage",
    "__version__",
    "ask_many",
    "detect",
    "estimate_messages_tokens",
    "parse_duration",
    "plan",
    "report_of",
    "wrap",
]
