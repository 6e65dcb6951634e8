"""Cutting a prompt written without list markers into units, and reading each one.

A unit is a sentence (ended by ``?`` ``？`` ``؟``, by a full stop followed by a space,
or by ``。``), a line, a segment between semicolons, or the text before a colon that
introduces what follows ("Answer in one sentence each: ..."). Each unit loses its
opening connective (``_cues.lead_of``) and is read as one of ``q`` (a question),
``w`` (a question without a question mark), ``r`` (a request), ``i`` (an instruction
about the answers), ``h`` (a header, a greeting or a section heading: never sent),
``l`` (a lead-in that points at the parts), ``s`` (a statement) or ``c`` (code or a
quotation). ``_prose`` puts the units together into parts.
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass

from ._cues import HEADER, IMPERATIVE, INSTRUCTION, LEADIN, REQUEST, WH_START, lead_of
from ._read import words

__all__ = [
    "Unit",
    "and_joins",
    "asks_late",
    "cjk_joins",
    "cut_units",
    "drop_headers",
    "kind_of",
    "list_joins",
    "maybe_several",
    "split_and",
    "text_of",
    "trimmed",
    "with_leads",
]


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


_QCJK_ASK = re.compile(
    r"[吗嗎呢么麼]|什么|什麼|为什么|為什麼|怎么|怎麼|怎样|如何|哪|谁|誰|几|多少|多[长高大远久重深宽]|是否|请|請|帮我|"
    r"^(?:另外|还有|顺便)?[，,]?\s*(?:推荐|介绍|告诉我|给我)|"
    r"ですか|ますか|でしょうか|なぜ|何|どう|どの|いつ|どこ|教えて|説明して|ください|"
    r"무엇|뭐|왜|어떻게|언제|어디|누구|어느|설명|알려|까요|니까|인가요|나요|세요|주세요|궁금"
)
_STOP = re.compile(r"[?？؟]+[\"'”’」』)\]]*|[.!。！।…]+[\"'”’」』)\]]*|[;；؛]|\n")
_CJK_STOP = frozenset("。！")
_LINE_END = frozenset("?？؟!！.。:：;；।…\x00")
_ABBREVIATIONS = _set(
    "e.g eg i.e ie etc vs mr mrs ms dr st no nr approx ca cf fig vol jr sr inc ltd co z.b bzw "
    "usw p.ex av dept min max p.s p.p.s ps nb n.b pd p.d п.с"
)
_WORD_BEFORE = re.compile(r"([\w.]+)$")
_QUESTION_MARK = re.compile(r"[?？؟]")
_ENDS_ASKING = re.compile(r"[?？؟]\s*[\"'”’」』)\]]*\s*$")
_COLON = re.compile(r":(?=\s)|：")
_QUOTED = re.compile("\x00+")
_NEWLINE = re.compile(r"\n")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
# Several questions in one sentence: "... and who painted ... and how many ...".
_AND_JOIN = re.compile(
    r"(?:,\s*(?:(?:and|und|et|y|e|и|ve|aur|और|en|i|oraz|і|й|та|và|dan)\s+)?|"
    r"\s+(?:and|und|et|y|e|и|ve|aur|और|en|i|oraz|і|й|та|và|dan)\s+)"
    r"(?:(?:also|auch|aussi|también|anche|também|также)\s+)?(?=(?:"
    r"what(?:'s|s)?\s+(?:is|are|was|were|does|do|did|can|should|would|will|the|a|an)|"
    r"(?:what|which)\s+\w+\s+(?:is|are|was|were|does|do|did|can|should|would|will)\b|"
    r"who(?:'s|s)?\s+\w+|how\s+(?:many|much|long|far|old|big|tall|often|do|does|did|is|are|can|"
    r"should|to)|(?:why|when|where)\s+(?:is|are|was|were|do|does|did|can|should|would|will)|"
    r"which\s+\w+\s+(?:is|are|was|were|do|does|did|should|can)|"
    r"(?:wer|was|wie|warum|wann|wo|welche\w*|qui|quel\w*|comment|pourquoi|quand|où|combien|qué|"
    r"quién|cómo|cuál|cuándo|dónde|cuánt\w*|quien|como|cuant\w*|donde|chi|cosa|come|quale|quant\w*|"
    r"c'est\s+(?:quoi|qui)|"
    r"quem|qual|onde|por\s+que|o\s+que|por\s+qué|para\s+qué|кто|что|"
    r"как|где|когда|сколько|почему|какой|какая|какое|какие|"
    # nl pl uk id vi
    r"wat|waarom|hoe|waar|wanneer|welke|hoeveel|co|dlaczego|jak|kto|gdzie|kiedy|ile|jaki|jaka|"
    r"jakie|що|чому|як|хто|де|коли|скільки|який|яка|яке|які|apa|apakah|mengapa|kenapa|bagaimana|"
    r"gimana|siapa|kapan|berapa|làm\s+sao|tại\s+sao|vì\s+sao|ai|bao\s+nhiêu)\b))|"
    r"\s+و(?=(?:ما|ماذا|كيف|من|متى|"
    r"أين|كم|هل|لماذا)\s)|"
    # ", and does Southwest still allow ...": an inverted auxiliary after a comma and "and"
    r",\s*and\s+(?=(?:is|are|was|were|does|do|did|can|could|will|would|should|has|have)\s+"
    r"(?:the|a|an|my|our|any|there|(?-i:[A-Z])[\w-]+)\b)",
    re.IGNORECASE,
)
_ASKS_TO_ASK = re.compile(
    r"\b(?:a\s+few|a\s+couple(?:\s+of)?|some|several|two|three|four|\d+|few|more)\s+(?:quick\s+|short\s+|"
    r"simple\s+|random\s+|unrelated\s+|different\s+)*(?:things|questions|qs)\b",
    re.IGNORECASE,
)
# A cheap test before _AND_JOIN: a comma or one of its words.
_JOINER = re.compile(
    r",|\b(?:and|und|et|y|e|и|ve|aur|en|i|oraz|і|й|та|và|dan)\b|और|\sو", re.IGNORECASE
)


@dataclass
class Unit:
    """One sentence, line or segment: its span, its opening connective and its kind."""

    start: int
    end: int
    body: int  # where the text after the opening connective starts
    lead: str
    lead_kind: str
    line: int
    para: int
    stop: str  # the character that ended it ("?", ".", ";", ":", "\n" or "")
    kind: str = "s"
    leans: str = ""  # why it leans on the part before, though a question of its own


def cut_units(text: str, masked: str) -> list[Unit]:
    """Cut ``text`` into units (see the module docstring)."""
    out: list[Unit] = []
    newlines = [m.start() for m in _NEWLINE.finditer(masked)]
    breaks = [m.start() for m in _BLANK_LINE.finditer(masked)]
    start = 0

    def close(end: int, stop: str) -> None:
        piece = masked[start:end]
        stripped = piece.strip()
        if stripped:
            a = start + len(piece) - len(piece.lstrip())
            b = a + len(stripped)
            line = bisect.bisect_left(newlines, a)
            para = bisect.bisect_left(breaks, a)
            out.append(Unit(a, b, a, "", "", line, para, stop))

    line_start = 0
    for m in _STOP.finditer(masked):
        ch = m.group()[0]
        end = m.end()
        if ch == "\n":
            line_text = masked[line_start : m.start()].strip()
            line_start = end
            nxt_line = masked[end:].lstrip(" \t").split("\n", 1)[0]
            if (
                line_text
                and nxt_line
                and line_text[-1] not in _LINE_END
                and (nxt_line[0].isupper() or nxt_line[0].islower())
                and WH_START.match(nxt_line) is None
                and REQUEST.match(nxt_line) is None
                and lead_of(nxt_line)[1] not in ("strong", "also", "ordinal")
                and INSTRUCTION.match(line_text) is None
                and HEADER.match(line_text) is None
            ):
                continue  # a sentence that goes on on the next line (a poem, hard wrapping)
            close(m.start(), "\n")
            start = end
            continue
        if ch in "?":
            rest = masked[end:].lstrip(" \t")
            if (  # "The ? is a placeholder": a question mark inside a sentence
                rest[:1].islower()
                and rest[:1].isascii()
                and masked[end : end + 1] == " "
                and WH_START.match(rest) is None
                and REQUEST.match(rest.split("\n", 1)[0]) is None
                and INSTRUCTION.match(rest.split("\n", 1)[0]) is None  # "? keep it short pls"
                and not lead_of(rest)[1]
            ):
                continue
        if ch in "?？؟;；؛" or ch in _CJK_STOP:
            close(end, "?" if ch in "?？؟" else ";" if ch in ";；؛" else ".")
            start = end
            continue
        nxt = masked[end : end + 1]
        if nxt and not nxt.isspace():
            continue  # "3.5", "e.g.,", "file.txt"
        before = _WORD_BEFORE.search(masked, max(0, m.start() - 12), m.start())
        if (
            before is not None
            and m.group() == "."
            and (
                before.group(1).lower() in _ABBREVIATIONS
                or (len(before.group(1)) == 1 and before.group(1).isalpha())
            )
        ):
            continue
        rest = masked[end:].lstrip(" \t")
        if (  # "whats x. how do i y": a new sentence only if it asks or requests
            rest[:1].islower()
            and rest[:1].isascii()
            and WH_START.match(rest) is None
            and REQUEST.match(rest.split("\n", 1)[0]) is None
            and lead_of(rest)[1] not in ("ordinal", "strong", "also")
        ):
            continue
        close(end, ".")
        start = end
    close(len(masked), "")
    return out


def with_leads(text: str, masked: str, units: list[Unit]) -> list[Unit]:
    """Each unit's opening connective, and the text before a colon that introduces
    what follows cut off as a unit of its own."""
    out: list[Unit] = []
    for u in units:
        _lead(text, masked, u)
        m = _COLON.search(masked, u.body, u.end)
        if m is not None:
            prefix = masked[u.body : m.start()]
            suffix = masked[m.end() : u.end].strip()
            if (
                suffix
                and not _QUESTION_MARK.search(prefix)
                and not _options_follow(prefix, suffix)
                and "\x00" not in prefix
                and (
                    words(prefix) <= 6
                    or _QUESTION_MARK.search(suffix)
                    or INSTRUCTION.match(prefix)
                    or HEADER.match(prefix)
                    or LEADIN.search(prefix)
                    or REQUEST.match(prefix)
                )
            ):
                head = Unit(u.start, m.end(), u.body, u.lead, u.lead_kind, u.line, u.para, ":")
                b = m.end()
                while b < u.end and masked[b].isspace():
                    b += 1
                tail = Unit(b, u.end, b, "", "", u.line, u.para, u.stop)
                _lead(text, masked, tail)
                out += [head, tail]
                continue
        out.append(u)
    return out


def _options_follow(prefix: str, suffix: str) -> bool:
    """ "Which is cheaper: 3 for $10 or $3.50 each?": a question whose options follow its
    colon is one question (the text after the colon asks nothing of its own)."""
    return (
        WH_START.match(prefix) is not None
        and WH_START.match(suffix) is None
        and REQUEST.match(suffix) is None
        and _QUESTION_MARK.search(suffix) is not None
    )


def _lead(text: str, masked: str, u: Unit) -> None:
    lead, kind = lead_of(text[u.start : u.end])
    if lead and "\x00" not in masked[u.start : u.start + len(lead)]:
        u.lead, u.lead_kind = lead, kind
        b = u.start + text[u.start : u.end].index(lead) + len(lead)
        while b < u.end and text[b].isspace():
            b += 1
        u.body = b


_GREETING = re.compile(
    r"^\W*(?:hey|hi|hello|hiya|yo|ok|okay|so|thanks|thank\s+you|thx|please|hola|hallo|salut|bonjour|"
    r"ciao|olá|oi|привет|merhaba|مرحبا|नमस्ते|namaste|bhai|yaar|bro|dude|guys)\W*$",
    re.IGNORECASE,
)
_HEADING = re.compile(r"^#{1,6}\s+\S")
# Small talk before the asks: "How are you today?", "Hope you're well.": a greeting.
_SMALL_TALK = re.compile(
    r"^\W*(?:(?:hi|hey|hello|hola|hallo|salut|bonjour|ciao|oi|olá)\W+)?(?:how\s+are\s+you(?:\s+doing)?"
    r"(?:\s+today)?|how'?s\s+it\s+going|hope\s+you(?:'re|\s+are)\s+(?:well|good|doing\s+well)|"
    r"what'?s\s+up|qué\s+tal|cómo\s+estás|wie\s+geht'?s|wie\s+geht\s+es\s+(?:dir|ihnen)|"
    r"(?:comment\s+)?ça\s+va|come\s+stai|tudo\s+bem|como\s+vai|как\s+дела|nasılsın|كيف\s+حالك|"
    r"kaise\s+ho|你好吗|お元気ですか|잘\s*지내(?:세요|셨어요)?)\W*$",
    re.IGNORECASE,
)


# A question asked for effect, before the real one: "Ever wondered why ...?", "Did you
# know ...?", "Why does this matter, you ask?".
_RHETORICAL = re.compile(
    r"^\W*(?:(?:have\s+you\s+)?ever\s+wonder(?:ed)?|did\s+you\s+know|guess\s+what|"
    r"te\s+has\s+preguntado|alguna\s+vez\s+te\s+has\s+preguntado|hast\s+du\s+dich\s+(?:schon\s+)?"
    r"(?:mal|jemals|einmal)\s+gefragt|(?:tu\s+t'es|vous\s+êtes-vous)\s+(?:déjà|jamais)\s+demandé|"
    r"ti\s+sei\s+mai\s+chiesto|já\s+se\s+perguntou|(?:ты\s+)?когда-нибудь\s+задумывал\w*)\b|"
    r",\s*you\s+(?:ask|might\s+ask|may\s+ask)\W*$",
    re.IGNORECASE,
)


_FIRST_COMMA = re.compile(r"[,，、،]")


def _count_then_instruction(body: str) -> bool:
    """ "Two questions, answer each briefly:", "Zwei Fragen, bitte jeweils kurz
    antworten:": a header that counts the parts, then an instruction for every part."""
    m = _FIRST_COMMA.search(body)
    return (
        m is not None
        and HEADER.match(body[: m.start()]) is not None
        and INSTRUCTION.match(body[m.end() :].strip()) is not None
    )


# A polite ask that only opens what follows its colon: "Can you:", "Kun je even:",
# "Kannst du bitte:", "Puedes:", "Можешь:", "لو سمحت:", "Please:".
_ASKS_FOR_WHAT_FOLLOWS = re.compile(
    r"^\W*(?:(?:please|pls)\s+)?(?:(?:can|could|would)\s+you|kun\s+je|kunt\s+u|kannst\s+du|könnten\s+sie|"
    r"könntest\s+du|peux-tu|pouvez-vous|puedes|podrías|puoi|potresti|(?:você\s+)?pode|"
    r"можешь|можете|możesz|czy\s+możesz|bisakah\s+kamu|bisa|tolong|لو\s+سمحت|من\s+فضلك|please|bitte|"
    r"por\s+favor|s'il\s+te\s+pla[iî]t|per\s+favore|пожалуйста|proszę|lütfen|कृपया|"
    r"bạn\s+có\s+thể|можеш)(?:\s+(?:please|quickly|also|even|bitte|mal|kurz|me|mir))*\W*[:：]\s*$",
    re.IGNORECASE,
)


# A statement that ends by asking for help with it: "the db keeps dropping connections,
# any ideas", "mi portátil no arranca, alguna idea".
_ASKING_TAG = re.compile(
    r"[,—–-]\s*(?:any\s+(?:ideas?|tips|suggestions|advice|thoughts|help)|thoughts|ideas|"
    r"what\s+(?:do\s+you\s+(?:think|suggest|recommend)|should\s+i\s+do)|alguna\s+(?:idea|sugerencia)|"
    r"(?:des|une)\s+idées?|irgendwelche\s+(?:ideen|tipps)|qualche\s+(?:idea|consiglio)|"
    r"alguma\s+(?:ideia|dica)|есть\s+идеи|що\s+порадите)\W*$",
    re.IGNORECASE,
)


def kind_of(masked: str, u: Unit) -> str:
    body = masked[u.body : u.end].strip()
    if not body.replace("\x00", "").strip(" \t\n.,;:!?"):
        return "c"
    if _RHETORICAL.search(body):
        return "s"  # asked for effect: context for the question after it
    if _HEADING.match(body) or _GREETING.match(body) or _SMALL_TALK.match(body):
        return "h"  # a section heading or a greeting: not sent, not context
    if _ENDS_ASKING.search(body):
        # "Can you help me with a few things?": asks to ask, announcing the parts
        return "h" if words(body) <= 12 and _ASKS_TO_ASK.search(body) else "q"
    if INSTRUCTION.match(body) and words(body) <= 16:
        return "i"
    if _count_then_instruction(body):
        return "i"  # the instruction is for every part
    if HEADER.match(body):
        return "h"
    if LEADIN.search(body) and (body.endswith((":", "：")) or words(body) <= 10):
        return "l"
    if _ASKS_FOR_WHAT_FOLLOWS.match(body):
        return "l"  # "Kun je even:", "لو سمحت:": what follows is what is asked
    if WH_START.match(body) or _ASKING_TAG.search(body):
        return "w"
    if REQUEST.match(body) or _QCJK_ASK.search(body):
        return "r"
    return "s"


def split_and(
    text: str, masked: str, u: Unit, joins: list[re.Match[str]], joined: str = "join"
) -> list[Unit]:
    """A question sentence cut at each "and" that opens a new question (``joined``:
    "join"), or a sentence of several requests or items cut at each comma ("list")."""
    out: list[Unit] = []
    a = u.body
    lead, kind = u.lead, u.lead_kind
    for m in joins:
        out.append(Unit(u.start if not out else a, m.start(), a, lead, kind, u.line, u.para, ","))
        lead = text[m.start() : m.end()].strip(" ,、")
        kind = joined
        a = m.end()
    out.append(Unit(a, u.end, a, lead, kind, u.line, u.para, u.stop))
    for piece in out:
        asks = _ENDS_ASKING.search(masked[piece.body : piece.end])
        piece.kind = "q" if asks else "w" if joined in ("join", "also") else "r"
        if piece is not out[0]:
            piece.start = piece.body - len(piece.lead) - 1 if piece.lead else piece.body
    return out


# Several requests in one sentence, each with its own verb and object ("translate X
# into French, give me Y, and suggest Z"), or items after a header ("I need a few
# things: a name for my bakery, the hours of the museum, and a recipe"): cut at each
# comma, and at an "and" after the last one.
_LIST_JOIN = re.compile(
    r"[,،]\s*(?:(?:and|und|et|y|e|и|ve|aur|en|i|oraz|і|та|và|dan|and\s+also)\s+|و)?|"
    r"\s+(?:and|und|et|y|e|и|ve|aur)\s+",
    re.IGNORECASE,
)
_ANY_COMMA = re.compile(r"[,،]")
_GIVE_ME = re.compile(
    r"^\W*(?:give|tell|get)\s+me\s+(?:the|a|an)\b|^\W*(?:dame|dime)\s+(?:el|la|los|las|un|una)\b|"
    r"^\W*(?:gib|nenne|sag)\s+mir\s+(?:den|die|das|einen|eine)\b|^\W*(?:donne|dis)-moi\s+(?:le|la|les|l'|un|une)|"
    r"^\W*(?:dammi|dimmi)\s+(?:il|la|lo|l'|i|gli|le|un|una)\b|^\W*(?:me\s+)?(?:dê|diga)(?:-me)?\s+(?:o|a|os|as|um|uma)\b|"
    r"^\W*(?:назови|скажи|дай)\s+(?:мне\s+)?",
    re.IGNORECASE,
)
_POLITE_ASK = re.compile(
    r"^\W*(?:please\s+)?(?:can|could|would|will)\s+you\s+(?:please\s+)?", re.IGNORECASE
)


def list_joins(masked: str, u: Unit, items: bool) -> list[re.Match[str]]:
    """Where a sentence of several requests (each opening with an imperative: three of
    them, or two joined by ", and") or, with ``items``, of several items after a header
    is cut; [] if it is not one. Each piece holds two words or more."""
    body = masked[u.body : u.end]
    if not _ANY_COMMA.search(body):
        return []
    polite = _POLITE_ASK.match(body)
    opening = body[polite.end() :] if polite else body
    if not items and IMPERATIVE.match(opening) is None:
        return []
    # "Give me the capital of Mongolia, the year the Titanic sank, and the author of ...":
    # things asked for under one "give me", each of three words or more
    named = not items and _GIVE_ME.match(opening) is not None
    joins: list[re.Match[str]] = []
    last_comma = max(m.start() for m in _ANY_COMMA.finditer(body)) + u.body
    for m in _LIST_JOIN.finditer(masked, u.body, u.end):
        if not _ANY_COMMA.search(m.group()) and m.start() < last_comma:
            continue  # an "and" inside an item: only the one after the last comma cuts
        if items or named or IMPERATIVE.match(masked[m.end() : u.end]) is not None:
            joins.append(m)
    bare = [m for m in joins if not _ANY_COMMA.search(m.group())]
    if len(bare) > 1 and not all(IMPERATIVE.match(masked[m.end() : u.end]) for m in bare):
        # "the difference between 'ser' y 'estar' y recomiéndame ...": after the last
        # comma only the last "and" cuts, unless each opens a request of its own
        joins = [m for m in joins if m not in bare[:-1]]
    cuts = [u.body, *(m.start() for m in joins), u.end]
    pieces = [masked[a:b] for a, b in itertools.pairwise(cuts)]
    least = 3 if named else 2
    while joins and words(pieces[-1]) < least and not _ANY_COMMA.search(joins[-1].group()):
        joins.pop()  # "the difference between virus and bacteria": an "and" inside the item
        pieces[-2:] = ["".join(pieces[-2:])]
    if any(words(p) < least for p in pieces):
        return []
    if len(joins) < 2 and not (
        joins and _ANY_COMMA.search(joins[0].group()) and joins[0].group().strip(",، ")
    ):
        return []  # two pieces only when joined by ", and"
    return joins


# Question words a sentence may open with that WH_START leaves out: written without
# their accents (cuando, como) or mistyped (wat, hw), or that also open statements (ما هي).
_WH_PLAIN = re.compile(
    r"^\W*(?:cuando|donde|como|cual|cuanto|cuantos|cuantas|quien|que|ما\s+(?:هي|هو)|wat|wut|wht|hw|wich|"
    r"wen|wher)(?=\s)",
    re.IGNORECASE,
)
# A request to be told, before the questions it asks ("Can you tell me what X is and how
# many Y ...", "Kannst du mir sagen, wie ...", "Me puedes decir cuál ...").
_TELL_ME = re.compile(
    r"^\W*(?:(?:can|could|would)\s+you\s+(?:please\s+)?tell\s+me|please\s+tell\s+me|tell\s+me|"
    r"(?:kannst\s+du|könntest\s+du|können\s+sie|könnten\s+sie)\s+mir\s+sagen|sag\s+mir|"
    r"(?:pourriez-vous|pouvez-vous|peux-tu|tu\s+peux)\s+me\s+dire|dis-moi|dites-moi|"
    r"(?:me\s+)?(?:puedes|podrías|podría|puede)\s+decirme|me\s+(?:puedes|podrías|podría|puede)\s+decir|dime|"
    r"(?:mi\s+)?(?:puoi|potresti|può)\s+dir(?:mi|e)|dimmi|(?:você\s+)?(?:pode|poderia)\s+me\s+dizer|me\s+diga|"
    r"(?:можешь|можете|подскажи|подскажите|скажи|скажите)(?:\s+мне)?)\b",
    re.IGNORECASE,
)
# Where the question word comes late (Turkish, Hindi, Hinglish): "everest ne kadar yüksek
# ve mona lisa'yı kim yaptı", "taj mahal kisne banwaya aur python me list kaise sort karte".
_LATE_JOIN = re.compile(r"\s+(?:ve|aur|और|và)\s+", re.IGNORECASE)
_WH_LATE = re.compile(
    r"(?<!\w)(?:ne|neden|niçin|nasıl|kim\w*|nere\w*|hangi\w*|kaç|nedir|kya|kyu|kyun|kaise|kaun|"
    r"kab|kahan|kitn\w*|kisne|konsa|kaunsa|क्या|क्यों|कैसे|कौन|कब|कहाँ|कहां|कितन\S*|किसने|"
    r"bao\s+nhiêu|làm\s+sao|tại\s+sao|vì\s+sao|ở\s+đâu|khi\s+nào|gì|nào)(?!\w)",
    re.IGNORECASE,
)


# "然后推荐一部电影", "再给我三个例子": after "then", a verb that asks and a new thing (a
# number or 一 and a measure word), not the thing before ("然后把结果…", "再解释一下每一句").
_CJK_THEN = re.compile(r"[，,]\s*(?:然后|再|并且?|顺便)")
# Two questions run together in Chinese, Korean or Japanese: "珠穆朗玛峰有多高还有怎么煮米饭",
# "에베레스트 산은 얼마나 높나요 그리고 김치는 어떻게 만드나요": "also" between two asks.
_CJK_ALSO = re.compile(r"还有|另外|\s그리고\s|それと|あと、|" + _CJK_THEN.pattern + r"(?=\S)")
_CJK_NEW_ASK = re.compile(
    r"^(?:帮我|给我|请)?(?:推荐|介绍|告诉我|讲|说|写|列出|列举|找|给|翻译)[^，。？！]{0,6}?"
    r"(?:[一两二三四五六七八九十几\d]+\s*(?:个|部|本|首|款|家|种|条|道|篇|句|张|件|位|份|些)|"
    r"(?:怎么|如何|哪|什么|多少))"
)
# What asks about the work before, however new it reads ("然后给我三个修改建议").
_CJK_ON_THE_WORK = re.compile(r"修改|建议|意见|例子|例句|版本|总结|改进|评价|反馈")
# "…방법도요": "… too, please", a request that ends the sentence.
_KO_TOO = re.compile(r"도요\W*$")


def cjk_joins(masked: str, u: Unit) -> list[re.Match[str]]:
    """Where a run of Chinese, Korean or Japanese holding two questions and "also"
    (还有, 그리고, それと) between them is cut: [] unless both sides ask."""
    joins = [
        m
        for m in _CJK_ALSO.finditer(masked, u.body, u.end)
        if m.start() - u.body >= 4
        and u.end - m.end() >= 4
        and _QCJK_ASK.search(masked, u.body, m.start())
        and (
            _CJK_NEW_ASK.match(masked[m.end() : u.end]) is not None
            and _CJK_ON_THE_WORK.search(masked, m.end(), u.end) is None
            if _CJK_THEN.match(m.group())
            else _QCJK_ASK.search(masked, m.end(), u.end) or _KO_TOO.search(masked, m.end(), u.end)
        )
    ]
    return joins[:1]


# Two asks run together by "and" with an additive word after it ("..., and separately
# give me ...", "... y también si puedo ...", "... и ещё как ...", ", ayrıca ..."): the
# additive word says the second is another ask, not more of the first.
_ALSO_JOIN = re.compile(
    r"(?:(?:,\s*|\s+)(?:(?:and|y|e|et|und|en|и|і|й|i|dan|aur|ve|та|oh\s+and)\s+"
    r"(?:also|separately|tambi[ée]n|adem[áa]s|aussi|auch|ook|anche|inoltre|também|ещё|еще|ще|"
    r"также|також|juga|bhi|ayrıca)|(?:और|तथा)\s+(?:साथ\s+(?:में|ही)|यह\s+भी))|"
    r",\s*(?:also|separately|ayrıca|además|inoltre|außerdem|daarnaast|также|також|selain\s+itu))"
    r"(?![^\W\d_])[\s,]*",
    re.IGNORECASE,
)
# What the piece after such a join opens with when it asks: a question word, "if"
# (an indirect question), a request (which REQUEST reads), or a thing asked for.
_ASKS_AFTER_ALSO = re.compile(
    r"^\W*(?:if|whether|si|ob|se|czy|чи|ли|apakah|"
    r"(?:me|mi|mir|moi|мне)\s+\w+|(?:some\s+|a\s+few\s+)?(?:tips|ideas|advice|recommendations|"
    r"suggestions|consejos|ideas|dicas|conseils|tipps|ideeën|советы|поради|saran|ide|öneri\w*))\b",
    re.IGNORECASE,
)


def also_joins(masked: str, u: Unit) -> list[re.Match[str]]:
    """Where a sentence holding two asks joined by "and" and an additive word is cut:
    [] unless the piece after it asks (a question word, "if", a request, a thing
    asked for) and each piece holds three words or more."""
    for m in _ALSO_JOIN.finditer(masked, u.body, u.end):
        after = masked[m.end() : u.end]
        if (
            words(masked[u.body : m.start()]) >= 3
            and words(after) >= 3
            and (
                WH_START.match(after) is not None
                or _WH_PLAIN.match(after) is not None
                or REQUEST.match(after) is not None
                or _ASKS_AFTER_ALSO.match(after) is not None
                or asks_late(after)
            )
        ):
            return [m]
    return []


# Two requests run together by a bare "and", the second opening with a verb that asks
# for something (and often the "me" it is asked for): "kannst du mir X geben und mir
# erklären wie ...", "mi spieghi X e mi consigli Y", "tolong terjemahkan X dan kasih Y".
_AND_ASKS = re.compile(
    r"\s+(?:and|und|et|y|e|dan|en|и|і|ve)\s+(?=(?P<verb>"
    r"(?:give|tell|recommend|suggest|explain|show|send|find)\s+(?:me|us)|"
    r"(?:mir\s+)?(?:erklären|sagen|nennen|empfehlen|zeigen|geben|verraten|vorschlagen)\b|"
    r"(?:mir|uns)\b(?=[^.?!]{3,60}\b(?:erklären|sagen|nennen|empfehlen|zeigen|geben|verraten|"
    r"vorschlagen)\W*$)|"
    r"(?:mi\s+)?(?:consigli|dici|spieghi|dai|suggerisci|indichi|racconti|consiglieresti)\b|"
    r"(?:tu\s+)?(?:me|m')\s*(?:dis|donnes|expliques|conseilles|recommandes|proposes)\b|"
    r"me\s+(?:dices|das|explicas|recomiendas|sugieres|pasas|diz|dá|da|explica|recomenda|passa|indica)\b|"
    r"(?:kasih|berikan|jelaskan|sebutkan|rekomendasikan|carikan|buatkan|sarankan)\b|"
    r"(?:geef|vertel|noem|leg)\s+(?:me|mij)\b|"
    r"(?:посоветуй|подскажи|объясни|расскажи|скажи|дай)\w*\b))",
    re.IGNORECASE,
)


# A sentence that opens by asking, though without "?": "kannst du mir ...", "mi spieghi
# ...", "tolong ...", "could you ...".
_ASKS_AT_START = re.compile(
    r"^\W*(?:(?:can|could|would)\s+you|kannst\s+du|könntest\s+du|können\s+sie|peux-tu|pouvez-vous|"
    r"tu\s+peux|puedes|podrías|puoi|potresti|mi\s+(?:spieghi|dici|consigli|dai)|(?:você\s+)?pode|"
    r"poderia|me\s+(?:explica|diz|dá|passa)|tolong|bisa|bisakah|можешь|можете|kun\s+je|kunt\s+u|"
    r"czy\s+możesz|please|bitte|por\s+favor)\b",
    re.IGNORECASE,
)


def request_joins(masked: str, u: Unit) -> list[re.Match[str]]:
    """Where a sentence of two requests joined by a bare "and" is cut (the second opening
    with a verb that asks; the sentence a question, a request, or a statement that opens
    by asking): [] unless each piece holds three words or more."""
    if u.kind == "s" and _ASKS_AT_START.match(masked[u.body : u.end]) is None:
        return []
    joins: list[re.Match[str]] = []
    for m in _AND_ASKS.finditer(masked, u.body, u.end):
        start = joins[-1].end() if joins else u.body
        if words(masked[start : m.start()]) >= 3 and words(masked[m.end() : u.end]) >= 3:
            joins.append(m)
    return joins


# Two questions typed with nothing between them at all: "whats the capital of peru how
# many legs does a spider have" (a question word and its verb start the second).
_BARE_JOIN = re.compile(
    r"\s+(?=(?:what(?:'s|s)?|who(?:'s|s)?|where|when|why|how|which)\s+(?:is|are|was|were|do|does|did|"
    r"can|could|should|would|will|many|much|long|far|old|big|tall)\b)",
    re.IGNORECASE,
)
# What asks about the question that follows it: "do you know how many ...".
_ASKS_ABOUT = re.compile(
    r"(?:know|tell\s+me|tell\s+us|wonder(?:ing)?|explain|understand|ask(?:ing)?|sure|idea|remember|"
    r"show\s+me|learn|out|figure|see|check|decide|curious|about|on|is|of)\s*$",
    re.IGNORECASE,
)


def asks_late(text: str) -> bool:
    """Whether ``text`` holds a question word where Turkish, Hindi and Hinglish put it
    (before the verb, not first): "Godaan kisne likha?"."""
    return _WH_LATE.search(text) is not None


def bare_joins(masked: str, u: Unit) -> list[re.Match[str]]:
    """Where a sentence with no punctuation at all holding two questions is cut."""
    body = masked[u.body : u.end]
    if re.search(r"[?.,;:!]", body) or WH_START.match(body) is None:
        return []
    joins = [
        m
        for m in _BARE_JOIN.finditer(masked, u.body, u.end)
        if words(masked[u.body : m.start()]) >= 3
        and words(masked[m.end() : u.end]) >= 3
        and not _ASKS_ABOUT.search(masked, u.body, m.start())
    ]
    return joins[:1]


def and_joins(masked: str, u: Unit) -> list[re.Match[str]]:
    if not _JOINER.search(masked, u.body, u.end):
        return bare_joins(masked, u)
    body = masked[u.body : u.end]
    joins = list(_AND_JOIN.finditer(masked, u.body, u.end))
    if not joins and _WH_LATE.search(body):
        joins = [
            m
            for m in _LATE_JOIN.finditer(masked, u.body, u.end)
            if (
                _WH_LATE.search(masked, m.end(), u.end)
                or REQUEST.match(masked[m.end() : u.end]) is not None  # "... aur recipe bata do"
            )
            and _WH_LATE.search(masked, u.body, m.start())
        ][:1]
    elif not joins:
        return []
    elif (frame := _TELL_ME.match(body)) is not None:
        # "Kannst du mir sagen, wie hoch X ist, und wer Y gemalt hat?": the first question
        # goes with the request that asks it
        joins = [m for m in joins if m.start() > u.body + frame.end() + 1]
        if not joins:
            return []
    elif (
        WH_START.match(body) is None
        and _WH_PLAIN.match(body) is None
        and not _WH_LATE.search(masked, u.body, joins[0].start())  # Vietnamese asks late
    ):
        return []
    cuts = [u.body, *(m.start() for m in joins), u.end]
    pieces = [_QUOTED.sub(" q ", masked[a:b]) for a, b in itertools.pairwise(cuts)]
    if any(words(p) < 3 for p in pieces):  # a quoted title counts as a word
        return []
    if all("," in m.group() and not m.group().strip(", ") for m in joins) and len(joins) < 2:
        return []  # "What is X, what is Y?" with a comma alone: only as a list of three or more
    return joins


def trimmed(masked: str, start: int, end: int) -> int:
    """Where a part ends without the semicolon or comma that separated it from the next."""
    while end > start and masked[end - 1] in ";；؛,，、 ":
        end -= 1
    return end


def text_of(text: str, units: list[Unit]) -> str:
    """Units rejoined as written (a line break where they were on different lines)."""
    out = ""
    for k, u in enumerate(units):
        if k:
            out += "\n" if u.line != units[k - 1].line else " "
        out += text[u.start : u.end]
    return out.strip()


_MAYBE_SEVERAL = re.compile(r"[?？؟;；؛。！:：]\s*\S|[.!]\s+\S|\n\s*\S")


def maybe_several(masked: str) -> bool:
    """Whether ``masked`` could hold two units at all (a quick test before reading it)."""
    return bool(
        _MAYBE_SEVERAL.search(masked.rstrip())
        or (_JOINER.search(masked) and _AND_JOIN.search(masked))
        or (_LATE_JOIN.search(masked) and _WH_LATE.search(masked))
        or _CJK_ALSO.search(masked)
        or _ALSO_JOIN.search(masked)
        or _AND_ASKS.search(masked)
        or ("?" not in masked and _BARE_JOIN.search(masked))
        or (
            "," in masked
            and (
                any(IMPERATIVE.match(masked[m.end() :]) for m in _COMMA.finditer(masked))
                or _GIVE_ME.match(masked) is not None
            )
        )
    )


_COMMA = re.compile(r",\s*(?:(?:and|und|et|y|e)\s+)?")


_MAY_COUNT = re.compile(
    r"question|thing|ones|\bqs\b|quer|frage|dinge|pregunt|cosas|duda|domand|pergunt|coisa|вопрос|"
    r"soru|şey|sawal|baat|सवाल|प्रश्न|سؤال|أسئلة|问题|質問|つ|질문|가지|개|vragen|dingen|pytan|rzeczy|sprawy",
    re.IGNORECASE,
)


def drop_headers(text: str) -> tuple[str, str]:
    """``text`` without the units that only count the questions ("Two questions:"),
    and those units."""
    if not text or _MAY_COUNT.search(text) is None:
        return text, ""
    masked = text  # a preamble is read as written
    units = with_leads(text, masked, cut_units(text, masked))
    headers = [u for u in units if HEADER.match(masked[u.start : u.end].strip())]
    if not headers:
        return text, ""
    kept = text
    for u in reversed(headers):
        kept = kept[: u.start] + kept[u.end :]
    return kept.strip(), text_of(text, headers)
