"""fanout: answer many independent LLM questions fast and cheaply.

::

    import fanout
    from openai import AsyncOpenAI

    answers = await fanout.ask_many(["What is X?", "Explain Y."],
                                    client=AsyncOpenAI(), model="gpt-4o-mini")

The top level holds what an application needs; the advanced parts are in public
submodules: :mod:`fanout.planning`, :mod:`fanout.limits`, :mod:`fanout.profile`,
:mod:`fanout.jobs`, :mod:`fanout.detection`, :mod:`fanout.wrapper`, :mod:`fanout.sim`.
"""

import importlib as _importlib
import importlib.metadata as _metadata
import warnings as _warnings
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

# The public submodules the engine is made of, loaded with the package:
# ``import fanout`` is enough to use ``fanout.planning.Plan``. The others (detection,
# jobs, profiles, the wrapper) are loaded when first used, as ``fanout.detection`` or
# ``fanout.wrap`` (see ``__getattr__``): detection's tables alone took a third of the
# import's time beyond the SDK's. The simulator is never loaded by the library.
from . import limits as limits
from . import money as money
from . import planning as planning
from .cache import Cache as Cache
from .core.config import Limits as Limits
from .core.config import Policy as Policy
from .core.config import Retry as Retry
from .core.endpoints import Endpoint as Endpoint
from .core.exceptions import BudgetExceededError as BudgetExceededError
from .core.exceptions import CallAbortedError as CallAbortedError
from .core.exceptions import ConfigError as ConfigError
from .core.exceptions import EmptyAnswerError as EmptyAnswerError
from .core.exceptions import FanoutError as FanoutError
from .core.exceptions import InvalidQuestionError as InvalidQuestionError
from .core.exceptions import JobError as JobError
from .core.exceptions import LoopDeadlockError as LoopDeadlockError
from .core.exceptions import MalformedResponseError as MalformedResponseError
from .core.exceptions import PartialFailureError as PartialFailureError
from .core.exceptions import QuestionError as QuestionError
from .core.exceptions import QuestionTimeoutError as QuestionTimeoutError
from .core.exceptions import QuotaExceededError as QuotaExceededError
from .core.exceptions import RefusalError as RefusalError
from .core.exceptions import StructuredOutputError as StructuredOutputError
from .core.models import Answer as Answer
from .core.models import Answers as Answers
from .core.models import Question as Question
from .core.models import Report as Report
from .core.models import Usage as Usage
from .core.money import Pricing as Pricing
from .core.notgiven import NOT_GIVEN as NOT_GIVEN
from .engine.facade import Fanout as Fanout
from .engine.facade import ask_many as ask_many
from .engine.facade import plan as plan
from .engine.intake import QuestionLike as QuestionLike
from .engine.sync import ask_many_sync as ask_many_sync
from .limits._redis import RedisUnavailableError as RedisUnavailableError

if _TYPE_CHECKING:
    from . import detection as detection
    from . import jobs as jobs
    from . import profile as profile
    from . import wrapper as wrapper
    from .detection._detector import detect as detect
    from .wrapper._client import report_of as report_of
    from .wrapper._client import wrap as wrap

_LAZY = {
    "detection": ("fanout.detection", None),
    "jobs": ("fanout.jobs", None),
    "profile": ("fanout.profile", None),
    "wrapper": ("fanout.wrapper", None),
    "detect": ("fanout.detection._detector", "detect"),
    "report_of": ("fanout.wrapper._client", "report_of"),
    "wrap": ("fanout.wrapper._client", "wrap"),
}
"""Public names loaded on first use: (the module, the name in it; None: the module)."""

try:
    __version__ = _metadata.version("llm-fanout")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0"

__all__ = [
    "NOT_GIVEN",
    "Answer",
    "Answers",
    "BudgetExceededError",
    "Cache",
    "CallAbortedError",
    "ConfigError",
    "EmptyAnswerError",
    "Endpoint",
    "Fanout",
    "FanoutError",
    "InvalidQuestionError",
    "JobError",
    "Limits",
    "LoopDeadlockError",
    "MalformedResponseError",
    "PartialFailureError",
    "Policy",
    "Pricing",
    "Question",
    "QuestionError",
    "QuestionLike",
    "QuestionTimeoutError",
    "QuotaExceededError",
    "RedisUnavailableError",
    "RefusalError",
    "Report",
    "Retry",
    "StructuredOutputError",
    "Usage",
    "__version__",
    "ask_many",
    "ask_many_sync",
    "detect",
    "plan",
    "report_of",
    "wrap",
]


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})


# Names that were at the top level in 0.1 and now live in a public submodule: still
# importable from here for one release, with a DeprecationWarning.
_MOVED = {
    "BadLine": "fanout.jobs",
    "Budget": "fanout.planning",
    "Candidate": "fanout.planning",
    "DetectedQuestion": "fanout.detection",
    "Detection": "fanout.detection",
    "EndpointEstimate": "fanout.planning",
    "EndpointModel": "fanout.planning",
    "EndpointProfile": "fanout.profile",
    "FanoutClient": "fanout.wrapper",
    "FanoutStream": "fanout.wrapper",
    "JobSummary": "fanout.jobs",
    "LimitState": "fanout.limits",
    "LocalLimiter": "fanout.limits",
    "Plan": "fanout.planning",
    "PlanInputs": "fanout.planning",
    "RateLimiter": "fanout.limits",
    "RedisLimiter": "fanout.limits",
    "estimate_messages_tokens": "fanout.planning",
    "parse_duration": "fanout.limits",
}


def __getattr__(name: str) -> _Any:
    lazy = _LAZY.get(name)
    if lazy is not None:
        loaded = _importlib.import_module(lazy[0])
        value = loaded if lazy[1] is None else getattr(loaded, lazy[1])
        globals()[name] = value
        return value
    module = _MOVED.get(name)
    if module is None:
        raise AttributeError(f"module 'fanout' has no attribute {name!r}")
    _warnings.warn(
        f"fanout.{name} has moved to {module}.{name}; the old name will be removed "
        "in the next release",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(_importlib.import_module(module), name)
