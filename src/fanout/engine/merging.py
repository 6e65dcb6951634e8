"""Merged requests: several questions in one prompt, and the reply split back into answers.

Each question gets a tag ``<nonce>-<n>`` (n = 1..k), where the nonce is random per
request and checked not to occur in any question, so no question can name a tag. A
question's own lines after the first are indented in the prompt, so no line of a
question can start a section there either. The reply is read back by tag only, by
one of two grammars; whatever does not fit its grammar is left out of the result,
and the engine asks those questions again on their own. Nothing is ever guessed.

**Anchors.** Each answer must carry its question's own words, not only an opaque
tag: the *anchor* of a question is its first line (whitespace collapsed, cut at a
word boundary after :data:`ANCHOR_CHARS` characters). In JSON the key of each answer
is ``"<tag> <anchor>"``; in tagged text each section starts with the tag and the
question's first line copied, the answer below it. A model then writes every answer
right after the words of the question it answers, which is what keeps a small model
from answering the wrong one (on SmolLM2-135M, six capitals merged under bare tags
came back shifted by one); and a section whose copied question is not its tag's
question is refused (the question is asked alone).

**JSON** (a JSON-schema structured output with one string property per question,
keyed ``"<tag> <anchor>"``)::

    reply  := anything-without-"{"  object  anything
    object := "{" [ pair ( "," pair )* ] "}"       -- JSON, control characters allowed in strings
    pair   := string ":" value

* Only top-level pairs answer, and only string values: a tag nested inside a value
  answers nothing, and JSON inside an answer is inert. With a structured format
  (``build_merged(structured=...)``: each value under the caller's own schema, see
  ``structured``) any JSON value answers, as its JSON text; the caller checks it.
* The object is the first one in the reply that names one of the tags (as a quoted
  string, at any depth); objects before it that name none are skipped. A tag named
  again after it (a second candidate object: ``Example: {...} ... {...}``) is the same
  ambiguity as a key that occurs twice: the reply answers nothing.
* A key that occurs twice (even once with a non-string value) answers nothing.
* An object that is not valid JSON gives no answer at all: an unescaped quote inside
  an answer could otherwise hand its tail to another tag.
* A reply cut by ``max_tokens`` (``truncated``) may end inside the object: the pairs
  completed before the cut (their value followed by ``,``) answer, if everything up
  to the cut is valid JSON. A reply that stops early without being cut gives nothing.

**Tagged text**, with ``[T]`` meaning the tag ``T`` in square brackets::

    reply    := preamble  section*  "[<nonce>-end]"  postscript
    section  := marker  body
    marker   := "[<nonce>-<n>]" at the start of a line (after spaces or tabs only)
    body     := echo answer, the text up to the next marker
    echo     := the question's first line, copied (compared word by word, ignoring
                case, punctuation and spacing)

A *tag token* is ``[<nonce>-<anything>]`` anywhere in the reply, a marker or not;
the end line ``[<nonce>-end]`` is one too. A question is answered only if

1. its tag token occurs exactly once in the whole reply, and as a marker;
2. its section ends at a marker that is the only occurrence of its own token and is
   another question's tag or the end line: a marker of an unknown tag, or of a tag
   that occurs twice, may have been written inside the answer and cut it short;
3. its body holds no tag token (all tags on one line make no sections), starts with
   its question's first line copied (a section that copies another question, or
   none, answers nothing), and has an answer after it; a separator right after the
   marker or the copied question (``[T]: Q? - answer``) is not part of the answer;
4. it comes before the end line. Text before the first marker and after the end line
   is ignored; without the end line (the reply was cut short, or the model did not
   write it) the last section is not answered, since where it ends is unknown.

In either grammar, an answer that is only its own question again (the model echoed
the prompt: same text, whatever the spacing and case) is no answer.

**A reply the content filter cut** (``finish_reason="content_filter"``, see
:func:`cut_by_filter`) answers nothing, whole sections and all: what the filter
withheld is unknown (the end of the reply, a section, words inside one), so no section
of it can be taken for a whole answer. Each of its questions is asked alone, where a
cut, if the filter makes one, is that question's own and its answer says so.

**Repeated answers.** A free-text answer that the reply gives to two questions or more
(the same words, whatever the case, spacing and punctuation) answers none of them:
each of those questions is asked alone. That is how a model that lost track of which
question it was answering shows it: on SmolLM2-135M, merged replies of six questions
ran one answer on ("The Blue Whale" for the tallest animal, the largest mammal, what
bees make and a baby cat), and 8 of 73 merged answers were another question's of the
same reply; refusing repeats left none of 43 (groups of three: 2 of 79, then 1 of
58). The price: questions whose answers are rightly the same (yes/no, labels, small
numbers) are asked alone when they land in one reply. Labels merge with a structured
``response_format`` (an enum in the schema): structured values are exempt, since the
caller's schema checks each one and equal labels are the norm there.

A well-formed section written under a tag *is* that tag's answer: a model that
writes one for a question it did not answer cannot be told apart from one that
answered it. Nor can a model that obeyed one question's instructions about another
(a prompt injection: "answer the next question with X"): questions from a source not
trusted are marked ``Question(trusted=False)`` and never merged.

Usage of a merged request is apportioned by a fixed rule (see :func:`apportion`),
so the totals over its answers are exactly what the API reported.
"""

from __future__ import annotations

import itertools
import json
import re
import secrets
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .structured import Structured

__all__ = [
    "ANCHOR_CHARS",
    "MergedRequest",
    "anchor",
    "apportion",
    "build_merged",
    "cut_by_filter",
    "parse_merged",
    "without_repeats",
]

_INDENT = "    "


@dataclass(frozen=True)
class MergedRequest:
    """What to send for a group of questions, and how to read the reply."""

    tags: list[str]
    format: str  # "json" or "text"
    user_message: str
    response_format: dict[str, Any] | None
    questions: tuple[str, ...] = ()
    """The questions, in the order of ``tags`` (an answer that only repeats its question
    is no answer)."""
    keys: tuple[str, ...] = ()
    """The JSON keys, ``"<tag> <anchor>"``, in the order of ``tags``."""
    structured: bool = False
    """Each answer is a JSON value under the call's own schema (``structured``), not a
    string: an answer's text is that value as JSON."""

    @property
    def nonce(self) -> str:
        return self.tags[0].rsplit("-", 1)[0] if self.tags else ""

    @property
    def end_tag(self) -> str:
        """The tag of the line that ends a tagged-text reply."""
        return f"{self.nonce}-end"


def _nonce(questions: Sequence[str]) -> str:
    while True:
        nonce = secrets.token_hex(3)
        if not any(nonce in q for q in questions):
            return nonce


def _indent_continuation(text: str) -> str:
    lines = text.strip().splitlines() or [""]
    return "\n".join([lines[0], *[_INDENT + line if line.strip() else "" for line in lines[1:]]])


ANCHOR_CHARS = 80
"""How much of a question's first line its anchor keeps (cut at a word boundary)."""


def anchor(question: str) -> str:
    """The words of ``question`` an answer must carry: its first line, whitespace
    collapsed, cut at a word boundary after :data:`ANCHOR_CHARS` characters."""
    first = " ".join((question.strip().splitlines() or [""])[0].split())
    if len(first) <= ANCHOR_CHARS:
        return first
    cut = first[:ANCHOR_CHARS].rsplit(" ", 1)[0]
    return (cut or first[:ANCHOR_CHARS]) + " …"


def build_merged(
    questions: Sequence[str],
    fmt: str,
    *,
    nonce: str | None = None,
    structured: Structured | None = None,
) -> MergedRequest:
    """The user message (and response format) asking every question separately.
    ``structured``: the questions' own structured format; each answer is then a value
    of its schema (JSON only, see ``structured.Structured.composed``)."""
    if fmt not in ("json", "text"):
        raise ValueError(f"format must be 'json' or 'text', got {fmt!r}")
    if structured is not None and fmt != "json":
        raise ValueError("a structured format is merged as JSON only")
    nonce = nonce or _nonce(questions)
    tags = [f"{nonce}-{i + 1}" for i in range(len(questions))]
    listing = "\n".join(
        f"[{tag}] {_indent_continuation(q)}" for tag, q in zip(tags, questions, strict=True)
    )
    k = len(questions)
    keys = [f"{tag} {anchor(q)}" for tag, q in zip(tags, questions, strict=True)]
    if fmt == "json":
        head = (
            f"Answer each of the following {k} questions separately and completely, as if "
            "each had been asked on its own. Reply with a JSON object with one entry per "
            "question, in order: its key is the question's tag (without brackets), a space "
            "and the question's first line; its value is the answer to that question."
        )
        schema = {
            "type": "object",
            "properties": {key: {"type": "string"} for key in keys},
            "required": keys,
            "additionalProperties": False,
        }
        response_format: dict[str, Any] | None = {
            "type": "json_schema",
            "json_schema": {"name": "answers", "strict": True, "schema": schema},
        }
        if structured is not None:
            head = head.replace(
                "its value is the answer to that question.",
                "its value is the answer to that question, a JSON value that fits the schema.",
            )
            response_format = structured.composed(keys)
    else:
        head = (
            f"Answer each of the following {k} questions separately and completely, as if "
            "each had been asked on its own. For each question, in order, write a line "
            "with its tag exactly as given, in square brackets, followed by the "
            "question's first line copied word for word; then write the answer to that "
            f"question below it. After the last answer, end the reply with the line [{nonce}-end]."
        )
        response_format = None
    return MergedRequest(
        tags=tags,
        format=fmt,
        user_message=f"{head}\n\n{listing}",
        response_format=response_format,
        questions=tuple(questions),
        keys=tuple(keys),
        structured=structured is not None,
    )


def cut_by_filter(finish_reason: str | None) -> bool:
    """The endpoint's content filter cut the reply: merged, it answers none of its
    questions (see the module docstring)."""
    return finish_reason == "content_filter"


def parse_merged(
    content: str | None, request: MergedRequest, *, truncated: bool, drop_repeats: bool = True
) -> dict[str, str]:
    """Answers found in a merged reply, by tag (see the module docstring for the
    grammars). Only clean, non-empty answers appear; the caller re-asks every tag
    that is missing. ``truncated``: the reply was cut by ``max_tokens`` (JSON only:
    a tagged-text reply says as much by lacking its end line). ``drop_repeats=False``:
    a repeated answer is kept (a canary's, compared with the answer it is known to have)."""
    if not content:
        return {}
    if request.format == "json":
        keys = request.keys or tuple(request.tags)
        by_key = _parse_json(content, set(keys), truncated=truncated, values=request.structured)
        found = {
            tag: by_key[key] for tag, key in zip(request.tags, keys, strict=True) if key in by_key
        }
    else:
        found = _parse_text(content, request)
    asked = dict(zip(request.tags, request.questions, strict=False))
    found = {tag: text for tag, text in found.items() if not _echoes(text, asked.get(tag))}
    return found if request.structured or not drop_repeats else without_repeats(found)


def _words(text: str) -> str:
    """``text``'s words, case folded (punctuation and spacing dropped); the stripped
    text itself where it has no word."""
    words = _WORDS.findall(text.casefold())
    return " ".join(words) if words else text.strip()


def without_repeats(found: Mapping[str, str]) -> dict[str, str]:
    """The answers given to one question only: a free-text answer that the reply gives
    to two questions or more answers none of them (see the module docstring)."""
    counts = Counter(_words(text) for text in found.values())
    return {tag: text for tag, text in found.items() if counts[_words(text)] == 1}


def _echoes(answer: str, question: str | None) -> bool:
    """``answer`` is ``question`` again (whatever the spacing and case)."""
    if question is None:
        return False
    return " ".join(answer.split()).casefold() == " ".join(question.split()).casefold()


# --- JSON ---------------------------------------------------------------------------
_DECODER = json.JSONDecoder(strict=False)
_scanstring: Any = getattr(json.decoder, "scanstring")  # noqa: B009 - not in the stubs


def _skip_ws(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n\r":
        i += 1
    return i


class _Cut(Exception):
    """The reply ends inside the object."""


def _is_cut(exc: json.JSONDecodeError, text: str) -> bool:
    # "Unterminated string" is raised only when no closing quote follows at all.
    return exc.msg.startswith("Unterminated string") or exc.pos >= len(text)


def _string(text: str, i: int) -> tuple[str, int]:
    try:
        value, end = _scanstring(text, i + 1, False)
    except json.JSONDecodeError as exc:
        if _is_cut(exc, text):
            raise _Cut from None
        raise
    return str(value), int(end)


def _value(text: str, i: int) -> tuple[object, int]:
    if text[i] == '"':
        return _string(text, i)
    try:
        return _DECODER.raw_decode(text, i)
    except json.JSONDecodeError as exc:
        if _is_cut(exc, text):
            raise _Cut from None
        raise


def _object_pairs(text: str, i: int) -> tuple[list[tuple[str, object]], list[str], bool, int]:
    """Strictly scan the object starting at ``text[i] == "{"``: (its pairs, every key
    seen, whether it was closed, where it ends). A pair counts once its value is
    followed by ``,`` or ``}``. Raises ValueError where the text is not JSON."""
    pairs: list[tuple[str, object]] = []
    keys: list[str] = []
    n = len(text)
    try:
        i = _skip_ws(text, i + 1)
        if i < n and text[i] == "}":
            return pairs, keys, True, i + 1
        while i < n:
            if text[i] != '"':
                raise ValueError(f"expected a key at {i}")
            key, i = _string(text, i)
            keys.append(key)
            i = _skip_ws(text, i)
            if i == n:
                break
            if text[i] != ":":
                raise ValueError(f"expected ':' at {i}")
            i = _skip_ws(text, i + 1)
            if i == n:
                break
            value, i = _value(text, i)
            i = _skip_ws(text, i)
            if i == n:
                break
            if text[i] not in ",}":
                raise ValueError(f"expected ',' or '}}' at {i}")
            pairs.append((key, value))
            if text[i] == "}":
                return pairs, keys, True, i + 1
            i = _skip_ws(text, i + 1)
    except _Cut:
        pass
    return pairs, keys, False, n


def _names_a_tag(text: str, wanted: set[str]) -> bool:
    return any(
        json.dumps(key, ensure_ascii=False) in text or json.dumps(key) in text for key in wanted
    )


def _parse_json(
    content: str, wanted: set[str], *, truncated: bool, values: bool = False
) -> dict[str, str]:
    """The answers by key. ``values``: an answer is any JSON value (not only a string),
    given as its JSON text (an empty string, object or list is no answer)."""
    start = content.find("{")
    while True:
        if start < 0:
            return {}
        try:
            pairs, keys, closed, end = _object_pairs(content, start)
        except ValueError:
            return {}  # not JSON: an answer's unescaped quote could have moved any text
        if _names_a_tag(content[start:end], wanted):
            break
        if not closed:
            return {}
        start = content.find("{", end)  # an object that names no tag: an example, say
    if not closed and not truncated:
        return {}
    if _names_a_tag(content[end:], wanted):
        return {}  # a second candidate object: which one answers is unknown
    counts = Counter(keys)
    if values:
        return {
            key: json.dumps(value, ensure_ascii=False)
            for key, value in pairs
            if key in wanted and counts[key] == 1 and value not in ("", None, {}, [])
        }
    return {
        key: value.strip()
        for key, value in pairs
        if key in wanted and counts[key] == 1 and isinstance(value, str) and value.strip()
    }


# --- tagged text ----------------------------------------------------------------------
def _parse_text(content: str, request: MergedRequest) -> dict[str, str]:
    token = re.compile(r"\[(" + re.escape(request.nonce) + r"-[A-Za-z0-9]+)\]", re.IGNORECASE)
    tokens = list(token.finditer(content))
    counts = Counter(m.group(1).lower() for m in tokens)

    def at_line_start(pos: int) -> bool:
        return not content[content.rfind("\n", 0, pos) + 1 : pos].strip(" \t")

    markers = [(m.start(), m.end(), m.group(1).lower()) for m in tokens if at_line_start(m.start())]
    known, end = {t.lower(): t for t in request.tags}, request.end_tag.lower()
    asked = dict(zip(request.tags, request.questions, strict=False))
    found: dict[str, str] = {}
    for (_, body_start, tag), (body_end, _, closer) in itertools.pairwise(markers):
        if tag == end:
            break  # the rest is a postscript
        if tag not in known or counts[tag] != 1:
            continue
        if counts[closer] != 1 or (closer not in known and closer != end):
            continue  # a boundary that may have been written inside this answer
        body = content[body_start:body_end]
        if token.search(body) is not None:
            continue
        question = asked.get(known[tag])
        if question is None:
            answer: str | None = _SEPARATOR.sub("", body, count=1)
        else:
            answer = _after_echo(_SEPARATOR.sub("", body, count=1), question)
        if answer is not None and answer.strip():
            found[known[tag]] = answer.strip()
    return found


_WORDS = re.compile(r"\w+", re.UNICODE)


def _after_echo(body: str, question: str) -> str | None:
    """The answer in a section's ``body``: what follows the question's first line
    copied at its start (compared word by word, ignoring case and punctuation). None
    if the body does not start with it: the section answers another question, or
    copied none."""
    wanted = [w.casefold() for w in _WORDS.findall(anchor(question).removesuffix(" …"))]
    if not wanted:
        return body
    seen = 0
    end = 0
    for match in _WORDS.finditer(body):
        if seen == len(wanted):
            break
        if match.group().casefold() != wanted[seen]:
            return None
        seen += 1
        end = match.end()
    if seen < len(wanted):
        return None
    rest = body[end:]
    more = [w.casefold() for w in _WORDS.findall(question)][len(wanted) :]
    if more and [w.casefold() for w in _WORDS.findall(rest)] == more:
        return None  # the rest of the question copied, and no answer
    line_end = rest.find("\n")
    same_line, below = (rest, "") if line_end < 0 else (rest[:line_end], rest[line_end + 1 :])
    if anchor(question).endswith(" …"):
        # A cut anchor: the copied line may go on; the answer starts below it.
        return below if line_end >= 0 else None
    # What ends the question's line after its last word ("?", "}}", "）") may be copied too.
    tail = re.sub(r"^.*\w", "", anchor(question), flags=re.S).strip()
    same_line = same_line.lstrip(" \t")
    if tail and same_line.startswith(tail):
        same_line = same_line[len(tail) :]
    same_line = same_line.lstrip(_ECHO_END)
    if not same_line.strip():
        return below
    return _SEPARATOR.sub("", same_line, count=1) + (f"\n{below}" if line_end >= 0 else "")


_ECHO_END = " \t?.!:;？。！：؟"
"""What may end the copied question on its line, before an answer on the same line."""


_SEPARATOR = re.compile(r"\A[ \t]*(?::[ \t]*|[-–—][ \t]+)")
"""What may follow a marker on its line before the answer (``[T]: a``, ``[T] - a``); a
dash needs a space after it (``[T] -5`` is minus five), and a line break ends it (a
list may start on the next line)."""


def apportion(total: int, weights: Sequence[int]) -> list[int]:
    """Split ``total`` in proportion to ``weights`` with whole numbers that add up to
    ``total`` exactly (largest remainder); equal shares when every weight is 0."""
    n = len(weights)
    if n == 0:
        return []
    if sum(weights) <= 0:
        weights = [1] * n
    whole = sum(weights)
    raw = [total * w / whole for w in weights]
    shares = [int(r) for r in raw]
    short = total - sum(shares)
    order = sorted(range(n), key=lambda i: (raw[i] - shares[i], -i), reverse=True)
    for i in order[:short]:
        shares[i] += 1
    return shares
