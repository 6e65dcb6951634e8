"""Do a merged answer and a split answer of the same question say the same thing?

The merge check (``Policy.merge_agreement``) asks a few questions both ways and
compares the answers with :func:`answers_agree`. The judge is lexical, for short
free-text answers, and errs towards "disagree" where it cannot tell:

* both texts are normalised: Unicode NFKC, lower case, punctuation dropped, number
  words up to twenty written as digits, and a small set of function words ("the",
  "is", "of", ...) and answer preambles ("the answer is") removed;
* an empty answer agrees with nothing;
* two short answers (at most :data:`SHORT_WORDS` content words each) agree when the
  content words of one are all among those of the other ("Paris" and "The capital
  of France is Paris." agree; "Paris" and "Berlin" do not). Given the question, its
  own words are set aside first where either answer says more than them: an answer
  that only repeats the question ("Japan" to "What is the capital of Japan?", a
  small model's merged slip) agrees with nothing that says more ("The capital of
  Japan is Tokyo."); where neither says more ("The sun" and "sun" to "Which is
  larger, the sun or the moon?"), they are compared whole;
* longer answers agree when their content words overlap by at least
  :data:`LONG_OVERLAP` (Jaccard): a loose bar, since two right answers of a paragraph
  rarely share their words. Merging is rarely chosen for long answers anyway.

A merged answer that agrees with another question's split answer and not with its own
is counted as *misattributed*: the merged reply answered the wrong question (judged
without the questions: a doubt counts as a misattribution, which no number of agreeing
checks outweighs).
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from ..core.config import MERGE_CHECK_MIN, MERGE_CHECK_SAMPLE

__all__ = [
    "LONG_OVERLAP",
    "SHORT_WORDS",
    "CheckResult",
    "agreement_too_low",
    "answers_agree",
    "check_sample",
    "compare",
    "content_words",
    "established",
    "still_to_check",
]

SHORT_WORDS = 12
LONG_OVERLAP = 0.3

_NUMBERS = {
    "zero": "0", "none": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5",
    "six": "6", "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11",
    "twelve": "12", "thirteen": "13", "fourteen": "14", "fifteen": "15", "sixteen": "16",
    "seventeen": "17", "eighteen": "18", "nineteen": "19", "twenty": "20",
}  # fmt: skip
_FUNCTION_WORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "it",
        "its",
        "it's",
        "this",
        "that",
        "these",
        "those",
        "of",
        "in",
        "on",
        "at",
        "to",
        "for",
        "and",
        "or",
        "by",
        "with",
        "as",
        "from",
        "answer",
        "answers",
        "question",
        "questions",
        "i",
        "think",
        "my",
        "our",
        "your",
        "there",
        "has",
        "have",
        "had",
        "do",
        "does",
        "did",
        "so",
        "very",
        "about",
        "approximately",
        "around",
        "roughly",
    ]
)
_WORD = re.compile(r"\w+", re.UNICODE)


def content_words(text: str) -> list[str]:
    """The words of ``text`` that carry its meaning, normalised (see the module doc)."""
    text = unicodedata.normalize("NFKC", text).lower()
    words = []
    for word in _WORD.findall(text):
        word = _NUMBERS.get(word, word)
        if word not in _FUNCTION_WORDS:
            words.append(word)
    return words


def answers_agree(a: str, b: str, question: str | None = None) -> bool:
    """Whether two answers to one question (``question``, if known) say the same thing
    (see the module doc)."""
    wa, wb = set(content_words(a)), set(content_words(b))
    if not wa or not wb:
        return False
    if len(wa) <= SHORT_WORDS and len(wb) <= SHORT_WORDS:
        if question is not None:
            asked = set(content_words(question))
            if (wa - asked) or (wb - asked):  # one says more than the question's words
                wa, wb = wa - asked, wb - asked
                if not wa or not wb:
                    return False
        return wa <= wb or wb <= wa
    return len(wa & wb) / len(wa | wb) >= LONG_OVERLAP


@dataclass(frozen=True)
class CheckResult:
    """What one merge check found: answers compared, agreeing, and misattributed."""

    compared: int
    agreed: int
    misattributed: int


def compare(
    split: Sequence[str | None],
    merged: Sequence[str | None],
    questions: Sequence[str | None] | None = None,
) -> CheckResult:
    """Compare a group's merged answers with its split ones, position by position
    (``questions``: the questions asked, for the judge).

    A position whose split answer failed (None) is not compared; a merged answer that
    is missing (None: the reply did not answer it) is compared and disagrees."""
    asked = list(questions) if questions is not None else [None] * len(split)
    compared = agreed = misattributed = 0
    for i, (own, mine, question) in enumerate(zip(split, merged, asked, strict=True)):
        if own is None:
            continue
        compared += 1
        if mine is not None and answers_agree(own, mine, question):
            agreed += 1
        elif mine is not None and any(
            other is not None and answers_agree(other, mine)
            for j, other in enumerate(split)
            if j != i
        ):
            misattributed += 1
    return CheckResult(compared=compared, agreed=agreed, misattributed=misattributed)


CONFIDENCE = 0.95
"""How sure the merge checks must be (one-sided) before spot checks thin out."""
CONFIDENCE_Z = 1.645
"""The normal quantile of :data:`CONFIDENCE`, one-sided."""


def established(counts: tuple[int, int, int] | None, threshold: float) -> bool:
    """Whether the merge checks so far (``(compared, agreed, misattributed)``) show, at
    95 % one-sided confidence, that merged answers agree with split ones at least
    ``threshold`` of the time, and none was ever another question's answer: the lower
    Wilson bound of the agreement rate is at least ``threshold``. With every answer
    agreeing that takes 9 comparisons at 0.75, 16 at 0.85, 25 at 0.9."""
    if counts is None:
        return False
    compared, agreed, misattributed = counts
    if compared <= 0 or misattributed:
        return False
    z2 = CONFIDENCE_Z * CONFIDENCE_Z
    p = agreed / compared
    centre = p + z2 / (2 * compared)
    spread = CONFIDENCE_Z * math.sqrt(p * (1 - p) / compared + z2 / (4 * compared * compared))
    return (centre - spread) / (1 + z2 / compared) >= threshold


def still_to_check(
    counts: tuple[int, int, int] | None, threshold: float, *, most: int = 64
) -> int | None:
    """How many more agreeing comparisons would make the checks ``established``: 0 if
    they are, None if no number up to ``most`` would (a misattribution seen, or too
    many disagreements)."""
    compared, agreed, wrong = counts if counts is not None else (0, 0, 0)
    for more in range(most + 1):
        if established((compared + more, agreed + more, wrong), threshold):
            return more
    return None


def agreement_too_low(known: tuple[int, int, int] | None, threshold: float) -> bool:
    """Whether the merge checks so far (``(compared, agreed, misattributed)``) say that
    merging answers badly here: at least ``MERGE_CHECK_MIN`` compared, and fewer than
    ``threshold`` of them agreed."""
    return known is not None and known[0] >= MERGE_CHECK_MIN and known[1] < threshold * known[0]


def check_sample(group_size: int, *, more: bool) -> int:
    """How many questions of a first merge check's group are also asked alone: never all
    of it, so that at least one question takes its merged answer if the sample agreed
    (the check then costs fewer requests than splitting the group would). A call with
    more merged groups to come checks up to ``MERGE_CHECK_SAMPLE`` (enough to decide
    for them); a call that is one merged group, about half of it."""
    wanted = MERGE_CHECK_SAMPLE if more else (group_size + 1) // 2
    return max(1, min(group_size - 1, wanted))
