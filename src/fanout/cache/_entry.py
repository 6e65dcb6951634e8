"""What the response cache keeps of an answer, and how it is written and read.

An entry is a small JSON document: the answer's text, every choice, the finish
reason, the tool calls, how it was obtained (``split`` or ``merged``), the usage
and request ids of the request that got it, and when it was stored. It is read
back whole, validated as a strict pydantic model: anything out of place (not JSON,
another version, a field of the wrong type, an empty answer) is no entry, and the
lookup a miss.
Plain JSON, never pickle: a cache file someone else wrote cannot run code here.
"""

from __future__ import annotations

import json
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

__all__ = ["ENTRY_VERSION", "Entry", "decode", "encode"]

ENTRY_VERSION: Literal[1] = 1


class Entry(BaseModel):
    """A cached answer."""

    model_config = ConfigDict(strict=True, frozen=True, extra="forbid")

    v: Literal[1] = ENTRY_VERSION
    text: str
    choices: list[str] = Field(default_factory=list)
    finish_reason: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    mode: Literal["split", "merged", "batch"] = "split"
    prompt_tokens: int = Field(default=0, ge=0)
    completion_tokens: int = Field(default=0, ge=0)
    request_ids: list[str] = Field(default_factory=list)
    stored_at: float = Field(default_factory=time.time, allow_inf_nan=False)


def encode(entry: Entry) -> bytes:
    return json.dumps(entry.model_dump(mode="json"), separators=(",", ":")).encode("utf-8")


def decode(data: bytes | str, *, ttl_s: float | None = None) -> Entry | None:
    """The entry in ``data``; None if it is not one (or is older than ``ttl_s``)."""
    try:
        entry = Entry.model_validate(json.loads(data))
    except (ValueError, TypeError, RecursionError, ValidationError):
        return None
    if not entry.text.strip() and not entry.tool_calls:
        return None  # an empty reply is no answer (nor was one ever kept: a tampered entry)
    if ttl_s is not None and time.time() - entry.stored_at > ttl_s:
        return None
    return entry
