"""create() parameters: which fanout builds itself, which the SDK's ``create()`` takes,
and what can be checked about their values before anything is sent.

The call's keyword arguments (``engine/call.py``) and each ``Question.params`` (``core/models.py``) are
checked here, so a typo or a value the server would refuse is one error up front, not
a failure on every question.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

__all__ = ["RESERVED", "answer_cap", "create_parameters", "params_problem"]

RESERVED = {
    "messages": "fanout builds the messages from the questions",
    "stream": "a fanout call returns whole answers (fanout.wrap streams a wrapped client's calls)",
    "stream_options": "a fanout call does not stream",
}
"""create() parameters fanout builds or refuses, and why."""

_POSITIVE_INTS = ("max_tokens", "max_completion_tokens", "n")
_NON_NEGATIVE = ("temperature", "top_p")
_NUMBERS = ("presence_penalty", "frequency_penalty")
_INTS = ("seed",)
_MAPPINGS = ("extra_body", "extra_headers", "extra_query")


def answer_cap(params: Mapping[str, Any]) -> Any:
    """The request's cap on its answer's tokens, under either of its names
    (``max_completion_tokens`` first, the newer one; else ``max_tokens``); None if it has
    none. Returned as written: the caller checks that it is an int."""
    cap = params.get("max_completion_tokens")
    return params.get("max_tokens") if cap is None else cap


@cache
def create_parameters() -> frozenset[str] | None:
    """The keyword arguments the installed SDK's ``chat.completions.create`` takes
    (``extra_body``, ``extra_headers``, ``extra_query`` and ``timeout`` included);
    None if it takes any (then no name can be refused)."""
    from openai.resources.chat.completions import AsyncCompletions  # see _value_problem

    parameters = inspect.signature(AsyncCompletions.create).parameters.values()
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None  # pragma: no cover - not so in the SDKs fanout supports
    return frozenset(p.name for p in parameters if p.kind is inspect.Parameter.KEYWORD_ONLY)


def _number(value: object) -> float | None:
    """``value`` as a finite number; None if it is not one."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def _value_problem(name: str, value: object) -> str | None:
    # The SDK is imported when first needed, not with this module: importing it this
    # early in ``import fanout`` (from the models) made the import 80 ms slower.
    import openai

    if value is None or isinstance(value, (openai.NotGiven, openai.Omit)):
        return None  # the SDK's "not given": nothing is sent
    is_int = isinstance(value, int) and not isinstance(value, bool)
    number = _number(value)
    if name == "model" and not (isinstance(value, str) and value.strip()):
        return f"model must be a model's name (a str), got {value!r}"
    if name in _POSITIVE_INTS and not (is_int and number is not None and number > 0):
        return f"{name} must be a positive int, got {value!r}"
    if name in _NON_NEGATIVE and (number is None or number < 0):
        return f"{name} must be a number >= 0, got {value!r}"
    if name in _NUMBERS and number is None:
        return f"{name} must be a number, got {value!r}"
    if name in _INTS and not is_int:
        return f"{name} must be an int, got {value!r}"
    if name in _MAPPINGS and not isinstance(value, Mapping):
        return f"{name} must be a dict, got {type(value).__name__}"
    return None


def params_problem(params: Mapping[str, Any], *, options: Iterable[str] = ()) -> str | None:
    """What is wrong with these ``create()`` parameters, in one sentence; None if
    nothing that can be seen without sending them.

    ``options``: the other keyword arguments the caller takes (fanout's own), which
    are offered as corrections of a misspelt name too."""
    for name in params:
        if name in RESERVED:
            return f"{name}= cannot be passed: {RESERVED[name]}"
    known = create_parameters()
    if known is not None:
        for name in params:
            if name not in known:
                return _unknown(name, known, frozenset(options))
    for name, value in params.items():
        problem = _value_problem(name, value)
        if problem is not None:
            return problem
    return None


def _unknown(name: str, known: frozenset[str], options: frozenset[str]) -> str:
    what = "neither an option of fanout nor a parameter" if options else "not a parameter"
    message = f"unknown keyword argument {name!r}: {what} of chat.completions.create"
    import difflib  # only when a name is wrong

    close = difflib.get_close_matches(name, sorted(known | options), n=1)
    if close:
        message += f" (did you mean {close[0]!r}?)"
    return message + "; pass what an endpoint adds to the API in extra_body={...}"
