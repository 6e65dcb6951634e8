"""What the simulated model reads and writes: its tokenizer and its deterministic answers.

The simulator's tokenizer is deliberately simple and exact: a token is a run of
letters or digits, one CJK character, or one other non-space character. Every
count the server reports (``usage``, rate-limit charges) comes from this one
function, so ``usage.completion_tokens == count_tokens(content)`` always holds.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = [
    "TOKEN_HINT",
    "answer_for",
    "asks_echo",
    "count_tokens",
    "end_line",
    "render_merged",
    "split_questions",
    "wanted_tokens",
]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W{_CJK}]+|[^\w\s]")

#: ``{{tokens=N}}`` written anywhere in a question sets its answer length.
TOKEN_HINT = re.compile(r"\{\{\s*tokens\s*=\s*(\d+)\s*\}\}")

_VOCAB = [
    "the",
    "model",
    "answers",
    "each",
    "part",
    "with",
    "care",
    "and",
    "the",
    "result",
    "depends",
    "on",
    "context",
    "data",
    "shows",
    "that",
    "batching",
    "helps",
    "when",
    "decode",
    "steps",
    "are",
    "shared",
    "across",
    "many",
    "sequences",
    "so",
    "latency",
    "follows",
    "the",
    "longest",
    "answer",
    "rather",
    "than",
    "their",
    "sum",
    "which",
    "explains",
    "why",
    "independent",
    "questions",
    "should",
    "run",
    "in",
    "parallel",
]


def count_tokens(text: str) -> int:
    """Number of simulator tokens in ``text``."""
    return len(_TOKEN.findall(text))


def wanted_tokens(question: str, default: int | Callable[[str], int]) -> int:
    """Answer length for ``question``: its ``{{tokens=N}}`` hint, else the config."""
    hint = TOKEN_HINT.search(question)
    if hint:
        return int(hint.group(1))
    value = default(question) if callable(default) else default
    return max(0, int(value))


def answer_for(question: str, tokens: int) -> str:
    """The simulator's answer to ``question``: exactly ``tokens`` tokens long.

    It starts with ``ref`` and an 8-hex-digit digest of the question (two tokens)
    so that a reader, or a test, can tell which question an answer belongs to.
    Whitespace does not matter: the digest is taken over the words. A one-token answer
    is ``ref`` and the digest as one word, so that different questions never share an
    answer (a merged reply that gives one answer to two questions answers neither).
    """
    digest = hashlib.sha256(" ".join(question.split()).encode()).hexdigest()
    if tokens == 1:
        return f"ref{digest[:8]}"
    words = ["ref", digest[:8]]
    seed = int(digest[8:16], 16)
    i = 0
    while len(words) < tokens:
        words.append(_VOCAB[(seed + i * 7) % len(_VOCAB)])
        i += 1
    return " ".join(words[:tokens])


# --- prompts that hold several questions ------------------------------------------

# A section marker at the very start of a line (indented lines continue the
# question before them): "1." "1)" "(1)" "Q1:" "[q1]" "Question 1:"
_MARKER = re.compile(
    r"^(?P<marker>\(\d{1,3}\)|\d{1,3}[.)]|Q\d{1,3}[:.]|Question \d{1,3}[:.]|\[[A-Za-z0-9_\-]{1,40}\])[ \t]+",
    re.MULTILINE,
)


_END_LINE = re.compile(r"end the reply with the line (\[[A-Za-z0-9_\-]{1,40}\])", re.IGNORECASE)


@dataclass(frozen=True)
class Part:
    """One question found in a merged prompt."""

    marker: str
    text: str


def split_questions(prompt: str) -> list[Part]:
    """The questions an instruction-following model would see in ``prompt``.

    Two or more lines starting with a section marker make a list; the text up to
    the next marker belongs to the question before it. Anything else is one
    question.
    """
    matches = list(_MARKER.finditer(prompt))
    if len(matches) < 2:
        return [Part(marker="", text=prompt.strip())]
    parts: list[Part] = []
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(prompt)
        parts.append(Part(marker=match.group("marker"), text=prompt[match.end() : end].strip()))
    return parts


_ECHO = re.compile(r"first line copied", re.IGNORECASE)


def asks_echo(prompt: str) -> bool:
    """Whether a merged prompt asks each section to start with its question's first
    line copied (fanout's tagged-text format), which the simulator then writes."""
    return _ECHO.search(prompt) is not None


def end_line(prompt: str) -> str | None:
    """The closing line a prompt asks for ("... end the reply with the line [x-end]."),
    which an instruction-following model writes after its last section."""
    match = _END_LINE.search(prompt)
    return match.group(1) if match else None


def render_merged(
    parts: Sequence[Part],
    answers: Sequence[str],
    schema: dict[str, Any] | None,
    *,
    end: str | None = None,
    echo: bool = False,
) -> str:
    """Lay out several answers the way the request asked.

    With a JSON schema whose root is an object: its properties, in order, are
    filled with the answers in order (string properties get the text; an array
    property gets one ``{"id", "answer"}`` object per question). Without one:
    numbered sections that repeat each question's own marker, then the ``end``
    line if the prompt asked for one (see :func:`end_line`). ``echo``: the prompt asked
    for each question's first line copied after its marker (see :func:`asks_echo`): the
    answer goes on the line below it.
    """
    if schema is not None and schema.get("type") == "object":
        props = schema.get("properties") or {}
        keys = list(props)
        if len(keys) == 1 and (props[keys[0]] or {}).get("type") == "array":
            items = [
                {"id": _marker_id(part.marker, i), "answer": answer}
                for i, (part, answer) in enumerate(zip(parts, answers, strict=False))
            ]
            return json.dumps({keys[0]: items}, ensure_ascii=False)
        filled = {key: answers[i] if i < len(answers) else "" for i, key in enumerate(keys)}
        return json.dumps(filled, ensure_ascii=False)
    sections = []
    for i, (part, answer) in enumerate(zip(parts, answers, strict=False)):
        marker = part.marker or f"{i + 1}."
        if echo:
            first = (part.text.splitlines() or [""])[0].strip()
            sections.append(f"{marker} {first}\n{answer}")
        else:
            sections.append(f"{marker} {answer}")
    return "\n\n".join(sections) + (f"\n{end}" if end else "")


def _marker_id(marker: str, index: int) -> str:
    inner = re.sub(r"[^A-Za-z0-9_\-]", "", marker)
    return inner or str(index + 1)
