"""Finding the independent questions inside one prompt.

``detect(text)`` is rule-based and needs no model call. It looks for, in order:

1. a list: parts starting with a marker — ``1.`` ``1)`` ``(1)`` ``Q1:`` ``**Question 1:**``
   ``1、`` ``（1）`` ``①`` ``i.`` ``a)`` ``一、`` ``问题一：`` ``第二题：`` ``問1：`` ``문제 1.``
   or a bullet (``-`` ``•`` ``・`` an emoji) — numbered in sequence from the first value,
   each at the start of a line (indented or not) or, for a list written on one line,
   right after the end of a sentence or a colon, or inside a sentence when what comes
   before asks for the items ("tell me 1) ... 2) ...", "(1) ..., and (2) ...?"). The last
   such list whose items read as questions or requests is taken; the text before it is
   the shared preamble (a document, instructions, an earlier list), the text after it a
   shared postamble; a header that only counts the questions ("Two questions:") is
   left out of both;
2. otherwise, questions and requests in sentences or lines (``_prose``): question
   sentences and lines, requests, several questions joined by "and", items between
   semicolons; an instruction before or after them ("Reply in Spanish.", "Keep each
   answer short.") goes with every part, a connective that opens a part ("Also,",
   "Separately,", "First,", También, И ещё:, 그리고, 还有，, أيضاً، ...) is left out of it.

What is never split: text inside code (fenced, indented, or a comment after code),
inline code, quotes and block quotes; a list whose items are options (``A. Paris``,
"1) X or 2) Y"), things to consider, or steps of one task (announced by "steps", "in
order", "步骤", ...); a list under an instruction that spans its items (rank them,
answer with the same word, one story in three parts, choose among them, improve or
translate these questions, one FAQ or quiz); a single question.

Parts that lean on an earlier part (see ``_refs.dependencies``: pronouns,
demonstratives, definite references to what an earlier part introduced or named,
ellipsis, "based on your answer to 2", a question with nothing of its own to be about)
are grouped with it: a group is sent as one question, and no group is ever split apart.

``confidence`` is a level of evidence, each level's precision measured on the labelled
sets (docs/wrap.md): 0.95 a list with a marker at the start of each line, every item a
question or request; 0.9 the same list written on one line; 0.85 bullets, or numbers
inside a sentence; 0.8 one question per line; 0.75 a list with some items that do not
read as questions, or lines among which some request; 0.7 sentences with a cue that
they are separate (a shared instruction, a header, a connective, semicolons); 0.65
three or more question sentences; 0.62 two questions with no cue that each stand alone;
0.07 less (0.88, 0.83, ...) when a pronoun was judged to point inside its own part or
into the shared context rather than at an earlier part. Below ``SPLIT_THRESHOLD``
(0.6) nothing is split: question sentences with such a pronoun (0.58) and parts with
nothing to show they are separate (0.55) are kept in one group.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from ._cues import HEADER, REQUEST, WH_START, lead_of
from ._lang import language_of, script_of
from ._markers import Item, find_items, mask, runs
from ._prose import read_prose
from ._refs import Links, dependencies, framing, words
from ._units import drop_headers, maybe_several

__all__ = ["SPLIT_THRESHOLD", "DetectedQuestion", "Detection", "detect"]

SPLIT_THRESHOLD = 0.6
"""A prompt is split only when the evidence for it is at least this strong (``wrap``'s
default ``min_confidence`` is the same): on the labelled sets no split at or above it
separated parts that belong together."""
_LET_GO = 0.07
"""What a pronoun judged to point inside its own part (or into the shared context)
takes off the confidence."""


@dataclass(frozen=True)
class DetectedQuestion:
    """One part of a prompt, as the user wrote it."""

    marker: str
    """The list marker as written (``"1."``, ``"（2）"``, ``"-"``, ``"**Question 1:**"``),
    or ``""``."""
    text: str
    """The part without its marker and opening connective (continuation lines
    included): what is sent for it."""
    lead: str = ""
    """The connective that opened it as written ("Also,", "Separately,", "First,",
    "Then", "И ещё:", "还有，"), or ``""``."""

    @property
    def raw(self) -> str:
        """The part as written: marker, connective and text."""
        return " ".join(x for x in (self.marker, self.lead, self.text) if x)


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
    """Shared text after the parts (e.g. "Answer briefly.", "Keep each answer short.")."""
    reasons: list[str] = field(default_factory=list)
    header: str = ""
    """Text that only announces the parts ("Two questions:", "Quick ones:"): not sent
    with any of them."""

    def group_prompt(self, group: Sequence[int]) -> str:
        """The text to send for one group: the shared preamble (context and
        instructions), its parts and the shared postamble. A part on its own is sent
        without its marker and connective; parts sent together keep their markers (the
        answer follows them) and the connectives between them."""
        if len(group) == 1:
            body = self.questions[group[0]].text
        else:
            first = self.questions[group[0]]
            pieces = [" ".join(x for x in (first.marker, first.text) if x)]
            pieces += [self.questions[i].raw for i in group[1:]]
            body = ("\n" if self.style not in ("sentences", "single") else " ").join(pieces)
        chunks = [self.preamble, body, self.postamble]
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

    def layout(self, answers: Sequence[str], cut: Sequence[str | None] | None = None) -> str:
        """Answers (one per group) laid out in the user's own numbering.

        ``cut``: for each group, why its answer was cut short (``"max_tokens"``, say),
        or None for an answer that is whole. A cut answer ends with ``(cut short:
        <why>)``, and each part of its group that the answer did not reach (see
        :meth:`unreached`) follows it under its own marker, saying so: no part is left
        out without a word."""
        if len(answers) != len(self.groups):
            raise ValueError(f"{len(self.groups)} groups but {len(answers)} answers")
        if cut is not None and len(cut) != len(answers):
            raise ValueError(f"{len(answers)} answers but {len(cut)} cut reasons")
        out = []
        for n, answer in enumerate(answers):
            why = cut[n] if cut is not None else None
            text = answer.strip()
            if why is not None:
                text = f"{text} (cut short: {why})" if text else f"(cut short: {why})"
            head = self.heading(n)
            out.append(f"{head} {text}" if head else text)
            if why is not None:
                out.extend(self._not_reached(self.unreached(n, answer), why))
        return "\n\n".join(out)

    def unreached(self, n: int, answer: str) -> list[int]:
        """The parts of group ``n`` (indices of ``questions``) that ``answer``, cut short,
        may not have reached: those after the last part whose marker opens one of its
        lines (a group's parts are asked with their markers, and a model answers under
        them). A part without a marker of its own (a bullet, or none) is never found,
        so every part after the first of such a group counts as unreached."""
        group = self.groups[n]
        reached = 0
        for position, i in enumerate(group[1:], start=1):
            pattern = _marker_pattern(self.questions[i].marker)
            if pattern is not None and pattern.search(answer):
                reached = position
        return group[reached + 1 :]

    def _not_reached(self, parts: Sequence[int], why: str) -> list[str]:
        lines = []
        for i in parts:
            q = self.questions[i]
            asked = " ".join(q.text.split())
            shown = asked if len(asked) <= _SHOWN_CHARS else f"{asked[:_SHOWN_CHARS]}..."
            if _marker_pattern(q.marker) is None:  # not found, but maybe answered
                line = f'(cut short: {why}, perhaps before the answer to "{shown}")'
            else:
                line = f'(cut short: {why} before the answer to "{shown}")'
            lines.append(f"{q.marker} {line}" if q.marker else line)
        return lines


_SHOWN_CHARS = 80
"""How much of a part's question a note about it quotes."""


def _marker_pattern(marker: str) -> re.Pattern[str] | None:
    """What finds ``marker`` (``"2."``, ``"b)"``, ``"**Question 2:**"``, ``"②"``) at
    the start of a line of an answer, written as the answer would write it: its letters
    and digits, maybe after markup (``**``, ``#``), then its punctuation if it has any
    (``2)`` for ``2.``). None for a marker with no letter or digit (a bullet): every
    part has the same one."""
    core = re.search(r"\w(?:.*\w)?", marker)
    if core is None:
        return None
    after = r"[^\w\s]" if marker[core.end() :].strip() else r"(?!\w)"
    return re.compile(rf"^[^\w\n]*{re.escape(core.group())}{after}", re.MULTILINE)


# --- reading the parts ------------------------------------------------------------------
_QUESTION_END = re.compile(r"[?？؟]\s*[)\]」』\"”]*\s*$")
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
    "cosa|chi|quando|dove|spiega|"
    "nenne|gib|übersetze|berechne|vergleiche|wähle|empfiehl|schlage|fasse|liste|zähle|finde|"
    "erstelle|erzähle|definiere|schreibe|schreib|bitte|kannst|können|welcher|welches|wieso|weshalb|"
    "woher|wohin|ist|sind|gibt|hat|kann|"
    "nomme|nommez|donne|donnez|cite|citez|écris|écrivez|traduis|traduisez|calcule|calculez|"
    "choisis|choisissez|propose|proposez|recommande|résume|résumez|expliquez|décrivez|définis|"
    "énumère|trouve|peux|pouvez|qu|quels|quelles|combien|lequel|laquelle|"
    "nombra|dime|dame|escribe|traduce|calcula|compara|elige|escoge|propón|recomienda|resume|"
    "explica|define|enumera|encuentra|sugiere|puedes|cuáles|cuánto|cuántos|cuánta|cuántas|quiénes"
)
# A request also opens with an imperative that takes the speaker as its object:
# explícame, recomiéndame; conseille-moi; gib mir, schlag mir ... vor.
_QSTART = re.compile(
    rf"^\W*(?:(?:{_QWORDS_EN})\b|[a-zñ]*[áéíóú][a-zñ]*(?:me|nos|lo|la|le)\b|"
    r"[^\W\d_]+-(?:moi|nous)\b|[^\W\d_]+ (?:mir|uns)\b)",
    re.IGNORECASE,
)
_QCJK = re.compile(
    r"[吗嗎呢么麼]|什么|什麼|为什么|為什麼|怎么|怎麼|怎样|如何|哪|谁|誰|几|多少|多[长高大远久重深宽]|是否|请|請|解释|"
    r"介绍|说明|列举|比较|翻译|计算|"
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
_SENTENCE_END = re.compile(r"[?？.。!！:：]\s*$")
# "Things I need help with:", "Can you help me with a few things?": each item under it
# is an ask of its own, a noun phrase as much as a question.
_HELP_WITH = re.compile(
    r"\b(?:things|stuff)\s+(?:i|we)\s+(?:need|want|would\s+like)\s+(?:some\s+)?help\s+with\b|"
    r"\bhelp\s+(?:me\s+|us\s+)?with\s+(?:a\s+few|a\s+couple(?:\s+of)?|some|several|these|the\s+following|"
    r"two|three|four|\d+)(?:\s+(?:things|tasks|questions))?\b|"
    r"\bayuda\s+con\s+(?:estas|estos|varias|varios|unas|unos|algunas|algunos|dos|tres|lo\s+siguiente)\b|"
    r"\bHilfe\s+(?:bei|mit)\s+(?:ein\s+paar|einigen|mehreren|folgenden|diesen|zwei|drei)\b|"
    r"\baide\s+(?:pour|avec|sur)\s+(?:quelques|plusieurs|ces|deux|trois)\b|"
    r"\baiuto\s+(?:con|per)\s+(?:alcune|queste|qualche|due|tre)\b|"
    r"\bajuda\s+com\s+(?:algumas|estas|umas|duas|três)\b",
    re.IGNORECASE,
)
# A colon line before a list that asks for the answers to it: homework, "tell me about
# the following", "I need (quickly):", in every language. Each item is an ask when the
# list ends the prompt and nothing says the items are material to work on.
_HOMEWORK = re.compile(
    r"\bhelp\s+(?:me\s+)?with\s+(?:my\s+)?(?:\w+\s+)?(?:homework|assignment|exercises|worksheet|quiz|"
    r"problems)\b|\b(?:tell|teach)\s+me\s+about\s+the\s+following\b|\bi\s+need(?:\s+quickly)?\s*:\s*$|"
    r"\b(?:Hausaufgabe|Übungsaufgabe)\w*|\bbrauche\s+ich(?:\s+(?:kurz|schnell|noch))?\s*:?\s*$|"
    r"\bdevoirs?\b|\bj'ai\s+besoin\s+de\s*:\s*$|\b(?:tarea|deberes)\b|\bnecesito\s*:\s*$|"
    r"\bcompiti\b|\bmi\s+serv(?:e|ono)\s*:\s*$|\b(?:dever\s+de\s+casa|lição\s+de\s+casa)\b|"
    r"\bpreciso\s+de\s*:\s*$|домашк\w*|домашн\w+\s+задани\w+|\bdz\b|"
    r"\bzadani\w+\s+(?:domow\w+\s+)?z\s+\w+|\bprac\w+\s+domow\w+|\bpotrzebuję\s*:\s*$|"
    r"\bhuiswerk\b|\b(?:pr|tugas)\s+(?:saya|aku)\b|\bbài\s+tập\b|\bödev\w*|واجب|"
    r"होमवर्क|गृहकार्य|\bhomework\b|作业|(?:以下|次)(?:について|を)(?:教えて|説明して)|宿題|"
    r"다음(?:을|에\s*대해)\s*(?:알려|설명해)|숙제",
    re.IGNORECASE,
)
_MATERIAL_WORDS = re.compile(
    r"\b(?:this|these|that|those|my\s+answers?|correct|check|improve|fix|edit|write|diese\w*|dies|"
    r"verbesser\w*|korrigier\w*|prüf\w*|ce|ces|cette|corrige\w*|vérifie\w*|améliore\w*|este|esta|estos|"
    r"estas|revisa\w*|mejora\w*|questo|questa|questi|correggi|controlla|isso|isto|verifique|"
    r"это|эти|этот|проверь|исправь|ten|ta|te|popraw|sprawdź|dit|deze|verbeter|ini|periksa|này|bu|şu|"
    r"düzelt|هذا|هذه|यह|ये|这|这些|この|これ|이|고쳐|检查|修改|確認|直して)\b",
    re.IGNORECASE,
)


def _asks_for_the_items(preamble: str, postamble: str, last_item: str) -> bool:
    """Whether the sentence before a list asks for the answers to its items (homework,
    "tell me about the following") and the list ends the prompt (its last item one
    line), with nothing to say its items are material to work on ("improve this
    outline", "is my answer right?")."""
    last = re.split(r"[\n.!?。！？]\s*", preamble.rstrip())[-1]
    return (
        preamble.rstrip().endswith((":", "："))
        and not postamble.strip()
        and "\n" not in last_item.strip()
        and _HOMEWORK.search(last) is not None
        and not re.search(r"[?？؟]", preamble)
        and _MATERIAL_WORDS.search(preamble) is None
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
        or WH_START.match(t)
        or REQUEST.match(first_line)
    )


def _single(text: str, confidence: float, reason: str) -> Detection:
    return Detection(
        text=text,
        preamble="",
        questions=[DetectedQuestion("", text.strip())],
        groups=[[0]],
        independent=False,
        confidence=confidence,
        style="single",
        reasons=[reason],
    )


def _whole(
    text: str,
    preamble: str,
    parts: list[DetectedQuestion],
    postamble: str,
    style: str,
    reasons: list[str],
    confidence: float = 0.9,
    header: str = "",
) -> Detection:
    """Parts found under an instruction that spans them: one group, sent as it is."""
    return Detection(
        text=text,
        preamble=preamble,
        questions=parts,
        groups=[list(range(len(parts)))],
        independent=False,
        confidence=confidence,
        style=style,
        postamble=postamble,
        reasons=reasons,
        header=header,
    )


def _split(
    text: str,
    preamble: str,
    parts: list[DetectedQuestion],
    masked_parts: list[str],
    *,
    style: str,
    confidence: float,
    reason: str,
    postamble: str = "",
    links: Links | None = None,
    header: str = "",
    lang: str = "",
    leans: Sequence[str] = (),
) -> Detection:
    """A detection of several parts: grouped by their references, kept whole under an
    instruction over all of them or when the evidence is below ``SPLIT_THRESHOLD``."""
    lang = links.lang if links else lang or ("en" if script_of(text) else language_of(text))
    if links is None and confidence < SPLIT_THRESHOLD:
        # below the threshold the parts are one group whatever refers to what
        reasons = [reason, f"kept whole: confidence {confidence:.2f} is below {SPLIT_THRESHOLD}"]
        return _whole(text, preamble, parts, postamble, style, reasons, confidence, header)
    frame = None if links else framing(preamble, postamble, lang)  # a list was checked already
    if frame is not None:
        return _whole(
            text, preamble, parts, postamble, style, [reason, f"kept whole: {frame}"], header=header
        )
    if links is None:
        links = dependencies(masked_parts, lang=lang, leans=leans)
    if links.let_go:
        confidence -= _LET_GO
    confidence = round(confidence, 2)
    reasons = [reason, *links.reasons, *links.let_go]
    groups = links.groups
    if len(groups) > 1 and confidence < SPLIT_THRESHOLD:
        reasons.append(f"kept whole: confidence {confidence:.2f} is below {SPLIT_THRESHOLD}")
        groups = [list(range(len(parts)))]
    elif len(groups) > 1:
        reasons.append(f"split into {len(groups)} groups that each stand alone")
    else:
        reasons.append("kept whole: every part leans on another")
    return Detection(
        text=text,
        preamble=preamble,
        questions=parts,
        groups=groups,
        independent=len(groups) > 1,
        confidence=confidence,
        style=style,
        postamble=postamble,
        reasons=reasons,
        header=header,
    )


def _from_list(text: str, masked: str, run: list[Item]) -> tuple[str, list[tuple[int, int]], str]:
    """The preamble, each item's span (its text after the marker) and the postamble."""
    lines = text.split("\n")
    masked_lines = masked.split("\n")
    offsets = [0]
    for text_line in lines:
        offsets.append(offsets[-1] + len(text_line) + 1)
    preamble = text[: run[0].mstart].strip()
    spans: list[tuple[int, int]] = []
    for item in run[:-1]:
        spans.append((item.start, 0))
    for n, item in enumerate(run[:-1]):
        spans[n] = (item.start, run[n + 1].mstart)
    last = run[-1]
    end = offsets[last.line + 1] - 1
    line = last.line + 1
    body_end = end
    first_line = text[last.start : end]
    while line < len(lines):
        raw = lines[line]
        # After the last item: indented lines and lines before a blank line continue
        # it; the rest is shared postamble.
        if not raw.strip():
            nxt = line + 1
            if nxt < len(lines) and lines[nxt].startswith((" ", "\t")) and lines[nxt].strip():
                line += 1
                continue
            break
        previous = lines[line - 1] if line - 1 > last.line else first_line
        if (
            masked_lines[line].strip()
            and not raw.startswith((" ", "\t"))
            and _ends_sentence(previous)
        ):
            break
        body_end = offsets[line + 1] - 1
        line += 1
    spans.append((last.start, body_end))
    postamble = text[body_end:].strip()
    if last.inline:
        # "1. What is X? 2. What is Y? Keep it short.": the tail is for every part.
        m = re.search(r"[?？]", masked[last.start : body_end])
        tail = masked[last.start + m.end() : body_end] if m else ""
        if m and tail.strip() and not re.search(r"[?？]", tail) and "\n" not in tail.strip():
            cut = last.start + m.end()
            spans[-1] = (last.start, cut)
            postamble = (text[cut:body_end].strip() + "\n\n" + postamble).strip()
    return preamble, spans, postamble


def _ends_sentence(line: str) -> bool:
    return bool(_SENTENCE_END.search(line.strip()))


_OPTION_OR = re.compile(
    r"(?:^|\s)(?:or|oder|ou|o|или|veya|ya\s+da|أو|या|ya)\s*,?\s*$", re.IGNORECASE
)
_ASK_FRAME = re.compile(
    r"\b(?:tell|give|show|explain|answer|list)\s+(?:me|us)\b|\b(?:like|want|need|wanna)\s+to\s+know\b|"
    r"\bhelp\b|"
    r"\b(?:quick\s+)?questions?\b|\bquiero\s+saber|\bme\s+gustaría\s+saber|\bdime\b|"
    r"\bmöchte\s+(?:gerne\s+)?wissen|\bsag\s+mir\b|\bvoudrais\s+savoir|\bdis-moi\b|\bdites-moi\b|"
    r"\bvorrei\s+sapere|\bdimmi\b|\bquero\s+saber|\bme\s+diga\b|\bgostaria\s+de\s+saber|"
    r"хочу\s+знать|скажи|расскажи|подскажи|bilmek\s+istiyorum|söyle|أريد\s+أن\s+أعرف|أخبرني|"
    r"बताइए|बताओ|\bbatao\b|\bbataiye\b",
    re.IGNORECASE,
)
_TRAILING_JOIN = re.compile(
    r"(?:[\s,;]*\b(?:and|und|et|y|e|и|ve|aur)\b)?[\s,;，；、]*$", re.IGNORECASE
)


def _loose_list(masked: str, run: list[Item], preamble: str, parts: list[DetectedQuestion]) -> bool:
    """ "Tell me 1) ... 2) ...", "I'd like to know (1) ..., and (2) ...?": numbers inside a
    sentence number its parts when what comes before asks for them (or each item asks on
    its own), and never when they number the options of one question ("1) X or 2) Y")."""
    for item in run[1:]:
        if _OPTION_OR.search(masked[max(0, item.mstart - 12) : item.mstart]):
            return False
    if _ASK_FRAME.search(preamble) or HEADER.match(preamble) or preamble.endswith((":", "：")):
        return True
    return all(WH_START.match(p.text) or REQUEST.match(p.text) for p in parts)


def _part(
    text: str, masked: str, a: int, b: int, marker: str, found: tuple[str, str] | None = None
) -> tuple[DetectedQuestion, str]:
    """A part without its opening connective, and its masked text for reading references
    (which keeps an "and" or a "then": they say the part leans on the one before)."""
    raw = text[a:b].strip()
    lead, kind = lead_of(raw) if found is None else found
    if not lead:
        return DetectedQuestion(marker, raw), masked[a:b].strip()
    first = a + (len(text[a:b]) - len(text[a:b].lstrip()))
    body = first + text[first:b].index(lead) + len(lead)
    question = DetectedQuestion(marker, text[body:b].strip(), lead)
    return question, masked[first if kind in ("and", "then") else body : b].strip()


def detect(text: str) -> Detection:
    """Find the independent questions in ``text`` (see the module docstring)."""
    if not isinstance(text, str):
        raise TypeError(f"detect() takes a str, not {type(text).__name__}")
    if not text.strip():
        return _single(text, 1.0, "empty")
    masked = mask(text)
    # 1. Lists, the last first.
    lists = runs(find_items(masked))
    if not lists and not maybe_several(masked):
        return _single(text, 0.9, "one question")
    lang = "en" if script_of(text) else language_of(text)
    for run in reversed(lists):
        found = _read_list(text, masked, run, lang)
        if found is not None:
            return found
    if lists:
        return _single(text, 0.7, "lists that are not questions")
    # 2. Questions and requests in sentences or lines, without markers.
    return _read_sentences(text, masked, lang)


def _read_list(text: str, masked: str, run: list[Item], lang: str) -> Detection | None:
    """What one list of ``text`` makes of it: its items as the questions, the whole
    prompt kept as one task, or None when the list is not the questions (the options
    of one question, a loose list that is no list, items that do not ask)."""
    preamble, spans, postamble = _from_list(text, masked, run)
    if any(i.inline for i in run):
        spans = [
            (a, a + len(_TRAILING_JOIN.sub("", masked[a:b])) if n < len(spans) - 1 else b)
            for n, (a, b) in enumerate(spans)
        ]
    read = [_part(text, masked, a, b, i.marker) for i, (a, b) in zip(run, spans, strict=True)]
    parts = [q for q, _ in read]
    masked_parts = [m for _, m in read]
    style = run[0].kind
    qlike = [_is_questionlike(p.text) for p in parts]
    # under "Things I need help with:" or a header that counts them ("I need to know 3
    # things:") each item is an ask of its own
    helped = bool(
        _HELP_WITH.search(preamble)
        or HEADER.match(preamble)
        or _asks_for_the_items(preamble, postamble, text[spans[-1][0] : spans[-1][1]])
    )
    options = (style == "letter" and run[0].case == "upper" and not any(qlike)) or (
        not any(qlike) and bool(_QUESTION_END.search(preamble)) and not helped
    )
    if options:
        return None  # options of one question: this list is not the questions
    loose = any(i.loose for i in run)
    if loose and not _loose_list(masked, run, preamble, parts):
        return None
    asked = loose and bool(_ASK_FRAME.search(preamble))  # "tell me 1) ... 2) ..."
    preamble, header = drop_headers(preamble)
    frame = framing(preamble, postamble, lang)
    if frame is not None:
        return _whole(
            text,
            preamble,
            parts,
            postamble,
            style,
            [f"a {style} list of {len(parts)} items", f"kept whole: {frame}"],
            header=header,
        )
    links = dependencies(
        masked_parts,
        [i.value for i in run] if style != "bullet" else None,
        shared_context=words(preamble) >= 8,
        lang=lang,
    )
    heads = [helped or qlike[g[0]] for g in links.groups]
    share = sum(heads) / len(heads)
    context = f"{preamble}\n{postamble}"
    announced = bool(_MANY_QUESTIONS.search(context)) or bool(header) or asked or helped
    steps = (
        bool(_STEPS.search(preamble)) or run[0].marker.lower().lstrip("*").startswith("step")
    ) and not announced
    if steps and not all(_QUESTION_END.search(p.text) for p in parts):
        reason = f"kept whole: a {style} list of steps or items of one task"
        return _whole(text, preamble, parts, postamble, style, [reason], 0.8, header=header)
    needed = 0.5 if announced else 0.75
    if share < needed:
        if preamble and _QUESTION_END.search(preamble.split("\n")[-1]) is None and not announced:
            return _single(text, 0.75, "a list of things to consider in one task")
        return None
    inline = any(i.inline for i in run)
    confidence = (
        0.75 if share < 1 else 0.85 if style == "bullet" or loose else 0.9 if inline else 0.95
    )
    where = " on one line" if inline and len({i.line for i in run}) == 1 else ""
    return _split(
        text,
        preamble,
        parts,
        masked_parts,
        style=style,
        confidence=confidence,
        reason=f"a {style} list of {len(parts)} questions{where}",
        postamble=postamble,
        links=links,
        header=header,
    )


def _read_sentences(text: str, masked: str, lang: str) -> Detection:
    """The questions of a prompt without list markers (``read_prose``), or one."""
    prose = read_prose(text, masked, lang)
    if prose is None:
        return _single(text, 0.9, "one question")
    read = [
        _part(text, masked, start, b, "", lead)
        for start, (_, b), lead in zip(prose.starts, prose.spans, prose.leads, strict=True)
    ]
    parts = [q for q, _ in read]
    n = len(parts)
    if prose.style == "lines":
        reason = (
            f"{n} lines that are each a question"
            if all(prose.asking)
            else f"{n} lines that each ask or request"
        )
    elif all(prose.asking):
        reason = f"{n} question sentences in one paragraph"
    else:
        reason = f"{n} questions or requests in sentences"
    detection = _split(
        text,
        prose.preamble,
        parts,
        [m for _, m in read],
        style=prose.style,
        confidence=prose.confidence,
        reason=reason,
        postamble=prose.postamble,
        header=prose.header,
        lang=lang,
        leans=prose.leans,
    )
    detection.reasons[1:1] = prose.reasons
    return detection
