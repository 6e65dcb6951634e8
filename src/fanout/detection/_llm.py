"""Asking the model itself how a prompt decomposes (``detector="llm"``).

One cheap call with a JSON-schema structured output. The reply is only trusted if
it is consistent with the prompt: every part must occur in the prompt as written
(whitespace aside), parts must not overlap, and the groups must cover every part
once. Anything else falls back to the rule-based detection.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ._detector import DetectedQuestion, Detection, detect

if TYPE_CHECKING:
    from ..engine.facade import Fanout

__all__ = ["DECOMPOSE_SCHEMA", "detect_with_model"]

DECOMPOSE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "preamble": {"type": "string"},
        "parts": {"type": "array", "items": {"type": "string"}},
        "groups": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
    },
    "required": ["preamble", "parts", "groups"],
    "additionalProperties": False,
}

_INSTRUCTIONS = (
    "Split the user's message below into the independent questions or requests it "
    "contains. Reply with JSON: 'preamble' is shared context or instructions every part "
    "needs (copied verbatim, may be empty); 'parts' are the questions, each copied "
    "verbatim from the message; 'groups' lists the indices of parts that depend on each "
    "other and must be answered together (every index exactly once). A single question, "
    "or one task with several steps or options, is one part.\n\nMESSAGE:\n"
)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _validate(text: str, data: object) -> Detection | None:
    if not isinstance(data, dict):
        return None
    parts, groups, preamble = data.get("parts"), data.get("groups"), data.get("preamble", "")
    if (
        not isinstance(parts, list)
        or not parts
        or not all(isinstance(p, str) and p.strip() for p in parts)
    ):
        return None
    if not isinstance(groups, list) or not isinstance(preamble, str):
        return None
    flat = _norm(text)
    position = 0
    for part in parts:  # verbatim, in order, not overlapping
        found = flat.find(_norm(part), position)
        if found < 0:
            return None
        position = found + len(_norm(part))
    seen = sorted(i for g in groups if isinstance(g, list) for i in g if isinstance(i, int))
    if seen != list(range(len(parts))) or any(not isinstance(g, list) or not g for g in groups):
        return None
    if preamble and _norm(preamble) not in flat:
        return None
    questions = [DetectedQuestion(*_split_marker(p)) for p in parts]
    ordered = sorted((sorted(g) for g in groups), key=lambda g: g[0])
    return Detection(
        text=text,
        preamble=preamble.strip(),
        questions=questions,
        groups=ordered,
        independent=len(ordered) > 1,
        confidence=0.9,
        style="llm",
        reasons=["decomposed by the model"],
    )


_MARKER = re.compile(r"^\s*(\(?\d{1,4}[.)、:]?\)?|[-*•]|Q\d{1,4}[:.])\s+")


def _split_marker(part: str) -> tuple[str, str]:
    m = _MARKER.match(part)
    if m is None:
        return "", part.strip()
    return m.group(1), part[m.end() :].strip()


async def detect_with_model(text: str, fo: Fanout, *, model: str | None = None) -> Detection:
    """Ask the model behind ``fo`` to decompose ``text``; fall back to the rules if
    its answer fails validation or the call fails."""
    rules = detect(text)
    try:
        answers = await fo.ask_many(
            [_INSTRUCTIONS + text],
            model=model,
            policy="split",
            on_error="return",
            response_format={
                "type": "json_schema",
                "json_schema": {
                    "name": "decomposition",
                    "strict": True,
                    "schema": DECOMPOSE_SCHEMA,
                },
            },
            temperature=0,
        )
    except Exception:
        return rules
    answer = answers[0]
    if answer.error is not None or not answer.text:
        return rules
    try:
        data = json.loads(answer.text)
    except ValueError:
        return rules
    return _validate(text, data) or rules
