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
from ..core.notgiven import NOT_GIVEN, given_or
from ..core.params import params_problem
from ..core.plans import Plan, PlanRevision
from .reach import ReachGate
from .responses import APIS, chat_names, check_responses_kwargs
from .spending import Pricer, SpendCap
from .structured import Structured, structured_of

__all__ = [
    "CALL_OPTIONS",
    "FANOUT_OPTIONS",
    "ONE_SHOT_OPTIONS",
    "OPTIONS",
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

FANOUT_OPTIONS = ("endpoints", "model", "system", "limits", "retry", "policy", "on_error",
                  "limiter", "endpoint", "memory", "api", "pricing", "max_cost",
                  "cache")  # fmt: skip
"""``Fanout(...)``'s own keyword arguments (the others are ``create()`` parameters): the
defaults of its calls, and what its calls share."""

CALL_OPTIONS = ("model", "system", "retry", "policy", "on_error", "timeout", "progress",
                "on_answer", "dedupe", "api", "max_cost", "cache")  # fmt: skip
"""A call's own keyword arguments (``Fanout.ask_many``, ``Fanout.as_completed``), each
the ``Fanout``'s setting for this call when given (``NOT_GIVEN``: not given)."""

ONE_SHOT_OPTIONS = tuple(
    name
    for name in dict.fromkeys(("client", *FANOUT_OPTIONS, *CALL_OPTIONS))
    if name not in ("limiter", "endpoint")
)
"""``fanout.ask_many``'s and ``fanout.ask_many_sync``'s: a ``Fanout``'s and its call's
together (a ``Fanout`` of their own: no limiter or endpoint model to share)."""

OPTIONS = tuple(sorted({"client", *FANOUT_OPTIONS, *CALL_OPTIONS}))
"""Every keyword argument of fanout's own: offered as corrections of a misspelt one."""


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
    endpoints: dict[str, int] = field(default_factory=dict)
    """Several endpoints (``engine/pool.py``): the questions each answered."""
    placements: list[str] = field(default_factory=list)
    """... each placement of the questions waiting, in words."""
    cooldowns: list[str] = field(default_factory=list)
    """... each endpoint cooled down, taken out, or back."""
    fallbacks: int = 0
    """... questions placed again after their endpoint failed them."""


@dataclass
class Tally:
    """One request's record: its attempts (those abandoned at their deadline among
    them, and when the first was sent), what they cost, their ids, and how long its
    reply is expected to be (the
    answer tokens its questions were told to expect, or were planned with: its attempt
    deadline allows for them; None: the lengths seen on the endpoint)."""

    attempts: int = 0
    usage: Usage = field(default_factory=Usage)
    request_ids: list[str] = field(default_factory=list)
    abandoned: int = 0
    answer_tokens: int | None = None
    first_sent: float | None = None
    """When its first attempt was sent (``clock.now()``): ``Retry.max_elapsed`` counts
    from then."""


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
    defaults: CallOptions, given: Mapping[str, Any], create_kwargs: dict[str, Any]
) -> CallOptions:
    """The call's options ``given`` (names of :data:`CALL_OPTIONS`; one left out or
    ``NOT_GIVEN`` is the ``Fanout``'s) on top of the ``Fanout``'s ``defaults``, checked.
    ``None`` given clears a setting that can be off (``system=None``: no system prompt);
    for the others (a model, a policy, a retry, ``on_error``, an API), it is the
    ``Fanout``'s. ``max_cost`` and ``cache`` are the ``Fanout``'s to resolve.

    ``defaults.model`` may be empty (the ``Fanout`` has none): then the call must
    name one."""

    def option(name: str) -> Any:
        value = given.get(name)
        return getattr(defaults, name) if value is None or value is NOT_GIVEN else value

    resolved_model = option("model") or create_kwargs.pop("model", None)
    if not resolved_model:
        raise ConfigError("no model: pass model= to Fanout(...) or to the call")
    if not isinstance(resolved_model, str):
        raise ConfigError(f"model must be a model's name (a str), got {resolved_model!r}")
    resolved_system = given_or(given.get("system", NOT_GIVEN), defaults.system)
    if resolved_system is not None and not isinstance(resolved_system, str):
        raise ConfigError(f"system must be a str, got {type(resolved_system).__name__}")
    on_answer = option("on_answer")
    if on_answer is not None and not callable(on_answer):
        raise ConfigError(f"on_answer must be a function, got {type(on_answer).__name__}")
    policy = given.get("policy")
    resolved_policy = defaults.policy if policy in (None, NOT_GIVEN) else Policy.coerce(policy)
    check_on_error(option("on_error"))
    retry = option("retry")
    if not isinstance(retry, Retry):
        raise ConfigError(f"retry must be a fanout.Retry, not {type(retry).__name__}")
    timeout = option("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout > 0
    ):
        raise ConfigError(f"timeout must be a positive number of seconds, got {timeout!r}")
    resolved_api = option("api")
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
        retry=retry,
        policy=resolved_policy,
        on_error=option("on_error"),
        timeout=timeout,
        progress=option("progress"),
        on_answer=on_answer,
        dedupe=option("dedupe"),
        create_kwargs=kwargs,
        api=resolved_api,
        structured=structured,
    )


def check_api(api: object) -> None:
    if api not in APIS:
        raise ConfigError(f"api must be one of {', '.join(map(repr, APIS))}, got {api!r}")
