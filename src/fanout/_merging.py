"""Merged requests: several questions in one prompt, and the reply split back into answers.

Each question gets a tag ``[<nonce>-<n>]``, where the nonce is random per request
and checked not to occur in any question. The reply is read back by tag only:

* JSON format: a JSON-schema structured output with one string property per tag.
  Values are read by key, so nothing inside an answer can move another one.
* Text format: sections that start, at the beginning of a line, with a tag. A
  question or an answer cannot forge a section: it does not know the nonce.

A question's own lines after the first are indented in the prompt, so no line
of a question can start a section there either. Answers that are missing,
empty, duplicated or cut short by ``max_tokens`` are not returned: the engine
asks those questions again on their own.

Usage of a merged request is apportioned by a fixed rule (see :func:`apportion`),
so the totals over its answers are exactly what the API reported.
"""

from __future__ import annotations

import json
import re
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["MergedRequest", "apportion", "build_merged", "parse_merged"]

_INDENT = "    "


@dataclass(frozen=True)
class MergedRequest:
    """What to send for a group of questions, and how to read the reply."""

    tags: list[str]
    format: str  # "json" or "text"
    user_message: str
    response_format: dict[str, Any] | None


def _nonce(questions: Sequence[str]) -> str:
    while True:
        nonce = secrets.token_hex(3)
        if not any(nonce in q for q in questions):
            return nonce


def _indent_continuation(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join([lines[0], *[_INDENT + line if line.strip() else "" for line in lines[1:]]])


def build_merged(questions: Sequence[str], fmt: str, *, nonce: str | None = None) -> MergedRequest:
    """The user message (and response format) asking every question separately."""
    if fmt not in ("json", "text"):
        raise ValueError(f"format must be 'json' or 'text', got {fmt!r}")
    nonce = nonce or _nonce(questions)
    tags = [f"{nonce}-{i + 1}" for i in range(len(questions))]
    listing = "\n".join(
        f"[{tag}] {_indent_continuation(q)}" for tag, q in zip(tags, questions, strict=True)
    )
    k = len(questions)
    if fmt == "json":
        head = (
            f"Answer each of the following {k} questions separately and completely, as if "
            "each had been asked on its own. Reply with a JSON object whose keys are the "
            "question tags (without brackets) and whose values are the answers."
        )
        schema = {
            "type": "object",
            "properties": {tag: {"type": "string"} for tag in tags},
            "required": tags,
            "additionalProperties": False,
        }
        response_format: dict[str, Any] | None = {
            "type": "json_schema",
            "json_schema": {"name": "answers", "strict": True, "schema": schema},
        }
    else:
        head = (
            f"Answer each of the following {k} questions separately and completely, as if "
            "each had been asked on its own. Start each answer on a new line with the "
            "question's tag exactly as given, in square brackets, then the answer. Do not "
            "repeat the questions."
        )
        response_format = None
    return MergedRequest(
        tags=tags, format=fmt, user_message=f"{head}\n\n{listing}", response_format=response_format
    )


_JSON_PAIR = re.compile(r'"((?:[^"\\]|\\.)*)"\s*:\s*"((?:[^"\\]|\\.)*)"(?=\s*[,}])', re.DOTALL)


def parse_merged(content: str | None, request: MergedRequest, *, truncated: bool) -> dict[str, str]:
    """Answers found in a merged reply, by tag. Only complete, non-empty answers
    appear; the caller re-asks every tag that is missing."""
    if not content:
        return {}
    wanted = set(request.tags)
    if request.format == "json":
        return _parse_json(content, wanted)
    return _parse_text(content, request.tags, truncated=truncated)


def _parse_json(content: str, wanted: set[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    try:
        data = json.loads(content)
    except ValueError:
        data = None
    if isinstance(data, dict):
        for key, value in data.items():
            if key in wanted and isinstance(value, str) and value.strip():
                found[key] = value.strip()
        return found
    # Not one JSON object (cut short by max_tokens, or noise around it): keep the
    # pairs that are complete. A value is complete only if its closing quote is
    # followed by "," or "}", so a half-written answer is never taken.
    seen: dict[str, int] = {}
    for match in _JSON_PAIR.finditer(content):
        try:
            key = json.loads(f'"{match.group(1)}"')
            value = json.loads(f'"{match.group(2)}"')
        except ValueError:
            continue
        seen[key] = seen.get(key, 0) + 1
        if key in wanted and value.strip():
            found[key] = value.strip()
    return {k: v for k, v in found.items() if seen.get(k) == 1}


def _parse_text(content: str, tags: list[str], *, truncated: bool) -> dict[str, str]:
    pattern = re.compile(
        r"^[ \t]*\[(" + "|".join(re.escape(t) for t in tags) + r")\][ \t]*", re.MULTILINE
    )
    matches = list(pattern.finditer(content))
    counts: dict[str, int] = {}
    for m in matches:
        counts[m.group(1)] = counts.get(m.group(1), 0) + 1
    found: dict[str, str] = {}
    for i, m in enumerate(matches):
        tag = m.group(1)
        if counts[tag] != 1:
            continue  # a tag seen twice: which one is the answer? Ask again.
        end = matches[i + 1].start() if i + 1 < len(matches) else len(content)
        if truncated and i + 1 == len(matches):
            continue  # the last section was cut by max_tokens
        text = content[m.end() : end].strip()
        if text:
            found[tag] = text
    return found


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` with whole numbers that add up to
    ``total`` exactly (largest remainder); equal shares when every weight is 0."""
    n = len(weights)
    if n == 0:
        return []
    if sum(weights) <= 0:
        weights = [1] * n
    whole = sum(weights)
    raw = [total * w / whole for w in weights]
    shares = [int(r) for r in raw]
    short = total - sum(shares)
    order = sorted(range(n), key=lambda i: (raw[i] - shares[i], -i), reverse=True)
    for i in order[:short]:
        shares[i] += 1
    return shares
