"""A learned second look at prompts the rules kept whole (a prototype, measured by
``detection_learned.py``; not part of the library).

The rules (``_detector``) find parts only where they see a cue or a shape they know.
Where they keep a prompt whole because they found nothing ("one question") or because
the evidence was too weak (below ``SPLIT_THRESHOLD``), this module looks again: it
lists the places a part could start (after a sentence end, a line break, a semicolon, a
colon or a comma; at a bare "and" / "y" / "und" / 和 / 그리고; at a question word in
the middle of a sentence), describes each by features the rules' own readers compute
(what kind of place it is, the connective after it, whether the text on each side asks
on its own, a reference back, lengths, the script), and scores it with two small
logistic regressions whose weights were trained on the labelled sets
(``detection_learned.py``): whether a part starts there, and whether the
part is independent of the one before. A prompt is split only when every cut it makes
is scored above a conservative threshold.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from fanout.detection._cues import REQUEST, WH_START, lead_of
from fanout.detection._detector import SPLIT_THRESHOLD, DetectedQuestion, Detection
from fanout.detection._lang import script_of
from fanout.detection._refs import dependencies

__all__ = ["Candidate", "Weights", "candidates", "features", "look", "score", "second_look"]

# Where a part may start, on the masked text.
_SENT_END = re.compile(r"(?<=[.?!。？！؟])[\s\"”'’)\]]*(?=\S)")
_CJK_END = re.compile(r"(?<=[。？！?!])(?=\S)")
_NEWLINE = re.compile(r"\n\s*(?=\S)")
_PUNCT = re.compile(r"(?P<p>[;；,，、،:：—–])\s*(?=\S)")
_CONJ = re.compile(
    r"(?<=\s)(?:and|also|plus|y|e|et|und|i|и|і|й|а|ve|aur|और|và|dan|en|tapos|at|oraz|ta|"
    r"и\s+ещё|and\s+also|y\s+también|e\s+também|und\s+auch|et\s+aussi|e\s+anche)(?=\s)",
    re.IGNORECASE,
)
_CONJ_AR = re.compile(r"(?<=\s)و(?=\w)")
_CONJ_CJK = re.compile(
    r"(?:还有|以及|并且|另外|和|跟|そして|あと|それと|それから|그리고|또한|또)|(?<=[이]랑|[^\s]랑|하고)\s+"
)
_WH_ALT = (
    r"(?:what|whats|what's|how|why|who|when|where|which|is\s+there|are\s+there|"
    r"can\s+you|could\s+you|do\s+you|does|qué|cómo|cuál|dónde|cuándo|quién|wie|was|wo|wann|warum|"
    r"welche\w*|comment|pourquoi|quel\w*|combien|où|come|cosa|quando|dove|perché|quale|como|onde|"
    r"quanto|что|как|где|когда|почему|сколько|jak|gdzie|kiedy|ile|hoe|wat|waar|wanneer|"
    r"bagaimana|apa|berapa|kenapa|pano|paano|ano|saan|kailan|magkano|kaise|kya|kab|kahan|czy|co|jaki\w*|який|яка|що|як|чи|де|коли|nasıl|ne|hangi|nerede|ما|ماذا|كيف|هل|"
    r"أين|متى|क्या|कैसे|कौन|कब|कहाँ|kaun|kaise|gì|nào|sao|bao\s+nhiêu|apakah|bagaimana|siapa)\b"
)
_WH_WORD = re.compile(r"(?<=[^\W\d_]\s)" + _WH_ALT, re.IGNORECASE)
_WH_NEAR = re.compile(r"^\W*(?:\S+\s+){0,3}?" + _WH_ALT, re.IGNORECASE)
_MARKER = re.compile(
    r"[\s*_#>]*(?:[-•・*]|\d{1,2}[.)、:]|\(\d{1,2}\)|[a-zA-Z][.)](?=\s)|\*\*[A-Za-z0-9]{1,2}[.)]\*\*|"
    r"[①-⑩]|Q\d+[:.]?)\s*"
)
_QMARK = re.compile(r"[?？؟]")
_WORD = re.compile(r"[^\W_]+")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")
_ASK_CJK = re.compile(
    r"[吗嗎呢么麼]|什么|为什么|怎么|怎样|如何|哪|谁|几|多少|是否|请|推荐|介绍|解释|"
    r"ですか|ますか|でしょうか|なぜ|何|どう|どの|いつ|どこ|教えて|ください|方法|"
    r"무엇|뭐|왜|어떻게|언제|어디|누구|어느|알려|까요|니까|나요|세요|주세요|방법"
)
_ASKS_LATE = re.compile(
    r"(?:mı|mi|mu|mü|musun|mısın|misin|nedir|ne|nasıl|nerede|hangi|kaç|है\?|हैं|क्या|कौन|कैसे|"
    r"kya|kaise|hai|hain|là\s+gì|không|nào|gì|bao\s+nhiêu|po|ba|ano|paano|pano|apa|berapa)\W*$",
    re.IGNORECASE,
)
_COLON_BEFORE = re.compile(r"[:：]")


@dataclass
class Candidate:
    pos: int
    """Where the place starts (before any connective)."""
    body: int
    """Where a part starting here would start once its connective or marker is left out."""
    kinds: set[str]
    lead: str
    lead_kind: str


def _family(text: str) -> str:
    if script_of(text):
        return "cjk"
    if text.isascii():
        return "ascii"
    letters = _WORD.findall(text[:300])
    if any(re.search(r"[\u0400-\u04ff\u0600-\u06ff\u0900-\u097f]", w) for w in letters):
        return "other"
    return "latin"


def candidates(masked: str) -> list[Candidate]:
    """The places in ``masked`` where a part could start, in order, one per position."""
    found: dict[int, set[str]] = {}

    def add(pos: int, kind: str) -> None:
        if 0 < pos < len(masked):
            found.setdefault(pos, set()).add(kind)

    for m in _SENT_END.finditer(masked):
        before = masked[m.start() - 1]
        if before == "." and re.search(
            r"(?:\b\w|\d|\b(?:e\.g|i\.e|etc|vs|Mr|Dr|Mrs|St))\.$",
            masked[max(0, m.start() - 5) : m.start()],
        ):
            continue
        add(m.end(), "q" if before in "?？؟" else "dot" if before in ".。" else "excl")
    for m in _CJK_END.finditer(masked):
        before = masked[m.start() - 1]
        add(m.end(), "q" if before in "?？" else "dot")
    for m in _NEWLINE.finditer(masked):
        add(m.end(), "blank" if m.group().count("\n") > 1 else "nl")
    for m in _PUNCT.finditer(masked):
        p = m.group("p")
        kind = {
            ";": "semi",
            "；": "semi",
            ":": "colon",
            "：": "colon",
            "—": "dash",
            "–": "dash",
        }.get(p, "comma")
        add(m.end(), kind)
    for m in _CONJ.finditer(masked):
        add(m.start(), "conj")
    for m in _CONJ_AR.finditer(masked):
        add(m.start(), "conj")
    for m in _CONJ_CJK.finditer(masked):
        add(m.end() if m.group().isspace() else m.start(), "conj")
    for m in _WH_WORD.finditer(masked):
        add(m.start(), "wh")
    out: list[Candidate] = []
    for pos in sorted(found):
        if out and pos <= out[-1].body:  # inside the connective of the place before
            out[-1].kinds |= found[pos]
            continue
        rest = masked[pos:]
        marker = _MARKER.match(rest)
        skip = marker.end() if marker and marker.end() < len(rest) else 0
        lead, kind = lead_of(rest[skip:])
        if not lead and "conj" in found[pos]:
            conj = (
                _CONJ.match(masked, pos)
                or _CONJ_AR.match(masked, pos)
                or _CONJ_CJK.match(masked, pos)
            )
            if conj and conj.group().strip():
                lead, kind = conj.group(), "conj"
        body = pos + skip
        if lead:
            body += rest[skip:].index(lead) + len(lead)
            while body < len(masked) and masked[body].isspace():
                body += 1
        out.append(Candidate(pos, body, found[pos], lead, kind or "none"))
    return out


_HARD = frozenset(("q", "dot", "excl", "nl", "blank"))


def _asks(span: str) -> tuple[bool, bool, bool, bool]:
    """Whether ``span`` opens with a question word, with an imperative, asks late (verb
    final languages, CJK endings), or ends with a question mark."""
    s = span.strip()
    return (
        WH_START.match(s) is not None,
        REQUEST.match(s) is not None,
        bool(_ASK_CJK.search(s) if _CJK_CHAR.search(s) else _ASKS_LATE.search(s)),
        bool(_QMARK.search(s)),
    )


def _words(span: str) -> int:
    cjk = len(_CJK_CHAR.findall(span))
    return len(_WORD.findall(span)) + cjk // 2


def features(
    masked: str, cands: list[Candidate], lang: str, held: bool, rule_cuts: set[int]
) -> list[dict[str, float]]:
    """One feature row per candidate place."""
    family = _family(masked)
    n = len(cands)
    rows = []
    qmarks = len(_QMARK.findall(masked))
    for i, c in enumerate(cands):
        prev = cands[i - 1].body if i else 0
        nxt = cands[i + 1].pos if i + 1 < n else len(masked)
        left = masked[prev : c.pos]
        right = masked[c.body : nxt]
        # the sentences around the place: back to the last hard boundary, on to the next
        k = i - 1
        while k >= 0 and not (cands[k].kinds & _HARD):
            k -= 1
        lstart = cands[k].body if k >= 0 else 0
        lsent = masked[lstart : c.pos]
        k = i + 1
        while k < n and not (cands[k].kinds & _HARD):
            k += 1
        rsent = masked[c.body : cands[k].pos if k < n else len(masked)]
        lw, rw, rsw, lsw = _words(left), _words(right), _words(rsent), _words(lsent)
        lset, rset = _content(masked[: c.pos][-300:]), _content(rsent)
        ov = len(lset & rset)
        lw0 = _WORD.match(lsent.strip().lower() + " ")
        rw0 = _WORD.match(masked[c.body : c.body + 30].lower() + " ")
        lfirst = lw0.group() if lw0 else ""
        rfirst = rw0.group() if rw0 else ""
        f: dict[str, float] = {"bias": 1.0}
        for kind in c.kinds:
            f[f"k_{kind}"] = 1.0
        f[f"lead_{c.lead_kind}"] = 1.0
        r_wh, r_req, r_late, r_q = _asks(rsent)
        l_wh, l_req, l_late, l_q = _asks(lsent)
        rr_wh, rr_req, _, _ = _asks(right)
        r_ask = r_wh or r_req or r_late or r_q
        l_ask = l_wh or l_req or l_late or l_q
        for name, v in (
            ("r_wh", r_wh), ("r_req", r_req), ("r_late", r_late), ("r_q", r_q),
            ("l_wh", l_wh), ("l_req", l_req), ("l_late", l_late), ("l_q", l_q),
            ("rr_wh", rr_wh), ("rr_req", rr_req),
            ("r_wh_near", bool(_WH_NEAR.match(masked, c.body, min(len(masked), c.body + 60)))),
            ("r_ask", r_ask), ("l_ask", l_ask), ("both_ask", r_ask and l_ask),
            ("l_ends_q", bool(_QMARK.search(masked[max(0, c.pos - 4) : c.pos]))),
            ("l_ends_colon", masked[:c.pos].rstrip().endswith((":", "："))),
            ("colon_before", bool(_COLON_BEFORE.search(lsent))),
            ("first", i == 0), ("last", i == n - 1),
            ("r_short", rsw < 3), ("l_short", lsw < 3),
            ("held", held and USE_RULES), ("rule_cut", USE_RULES and (c.body in rule_cuts or c.pos in rule_cuts)),
            ("overlap", bool(ov)), ("overlap2", ov >= 2),
            ("same_first", lfirst == rfirst and lfirst != ""),
            ("fam_" + family, True),
            ("lead_any", c.lead_kind != "none"),
            ("many_q", qmarks >= 2),
            ("no_q", qmarks == 0),
        ):  # fmt: skip
            if v:
                f[name] = 1.0
        f["ov_ratio"] = ov / (1 + min(len(lset), len(rset)))
        f["lw"] = math.log1p(lw) / 3
        f["rw"] = math.log1p(rw) / 3
        f["lsw"] = math.log1p(lsw) / 3
        f["rsw"] = math.log1p(rsw) / 3
        # interactions: the kind of place with whether the text after it asks
        for kind in c.kinds:
            if r_ask:
                f[f"k_{kind}&r_ask"] = 1.0
            if rr_req:
                f[f"k_{kind}&rr_req"] = 1.0
            if rr_wh:
                f[f"k_{kind}&rr_wh"] = 1.0
            if l_ask and r_ask:
                f[f"k_{kind}&both"] = 1.0
            if c.lead_kind != "none":
                f[f"k_{kind}&lead"] = 1.0
        rows.append(f)
    return rows


USE_RULES = False


def _content(span: str) -> set[str]:
    """Content words of ``span`` (letters, 4 or more; two-letter runs in CJK)."""
    low = span.lower()
    out = {w[:6] for w in _WORD.findall(low) if len(w) >= 4 and not _CJK_CHAR.search(w)}
    for run in _CJK_RUN.findall(low):
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


_CJK_RUN = re.compile(r"[㐀-鿿가-힯゠-ヿ]{2,}")


def refers_back(masked: str, a: int, b: int, c: int, lang: str) -> bool:
    """Whether the part from ``b`` to ``c`` leans on the part from ``a`` to ``b``, as
    ``dependencies`` reads it."""
    links = dependencies([masked[a:b].strip(), masked[b:c].strip()], lang=lang)
    return len(links.groups) == 1


def group_features(
    masked: str, lang: str, base: dict[str, float], a: int, b: int, body: int, c: int
) -> dict[str, float]:
    f = {f"b_{k}": v for k, v in base.items() if k != "bias"}
    f["bias"] = 1.0
    if refers_back(masked, a, b, c, lang):
        f["ref"] = 1.0
    if refers_back(masked, a, b, body, lang) if body > b else False:
        f["ref_lead"] = 1.0
    return f


def score(weights: dict[str, float] | Stumps, f: dict[str, float]) -> float:
    if isinstance(weights, list):
        z = sum(hi if f.get(k, 0.0) > t else lo for k, t, lo, hi in weights)
    else:
        z = sum(weights.get(k, 0.0) * v for k, v in f.items())
    return 1 / (1 + math.exp(-max(-30.0, min(30.0, z))))


Stumps = list[tuple[str, float, float, float]]
"""Boosted decision stumps: (feature, threshold, value below or at it, value above)."""

_TRAILING = re.compile(r"[\s,;，；、،:：—–-]+$")


@dataclass
class Look:
    """What the second look found: where each part starts (connective included) and
    where its text starts, the preamble's end, and each boundary's scores."""

    preamble_end: int
    starts: list[int]
    bodies: list[int]
    independent: list[bool]
    """For each part after the first: whether it starts a new group."""
    scores: list[float]


@dataclass(frozen=True)
class Weights:
    boundary: dict[str, float] | Stumps
    group: dict[str, float] | Stumps
    tb: float
    """The boundary score from which a part starts."""
    ts: float
    """The independence score from which a part starts a new group."""
    tb_low: float = -1.0
    """Once one cut scores ``tb`` (and ``ts``), the boundary score from which the other
    cuts are made (``tb`` when negative)."""


def look(masked: str, lang: str, held: bool, rule_cuts: set[int], w: Weights) -> Look | None:
    """Cut ``masked`` where the boundary model scores a part start at ``tb`` or more; a
    cut starts a new group when its boundary score times its independence score is
    ``ts`` or more. None when no cut starts a new group, or a group does not ask."""
    cands = candidates(masked)
    if not cands:
        return None
    rows = features(masked, cands, lang, held, rule_cuts)
    chosen = [
        (c, r, p)
        for c, r in zip(cands, rows, strict=True)
        if (p := score(w.boundary, r)) >= (w.tb if w.tb_low < 0 else w.tb_low)
    ]
    if not chosen:
        return None
    first = masked[: chosen[0][0].pos]
    preamble = not any(_asks(first)) or first.rstrip().endswith((":", "："))
    if preamble:
        starts, bodies = [chosen[0][0].pos], [chosen[0][0].body]
        between = chosen[1:]
    else:
        # statements before the first sentence that asks are shared context
        starts, bodies = [0], [0]
        hard = [c for c in cands if c.pos < chosen[0][0].pos and c.kinds & _HARD]
        edges = [0, *(c.pos for c in hard), chosen[0][0].pos]
        for n in range(len(edges) - 1):
            if any(_asks(masked[edges[n] : edges[n + 1]])):
                if n:
                    starts, bodies = [hard[n - 1].pos], [hard[n - 1].body]
                break
        between = chosen
    independent: list[bool] = []
    scores: list[float] = []
    strong = False
    ends = [c.pos for c, _, _ in between] + [len(masked)]
    for n, (c, row, pb) in enumerate(between):
        g = group_features(masked, lang, row, starts[-1], c.pos, c.body, ends[n + 1])
        pg = score(w.group, g)
        s = pb * pg
        scores.append(s)
        independent.append(pg >= w.ts)
        strong = strong or (pg >= w.ts and pb >= w.tb)
        starts.append(c.pos)
        bodies.append(c.body)
    if not strong:
        return None
    # every group must ask something
    bounds = [*starts[1:], len(masked)]
    group_asks = [False]
    for n, (b, e) in enumerate(zip(bodies, bounds, strict=True)):
        if n and independent[n - 1]:
            group_asks.append(False)
        group_asks[-1] = group_asks[-1] or any(_asks(masked[b:e]))
    if not all(group_asks):
        return None
    return Look(starts[0], starts, bodies, independent, scores)


def part_text(text: str, start: int, end: int) -> str:
    return _TRAILING.sub("", text[start:end]).strip()


# --- the second look as a Detection ------------------------------------------------------------
def rule_cuts(text: str, d: Detection) -> set[int]:
    """Where the rules' parts start in ``text`` (when they found several)."""
    cuts: set[int] = set()
    at = 0
    for q in d.questions[1:] if len(d.questions) > 1 else ():
        found = text.find(q.text[:20], at)
        if found >= 0:
            cuts.add(found)
            at = found + 1
    return cuts


def looks_again(d: Detection) -> bool:
    """Whether the rules kept ``d`` whole for want of evidence (nothing found, or too
    little): the prompts the learned second look reads."""
    if d.independent:
        return False
    return d.reasons[-1] == "one question" or d.reasons[-1].startswith("kept whole: confidence")


def second_look(
    text: str, masked: str, lang: str, d: Detection, weights: Weights
) -> Detection | None:
    """The learned reading of a prompt the rules kept whole , or None."""
    w = weights
    held = d.reasons[-1].startswith("kept whole: confidence")
    found = look(masked, lang, held, rule_cuts(text, d), w)
    if found is None:
        return None
    ends = [*found.starts[1:], len(text)]
    parts = [
        DetectedQuestion("", part_text(text, b, e), text[s:b].strip() if b > s else "")
        for s, b, e in zip(found.starts, found.bodies, ends, strict=True)
    ]
    groups: list[list[int]] = [[0]]
    for n, new in enumerate(found.independent, start=1):
        if new:
            groups.append([n])
        else:
            groups[-1].append(n)
    confidence = round(min(0.95, max(SPLIT_THRESHOLD, min(
        s for s, new in zip(found.scores, found.independent, strict=True) if new
    ))), 2)  # fmt: skip
    return Detection(
        text=text,
        preamble=text[: found.preamble_end].strip(),
        questions=parts,
        groups=groups,
        independent=len(groups) > 1,
        confidence=confidence,
        style="sentences",
        reasons=[
            *d.reasons[:-1],
            f"learned: {len(parts)} parts at boundaries scored "
            + ", ".join(f"{s:.2f}" for s in found.scores),
            f"split into {len(groups)} groups that each stand alone",
        ],
    )
