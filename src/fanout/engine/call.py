"""One call's settings and counters: what every room of the engine reads or adds to.

``CallOptions`` is the resolved configuration of one ``ask_many`` / ``as_completed``
call (the ``Fanout``'s defaults with the call's overrides on top), checked before
anything is sent. ``CallStats`` counts what the call did, for its report; ``Tally``
counts the attempts, usage and request ids of one request across its retries.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ..cache import Cache
from ..core.config import Policy, Retry
from ..core.exceptions import ConfigError
from ..core.models import Answer, Usage
from ..core.params import params_problem
from ..core.plans import Plan, PlanRevision
from .reach import ReachGate
from .responses import APIS, chat_names, check_responses_kwargs
from .spending import Pricer, SpendCap
from .structured import Structured, structured_of

__all__ = [
    "CallOptions",
    "CallStats",
    "OnAnswer",
    "OnError",
    "Tally",
    "check_api",
    "check_create_kwargs",
    "check_on_error",
    "resolve_options",
]

OnError = Literal["raise", "return"]
OnAnswer = Callable[[Answer], Awaitable[None] | None]

# fanout's own keyword arguments: offered as corrections of a misspelt one.
OPTIONS = ("model", "system", "limits", "retry", "policy", "on_error", "timeout", "progress",
           "on_answer", "dedupe", "limiter", "endpoint", "client", "memory", "api", "pricing",
           "max_cost", "cache")  # fmt: skip


@dataclass
class CallOptions:
    model: str
    system: str | None
    retry: Retry
    policy: Policy
    on_error: OnError
    timeout: float | None
    progress: bool
    on_answer: OnAnswer | None
    dedupe: bool
    create_kwargs: dict[str, Any]
    api: str = "chat"
    """The API the requests go through: ``"chat"`` (Chat Completions) or ``"responses"``."""
    pricer: Pricer | None = None
    """Prices the answers (``Answer.cost``); None: they are not priced."""
    caps: tuple[SpendCap, ...] = ()
    """The spend caps every request must fit under: the ``Fanout``'s, the call's."""
    cache: Cache | None = None
    """The response cache the call uses (``fanout.cache``), if any."""
    structured: Structured | None = None
    """The call's structured ``response_format`` (a JSON schema or a pydantic model), if
    any: answers are checked against it (``Answer.parsed``), and merged under a composed
    schema. ``create_kwargs`` holds it as it is sent."""


@dataclass
class CallStats:
    requests: int = 0
    retries: int = 0
    rate_limited: int = 0
    in_flight: int = 0
    peak: int = 0
    limit_wait_s: float = 0.0
    deduplicated: int = 0
    cache_hits: int = 0
    done: int = 0
    plan: Plan | None = None
    revisions: list[PlanRevision] = field(default_factory=list)
    reasked: list[int] = field(default_factory=list)
    merge_checks: list[str] = field(default_factory=list)  # what each merge check found
    read: int = 0
    """Items read from the input so far."""
    exhausted: bool = False
    """The input was read to its end."""
    aborted: BaseException | None = None
    """What stopped the call, when code of the caller's raised (its input, its
    ``on_answer``), or fanout itself failed unexpectedly."""
    aborted_by: str = ""
    """Whose exception ``aborted`` is, in a few words ("the input", "on_answer")."""
    refused: BaseException | None = None
    """The 401 or 403 a request of this call got: the endpoint refuses the key (or
    its access to the model), so nothing more of this call is sent."""
    reach: ReachGate = field(default_factory=ReachGate)
    """Whether the endpoint can be reached, while it never answered (``engine/reach.py``)."""


@dataclass
class Tally:
    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    request_ids: list[str] = field(default_factory=list)


def check_create_kwargs(create_kwargs: Mapping[str, Any]) -> None:
    """The keyword arguments left for ``create()``: names it takes, values it would not
    refuse (as far as can be seen here); else one ConfigError naming the culprit."""
    problem = params_problem(create_kwargs, options=OPTIONS)
    if problem is not None:
        raise ConfigError(problem)


def check_on_error(on_error: object) -> None:
    if on_error not in ("raise", "return"):
        raise ConfigError(f"on_error must be 'raise' or 'return', got {on_error!r}")


def resolve_options(
    defaults: CallOptions,
    *,
    model: str | None,
    system: str | None,
    retry: Retry | None,
    policy: Policy | str | None,
    on_error: OnError | None,
    timeout: float | None,
    progress: bool,
    on_answer: OnAnswer | None,
    dedupe: bool,
    create_kwargs: dict[str, Any],
    api: str | None = None,
) -> CallOptions:
    """The call's overrides on top of the ``Fanout``'s ``defaults``, checked.

    ``defaults.model`` may be empty (the ``Fanout`` has none): then the call must
    name one."""
    resolved_model = model or defaults.model or create_kwargs.pop("model", None)
    if not resolved_model:
        raise ConfigError("no model: pass model= to Fanout(...) or to the call")
    if not isinstance(resolved_model, str):
        raise ConfigError(f"model must be a model's name (a str), got {resolved_model!r}")
    resolved_system = system if system is not None else defaults.system
    if resolved_system is not None and not isinstance(resolved_system, str):
        raise ConfigError(f"system must be a str, got {type(resolved_system).__name__}")
    if on_answer is not None and not callable(on_answer):
        raise ConfigError(f"on_answer must be a function, got {type(on_answer).__name__}")
    resolved_policy = Policy.coerce(policy) if policy is not None else defaults.policy
    if on_error is not None:
        check_on_error(on_error)
    if retry is not None and not isinstance(retry, Retry):
        raise ConfigError(f"retry must be a fanout.Retry, not {type(retry).__name__}")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    resolved_api = api or defaults.api
    check_api(resolved_api)
    kwargs = {**defaults.create_kwargs, **chat_names(create_kwargs, resolved_api)}
    check_create_kwargs(kwargs)
    structured = structured_of(kwargs.get("response_format"))
    if structured is not None:
        kwargs["response_format"] = structured.response_format  # a model as its JSON schema
    if resolved_api == "responses":
        check_responses_kwargs(kwargs)
    return CallOptions(
        model=resolved_model,
        system=resolved_system,
        retry=retry or defaults.retry,
        policy=resolved_policy,
        on_error=on_error or defaults.on_error,
        timeout=timeout,
        progress=progress,
        on_answer=on_answer,
        dedupe=dedupe,
        create_kwargs=kwargs,
        api=resolved_api,
        structured=structured,
    )


def check_api(api: object) -> None:
    if api not in APIS:
        raise ConfigError(f"api must be one of {', '.join(map(repr, APIS))}, got {api!r}")
