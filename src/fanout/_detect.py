"""Finding the independent questions inside one prompt.

``detect(text)`` is rule-based and needs no model call. It looks for, in order:

1. a list: lines starting with a marker — ``1.`` ``1)`` ``(1)`` ``Q1:`` ``1、`` ``（1）``
   ``①`` ``i.`` ``a)`` ``一、`` or a bullet — numbered in sequence from the first
   value. The last such list whose items read as questions or requests is taken;
   the text before it is the shared preamble (a document the questions are about,
   instructions, an earlier list), the text after it a shared postamble;
2. otherwise, two or more lines that each end with a question mark;
3. otherwise, two or more question sentences in one paragraph.

What is never split: text inside code blocks, inline code, quotes and block
quotes; a list whose items are options (``A. Paris``), things to consider, or steps
of one task (announced by "steps", "in order", "步骤", ...); a single question.

Parts that refer to an earlier part ("it", "that", "the above", "based on your
answer to 2", "then ...", 上面/它/那么, 위의/그것, それ/上記) are grouped with it:
a group is sent as one question, and no group is ever split apart.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["DetectedQuestion", "Detection", "detect"]


@dataclass(frozen=True)
class DetectedQuestion:
    """One part of a prompt, as the user wrote it."""

    marker: str
    """The list marker as written (``"1."``, ``"（2）"``, ``"-"``), or ``""``."""
    text: str
    """The part without its marker (continuation lines included)."""

    @property
    def raw(self) -> str:
        return f"{self.marker} {self.text}" if self.marker else self.text


@dataclass(frozen=True)
class Detection:
    """What ``detect`` found in a prompt."""

    text: str
    preamble: str
    """Shared context or instructions every part needs (may be empty)."""
    questions: list[DetectedQuestion]
    groups: list[list[int]]
    """Indices of ``questions`` that must stay together, in order; every index once."""
    independent: bool
    """True when there are two or more groups: the prompt can be fanned out."""
    confidence: float
    style: str
    """How the parts were marked: ``numbered``, ``paren``, ``q-prefix``, ``cjk``,
    ``circled``, ``roman``, ``letter``, ``bullet``, ``lines``, ``sentences``, or
    ``single``."""
    postamble: str = ""
    """Shared text after the list (e.g. "Answer briefly.")."""
    reasons: list[str] = field(default_factory=list)

    def group_prompt(self, group: Sequence[int]) -> str:
        """The text to send for one group: the shared context and its parts."""
        parts = [self.questions[i].raw for i in group]
        chunks = [self.preamble, "\n".join(parts), self.postamble]
        return "\n\n".join(c for c in chunks if c.strip())

    def heading(self, n: int) -> str:
        """What goes before the answer of group ``n``: its marker, a number for
        unmarked styles, or nothing for a group of several parts (they were asked
        together with their markers, so the answer covers them)."""
        group = self.groups[n]
        if len(group) > 1:
            return ""
        marker = self.questions[group[0]].marker
        if marker:
            return marker
        return f"{n + 1}." if self.style in ("lines", "sentences", "llm") else ""

    def layout(self, answers: Sequence[str]) -> str:
        """Answers (one per group) laid out in the user's own numbering."""
        out = []
        for n, answer in enumerate(answers):
            head = self.heading(n)
            out.append(f"{head} {answer.strip()}" if head else answer.strip())
        if len(out) != len(self.groups):
            raise ValueError(f"{len(self.groups)} groups but {len(out)} answers")
        return "\n\n".join(out)


# --- masking what must never be split -----------------------------------------------
_PROTECTED = [
    re.compile(r"```.*?(?:```|\Z)", re.DOTALL),
    re.compile(r"~~~.*?(?:~~~|\Z)", re.DOTALL),
    re.compile(r"`[^`\n]+`"),
    re.compile(r"^[ \t]*>.*$", re.MULTILINE),
    re.compile(r"\"[^\"\n]{0,400}\"|“[^”]{0,400}”|「[^」]{0,400}」|『[^』]{0,400}』|«[^»]{0,400}»"),
]


def _mask(text: str) -> str:
    """Blank out protected spans, keeping every offset and line break."""
    chars = list(text)
    for pattern in _PROTECTED:
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

_MARKERS: list[tuple[str, re.Pattern[str]]] = [
    (
        "q-prefix",
        re.compile(
            r"(?:Q|q|Question|question|问题|問題|質問|질문|문제)\s*(\d{1,2})\s*[:.：)）]\s*"
        ),
    ),
    ("paren", re.compile(r"[(（](\d{1,2})[)）]\s*")),
    ("cjk", re.compile(r"(\d{1,2})、\s*")),
    ("cjk", re.compile(r"([一二三四五六七八九十])[、.．]\s*")),
    ("numbered", re.compile(r"(\d{1,2})[.．](?!\d)\s*")),
    ("numbered", re.compile(r"(\d{1,2})[)）]\s*")),
    ("circled", re.compile(r"([①-⑳])\s*")),
    ("roman", re.compile(r"((?:i{1,3}|iv|vi{0,3}|ix|xi{0,2}))[.)]\s+", re.IGNORECASE)),
    ("letter", re.compile(r"\(([a-zA-Z])\)\s+")),
    ("letter", re.compile(r"([a-zA-Z])[.)]\s+")),
    ("bullet", re.compile(r"[-*•・·]\s+")),
]


@dataclass
class _Item:
    kind: str
    value: int
    marker: str
    line: int
    start: int  # offset of the item's text (after the marker)
    case: str = ""


def _marker_value(kind: str, raw: str) -> tuple[int, str]:
    if kind == "bullet":
        return 0, ""
    if kind == "circled":
        return _CIRCLED[raw], ""
    if kind == "roman":
        return _ROMAN.get(raw.lower(), 0), "upper" if raw.isupper() else "lower"
    if kind == "letter":
        return ord(raw.lower()) - ord("a") + 1, "upper" if raw.isupper() else "lower"
    if raw in _CN_NUM:
        return _CN_NUM[raw], "cn"
    return int(raw), ""


def _find_items(masked: str) -> list[_Item]:
    items = []
    offset = 0
    for lineno, line in enumerate(masked.split("\n")):
        stripped = line.lstrip(" \t")
        indent = len(line) - len(stripped)
        if indent <= 3 and stripped:
            for kind, pattern in _MARKERS:
                m = pattern.match(stripped)
                if m is None:
                    continue
                raw = m.group(1) if m.groups() else ""
                value, case = _marker_value(kind, raw)
                if kind != "bullet" and value == 0:
                    continue
                rest = stripped[m.end() :]
                if not rest.strip() or "\x00" in stripped[: m.end()]:
                    continue
                marker = stripped[: m.end()].rstrip()
                items.append(_Item(kind, value, marker, lineno, offset + indent + m.end(), case))
                break
        offset += len(line) + 1
    return items


def _runs(items: list[_Item]) -> list[list[_Item]]:
    """Consecutive items of one kind numbered in sequence (or bullets): the lists."""
    runs: list[list[_Item]] = []
    current: list[_Item] = []
    for item in items:
        if current:
            last = current[-1]
            same_kind = item.kind == last.kind and item.case == last.case
            in_sequence = item.kind == "bullet" or item.value == last.value + 1
            if same_kind and in_sequence:
                current.append(item)
                continue
            runs.append(current)
        current = [item] if (item.kind == "bullet" or item.value == 1) else []
    if current:
        runs.append(current)
    return [r for r in runs if len(r) >= 2]


# --- reading the parts ------------------------------------------------------------------
_QUESTION_END = re.compile(r"[?？]\s*[)\]」』\"”]*\s*$")
_QWORDS_EN = (
    "what|why|how|who|whom|whose|when|where|which|is|are|was|were|do|does|did|can|could|should|"
    "would|will|shall|may|might|have|has|had|explain|describe|list|name|give|define|compare|"
    "contrast|summarize|summarise|translate|write|calculate|compute|find|tell|show|suggest|"
    "recommend|outline|discuss|identify|provide|state|classify|convert|evaluate|estimate|create|"
    "draft|generate|rewrite|propose|please|solve|prove|derive|analyze|analyse|predict|pick|choose|"
    "recommend|use|make|plan|design|build|implement|sort|check|help|paraphrase|proofread|"
    "invent|imagine|brainstorm|draw|compose|rank|rate|review|fix|debug|refactor|optimize|"
    "simplify|improve|edit|format|extract|count|categorize|come up|think of|teach|introduce|"
    "qué|que|por|cómo|como|cuál|cual|quién|cuándo|dónde|explica|describe|warum|wie|was|wer|wann|wo|"
    "welche|erkläre|beschreibe|pourquoi|comment|quel|quelle|qui|quand|où|explique|décris|perché|"
    "cosa|chi|quando|dove|spiega"
)
_QSTART = re.compile(rf"^\W*(?:{_QWORDS_EN})\b", re.IGNORECASE)
_QCJK = re.compile(
    r"[吗嗎呢么麼]|什么|什麼|为什么|為什麼|怎么|怎麼|怎样|如何|哪|谁|誰|几|多少|是否|请|請|解释|介绍|说明|列举|比较|翻译|计算|"
    r"^(?:推荐|写|给|列出|总结|描述|分析|简述|举例|告诉|论述|简要|概括|说出|说说|讲讲|谈谈|举出|提供|设计|想|编)|"
    r"ですか|ますか|でしょうか|なぜ|何|どう|どの|誰|いつ|どこ|教えて|説明して|ください|"
    r"무엇|뭐|왜|어떻게|언제|어디|누구|어느|설명|알려|까요|니까|인가요|나요|세요|주세요"
)
_STEPS = re.compile(
    r"\b(?:steps?|procedure|in (?:this|that|the following) order|in order|follow(?:ing)? these|"
    r"do the following|instructions?|recipe|checklist|options?|choices?|choose|pick|select|"
    r"which of the following|consider|criteria|requirements?|constraints?|rules?)\b|"
    r"步骤|依次|按顺序|以下选项|选项|选择|下列哪|单选|多选|要求|条件|단계|순서대로|선택|보기|手順|順番|選択肢|選んで",
    re.IGNORECASE,
)
_MANY_QUESTIONS = re.compile(
    r"\b(?:questions|each of|separately|the following questions|answer (?:all|each|these|the following))\b|"
    r"以下问题|下列问题|几个问题|以下の質問|次の質問|다음 질문|질문들|各问题|分别",
    re.IGNORECASE,
)
_DEP_START = re.compile(
    r"^\W*(?:(?:it|its|it's|that|this|these|those|they|them|their|then|and then|so|if so|if not|"
    r"based on|using (?:that|this|it|the|your)|given (?:that|this|the above|your)|"
    r"from (?:that|this|the above|your)|with (?:that|this|it)|for (?:that|this|it)|the above|above|"
    r"the (?:result|answer|previous|same)|same|in that case|next,|after that|add|now)(?:\b|\s|[,，、])|"
    r"那么|那|它|它们|上面|上述|根据|基于|这个|这|该|然后|如果是|再|"
    r"그것|그걸|그럼|그러면|그리고 그|위의|위 |이를|이것|그 |앞의|"
    r"それ|上記|その|これ|では|次に)",
    re.IGNORECASE,
)
# A pronoun anywhere in a later part points back at an earlier one: grouping is the
# safe side (a group is still answered; only a split apart would lose context).
_DEP_PRONOUN = re.compile(
    r"\b(?:it|its|it's|they|them|their|theirs|those|that (?:word|number|one|name|book|list|poem|"
    r"text|summary|answer|result|language|city|country|person|place|idea)|"
    r"this (?:word|number|one|name|book|list|poem|text|summary|answer|result)|the result|too)\b|"
    r"它|它们|그것|그녀|그는|그의|それ|その|彼|彼女",
    re.IGNORECASE,
)
_DEP_ALL = re.compile(
    r"\b(?:(?:the |your )?(?:previous|above|earlier|last) (?:answers|questions|results|ones)|"
    r"(?:answers|results) above|all of the above|both of (?:them|these|those)|the two(?: above)?|"
    r"(?:based on|from|using|given) the above|the above|compare (?:them|these|those|the two|both)|"
    r"(?:of|for|to|about) (?:each|both)(?: of them)?|each of (?:them|these|those)|all of them)\b|"
    r"以上|上面|上述|两者|各自|分别举|위의|위에서|둘 다|각각|上記|それぞれ|両方",
    re.IGNORECASE,
)
# "And the GDP of Germany?": a short part that opens with a conjunction leans on the one before.
_ELLIPTIC = re.compile(
    r"^\W*(?:and|or|also|what about|how about|und|et|y|还有|那|그리고|それと)\b", re.IGNORECASE
)
_DEP_ANYWHERE = re.compile(
    r"(?:your (?:answer|response) to (?:question |q|#|number |part )?(\d+))|"
    r"(?:(?:question|part|item|step|q|#)\s*(\d+) (?:above|before))|"
    r"(?:based on (?:question |q|#|part )(\d+))|(?:from (?:question |q|#|part )(\d+))|"
    r"(?:(?:the|your) (?:previous|above|last|earlier) (?:answer|question|result|response|one|part))|"
    r"(?:第(\d+)[题題])|(?:(\d+)번(?:에| 질문| 답))|上一题|上题|上一个问题|前の質問|上の質問|위 질문|앞의 답|"
    r"\b(?:the above|mentioned above|from above|as above)\b|上面的|上述的|위에서|위의",
    re.IGNORECASE,
)


_FOLLOW_UP = re.compile(
    r"^\W*(?:why or why not|why not|if so|if not|how so|and why|or why|explain why|why\?|"
    r"what about|how about|is that|are they|does it|can it|为什么呢|那呢|왜요|なぜですか)",
    re.IGNORECASE,
)
# Two question sentences are often one question asked twice ("Is it safe? What are the
# risks?"): split a pair only when the text says it holds several questions.
_ANOTHER = re.compile(
    r"\b(?:also|another question|separately|two questions|unrelated|on another note|one more thing|"
    r"second question|and another)\b|另外|还有一个问题|另一个问题|两个问题|또 다른 질문|그리고 또|別の質問|それと",
    re.IGNORECASE,
)
_CONJ = re.compile(
    r"^\W*(?:or|and|also|oder|und|ou|et|o|y|还是|或者|아니면|그리고|それとも)\b[,\s]*",
    re.IGNORECASE,
)


def _is_questionlike(text: str) -> bool:
    t = text.strip()
    if not t:
        return False
    first_line = t.split("\n", 1)[0]
    return bool(
        _QUESTION_END.search(first_line)
        or _QUESTION_END.search(t)
        or _QSTART.search(t)
        or _QCJK.search(first_line)
    )


def _words(text: str) -> int:
    cjk = len(re.findall(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]", text))
    return len(re.findall(r"[A-Za-zÀ-ÿ0-9']+", text)) + cjk // 2


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


def _dependencies(
    parts: list[str], values: list[int] | None = None, *, shared_context: bool = False
) -> list[list[int]]:
    """Group parts that refer to earlier parts (with the one they name, the one
    before them, or all before them).

    With a shared context (a preamble every part is sent with), a bare pronoun
    ("How much does it weigh?") may point into the context rather than at the part
    before, so it alone does not group; explicit references still do.
    """
    g = _Groups(len(parts))
    by_value = {v: i for i, v in enumerate(values)} if values else {}
    for i, part in enumerate(parts):
        if i == 0:
            continue
        if _DEP_ALL.search(part):
            for j in range(i):
                g.union(i, j)
            continue
        target: int | None = None
        m = _DEP_ANYWHERE.search(part)
        if m is not None:
            named = next((int(x) for x in m.groups() if x), None)
            if named is not None:
                target = by_value.get(named, named - 1 if 0 < named <= i else None)
            if target is None:
                target = i - 1
        elif (
            _DEP_START.search(part)
            or (_ELLIPTIC.search(part) and _words(part) < 7)
            or (not shared_context and _DEP_PRONOUN.search(part))
        ):
            target = i - 1
        if target is not None and 0 <= target < i:
            g.union(i, target)
    return g.groups()


def _single(text: str, confidence: float, reason: str) -> Detection:
    return Detection(
        text=text, preamble="", questions=[DetectedQuestion("", text.strip())], groups=[[0]],
        independent=False, confidence=confidence, style="single", reasons=[reason],
    )  # fmt: skip


def _from_list(text: str, masked: str, run: list[_Item]) -> tuple[str, list[DetectedQuestion], str]:
    lines = text.split("\n")
    masked_lines = masked.split("\n")
    offsets = [0]
    for text_line in lines:
        offsets.append(offsets[-1] + len(text_line) + 1)
    preamble = text[: offsets[run[0].line]].strip()
    parts: list[DetectedQuestion] = []
    end_line = len(lines)
    for n, item in enumerate(run):
        stop = run[n + 1].line if n + 1 < len(run) else None
        body = [text[item.start : offsets[item.line + 1] - 1]]
        line = item.line + 1
        limit = stop if stop is not None else len(lines)
        while line < limit:
            raw = lines[line]
            if stop is None:
                # After the last item: indented lines and lines before a blank line
                # continue it; the rest is shared postamble.
                if not raw.strip():
                    nxt = line + 1
                    if (
                        nxt < len(lines)
                        and lines[nxt].startswith((" ", "\t"))
                        and lines[nxt].strip()
                    ):
                        body.append(raw)
                        line += 1
                        continue
                    break
                if (
                    masked_lines[line].strip()
                    and not raw.startswith((" ", "\t"))
                    and len(body) > 0
                    and _ends_sentence(body[-1])
                ):
                    break
            body.append(raw)
            line += 1
        end_line = line
        parts.append(DetectedQuestion(item.marker, "\n".join(body).strip()))
    postamble = "\n".join(lines[end_line:]).strip()
    return preamble, parts, postamble


def _ends_sentence(line: str) -> bool:
    return bool(re.search(r"[?？.。!！:：]\s*$", line.strip()))


def _sentences(paragraph: str) -> list[str]:
    """Split a paragraph after question marks (and keep statements with what follows)."""
    pieces = re.split(r"(?<=[?？])\s+|(?<=[？])", paragraph.strip())
    return [p.strip() for p in pieces if p.strip()]


def detect(text: str) -> Detection:
    """Find the independent questions in ``text`` (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"detect() takes a str, not {type(text).__name__}")
    if not text.strip():
        return _single(text, 1.0, "empty")
    masked = _mask(text)

    # 1. Lists.
    runs = _runs(_find_items(masked))
    for run in reversed(runs):
        preamble, parts, postamble = _from_list(text, masked, run)
        style = run[0].kind
        qlike = [_is_questionlike(p.text) for p in parts]
        shared = _words(preamble) >= 8
        groups = _dependencies(
            [p.text for p in parts],
            [i.value for i in run] if style != "bullet" else None,
            shared_context=shared,
        )
        heads = [qlike[g[0]] for g in groups]
        share = sum(heads) / len(heads)
        context = f"{preamble}\n{postamble}"
        announced = bool(_MANY_QUESTIONS.search(context))
        steps = bool(_STEPS.search(preamble)) and not announced
        options = (style == "letter" and run[0].case == "upper" and not any(q for q in qlike)) or (
            not any(qlike) and bool(_QUESTION_END.search(preamble))
        )
        if options:
            continue  # options of one question: this list is not the questions
        if steps and not all(_QUESTION_END.search(p.text) for p in parts):
            return _single(text, 0.8, "a list of steps or items of one task")
        needed = 0.5 if announced else 0.75
        if share < needed:
            if (
                preamble
                and _QUESTION_END.search(preamble.split("\n")[-1]) is None
                and not announced
            ):
                return _single(text, 0.75, "a list of things to consider in one task")
            continue
        confidence = 0.95 if share == 1 else 0.75 + 0.2 * share
        if style == "bullet":
            confidence -= 0.1
        return Detection(
            text=text, preamble=preamble, questions=parts, groups=groups,
            independent=len(groups) > 1, confidence=round(min(confidence, 0.99), 2),
            style=style, postamble=postamble, reasons=[f"a {style} list of {len(parts)} questions"],
        )  # fmt: skip
    if runs:
        return _single(text, 0.7, "lists that are not questions")

    # 2. One question per line.
    lines = [line for line in text.strip().split("\n")]
    masked_lines = masked.strip().split("\n")
    question_lines = [
        i for i, (line, m) in enumerate(zip(lines, masked_lines, strict=True))
        if _QUESTION_END.search(m) and _words(line) >= 3
    ]  # fmt: skip
    if len(question_lines) >= 2:
        first = question_lines[0]
        tail = [line for line in lines[first:] if line.strip()]
        if all(_QUESTION_END.search(line) for line in tail) and len(tail) == len(question_lines):
            parts = [DetectedQuestion("", line.strip()) for line in tail]
            groups = _dependencies([p.text for p in parts])
            return Detection(
                text=text, preamble="\n".join(lines[:first]).strip(), questions=parts, groups=groups,
                independent=len(groups) > 1, confidence=0.8, style="lines",
                reasons=[f"{len(parts)} lines that are each a question"],
            )  # fmt: skip

    # 3. Several questions in one paragraph.
    paragraphs = [p for p in re.split(r"\n\s*\n", text.strip()) if p.strip()]
    last = paragraphs[-1]
    if "\x00" not in _mask(last):
        sentences = _sentences(last)
        merged: list[str] = []
        statements: list[str] = []
        lead: list[str] = []
        for s in sentences:
            if not _QUESTION_END.search(s):
                statements.append(s)
                continue
            if not merged:
                lead, statements = statements, []
                merged.append(s)
                continue
            if (
                _FOLLOW_UP.search(s)
                or (_CONJ.search(s) and (_words(s) < 5 or not _is_questionlike(_CONJ.sub("", s))))
                or _words(s) < 3
            ):
                merged[-1] = " ".join([merged[-1], *statements, s])
            else:
                merged.append(" ".join([*statements, s]))
            statements = []
        cue = _MANY_QUESTIONS.search(last) or _ANOTHER.search(last)
        if (len(merged) >= 3 or (len(merged) == 2 and cue)) and not statements:
            parts = [DetectedQuestion("", s) for s in merged]
            groups = _dependencies([p.text for p in parts])
            preamble = "\n\n".join([*paragraphs[:-1], " ".join(lead)]).strip()
            return Detection(
                text=text, preamble=preamble, questions=parts, groups=groups,
                independent=len(groups) > 1, confidence=0.65, style="sentences",
                reasons=[f"{len(parts)} question sentences in one paragraph"],
            )  # fmt: skip
    return _single(text, 0.9, "one question")
