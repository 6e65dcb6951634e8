"""Asking the model itself how a prompt decomposes (``detector="llm"``).

The rules decide first; only a prompt they are unsure about — its confidence in the
middle band, at least ``MODEL_BAND_LOW`` (0.5) and below ``llm_below`` (0.8), with
several parts or question marks — is sent to the model, as one call with a
JSON-schema structured output (:func:`choose_detection`). The reply is only trusted if
it is consistent with the prompt: every part must occur in the prompt as written
(whitespace aside), parts must not overlap, and the groups must cover every part
once. Anything else falls back to the rule-based detection.

The call is bounded, for it only ever saves work: its reply may run to
:func:`decomposition_cap` tokens (about what a valid reply, the prompt copied into
JSON, needs), it is made once (``DECOMPOSE_RETRY``: no retry, a short deadline), and a
reply cut at the cap, a failed attempt or one past its deadline falls back to the
rules. (A small model asked with no bound repeated itself until its context was full,
and its timed-out attempts were retried: six wrapped calls took 717 s instead of 35.)
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ..core.config import Retry
from ..endpoint.tokens import estimate_text_tokens
from ._detector import DetectedQuestion, Detection, detect

if TYPE_CHECKING:
    from ..core.models import Answer
    from ..engine.facade import Fanout

__all__ = [
    "DECOMPOSE_RETRY",
    "DECOMPOSE_SCHEMA",
    "MODEL_BAND_HIGH",
    "MODEL_BAND_LOW",
    "ask_decomposition",
    "asks_the_model",
    "choose_detection",
    "decomposition_cap",
    "detect_with_model",
    "read_decomposition",
]

MODEL_BAND_LOW = 0.5
"""Below this the rules are sure enough that a prompt is one question: not sent to the
model (no level of ``detect`` is this low today; it bounds the band for levels to come)."""
MODEL_BAND_HIGH = 0.8
"""``wrap``'s default ``llm_below``: at or above it the rules' own decision stands
(lists with a marker per item, one question per line, a single question)."""

DECOMPOSE_TOKENS_PER_PROMPT_TOKEN = 2
DECOMPOSE_EXTRA_TOKENS = 64
DECOMPOSE_MIN_TOKENS = 128
DECOMPOSE_MAX_TOKENS = 1024
"""The decomposition reply's bound (:func:`decomposition_cap`): twice the prompt's
estimated tokens and 64, from 128 to 1024."""

DECOMPOSE_RETRY = Retry(
    max_attempts=1, attempt_timeout="auto", min_attempt_timeout=10.0, attempt_timeout_factor=2.0
)
"""The decomposition call's retry settings: one attempt, never retried (whatever the
``Fanout``'s ``retry``), abandoned past twice what the endpoint model expects of a
reply as long as the cap (never under 10 s; the answers' floor is 30 s, for a slow first
token is no hang, but here waiting only delays the rules' answer, which is at hand)."""

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


def asks_the_model(detection: Detection, below: float = MODEL_BAND_HIGH) -> bool:
    """Whether ``detector="llm"`` sends the prompt to the model: the rules' confidence
    is in the middle band (``MODEL_BAND_LOW`` <= confidence < ``below``) and they saw
    more than one part, or question marks."""
    return MODEL_BAND_LOW <= detection.confidence < below and _could_split(detection)


def _could_split(detection: Detection) -> bool:
    return (
        len(detection.questions) > 1 or detection.text.count("?") + detection.text.count("？") > 1
    )


async def choose_detection(
    text: str,
    fo: Fanout,
    *,
    detector: str,
    model: str | None = None,
    llm_below: float = MODEL_BAND_HIGH,
    max_tokens: int | None = None,
) -> Detection:
    """The detection ``wrap`` acts on: the rules' (``detector="rules"``, or a prompt
    outside the band), else the model's decomposition if it validates, else the rules'."""
    rules = detect(text)
    if detector != "llm" or not asks_the_model(rules, llm_below):
        return rules
    return await detect_with_model(text, fo, model=model, rules=rules, max_tokens=max_tokens)


async def detect_with_model(
    text: str,
    fo: Fanout,
    *,
    model: str | None = None,
    rules: Detection | None = None,
    max_tokens: int | None = None,
) -> Detection:
    """Ask the model behind ``fo`` to decompose ``text``; fall back to the rules if
    its answer fails validation or the call fails. ``rules``: ``detect(text)`` if the
    caller has it; ``max_tokens``: the reply's bound (None: :func:`decomposition_cap`)."""
    rules = detect(text) if rules is None else rules
    reply = await ask_decomposition(text, fo, model=model, max_tokens=max_tokens)
    return read_decomposition(text, reply) or rules


def decomposition_cap(text: str) -> int:
    """The ``max_tokens`` of ``text``'s decomposition request: twice the prompt's
    estimated tokens (``estimate_text_tokens``, the same whatever the model) and 64,
    from 128 to 1024.

    A valid reply copies the prompt's parts into JSON: on SmolLM2's tokenizer (a small
    model's, English-centred: 1.3 of its tokens per estimated token of a prompt, 2.8 at
    most, in Korean), the compact reply of each of the 1,185 prompts of the labelled
    sets that ``detector="llm"`` sends needs at most 2 x the estimate + 63 tokens
    (median 2.2 x the estimate; a reply escaping non-ASCII as ``\\uXXXX`` needs up to
    7 x in Chinese or Korean, and is cut). The floor leaves room for whitespace in a
    short prompt's reply; the ceiling bounds what a looping model costs (about 15 s at
    the endpoint model's prior 15 ms a token): a prompt over about 480 estimated tokens
    (1,900 ASCII characters) may be cut there, and keeps the rules' answer."""
    want = DECOMPOSE_TOKENS_PER_PROMPT_TOKEN * estimate_text_tokens(text) + DECOMPOSE_EXTRA_TOKENS
    return min(DECOMPOSE_MAX_TOKENS, max(DECOMPOSE_MIN_TOKENS, want))


async def ask_decomposition(
    text: str, fo: Fanout, *, model: str | None = None, max_tokens: int | None = None
) -> Answer | None:
    """The model's reply to the decomposition request (None if the call failed), made
    once (``DECOMPOSE_RETRY``) with its reply bound at ``max_tokens`` (None:
    :func:`decomposition_cap`)."""
    try:
        answers = await fo.ask_many(
            [_INSTRUCTIONS + text],
            model=model,
            retry=DECOMPOSE_RETRY,
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
            max_tokens=decomposition_cap(text) if max_tokens is None else max_tokens,
        )
    except Exception:
        return None
    return answers[0]


def read_decomposition(text: str, reply: Answer | None) -> Detection | None:
    """The detection a reply gives, or None if it is no valid decomposition of ``text``."""
    if reply is None or reply.error is not None or not reply.text:
        return None
    try:
        data = json.loads(reply.text)
    except ValueError:
        return None
    return _validate(text, data)
