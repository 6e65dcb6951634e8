"""Usage as a server reported it, read defensively: counts that can be added up."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field, TypeAdapter, ValidationError

if TYPE_CHECKING:  # imported when usage is read, not with fanout (see wrapper/_client.py)
    from openai.types import CompletionUsage

__all__ = ["clean_usage"]

_MAX_COUNT = 10**9  # no request uses a billion tokens: a larger count is garbage
_COUNT = TypeAdapter(Annotated[int, Field(ge=0, le=_MAX_COUNT)])


def _count(value: object) -> int | None:
    """A token count: a non-negative integer, or a string of one; else None."""
    if type(value) is int and 0 <= value <= _MAX_COUNT:  # the usual case, without pydantic
        return value
    if isinstance(value, bool):
        return None
    try:
        count: int = _COUNT.validate_python(value)
    except ValidationError:
        return None
    return count


def _field(owner: object, name: str) -> object:
    if isinstance(owner, Mapping):
        return owner.get(name)
    return getattr(owner, name, None)


@functools.cache
def _usage_types() -> tuple[type[CompletionUsage], Any, Any]:
    """The SDK's usage models, imported on first use (an import statement per reply
    cost more than the rest of the cleaning)."""
    from openai.types import CompletionUsage
    from openai.types.completion_usage import CompletionTokensDetails, PromptTokensDetails

    return CompletionUsage, CompletionTokensDetails, PromptTokensDetails


def clean_usage(usage: object) -> CompletionUsage | None:
    """The usage a reply reported, as counts that can be added up: None (unreported)
    when its prompt or completion count is missing, negative, or not a number; a bad
    cached or reasoning count is left out. A string of digits is read as its number."""
    usage_model, completion_details, prompt_details = _usage_types()
    if usage is None:
        return None
    prompt = _count(_field(usage, "prompt_tokens"))
    completion = _count(_field(usage, "completion_tokens"))
    if prompt is None or completion is None:
        return None
    cached = _count(_field(_field(usage, "prompt_tokens_details"), "cached_tokens"))
    reasoning = _count(_field(_field(usage, "completion_tokens_details"), "reasoning_tokens"))
    return usage_model(
        prompt_tokens=prompt,
        completion_tokens=completion,
        total_tokens=prompt + completion,
        prompt_tokens_details=(
            prompt_details(cached_tokens=min(cached, prompt)) if cached else None
        ),
        completion_tokens_details=(
            completion_details(reasoning_tokens=reasoning) if reasoning else None
        ),
    )
