"""Which parts lean on which, and when a list is one task.

A part that holds a reference it cannot resolve by itself is grouped with the part it
leans on:

- an explicit one: "your answer to 2", "the above", "both", 第2题, 上面, 위의, 上記;
- a personal pronoun or possessive ("he", "her", er, il, él, 他, 彼女, 그는) or a
  demonstrative standing alone ("Is that true?", esto, それ, 그것) with nothing before
  it in its own part that it could point at (a "who", a name, a noun phrase before the
  clause it is in) and that is not a dummy ("is it safe to ...", "gibt es", "il faut");
  a person is looked for back to the nearest part that names or asks for one;
- a definite or demonstrative noun phrase naming what an earlier part introduced or
  asked for ("Pick a city ... the city", "Which element ... the element", 这本书,
  その都市, 그 영화), or naming an earlier answer ("the result", "that word");
- an ellipsis: a part that opens with "and", "what about", und, et, y, 那, 그리고 and
  is short, a bare "Why?", 上海呢？, 大阪は？, 부산은요?, and a question with no subject
  at all where the language drops it (¿Dónde nació?, どこで生まれましたか？,
  어디서 태어났나요?).

With a shared context (a preamble of eight words or more), a pronoun may point into
it; it then groups only when the part before introduced someone or something.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ._lang import (
    CJK,
    LATIN,
    MATERIAL,
    MATERIAL_COLON,
    QUESTIONS_FOR_OTHERS,
    UNREAD_ANAPHOR,
    UNREAD_DROPPED,
    Cjk,
    Latin,
    language_of,
    script_of,
    unread_language,
)
from ._read import Read, read_cjk, read_latin, stands_alone, words

__all__ = ["Links", "dependencies", "framing", "words"]


# --- explicit references (any language) --------------------------------------------------
_DEP_START = re.compile(
    r"^\W*(?:(?:it|its|it's|that|this|these|those|they|them|their|then|and then|so|if so|if not|"
    r"based on|using (?:that|this|it|the|your)|given (?:that|this|the above|your)|"
    r"from (?:that|this|the above|your)|with (?:that|this|it)|for (?:that|this|it)|the above|above|"
    r"the (?:result|answer|previous|same)|same|in that case|next,|after that|add|now|"
    r"dann|danach|anschließend|puis|ensuite|luego|después(?!\s+de)|entonces|poi|quindi|depois(?!\s+d[aoe]\b)|"
    r"então|em seguida|затем|потом|после этого|sonra|ardından|daha sonra|ثم|بعد ذلك|बाद में|फिर|"
    r"उसके बाद|phir|fir|uske baad)(?:\b|\s|[,，、،])|"
    r"那么|那|它|它们|上面|上述|根据|基于|这个|这|该|然后|接着|之后|如果是|再|"
    r"그것|그걸|그럼|그러면|그리고 그|위의|위 |이를|이것|그 |앞의|"
    r"それ(?!ぞれ)|上記|その|これ|では|じゃあ|じゃ|それでは|それなら|次に|その後|그다음|그 다음|그런 다음)",
    re.IGNORECASE,
)
_DEP_ALL = re.compile(
    r"\b(?:(?:the |your )?(?:previous|above|earlier|last) (?:answers|questions|results|ones)|"
    r"(?:answers|results) above|all of the above|both of (?:them|these|those)|the two(?: above)?|"
    r"(?:based on|from|using|given) the above|the above|compare (?:them|these|those|the two|both)|"
    r"(?:of|for|to|about) (?:each|both)(?: of them)?(?!\s+(?!of\b)[^\W\d_])|each of (?:them|these|those)|"
    r"all of them)\b|\beach\s*[?.!]?\s*$|"
    r"以上|上面|上述|两者|各自|分别举|위의|위에서|둘 다|각각|上記|それぞれ|両方",
    re.IGNORECASE,
)
# Words one of which a Latin-script part must hold for _DEP_ALL / _DEP_ANYWHERE to match.
_ALL_KEYS = re.compile("previous|above|earlier|last|answers|results|all|both|two|compare|each")
_NAMED_KEYS = re.compile(
    "answer|response|above|before|based|question|previous|last|earlier|part|from"
)
_ALL_BEFORE = {
    "en": re.compile(
        r"\bwhich\s+(?:one|of\s+(?:them|these|those|the\s+two))\b|"  # "tell me which one ..."
        r"^\W*which\s+ones?\s+(?:would|should|could|can|will|do|did)\b|"
        r"^\W*which(?: one)?(?: of (?:them|these|those|the two|the three))?\s+(?:is|was|are|were|would|"
        r"should|has|have|costs?|takes?|do|does)\b|\b(?:rank|sort|order|compare|contrast|combine|merge|"
        r"connect|link|relate|match|classify|group)\s+(?:them|these|those|all|both|the (?:two|three|"
        r"above|answers|results|items))\b",
        re.IGNORECASE,
    ),
    "de": re.compile(
        r"^\W*welche[rs]?(?: davon| von (?:beiden|ihnen))?\s+(?:ist|sind|war|hat|wäre)\b|\bbeide[ns]?\b|"
        r"\bdie beiden\b|\bvergleiche sie\b",
        re.IGNORECASE,
    ),
    "fr": re.compile(
        r"^\W*(?:lequel|laquelle|lesquels|lesquelles)\b|\b(?:les deux|tous les deux|toutes les deux)\b|"
        r"\bcompare[zs]?-les\b",
        re.IGNORECASE,
    ),
    "es": re.compile(
        r"^\W*cuál(?:es)?(?: de (?:ellos|ellas|los dos|las dos|ambos|ambas))?\s+(?:es|son|fue|tiene|"
        r"sería)\b(?!\s+(?:el|la|los|las|un|una|tu|su|mi)\b)|\b(?:ambos|ambas|los dos|las dos)\b|"
        r"\bcompár\w+",
        re.IGNORECASE,
    ),
    "it": re.compile(
        r"\b(?:entrambi|entrambe|tutti e due|tutte e due|quale dei due|quale delle due|confrontali)\b",
        re.IGNORECASE,
    ),
    "pt": re.compile(
        r"\b(?:ambos|ambas|os dois|as duas|qual deles|qual delas|compare-os|compare-as)\b",
        re.IGNORECASE,
    ),
    "ru": re.compile(
        r"(?<!\w)(?:оба|обе|обоих|какой из них|какая из них|сравни их)(?!\w)", re.IGNORECASE
    ),
    "tr": re.compile(r"\b(?:ikisi\w*|her ikisi\w*|hangisi daha|karşılaştır\w*)\b", re.IGNORECASE),
    "ar": re.compile(r"كلاهما|كليهما|أيهما|قارن بينهما"),
    "hi": re.compile(r"दोनों|तुलना"),
    "hi-en": re.compile(r"\b(?:dono|donon|dono me|konsa better|compare)\b", re.IGNORECASE),
}
# Words one of which a part must hold for its language's _ALL_BEFORE to match.
_ALL_BEFORE_KEYS = {
    "en": re.compile(
        "which|rank|sort|order|compar|contrast|combin|merge|connect|link|relate|match|classif|group"
    ),
    "de": re.compile("welche|beide|vergleiche"),
    "fr": re.compile("lequel|laquelle|lesquel|deux|compar"),
    "es": re.compile("cuál|ambos|ambas|dos|compár"),
    "it": re.compile("entramb|due|confront"),
    "pt": re.compile("ambos|ambas|dois|duas|qual|compare"),
    "ru": re.compile("об|из них|сравни"),
    "tr": re.compile("ikisi|hangisi|karşılaştır"),
    "ar": re.compile("كلا|كلي|أيهما|قارن"),
    "hi": re.compile("दोनों|तुलना"),
    "hi-en": re.compile("dono|better|compare"),
}
# "And the GDP of Germany?": a short part that opens with a conjunction leans on the one before.
_ELLIPTIC = re.compile(
    r"^\W*(?:and|or|also|what about|how about|und|et|y|e|и|а|ve|peki|aur|और|还有|那|그리고|それと)"
    r"(?=\s|$|[^\w\u0900-\u097f])|^\W*و(?=(?:ما|ماذا|كيف|من|متى|أين|كم|هل|لماذا|أي)(?:\s|$))",
    re.IGNORECASE,
)
_BARE_WH = re.compile(
    r"^\W*(?:why|how|when|where|who|what|warum|wieso|wie|wann|wo|wer|was|pourquoi|comment|quand|où|"
    r"qui|quoi|por qué|cómo|cuándo|dónde|quién|qué)(?:\s+(?:not|so|nicht|pas|no))?\W*$",
    re.IGNORECASE,
)
_TOO = re.compile(r"\b(?:too|as well)\W*$", re.IGNORECASE)
_DEP_ANYWHERE = re.compile(
    r"(?:your (?:answer|response) to (?:question |q|#|number |part )?(\d+))|"
    r"(?:(?:question|part|item|step|q|#)\s*(\d+) (?:above|before))|"
    r"(?:based on (?:question |q|#|part )(\d+))|(?:from (?:question |q|#|part )(\d+))|"
    r"(?:(?:the|your) (?:previous|above|last|earlier) (?:answer|question|result|response|one|part))|"
    r"(?:第(\d+)[题題])|(?:(\d+)번(?:에| 질문| 답))|上一题|上题|上一个问题|前の質問|上の質問|위 질문|앞의 답|"
    r"\b(?:the above|mentioned above|from above|as above)\b|上面的|上述的|위에서|위의",
    re.IGNORECASE,
)


# An earlier part's result named by its number or letter: "your answer from (a)", "using
# your result from 1", "Ergebnis aus a)", "tu respuesta de (a)", "1の結果を使って",
# "(a)的结果", "1번의 결과"; or the result just before: "the result above".
_RESULT_OF = re.compile(
    r"\b(?:answers?|results?|responses?|solutions?|values?|respuestas?|resultados?|ergebnis\w*|"
    r"antwort\w*|réponses?|résultats?|rispost[ae]|risultat[oi]|respostas?|результат\w*|ответ\w*)"
    r"\s+(?:from|to|of|in|for|de|del|aus|von|zu|à|di|da|do|из|к)\s+(?:(?:question|part|step|teil|"
    r"aufgabe|parte|partie|pregunta|pergunta|domanda|вопрос\w*|задани\w+)\s+)?"
    r"(?:\(([a-z])\)|([a-z])\)|(\d{1,3})(?![\d%])|(?<=part )([a-z])\b|(?<=teil )([a-z])\b)|"
    r"(?:[(（]([a-z]|\d{1,3})[)）]|([a-z])\)|(?<![\d.])(\d{1,3}))\s*(?:の(?:結果|答え|解)|的(?:结果|答案|解)|"
    r"의\s*(?:결과|답|해))|"
    r"\b(?:the\s+)?(?:results?|answers?|values?)\s+above\b|上の結果|上面的结果|위의\s*결과",
    re.IGNORECASE,
)


# What the answer to the part before made, named as the assistant's: "your version",
# "your solution", "your translation" (read after _RESULT_OF, which names the part).
_YOURS = re.compile(
    r"\byour\s+(?:version|solution|rewrite|translation|draft|suggestions?|recommendations?|"
    r"picks?|choice|code|function|script|example|results?|answers?)\b",
    re.IGNORECASE,
)


# Words one of which a Latin-script part must hold for _RESULT_OF to match.
_RESULT_KEYS = re.compile(
    "answer|result|respons|solution|value|respuest|resultad|ergebnis|antwort|réponse|résultat|"
    "rispost|risultat|respost|результат|ответ"
)


class _Groups:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)

    def groups(self) -> list[list[int]]:
        out: dict[int, list[int]] = {}
        for i in range(len(self.parent)):
            out.setdefault(self.find(i), []).append(i)
        return sorted(out.values(), key=lambda g: g[0])


@dataclass
class Links:
    groups: list[list[int]]
    reasons: list[str]
    """Why parts were grouped ("part 2 leans on part 1: 'he'")."""
    let_go: list[str]
    """References judged to point inside their own part or into the shared context."""
    lang: str
    """The Latin-script language the parts were read in."""


def dependencies(
    parts: list[str],
    values: list[int] | None = None,
    *,
    shared_context: bool = False,
    lang: str = "",
    leans: Sequence[str] = (),
) -> Links:
    """Group parts that refer to earlier parts (with the one they name, the one they
    lean on, or all before them). ``parts`` should have quotes and code masked;
    ``leans`` says, for parts already known to lean on the part before, why."""
    linker = _Linker(parts, values, shared_context=shared_context, lang=lang)
    for i in range(1, len(parts)):
        if i < len(leans) and leans[i]:
            linker.link(i, i - 1, leans[i])
        elif not linker.refers_back(i):
            if linker.unread is None:
                linker.points_back(i)
            else:  # the reader of the language it was taken for would misread its words
                linker.unread_points_back(i)
    return Links(linker.g.groups(), linker.reasons, linker.let_go, linker.latin)


class _Linker:
    """``dependencies``' reading of a prompt's parts: each read once, and the links
    found between them, with why."""

    def __init__(
        self, parts: list[str], values: list[int] | None, *, shared_context: bool, lang: str
    ) -> None:
        self.parts = parts
        self.shared_context = shared_context
        self.g = _Groups(len(parts))
        self.reasons: list[str] = []
        self.let_go: list[str] = []
        self.latin = lang if lang in LATIN else language_of(" ".join(parts))
        self.unread = None if script_of(" ".join(parts)) else unread_language(" ".join(parts))
        self.codes = [script_of(p) or self.latin for p in parts]
        self.lowered = [p.lower() for p in parts]
        self.by_value = {v: i for i, v in enumerate(values)} if values else {}
        self._reads: dict[tuple[int, bool], Read] = {}

    def read(self, i: int, full: bool = False) -> Read:
        """Part ``i`` read (once); ``full`` for its own references, else only what
        later parts may point at."""
        found = self._reads.get((i, True)) or self._reads.get((i, full))
        if found is None:
            code = self.codes[i]
            if code in CJK:
                found = self._reads[(i, True)] = read_cjk(CJK[code], self.parts[i])
            else:
                found = self._reads[(i, full)] = read_latin(LATIN[code], self.parts[i], full)
        return found

    def stems(self, j: int) -> set[str]:
        code = self.codes[j]
        return {LATIN[code].stem(w) for w in self.read(j).contents} if code in LATIN else set()

    def names_before(self, i: int) -> int | None:
        """The nearest earlier part that names something (a capitalised word)."""
        return next((j for j in range(i - 1, -1, -1) if self.read(j).person), None)

    def link(self, i: int, j: int, why: str) -> None:
        self.g.union(i, j)
        self.reasons.append(f"part {i + 1} leans on part {j + 1}: {why}")

    def refers_back(self, i: int) -> bool:
        """Part ``i`` says outright what it refers to: all before it ("both of these"),
        a part by its number ("the second one"), the part before ("Then ...", an
        ellipsis). True if linked so."""
        part, code, low = self.parts[i], self.codes[i], self.lowered[i]
        all_before = _ALL_BEFORE.get(code)
        cjk = CJK.get(code)
        m_all = (
            (_DEP_ALL.search(part) if cjk or _ALL_KEYS.search(low) else None)
            or (
                all_before.search(part)
                if all_before and _ALL_BEFORE_KEYS[code].search(low)
                else None
            )
            or (cjk.all_before.search(part.strip()) if cjk else None)
        )
        if m_all is not None:
            for j in range(i):
                self.g.union(i, j)
            self.reasons.append(f"part {i + 1} refers to all before it: {m_all.group().strip()!r}")
            return True
        m = _DEP_ANYWHERE.search(part) if cjk or _NAMED_KEYS.search(low) else None
        if m is not None:
            named = next((int(x) for x in m.groups() if x), None)
            target = None
            if named is not None:
                target = self.by_value.get(named, named - 1 if 0 < named <= i else None)
            self.link(
                i, target if target is not None and 0 <= target < i else i - 1, repr(m.group())
            )
            return True
        m = _RESULT_OF.search(part) if cjk or _RESULT_KEYS.search(low) else None
        if m is not None:
            ref = next((x for x in m.groups() if x), "")
            value = int(ref) if ref.isdigit() else ord(ref.lower()) - 96 if ref else 0
            target = self.by_value.get(value, value - 1) if value else i - 1
            self.link(i, target if 0 <= target < i else i - 1, repr(m.group()))
            return True
        m = _YOURS.search(part) if "your" in low else None
        if m is not None:
            self.link(i, i - 1, repr(m.group()))
            return True
        m = _DEP_START.search(part) or _ELLIPTIC.search(part)
        if m is not None and (
            m.re is _DEP_START
            or (words(part) < 7 and not stands_alone(part, m.end(), LATIN.get(code)))
        ):
            self.link(i, i - 1, repr(m.group().strip()))
            return True
        here = self.read(i, full=True)
        if _BARE_WH.search(part) or here.ellipsis or (code == "en" and _TOO.search(part)):
            self.link(i, i - 1, f"an ellipsis ({here.ellipsis or part.strip()!r})")
            return True
        return False

    def unread_points_back(self, i: int) -> None:
        """In Polish, Ukrainian, Dutch, Indonesian or Vietnamese (read as another
        language): a pronoun or demonstrative of the language ("Kiedy go wydano?", "Waar
        is hij geboren?", "Ông ấy sinh năm nào?"), or, where the language drops its
        subjects, a short question ending in a verb with no subject ("Kiedy się
        urodził?"), leans on the part before."""
        if self.unread is None or self.g.find(i) == self.g.find(i - 1):
            return
        m = UNREAD_ANAPHOR[self.unread].search(self.parts[i])
        if m is not None:
            self.link(i, i - 1, repr(m.group()))
        elif self.unread in UNREAD_DROPPED and UNREAD_DROPPED[self.unread].search(self.parts[i]):
            self.link(i, i - 1, "a short question that leaves its subject to the one before")

    def points_back(self, i: int) -> None:
        """Part ``i``'s words that point at an earlier part: definite noun phrases
        naming what one introduced, generic and bare references, pronouns."""
        here = self.read(i, full=True)
        for phrase, stem, demonstrative in here.definite:
            to = self._phrase_target(i, phrase, stem, demonstrative)
            if to is not None:
                self.link(i, to, repr(phrase))
        if here.generic:
            self.link(i, i - 1, repr(here.generic[0]))
        if here.bare and not self.shared_context:
            self.link(i, i - 1, f"an ellipsis ({here.bare!r})")
        if here.unresolved:
            word, kind = here.unresolved[0]
            if self.shared_context and not self.read(i - 1).introduces:
                self.let_go.append(f"part {i + 1}: {word!r} may point into the shared context")
            else:
                j = i - 1
                if kind == "p":
                    while j > 0 and not self.read(j).person:
                        j -= 1
                if kind == "pl" or (self.codes[i] == "ar" and word.endswith(("ها", "هم"))):
                    j = 0  # "them", -ها (of things): may be all the parts before, as material
                for k in range(j, i):
                    self.g.union(i, k)
                self.reasons.append(f"part {i + 1} leans on part {j + 1}: {word!r}")
        self.let_go += [f"part {i + 1}: {w!r} points inside the part" for w in here.let_go]
        self.reasons += [f"part {i + 1}: {w!r} is a dummy pronoun" for w in here.dummies]

    def _phrase_target(self, i: int, phrase: str, stem: str, demonstrative: bool) -> int | None:
        """The earlier part a definite noun phrase of part ``i`` names, if any."""
        part = self.parts[i]
        earlier = [j for j in range(i - 1, -1, -1) if stem in self.lowered[j]]
        to = next((j for j in earlier if stem in self.read(j).introduced), None)
        if to is None and demonstrative:
            to = next((j for j in earlier if stem in self.stems(j)), None)
            if to is None and not self.shared_context:
                to = i - 1
        if (
            to is None
            and not demonstrative
            and stem in _categories(self.codes[i])
            and not _RESTRICTED.match(part, part.find(phrase) + len(phrase))
        ):
            to = self.names_before(i)  # "Who wrote Pinocchio? When was the book published?"
        return to


# Nouns for the kinds of things a name names ("Who wrote Pinocchio? When was the book
# published?"): with a definite article they point back at the name.
_CATEGORY_NOUNS = {
    "en": "book novel film movie song album painting picture play poem company firm city town country "
    "team band show series building bridge tower river mountain lake island game app brand war battle "
    "university museum opera symphony",
    "es": "libro novela película canción álbum cuadro obra empresa ciudad país equipo banda serie "
    "edificio puente torre río montaña lago isla juego guerra",
    "fr": "livre roman film chanson album tableau pièce entreprise société ville pays équipe groupe "
    "série bâtiment pont tour fleuve montagne lac île jeu guerre",
    "de": "buch roman film lied album bild gemälde stück firma unternehmen stadt land mannschaft band "
    "serie gebäude brücke turm fluss berg see insel spiel krieg",
    "it": "libro romanzo film canzone album quadro opera azienda città paese squadra gruppo serie "
    "edificio ponte torre fiume montagna lago isola gioco guerra",
    "pt": "livro romance filme música canção álbum quadro obra empresa cidade país time equipe banda "
    "série prédio ponte torre rio montanha lago ilha jogo guerra",
}
_CATEGORY_STEMS: dict[str, frozenset[str]] = {}
_RESTRICTED = re.compile(
    r"\s*(?:[A-Z\x00\"'“«]|\d|(?:of|de|del|des|du|di|della|von|vom|do|da|that|which|who|whose|que|qui|"
    r"che|der|die|das|den|called|named|titled|más|menos|più|meno|mais|plus|moins)\b)"
)
"""What names the thing then and there, after its noun: "the river Nile", "the city of
Lyon", "the book that ...", "el río más largo" (a superlative after the noun)."""


def _categories(code: str) -> frozenset[str]:
    found = _CATEGORY_STEMS.get(code)
    if found is None:
        lang = LATIN.get(code)
        nouns = _CATEGORY_NOUNS.get(code, "").split()
        found = _CATEGORY_STEMS[code] = (
            frozenset(lang.stem(n) for n in nouns) if lang else frozenset()
        )
    return found


_PARAGRAPH = re.compile(r"\n\s*\n")
_SENTENCE = re.compile(r"(?<=[.?!。？！])\s*")


_ABOUT_QUESTIONS = re.compile("question|frage|pregunt|domand|pergunt", re.IGNORECASE)


def framing(preamble: str, postamble: str, latin: str = "en") -> str | None:
    """The instruction that makes a list one task (rank them, the same word, one story in
    three parts, choose among them), or None."""
    last = _PARAGRAPH.split(preamble.strip())[-1] if preamble.strip() else ""
    if words(last) > 60:
        last = " ".join(_SENTENCE.split(last)[-2:])
    frame = f"{last}\n{postamble}".strip()
    if not frame:
        return None
    script = script_of(frame)
    lang: Latin | Cjk = CJK[script] if script is not None else LATIN.get(latin, LATIN["en"])
    m = MATERIAL[lang.code].search(frame) or MATERIAL_COLON.search(last)
    if m is not None:
        return f"the items are text to work on ({m.group().strip()!r})"
    m = QUESTIONS_FOR_OTHERS.search(last) if _ABOUT_QUESTIONS.search(last) else None
    if m is not None:
        return f"the questions are the material of one request ({m.group().strip()!r})"
    m = lang.frame_whole.search(frame)
    if m is not None:
        return f"the instruction {m.group().strip()!r} applies to the whole list"
    m = lang.frame_work.search(frame)
    if m is not None and not lang.distributive.search(frame):
        return f"the items make one work ({m.group().strip()!r})"
    return None
