"""Where a prompt's parts start: masking what must never be split, and list markers.

A marker starts an item at the start of a line (indented by at most three spaces), or
in the middle of a line right after the end of a sentence or a colon (``1. What is X?
2. Explain Y.``, ``Q1: … Q2: …``, ``1、…？2、…？``): lists written on one line. Heading
numbering (``问题一：``, ``第二题：``, ``問1：``, ``문제 1.``, ``Question 2:``), CJK ordinals
(``第一，``, ``第二に、``) and Korean letters (``가)``, ``나)``) are markers of their own kinds.
"""

from __future__ import annotations

import bisect
import functools
import re
from dataclasses import dataclass

__all__ = ["Item", "find_items", "mask", "runs"]

# --- masking what must never be split -----------------------------------------------
_PROTECTED: list[tuple[tuple[str, ...], re.Pattern[str]]] = [
    (("`",), re.compile(r"`[^`\n]+`")),
    ((">",), re.compile(r"^[ \t]*>.*$", re.MULTILINE)),
    (
        ('"', "“", "「", "『", "«"),
        re.compile(
            r"\"[^\"\n]{0,400}\"|“[^”]{0,400}”|「[^」]{0,400}」|『[^』]{0,400}』|«[^»]{0,400}»"
        ),
    ),
    # A text quoted in single quotes that holds a sentence end (a message to check or
    # translate: "Pode revisar? 'Você recebeu? Podemos conversar?'"): its questions are
    # the material, not asks. It opens after a space or a colon and closes right after
    # the sentence's punctuation; an apostrophe inside a word ("haven't") stays in it.
    (
        ("'",),
        re.compile(
            r"(?<![\w'])'(?=[^\s'])(?:[^'\n]|(?<=[^\W\d_])'(?=[^\W\d_])){1,400}?"
            r"[?？؟.!…]'(?![\w])"
        ),
    ),
    # Code outside fences: an indented line that reads as code (``x = f()``,
    # ``retries: 3``, ``SELECT ...``), a comment line, and a comment after code.
    (
        ("    ", "\t"),
        re.compile(
            r"^(?:    |\t)(?![ \t]*(?:\d{1,4}[.)]|\(\d{1,4}\)|[-*•]|[a-z]\))[ \t]+[^\W\d_][^=;{}<>\n]*$)"
            r"[ \t]*(?:[^\n]*[=(){}\[\];<>][^\n]*|[\w.-]+:[ \t][^\n]*|"
            r"(?:def|class|return|import|from|if|for|while|else|elif|try|except|function|"
            r"const|let|var|SELECT|WHERE|FROM|INSERT|UPDATE)\b[^\n]*)$",
            re.MULTILINE,
        ),
    ),
    (("#", "//", "--"), re.compile(r"^[ \t]+#[^\n]*$|^[ \t]*(?://|--)[ \t][^\n]*$", re.MULTILINE)),
    # SQL outside fences: a line that opens with an upper-case statement keyword
    (
        ("SELECT", "INSERT", "UPDATE", "DELETE", "CREATE", "ALTER", "WITH"),
        re.compile(
            r"^[ \t]*(?:SELECT|INSERT\s+INTO|UPDATE|DELETE\s+FROM|CREATE\s+(?:TABLE|INDEX|VIEW)|"
            r"ALTER\s+TABLE|WITH)\s[^\n]*$",
            re.MULTILINE,
        ),
    ),
    (
        ("#", "//", "--"),
        re.compile(r"(?<=[\w)\]}'\";,])[ \t]+(?:#|//|--)[ \t][^\n]*$", re.MULTILINE),
    ),
]


# A run of three or more backticks or tildes: a fence at the start of a line (indented
# by at most three spaces), a code span in the middle of one.
_FENCE_RUN = re.compile(r"`{3,}|~{3,}")


def _fences(text: str) -> list[tuple[int, int]]:
    """The spans of fenced code. As in CommonMark, a fence at the start of a line closes
    only on a line holding nothing but a fence of the same character at least as long
    (a ```` fence may show a ``` one); one left open runs to the end of the text. A run
    in the middle of a line closes on the next run of the same character and length."""
    spans: list[tuple[int, int]] = []
    pos = 0
    while (m := _FENCE_RUN.search(text, pos)) is not None:
        run = m.group()
        line_start = text.rfind("\n", 0, m.start()) + 1
        line_end = text.find("\n", m.end())
        indent = text[line_start : m.start()]
        info = text[m.end() : line_end if line_end >= 0 else len(text)]
        # (a backtick fence's info string holds no backtick: "```x``` ..." is a code span)
        if (
            len(indent.expandtabs(4)) <= 3
            and not indent.strip()
            and not (run[0] == "`" and "`" in info)
        ):
            close = re.compile(
                rf"^[ ]{{0,3}}{re.escape(run[0])}{{{len(run)},}}[ \t]*$", re.MULTILINE
            )
            found = close.search(text, line_end) if line_end >= 0 else None
        else:
            close = re.compile(rf"(?<!{re.escape(run[0])}){re.escape(run)}(?!{re.escape(run[0])})")
            found = close.search(text, m.end())
        end = found.end() if found is not None else len(text)
        spans.append((m.start(), end))
        pos = end
    return spans


_ANY_PROTECTED = re.compile(
    r"[`~>\"'“「『«#\t]|    |//|--|SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|WITH"
)


def mask(text: str) -> str:
    """Blank out protected spans (code, quotes), keeping every offset and line break."""
    if _ANY_PROTECTED.search(text) is None:
        return text
    chars = list(text)
    spans = _fences(text) if "```" in text or "~~~" in text else []
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = "\x00"
    for needles, pattern in _PROTECTED:
        if not any(n in text for n in needles):
            continue
        for m in pattern.finditer(text):
            for i in range(m.start(), m.end()):
                if chars[i] != "\n":
                    chars[i] = "\x00"
    return "".join(chars)


# --- list markers ----------------------------------------------------------------------
_ROMAN = {"i": 1, "ii": 2, "iii": 3, "iv": 4, "v": 5, "vi": 6, "vii": 7, "viii": 8, "ix": 9, "x": 10,
          "xi": 11, "xii": 12}  # fmt: skip
_CN_NUM = {c: i for i, c in enumerate("一二三四五六七八九十", 1)}
_CIRCLED = {c: i for i, c in enumerate("①②③④⑤⑥⑦⑧⑨⑩⑪⑫⑬⑭⑮⑯⑰⑱⑲⑳", 1)}
_HANGUL = {c: i for i, c in enumerate("가나다라마바사아자차카타파하", 1)}
_NUM = r"(\d{1,4}|[一二三四五六七八九十])"
_EMOJI = r"(?:[\u2600-\u27bf\u2b00-\u2bff]|[\U0001f000-\U0001faff])\ufe0f?"

# (kind, pattern, also in mid-line)
_QWORD = (
    r"Q|q|Question|question|Frage|Pregunta|pregunta|Domanda|domanda|Pergunta|pergunta|Вопрос|вопрос|"
    r"Soru|soru|سؤال|प्रश्न|सवाल|Step|step|Task|task|Part|part|问题|問題|质问|質問|题目|題目|질문|문제|問"
)
_MARKERS: list[tuple[str, re.Pattern[str], bool]] = [
    (
        "q-prefix",
        re.compile(
            rf"\*\*\s*(?:(?:{_QWORD})\s*)?{_NUM}\s*[:.：．)）、]?\s*\*\*\s*[:.：．)）、]?\s*"
        ),
        True,
    ),
    ("q-prefix", re.compile(rf"(?:{_QWORD})\s*{_NUM}\s*(?:[:.：．)）、]|\s[-–—](?=\s))\s*"), True),
    ("q-prefix", re.compile(rf"第{_NUM}(?:个问题|個問題|题|題|问|問)\s*[:：、.．]?\s*"), True),
    ("ordinal", re.compile(r"第([一二三四五六七八九十])(?:に)?[，,、：:]\s*"), True),
    ("ordinal", re.compile(r"([一二三四五六七八九十])是(?=[^，,。？?]{2})"), True),
    ("paren", re.compile(r"[(（](\d{1,4}|[一二三四五六七八九十])[)）]\s*"), True),
    ("cjk", re.compile(r"(\d{1,4})、\s*"), True),
    ("cjk", re.compile(r"([一二三四五六七八九十])[、.．]\s*"), True),
    ("numbered", re.compile(r"(\d{1,4})[.．](?!\d)\s*"), True),
    ("numbered", re.compile(r"(\d{1,4})[)）]\s*"), True),
    ("numbered", re.compile(r"(\d{1,4}) ?[-–] +"), False),
    ("numbered", re.compile(r"(\d{1,4})/ +"), False),
    ("circled", re.compile(r"([①-⑳])\s*"), True),
    ("roman", re.compile(r"((?:i{1,3}|iv|vi{0,3}|ix|xi{0,2}))[.)]\s+", re.IGNORECASE), False),
    ("letter", re.compile(r"\(([a-zA-Z])\)\s+"), True),
    ("letter", re.compile(r"([a-zA-Z])\)\s+"), True),
    ("letter", re.compile(r"([a-zA-Z])[.]\s+"), False),
    ("hangul", re.compile(r"([가나다라마바사아자차카타파하])\)\s*"), True),
    ("hangul", re.compile(r"([가나다라마바사아자차카타파하])[.]\s+"), False),
    ("bullet", re.compile(rf"(?:[-*•・·+–—●○■□▪◦‣►➤✓✔→]|{_EMOJI})\s+|・"), False),
]


@dataclass
class Item:
    kind: str
    value: int
    marker: str
    line: int
    mstart: int  # offset of the marker
    start: int  # offset of the item's text (after the marker)
    case: str = ""
    inline: bool = False  # the marker is not at the start of its line
    indent: int = 0  # columns of white space before a marker at the start of a line
    loose: bool = False  # in the middle of a sentence ("tell me 1) ... 2) ..."), not after its end


def _marker_value(kind: str, raw: str) -> tuple[int, str]:
    if kind == "bullet":
        return 0, ""
    if kind == "q-prefix" and raw.isdigit():
        return int(raw), ""
    if kind == "circled":
        return _CIRCLED[raw], ""
    if kind == "hangul":
        return _HANGUL[raw], ""
    if kind == "roman":
        return _ROMAN.get(raw.lower(), 0), "upper" if raw.isupper() else "lower"
    if kind == "letter":
        return ord(raw.lower()) - ord("a") + 1, "upper" if raw.isupper() else "lower"
    if raw in _CN_NUM:
        return _CN_NUM[raw], "cn"
    return int(raw), ""


# Where a marker could start in the middle of a line (one check before trying each kind).
_MAYBE_MIDLINE = re.compile(
    rf"(?:{_QWORD}|第)\s*[\d一二三四五六七八九十]|[一二三四五六七八九十]是|\*\*|[(（][\da-zA-Z一二三四五六七八九十]|\d{{1,4}}[、.．)）]|"
    r"[一二三四五六七八九十][、.．]|[①-⑳]|[a-zA-Z가나다라마바사아자차카타파하]\)"
)


_MAYBE_START = re.compile(
    _MAYBE_MIDLINE.pattern
    + r"|[a-zA-Z]{1,4}[.)]\s|\([a-zA-Z]\)|[-*•・·+–—●○■□▪◦‣►➤✓✔→]\s|・|[가나다라마바사아자차카타파하]\.\s"
    + rf"|\d{{1,4}} ?[-–] |\d{{1,4}}/ |{_EMOJI}\s"
)


# A mid-line position right before something that could be a marker.
_MIDLINE_AT = re.compile(
    rf"(?:(?<=[?!.;:؟।])[ \t]+|(?<=[？！。；：])[ \t]*)(?={_MAYBE_MIDLINE.pattern})"
)
# "一是…，二是…": enumerations after a comma or a colon (Chinese).
_SHI_ORDINAL_AT = re.compile(r"(?<=[，,：:；;])[ \t]*(?=[一二三四五六七八九十]是)")
# A position inside a sentence before "1)" or "(1)": "tell me 1) ... 2) ...", "(1) ..., and (2) ...".
_LOOSE_AT = re.compile(r"(?<=[^\W_]|,)[ \t]+(?=\(?\d{1,4}\)[ \t]|\([a-z]\)[ \t])")


# The characters each kind of marker can begin with (to try only those that can match).
_FIRST = {
    "q-prefix": re.compile(r"[*QqFfPpDdВвSsTtسपस问問质質题題질문第]"),
    "ordinal": re.compile("[第一二三四五六七八九十]"),
    "paren": re.compile("[(（]"),
    "cjk": re.compile(r"[\d一二三四五六七八九十]"),
    "numbered": re.compile(r"\d"),
    "circled": re.compile("[①-⑳]"),
    "roman": re.compile("[ivxIVX]"),
    "letter": re.compile(r"[(a-zA-Z]"),
    "hangul": re.compile("[가나다라마바사아자차카타파하]"),
    "bullet": re.compile(rf"[-*•・·+–—●○■□▪◦‣►➤✓✔→]|{_EMOJI}"),
}
# In the middle of a sentence only "1)" and "(1)" can start an item.
_LOOSE_KINDS = ("numbered", "paren", "letter")


@functools.lru_cache(maxsize=256)
def _markers_from(first: str) -> list[tuple[str, re.Pattern[str], bool]]:
    """The markers that can begin with the character ``first``, in order."""
    return [m for m in _MARKERS if _FIRST[m[0]].match(first)]


def _match(
    masked_line: str, pos: int, inline: bool, loose: bool = False
) -> tuple[str, re.Match[str]] | None:
    if (_MAYBE_MIDLINE if inline else _MAYBE_START).match(masked_line, pos) is None:
        return None
    for kind, pattern, midline in _markers_from(masked_line[pos]):
        if (inline and not midline) or (loose and kind not in _LOOSE_KINDS):
            continue
        m = pattern.match(masked_line, pos)
        if m is None:
            continue
        raw = m.group(1) if m.groups() else ""
        value, _ = _marker_value(kind, raw)
        if kind != "bullet" and value == 0:
            continue
        if not masked_line[m.end() :].strip() or "\x00" in masked_line[pos : m.end()]:
            continue
        return kind, m
    return None


def find_items(masked: str) -> list[Item]:
    """Every marker that may start an item, in order."""
    items = []
    lines = masked.split("\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line) + 1)
    starts: list[tuple[int, int, bool, bool]] = []  # (line, position, inline, loose)
    for lineno, line in enumerate(lines):
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        if stripped and (indent <= 3 or _columns(line[:indent]) <= 8):
            starts.append((lineno, indent, False, False))
    for pattern, loose in ((_MIDLINE_AT, False), (_SHI_ORDINAL_AT, False), (_LOOSE_AT, True)):
        if (loose and ")" not in masked) or (pattern is _SHI_ORDINAL_AT and "是" not in masked):
            continue
        for m in pattern.finditer(masked):
            lineno = bisect.bisect_right(offsets, m.end()) - 1
            if m.end() > offsets[lineno] + len(lines[lineno]) - len(lines[lineno].lstrip(" \t")):
                starts.append((lineno, m.end() - offsets[lineno], True, loose))
    starts.sort()
    for lineno, pos, inline, loose in starts:
        line = lines[lineno]
        found = _match(line, pos, inline, loose)
        if found is None:
            continue
        kind, m = found
        raw = m.group(1) if m.groups() else ""
        value, case = _marker_value(kind, raw)
        marker = line[pos : m.end()].rstrip()
        offset = offsets[lineno]
        items.append(
            Item(
                kind,
                value,
                marker,
                lineno,
                offset + pos,
                offset + m.end(),
                case,
                inline,
                0 if inline else _columns(line[:pos]),
                loose,
            )
        )
    return items


def _columns(indent: str) -> int:
    return len(indent.expandtabs(4))


def runs(items: list[Item]) -> list[list[Item]]:
    """Consecutive items of one kind numbered in sequence (or bullets): the lists."""
    out: list[list[Item]] = []
    current: list[Item] = []
    for item in items:
        if current:
            last = current[-1]
            same_kind = item.kind == last.kind and item.case == last.case
            in_sequence = item.kind == "bullet" or item.value == last.value + 1
            if same_kind and in_sequence and not (item.loose and not last.inline):
                current.append(item)
                continue
            if item.inline and not (item.value == 1 and item.kind != "bullet"):
                continue  # a number inside an item's text ("costs 2. 5 were sold") is no marker
            if not item.inline and not last.inline and item.indent > current[0].indent:
                continue  # a sub-item of the item before
            out.append(current)
        current = [item] if (item.kind == "bullet" or item.value == 1) else []
    if current:
        out.append(current)
    return [r for r in out if len(r) >= 2]
