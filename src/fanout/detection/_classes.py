"""The shapes of what detection knows about a language: ``Latin`` for languages read
word by word, ``Cjk`` for Chinese, Japanese and Korean, read with patterns."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Cjk", "Latin", "word_set"]


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


@dataclass(frozen=True)
class Latin:
    code: str
    function: frozenset[str]
    """Closed-class words: never an antecedent, never a noun a determiner points at."""
    pronouns: dict[str, str]
    """Form -> kind: ``p`` a person, ``t`` a thing, ``x`` either, ``pl`` plural."""
    possessive: frozenset[str]
    person_wh: frozenset[str]
    """Words that ask for or stand for a person ("who", "someone")."""
    determiners: frozenset[str]
    definite: frozenset[str]
    demonstrative: frozenset[str]
    introducing: frozenset[str]
    """Determiners that introduce something new or ask for it ("a", "which")."""
    auxiliaries: frozenset[str]
    boundaries: frozenset[str]
    """Conjunctions that start a new clause."""
    expletive: re.Pattern[str]
    """Dummy pronouns that point at nothing."""
    demo_pronoun: re.Pattern[str]
    """A demonstrative that stands alone ("Is that true?")."""
    generic: frozenset[str]
    """Nouns that, after a definite determiner, name an earlier answer."""
    restrictive: frozenset[str]
    """Words after such a noun that make it self-contained ("the name of ...")."""
    ellipsis: re.Pattern[str]
    """A part that opens without a predicate of its own ("And of Argentina?")."""
    frame_whole: re.Pattern[str]
    """An instruction over the whole list: rank, compare, choose among, the same answer."""
    frame_work: re.Pattern[str]
    """An instruction to make one work from the items ("Write a story in three parts")."""
    distributive: re.Pattern[str]
    """Words that make an instruction apply to each item on its own."""

    def stem(self, word: str) -> str:
        w = word.lower()
        if self.code == "en":
            if w.endswith("ies") and len(w) > 4:
                return w[:-3] + "y"
            if w.endswith(("ches", "shes", "xes", "sses")):
                return w[:-2]
            return w[:-1] if w.endswith("s") and not w.endswith("ss") and len(w) > 3 else w
        if self.code == "de":
            for end in ("en", "er", "es", "e", "n", "s"):
                if w.endswith(end) and len(w) - len(end) >= 4:
                    return w[: -len(end)]
            return w
        if self.code == "es" and w.endswith("es") and len(w) > 4 and w[-3] not in "aeiou":
            return w[:-2]
        if self.code in ("ru", "tr"):
            return w[:5]  # case and possessive endings
        if self.code == "ar":
            return w[2:] if w.startswith("ال") and len(w) > 4 else w
        if self.code in ("it", "pt"):
            return w[:-1] if len(w) > 4 and w[-1] in "aeiouis" else w
        return w[:-1] if w.endswith(("s", "x")) and len(w) > 3 else w


@dataclass(frozen=True)
class Cjk:
    code: str
    person: re.Pattern[str]
    """Personal pronouns (and possessive forms) for people."""
    thing: re.Pattern[str]
    """Pronouns and demonstratives for things, places, earlier answers."""
    boundary: re.Pattern[str]
    person_antecedent: re.Pattern[str]
    thing_antecedent: re.Pattern[str]
    introducing: re.Pattern[str]
    ellipsis: re.Pattern[str]
    zero_subject: re.Pattern[str] | None
    """A question with nothing it is about (the subject left to the part before)."""
    frame_whole: re.Pattern[str]
    frame_work: re.Pattern[str]
    distributive: re.Pattern[str]
    all_before: re.Pattern[str]
