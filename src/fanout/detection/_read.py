"""Reading one part: the references it holds and what it offers later parts.

Latin-script parts are read word by word (``_read_latin``): a personal pronoun or
possessive with nothing before it in its own part that it could point at (a "who", a
name, a noun phrase before the clause it is in) and that is not a dummy is
*unresolved*; so are a demonstrative standing alone ("Is that true?"), a verb with an
object pronoun attached (tradúcelo, résume-le) and, in Spanish, a question with no
subject (¿Dónde nació?). Definite and demonstrative noun phrases are collected with
their noun, to be matched against what earlier parts introduced ("a city" ... "the
city"). Chinese, Japanese and Korean parts are read with the patterns of
``_detect_lang`` (``_read_cjk``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._lang import Cjk, Latin

__all__ = ["Read", "content_words", "has_topic", "read_cjk", "read_latin", "stands_alone", "words"]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


# A letter of a script written with spaces between words (Devanagari and Arabic vowel
# signs are marks, not word characters, for ``re``), and a word of them.
_LETTER = (
    r"[^\W_\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]|[\u0900-\u0963\u0971-\u097f\u064b-\u065f\u0670]"
)
_LATIN_WORD = re.compile(rf"(?:{_LETTER})+(?:'(?:{_LETTER})+)*")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


_SIMPLE_WORD = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z0-9]+)*")
_NEEDS_MARKS = re.compile(r"[\u0600-\u06ff\u0900-\u097f]")


def words(text: str) -> int:
    """Words in ``text``, in any script (two CJK characters count as one word)."""
    if text.isascii():
        return len(_SIMPLE_WORD.findall(text))
    return len(_LATIN_WORD.findall(text)) + len(_CJK_CHAR.findall(text)) // 2


# Nouns a demonstrative may point at without any earlier part ("this weekend").
_TIME_NOUNS = _set(
    "week weekend year month morning evening night time summer winter spring autumn moment "
    "woche wochenende jahr monat morgen abend mal sommer winter zeit moment "
    "semaine année an mois matin soir fois été hiver moment "
    "semana fin año mes mañana tarde noche vez verano invierno momento"
)
_SUPERLATIVE = re.compile(
    r"(?:est|ste|sten|ster|stes)$|^(?:most|best|worst|first|last|only|next|same|following|above|"
    r"previous|meisten|beste|erste|letzte|premier|première|dernier|dernière|meilleur|meilleure|"
    r"primer|primera|último|última|mejor|peor)$"
)
_FIRST_SECOND_ES = _set(
    "yo tú usted me te mi mis tu tus nos nosotros puedo puedes debo debes quiero quieres tengo "
    "tienes soy eres estoy estás hago haces necesito"
)
_FORMAL_DE = _set("Sie Ihr Ihre Ihren Ihrem Ihrer Ihres Ihnen")
_INTERROGATIVE = _set(
    "what which welche welcher welches welchen welchem quel quelle quels quelles qué cuál"
)
_ASKING_ABOUT = _set("how wie comment cómo como quanto quantos")
_HOW_MUCH = _set("many much viele viel combien cuántos cuántas muchos")
_WH_PERSON = _set("who whom whose wer wen wem wessen qui quién quiénes")
_ES_NEUTER = _set("que mejor peor más menos mismo cual único")
_DEMONSTRATIVE_WORDS = _set(
    "this that these those das dies dieses jenes este esta ese esa estos estas esos esas"
)
# What follows a noun to name it then and there: "the word 'resilience'", "the number: 7".
_NAMED = re.compile(r"\s*(?:['\"“«「‘\x00]|:)")
_TOKEN = re.compile(
    r"(?:[^\W\d_]|[\u0900-\u0963\u0971-\u097f\u064b-\u065f\u0670])+|\d+|[?？!！.。,，;；:：؟،؛।—–]"
)
_PUNCT = frozenset("?？!！.。,，;；:：؟،؛।—–")  # a dash ends a clause as a comma does
_SENTENCE_END = frozenset("?？!！.。:：؟।")


@dataclass(slots=True)
class _Tok:
    text: str
    low: str
    initial: bool
    hyphen: bool
    punct: bool
    start: int


_PLAIN_TOKEN = re.compile(r"[^\W\d_]+|\d+|[?？!！.。,，;；:：؟،؛।—–]")


@functools.lru_cache(maxsize=256)
def _tokens(text: str) -> tuple[_Tok, ...]:
    """The words and punctuation of ``text`` (read once: parts are read several times)."""
    out: list[_Tok] = []
    initial = True
    for m in (_TOKEN if _NEEDS_MARKS.search(text) else _PLAIN_TOKEN).finditer(text):
        w = m.group()
        if w in _PUNCT:
            out.append(_Tok(w, w, False, False, True, m.start()))
            initial = initial or w in _SENTENCE_END
            continue
        hyphen = m.start() > 0 and text[m.start() - 1] == "-"
        out.append(_Tok(w, w.lower(), initial, hyphen, False, m.start()))
        initial = False
    return tuple(out)


@dataclass
class Read:
    """What one part holds that matters for grouping."""

    unresolved: list[tuple[str, str]] = field(default_factory=list)
    """References with nothing in the part to point at: (word, kind)."""
    let_go: list[str] = field(default_factory=list)
    """References judged to point at something earlier in the same part."""
    dummies: list[str] = field(default_factory=list)
    """Pronouns that point at nothing ("is it safe to", "are there", "gibt es")."""
    definite: list[tuple[str, str, bool]] = field(default_factory=list)
    """Definite or demonstrative noun phrases: (phrase, noun stem, demonstrative)."""
    generic: list[str] = field(default_factory=list)
    introduced: set[str] = field(default_factory=set)
    contents: list[str] = field(default_factory=list)
    """Its content words (lowercase)."""
    introduces: bool = False
    person: bool = False
    ellipsis: str = ""
    bare: str = ""
    """A question about "the X" alone ("What are the risks?"): about the part before,
    or about the shared context."""


def _content(lang: Latin, tok: _Tok) -> bool:
    return (
        not tok.punct
        and tok.low not in lang.function
        and len(tok.low) >= 3
        and not tok.low[0].isdigit()
    )


def _has_antecedent(
    lang: Latin, toks: Sequence[_Tok], limit: int, kind: str, *, same_clause: bool, inversion: bool
) -> bool:
    if kind == "pl" and lang.code != "de":
        return any(_plural(lang, toks, j) for j in range(limit))
    for j in range(limit):
        t = toks[j]
        if t.punct or (j and toks[j - 1].low in _ASKING_ABOUT and t.low in _HOW_MUCH):
            continue  # "How many years did its construction take?": "many years" is asked for
        if t.low in lang.person_wh and not (same_clause and t.low in _WH_PERSON):
            return True  # "Who is her enemy?": the one asked for is not who "her" is
        if (
            t.text[0].isupper()
            and not t.initial
            and t.text != "I"
            and t.low not in lang.pronouns
            and not (lang.code == "de" and t.text in _FORMAL_DE)
        ):
            return True
        if (
            t.low in lang.determiners
            and not (
                same_clause and t.low in _INTERROGATIVE
            )  # 'Quelle fut sa ...': asked, not owner
            and j + 1 < limit
            and _content(lang, toks[j + 1])
        ):
            return True
        if kind == "p" or inversion:
            continue
        if j > 0 and toks[j - 1].low in lang.auxiliaries and _content(lang, t):
            return True
        if (
            not same_clause
            and not t.initial
            and _content(lang, t)
            and len(t.low) >= 4
            and t.low not in _ASKING_VERBS
        ):
            return True
    return False


# Verbs that ask or know, never what a pronoun after them stands for ("how do I know
# when it's hungry", "tell me how much it costs"): the "it" is the part before's.
_ASKING_VERBS = _set(
    "know tell sure wonder wondering think check figure find decide understand remember guess "
    "mean explain show help want need like recommend suggest wissen sagen savoir dire saber "
    "decir sapere dire saber dizer знать скажи"
)


def _plural(lang: Latin, toks: Sequence[_Tok], j: int) -> bool:
    """Something plural for "they" or "these" to point at: a plural noun, or two joined."""
    t = toks[j]
    if t.low in ("and", "et", "y", "und"):
        return 0 < j < len(toks) - 1 and not toks[j - 1].punct and not toks[j + 1].punct
    if t.punct or t.low in lang.function or t.low in lang.pronouns or len(t.low) < 4:
        return False
    return t.low.endswith(("s", "x")) and not t.low.endswith("ss")


def read_latin(lang: Latin, text: str, full: bool) -> Read:
    """What a part holds; with ``full`` unset, only what later parts may point at."""
    read = Read()
    toks = _tokens(text)
    expletives = _Expletives(lang, text)
    boundary = -1
    for k, t in enumerate(toks):
        if t.punct or t.low in lang.boundaries:
            boundary = k
            continue
        _read_names(lang, toks, k, read)
        if full:
            _read_reference(lang, text, toks, k, boundary, read, expletives)
    if full:
        _read_demonstrative_pronouns(lang, text, toks, read, expletives)
        _read_ellipsis(lang, text, toks, read)
    return read


class _Expletives:
    """Where a part's dummy pronouns are ("it is raining"): found when first asked."""

    def __init__(self, lang: Latin, text: str) -> None:
        self._lang = lang
        self._text = text
        self._spans: list[tuple[int, int]] | None = None

    def hold(self, at: int) -> bool:
        if self._spans is None:
            self._spans = [
                (m.start(), m.end())
                for m in self._lang.expletive.finditer(self._text)
                if not (m.group().lower().endswith("to") and _GAP.match(self._text, m.end()))
            ]
        return any(a <= at < b for a, b in self._spans)


# "when it's ready to bake with", "is it safe to eat?": the "to" clause lacks its object,
# which the "it" is (not a dummy, as in "is it safe to drink tap water").
_GAP = re.compile(
    r"\s+[^\W\d_]+(?:\s+(?:with|in|on|for|at|about|from|into|out|up))?\s*(?:[?.!,;]|$)",
    re.IGNORECASE,
)


def _read_names(lang: Latin, toks: tuple[_Tok, ...], k: int, read: Read) -> None:
    """What token ``k`` tells of what the part is about and names: a content word, a
    person or name, what it introduces (later parts may point at those)."""
    t = toks[k]
    low = t.low
    if low not in lang.function and len(low) >= 3:
        read.contents.append(low)
    if low in lang.person_wh:
        read.person = read.introduces = True
    elif t.text[0].isupper() and not t.initial and t.text != "I":
        read.person = True
    if low in lang.introducing:
        for n, tok in enumerate(toks[k + 1 : k + 3]):
            if not _content(lang, tok):
                break
            read.introduced.add(lang.stem(tok.low))
            read.introduces = True
            if low in _INTERROGATIVE or n == 1:
                break


def _addressed(toks: Sequence[_Tok], k: int) -> bool:
    """Whether German "ihr" at ``k`` is the plural "you": right after a verb in "-t" that
    opens its clause ("Habt ihr ...?", "Und bietet ihr ...?"), or opening the clause
    before one ("Ihr habt ...")."""
    before = toks[k - 1] if k else None
    if before is not None and not before.punct and before.low.endswith("t"):
        opener = toks[k - 2] if k >= 2 else None
        return opener is None or opener.punct or opener.low in ("und", "oder", "aber")
    after = toks[k + 1] if k + 1 < len(toks) else None
    return (
        (before is None or before.punct)
        and after is not None
        and after.text.islower()
        and after.low.endswith("t")
    )


# "This" that points at the clause after it, not at the part before: Hindi "यह बताइए
# कि ..." ("tell this: that ..."), Hinglish "ye batao ki ...".
_CATAPHORIC = {"hi": _set("यह ये"), "hi-en": _set("ye yeh yah")}
_THAT_FOLLOWS = _set("कि ki")


def _read_reference(
    lang: Latin,
    text: str,
    toks: tuple[_Tok, ...],
    k: int,
    boundary: int,
    read: Read,
    expletives: _Expletives,
) -> None:
    """Whether token ``k`` points outside the part: a pronoun or possessive (resolved
    in the part or not), a clitic, a determiner and its noun."""
    t = toks[k]
    low = t.low
    kind = lang.pronouns.get(low)
    if kind is not None and not (lang.code == "de" and t.text in _FORMAL_DE and not t.initial):
        if (
            lang.code == "es"
            and low == "lo"
            and k + 1 < len(toks)
            and toks[k + 1].low in _ES_NEUTER
        ):
            return  # "lo mejor", "lo que": the neuter article
        if expletives.hold(t.start):
            read.dummies.append(t.text)
            return
        if lang.code == "de" and low == "ihr" and _addressed(toks, k):
            return  # "Bietet ihr auch Glasfaser an?": "you" (plural), the ones asked
        if low in _CATAPHORIC.get(lang.code, ()) and any(
            tok.low in _THAT_FOLLOWS for tok in toks[k + 1 : k + 4]
        ):
            return  # "यह भी बताइए कि ...", "ye batao ki ...": "this" is the clause that follows
        possessive = low in lang.possessive
        inversion = lang.code == "fr" and t.hyphen and kind in ("x", "pl")
        same_clause = possessive or inversion
        limit = k if same_clause else max(boundary, 0)
        if _has_antecedent(lang, toks, limit, kind, same_clause=same_clause, inversion=inversion):
            read.let_go.append(t.text)
        else:
            read.unresolved.append((t.text, kind))
        return
    if (
        (lang.code == "es" and not t.text[0].isupper() and _enclitic(low))
        or (t.hyphen and low in _HYPHEN_CLITICS.get(lang.code, ()))
        or (lang.code == "ar" and _arabic_clitic(low))
    ):
        read.unresolved.append((t.text, "t"))
        return
    if low in lang.definite or low in lang.demonstrative:
        _read_determiner(lang, text, toks, k, read)


def _read_determiner(lang: Latin, text: str, toks: tuple[_Tok, ...], k: int, read: Read) -> None:
    """A determiner and the noun after it: a generic phrase ("the answer"), or a
    definite one that may name what an earlier part introduced."""
    t = toks[k]
    low = t.low
    noun = _noun_after(lang, toks, k)
    if noun is None:
        return
    n, tok = noun
    if tok.low in lang.generic and n == k + 1:
        after = toks[n + 1].low if n + 1 < len(toks) else ""
        named = _NAMED.match(text, tok.start + len(tok.text)) is not None
        if after not in lang.restrictive and not named:
            read.generic.append(f"{t.text} {tok.text}")
            return
    demonstrative = low in lang.demonstrative and tok.low not in _TIME_NOUNS
    if lang.code == "en" and low == "that":
        demonstrative = False  # also a relative pronoun: only a matching noun counts
    read.definite.append((f"{t.text} {tok.text}", lang.stem(tok.low), demonstrative))


def _read_demonstrative_pronouns(
    lang: Latin, text: str, toks: tuple[_Tok, ...], read: Read, expletives: _Expletives
) -> None:
    """ "this", "these", "that" standing alone: resolved in their clause or not."""
    if not any(t.low in _DEMONSTRATIVE_WORDS for t in toks):
        return
    for m in lang.demo_pronoun.finditer(text):
        if expletives.hold(m.start()):
            continue
        k = next((i for i, t in enumerate(toks) if t.start >= m.end()), len(toks))
        limit = max(
            (i for i in range(k) if toks[i].punct or toks[i].low in lang.boundaries), default=0
        )
        kind = "pl" if m.group().strip().lower() in ("these", "those") else "t"
        if _has_antecedent(lang, toks, limit, kind, same_clause=False, inversion=False):
            read.let_go.append(m.group().strip())
        else:
            read.unresolved.append((m.group().strip(), kind))


def _read_ellipsis(lang: Latin, text: str, toks: tuple[_Tok, ...], read: Read) -> None:
    """A short part that leaves out what it is about ("And in France?"), a subject the
    language drops, or (English) a bare definite phrase."""
    ellipsis = lang.ellipsis.search(text)
    if ellipsis is not None and words(text) < 7 and not stands_alone(text, ellipsis.end(), lang):
        read.ellipsis = ellipsis.group().strip()
    if read.unresolved or read.ellipsis:
        return
    if lang.code in _PRO_DROP:
        read.ellipsis = _zero_subject(lang, toks)
    elif lang.code == "tr":
        read.ellipsis = _turkish_zero_subject(lang, toks)
    elif lang.code == "ar":
        read.ellipsis = _arabic_zero_subject(toks)
    if not read.ellipsis and lang.code == "en":
        read.bare = _bare_definite(lang, toks)


_HYPHEN_CLITICS = {
    "fr": ("le", "la", "les", "lui", "leur", "en", "y"),
    "pt": ("lo", "la", "los", "las", "o", "a", "os", "as", "lhe", "lhes"),
}
_AR_CLITIC = re.compile(
    r"^(?!ال|وال|بال|فال|لل|كال)[^\W\d_]{2,}(?:ها|هما|هم|هن|ته)$|^(?!ال|وال|بال|فال|لل|كال)[^\W\d_]{2,}[^\Wياة]ه$"
)
_AR_NOT_CLITIC = _set("فواكه وجه شبه فقه تشابه إله نزهه مكروه")


def _arabic_clitic(word: str) -> bool:
    """عمره, عاصمتها, زرتها: a word with an object or possessive pronoun attached."""
    return word not in _AR_NOT_CLITIC and _AR_CLITIC.match(word) is not None


def _arabic_zero_subject(toks: Sequence[_Tok]) -> str:
    """متى تأسست؟: a question with no noun of its own (nouns take the article ال)."""
    if not toks or toks[-1].low not in ("?", "？", "؟") or sum(not t.punct for t in toks) > 3:
        return ""  # longer questions name things without ال ("ارتفاع برج خليفة")
    for t in toks:
        if t.punct:
            continue
        if t.low.isdigit() or t.low.isascii() or re.match(r"^(?:[وفبلك])?ال|^لل", t.low):
            return ""
    return "a question with no noun of its own"


_TR_POSSESSIVE = re.compile(r"(?:s?[ıiuü]|s?[ıiuü]n[ıiuüa]?)$")


def _turkish_zero_subject(lang: Latin, toks: Sequence[_Tok]) -> str:
    """Nüfusu ne kadar?: "its population" with no owner of its own."""
    if not toks or toks[-1].low not in ("?", "？"):
        return ""
    content = [t for t in toks if _content(lang, t)]
    if any(t.low.isdigit() or (t.text[0].isupper() and not t.initial) for t in toks):
        return ""
    if not content or (len(content) == 1 and _TR_POSSESSIVE.search(content[0].low)):
        return "a question about its ... with no owner"
    return ""


def _bare_definite(lang: Latin, toks: Sequence[_Tok]) -> str:
    """ "What are the risks?": a question whose only subject is a definite noun with
    nothing to say which one (English only: other languages put an article before
    abstract nouns, "¿Qué es la gravedad?")."""
    if len(toks) < 3 or toks[-1].low not in ("?", "？"):
        return ""
    content = [k for k, t in enumerate(toks) if _content(lang, t)]
    if len(content) != 1 or any(t.low.isdigit() for t in toks):
        return ""
    k = content[0]
    t = toks[k]
    if t.text[0].isupper() and not t.initial and lang.code != "de":
        return ""
    if k == 0 or toks[k - 1].low not in lang.definite or k + 2 < len(toks):
        return ""
    return f"{toks[k - 1].text} {t.text} alone"


_FULL_QUESTION = re.compile(
    r"^\W*(?!(?:what|how)\s+about\b)(?:what|why|how|who|whom|where|when|which|is|are|was|were|do|"
    r"does|did|can|could|should|would|will|wie|was|warum|wer|wann|wo|welche\w*|ist|sind|kann|"
    r"quel\w*|qu|qui|pourquoi|comment|où|quand|combien|qué|cuál\w*|cómo|dónde|cuándo|quién\w*|"
    r"por\s+qué|cuánt\w*|che|cosa|chi|come|dove|quando|perché|qual\w*|quant\w*|o\s+que|que|quem|"
    r"como|onde|por\s+que|что|кто|как|где|когда|почему|зачем|сколько|как\w+|куда|откуда|ما|ماذا|"
    r"لماذا|كيف|من|متى|أين|كم|هل|أي)(?=\s|$|[^\w\u064b-\u065f])",
    re.IGNORECASE,
)
# Where the question word is not first (Turkish, Hindi, Hinglish put it before the verb).
_WH_ANYWHERE = re.compile(
    r"(?<!\w)(?:ne|neden|niçin|nasıl|kim\w*|nere\w*|hangi\w*|kaç|nedir|m[ıiuü]|क्या|क्यों|कैसे|कौन|"
    r"कब|कहाँ|कहां|कितन\S*|किसने|kya|kyu|kyun|kaise|kaun|kab|kahan|kitn\w*|kisne|konsa|kaunsa)(?!\w)",
    re.IGNORECASE,
)
_VERB_LATE = frozenset(("tr", "hi", "hi-en"))
_CJK_ASKS = re.compile(
    r"谁|什么|哪|怎么|多少|为什么|誰|何|どこ|いつ|なぜ|누가|무엇|어디|언제|왜|어떻게"
)
# An indefinite article and a noun: something the question brings in itself.
_A_THING = re.compile(
    r"(?<!\w)(?:an?|un|una|uno|une|ein|eine|einen|um|uma)\s+[^\W\d_]{5,}", re.IGNORECASE
)
_ANCHOR = re.compile(
    r"(?<![.?!¿¡]\s)(?<!^)\b[A-Z\u0400-\u042f][\w-]*|\b[A-Z]{2,}\b|\d|'[^']+'|\x00"
)
_CAPITAL = re.compile(r"\b[A-Z\u00c0-\u00de\u0400-\u042f][\w-]*")


def stands_alone(text: str, after: int, lang: Latin | None = None) -> bool:
    """After an opening "and" / "y" / "und": a whole question with something of its own
    to be about (a name, a number, a quoted word, or two words of its own), as in "And
    what does DNA stand for?" or "And why is the sky blue?", unlike "And the
    population?" or "And what is the capital?"."""
    rest = text[after:]
    if lang is None and len(_CJK_CHAR.findall(rest)) + 2 * ("\x00" in rest) >= 5:
        return _CJK_ASKS.search(rest) is not None  # 还有《红楼梦》是谁写的？: a question of its own
    if words(rest) + ("\x00" in rest) < 3:  # a quoted title is a word
        return False
    code = lang.code if lang is not None else ""
    if _FULL_QUESTION.search(rest) is None and not (
        code in _VERB_LATE and _WH_ANYWHERE.search(rest)
    ):
        return False
    if lang is not None and sum(_content(lang, t) for t in _tokens(rest)) >= 2:
        return True  # "And why is the sky blue?": two words of its own to be about
    if words(rest) >= 4 and _A_THING.search(rest):
        return True  # "y ¿cómo se hace una paella?": a thing of its own, brought in
    if code in _VERB_LATE and _CAPITAL.search(rest):
        return True  # "Aur Taj Mahal kisne banwaya?": the name comes first, the question word later
    return any(m.group() != "I" for m in _ANCHOR.finditer(rest.strip()))


# Words that say too little to make a question's topic ("What am I doing wrong?").
_NOT_TOPIC = _set(
    "doing wrong happen happens happened mean means work works need needs best good better worse bad "
    "way ways thing things stuff problem problems reason reasons risk risks side effects cost costs "
    "time long take takes difference exactly really actually possible normal okay fine right kind "
    "example examples idea ideas option options lot much many more most ones one final finals winner "
    "winners sequel prequel ending author director founder"
)


def has_topic(lang: Latin, text: str) -> bool:
    """Whether ``text`` has a word that says what it is about, or names something (a
    quick ``content_words``)."""
    for n, m in enumerate(_LATIN_WORD.finditer(text)):
        w = m.group()
        if w[0].isdigit() or (n and w[0].isupper() and w != "I"):
            return True
        low = w.lower()
        if len(low) >= 3 and low not in lang.function and low not in _NOT_TOPIC:
            return True
    return False


def content_words(lang: Latin, text: str) -> tuple[list[str], bool]:
    """The words of ``text`` that say what it is about, and whether it names something
    (a capitalised word inside the sentence, or a number)."""
    toks = _tokens(text)
    content = [t.low for t in toks if _content(lang, t) and t.low not in _NOT_TOPIC]
    named = any(
        not t.punct
        and (t.low.isdigit() or (t.text[0].isupper() and not t.initial and t.text != "I"))
        for t in toks
    )
    return content, named


def _enclitic(word: str) -> bool:
    """tradúcelo, explícala, hacerlo: a verb with an object pronoun attached."""
    if not word.endswith(("lo", "la", "los", "las", "le", "les")) or word == "sólo":
        return False
    if word.endswith(("ulo", "ula", "ulos", "ulas")):
        return False
    stem = re.sub(r"(?:lo|la|los|las|le|les)$", "", word)
    return bool(
        re.search(r"[áéíóú]", stem) or (len(stem) >= 4 and stem.endswith(("ar", "er", "ir")))
    )


_PRO_DROP = {
    "es": _FIRST_SECOND_ES,
    "pt": _set(
        "eu tu você me te meu minha meus minhas posso pode devo quero tenho sou estou faço preciso "
        "nós nosso nossa"
    ),
    "it": _set(
        "io tu me te mi ti mio mia miei mie tuo tua posso puoi devo devi voglio vuoi ho hai sono sei "
        "sto stai faccio fai noi nostro nostra"
    ),
}


def _zero_subject(lang: Latin, toks: Sequence[_Tok]) -> str:
    """¿Dónde nació?, Onde nasceu?, Dove è nato?: a question about someone it never
    names (Spanish, Portuguese and Italian drop subjects)."""
    if not toks or toks[-1].low not in ("?", "？"):
        return ""
    content = [t for t in toks if _content(lang, t)]
    if any(t.low.isdigit() for t in toks):
        return ""  # "¿Cuánto es 9 por 7?": the numbers are what it is about
    if len(content) >= 2 and any(t.low in ("se", "si") for t in toks):
        return ""  # "¿Cómo se hace el pan?", "Como se faz pão de queijo?": impersonal
    speaker = _PRO_DROP[lang.code]
    for k, t in enumerate(toks):
        if t.low in speaker or (t.text[0].isupper() and not t.initial):
            return ""
        if (
            t.low in lang.determiners
            and t.low not in _INTERROGATIVE
            and k + 1 < len(toks)
            and _content(lang, toks[k + 1])
        ):
            return ""
    return "a question with no subject" if len(content) <= 2 else ""


def _noun_after(lang: Latin, toks: Sequence[_Tok], k: int) -> tuple[int, _Tok] | None:
    for n in range(k + 1, min(k + 4, len(toks))):
        tok = toks[n]
        if tok.punct:
            return None
        if _SUPERLATIVE.search(tok.low):
            return None
        if lang.code == "de":
            if tok.text[0].isupper():
                return n, tok
            continue
        if _content(lang, tok) or tok.low in lang.generic:
            return n, tok
        return None
    return None


def read_cjk(lang: Cjk, text: str) -> Read:
    read = Read()
    for pattern, kind, antecedent in (
        (lang.person, "p", lang.person_antecedent),
        (lang.thing, "t", lang.thing_antecedent),
    ):
        for m in pattern.finditer(text):
            cut = [b.start() for b in lang.boundary.finditer(text, 0, m.start())]
            before = text[: cut[-1]] if cut else ""
            if antecedent.search(before):
                read.let_go.append(m.group().strip())
            else:
                read.unresolved.append((m.group().strip(), kind))
    read.introduces = bool(lang.introducing.search(text))
    read.person = bool(lang.person_antecedent.search(text))
    stripped = text.strip()
    if lang.ellipsis.search(stripped):
        read.ellipsis = stripped
    elif (
        lang.zero_subject is not None
        and not read.unresolved
        and re.search(r"[?？]\s*$|か。?\s*$", stripped)
        and not lang.zero_subject.search(stripped)
        and not re.search(r"[A-Za-z0-9]{2,}", stripped)
    ):
        read.ellipsis = "a question with no subject"
    return read
