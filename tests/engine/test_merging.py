"""Merged prompts and reading their replies back, by tag, against hostile input."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion

from fanout.endpoint.tokens import estimate_text_tokens
from fanout.engine.codec import merged_params, read_merged
from fanout.engine.merging import ANCHOR_CHARS, apportion, build_merged, parse_merged
from fanout.engine.planning import ANCHOR_TOKENS, MERGE_ANSWER_OVERHEAD

from .._virtual import on_virtual_time
from ._merged_prompts import HOSTILE, _alone, _ask, _layout, _listed


class TestBuild:
    def test_tags_use_a_nonce_no_question_contains(self) -> None:
        """Every tag is [nonce-n] and the nonce appears in no question."""
        req = build_merged(HOSTILE, "text")
        nonce = req.tags[0].rsplit("-", 1)[0]
        assert all(nonce not in q for q in HOSTILE)
        assert req.tags == [f"{nonce}-{i}" for i in range(1, 6)]

    def test_continuation_lines_are_indented_so_they_cannot_start_a_section(self) -> None:
        """A question's second line never starts at column 0 of the prompt."""
        req = build_merged(HOSTILE, "text", nonce="abc123")
        lines = req.user_message.splitlines()
        starts = [line for line in lines if line.startswith("[abc123-")]
        assert len(starts) == 5
        assert "    Answer 2: 5" in lines
        assert "    2. second item" in lines

    def test_json_format_asks_for_a_strict_schema_keyed_by_tag(self) -> None:
        """The response format lists exactly the tags, all required, nothing else."""
        req = build_merged(["a?", "b?"], "json", nonce="ff00aa")
        assert req.response_format is not None
        schema = req.response_format["json_schema"]["schema"]
        assert list(schema["properties"]) == ["ff00aa-1 a?", "ff00aa-2 b?"]
        assert schema["required"] == ["ff00aa-1 a?", "ff00aa-2 b?"]
        assert schema["additionalProperties"] is False


class TestRepeatedAnswers:
    """A free-text answer the reply gives to two questions or more answers none of them:
    a small model that lost its place runs one answer on through the rest of the reply."""

    QUESTIONS = ("What is the tallest animal?", "What is the largest mammal?", "What do bees make?")

    def test_json_answers_repeated_across_questions_answer_none_of_them(self) -> None:
        """Whatever their case, spacing and punctuation; the distinct answer is kept."""
        req = build_merged(self.QUESTIONS, "json", nonce="n")
        reply = json.dumps(
            dict(zip(req.keys, ["The Blue Whale", "the blue  whale.", "Honey"], strict=True))
        )
        assert parse_merged(reply, req, truncated=False) == {"n-3": "Honey"}

    def test_tagged_text_answers_repeated_across_questions_answer_none_of_them(self) -> None:
        req = build_merged(self.QUESTIONS, "text", nonce="n")
        reply = ("[n-1] What is the tallest animal?\nGiraffe\n[n-2] What is the largest mammal?\n"
                 "Honey!\n[n-3] What do bees make?\nhoney\n[n-end]")  # fmt: skip
        assert parse_merged(reply, req, truncated=False) == {"n-1": "Giraffe"}

    def test_answers_that_share_words_but_differ_are_kept(self) -> None:
        req = build_merged(self.QUESTIONS, "json", nonce="n")
        reply = json.dumps(
            dict(zip(req.keys, ["The giraffe", "The blue whale", "Honey"], strict=True))
        )
        assert parse_merged(reply, req, truncated=False) == {
            "n-1": "The giraffe",
            "n-2": "The blue whale",
            "n-3": "Honey",
        }

    def test_structured_values_may_repeat(self) -> None:
        """Labels under the caller's own schema are the same as often as not."""
        req = replace(build_merged(self.QUESTIONS, "json", nonce="n"), structured=True)
        reply = json.dumps(dict(zip(req.keys, ["positive", "positive", "negative"], strict=True)))
        assert parse_merged(reply, req, truncated=False) == {
            "n-1": '"positive"',
            "n-2": '"positive"',
            "n-3": '"negative"',
        }


class TestParseText:
    """Each section: the tag, the question's first line copied, then the answer."""

    def test_sections_are_read_by_tag(self) -> None:
        """Sections may come in any order; each goes to its own tag."""
        req = build_merged(["a?", "b?", "c?"], "text", nonce="n0n")
        reply = "[n0n-2] b?\nbeta\n\n[n0n-1] a?\nalpha\nmore alpha\n\n[n0n-3] c? gamma\n[n0n-end]"
        assert parse_merged(reply, req, truncated=False) == {
            "n0n-1": "alpha\nmore alpha",
            "n0n-2": "beta",
            "n0n-3": "gamma",
        }

    def test_a_section_that_copies_another_question_answers_nothing(self) -> None:
        """The anchor check: a section under tag 2 that copies question 3 (the model
        answered the wrong question there) is refused, and so is one that copies none."""
        req = build_merged(["Capital of France?", "Capital of Japan?", "Capital of Italy?"],
                           "text", nonce="n0n")  # fmt: skip
        reply = ("[n0n-1] Capital of France?\nParis\n[n0n-2] Capital of Italy?\nRome\n"
                 "[n0n-3] Rome\n[n0n-end]")  # fmt: skip
        assert parse_merged(reply, req, truncated=False) == {"n0n-1": "Paris"}

    def test_the_copied_question_is_compared_without_case_or_punctuation(self) -> None:
        """'[t] capital of france - Paris' copies 'Capital of France?' well enough."""
        req = build_merged(["Capital of France?", "Capital of Japan?"], "text", nonce="n0n")
        reply = "[n0n-1] capital of france - Paris\n[n0n-2] CAPITAL OF JAPAN?\n  Tokyo\n[n0n-end]"
        assert parse_merged(reply, req, truncated=False) == {"n0n-1": "Paris", "n0n-2": "Tokyo"}

    def test_forged_markers_inside_an_answer_do_not_split_it(self) -> None:
        """An answer quoting 'Answer 2:', '[q2]' or '2.' stays one answer."""
        req = build_merged(["a?", "b?"], "text", nonce="n0n")
        reply = "[n0n-1] a?\nAnswer 2: fake\n[q2] fake\n2. fake\n\n[n0n-2] b?\nthe real second\n[n0n-end]"
        found = parse_merged(reply, req, truncated=False)
        assert found["n0n-2"] == "the real second"
        assert found["n0n-1"].startswith("Answer 2: fake")

    def test_a_tag_seen_twice_is_not_trusted(self) -> None:
        """Duplicated sections are dropped (and so re-asked), never guessed."""
        req = build_merged(["a?", "b?"], "text", nonce="n0n")
        reply = "[n0n-1] a?\nx\n[n0n-1] a?\ny\n[n0n-2] b?\nz\n[n0n-end]"
        assert parse_merged(reply, req, truncated=False) == {"n0n-2": "z"}

    def test_missing_empty_and_truncated_sections_are_left_out(self) -> None:
        """Only whole, non-empty answers come back; the cut last section is dropped."""
        req = build_merged(["a?", "b?", "c?"], "text", nonce="n0n")
        found = parse_merged(
            "[n0n-1] a?\n\n[n0n-2] b?\nfine\n[n0n-3] c?\ncut sho", req, truncated=True
        )
        assert found == {"n0n-2": "fine"}

    def test_the_prompt_asks_for_an_end_line(self) -> None:
        """The text format asks the model to close its reply with the [nonce-end] line."""
        req = build_merged(["a?", "b?"], "text", nonce="n0n")
        assert "[n0n-end]" in req.user_message
        assert not any(line.startswith("[n0n-end]") for line in req.user_message.splitlines())

    def test_a_tag_repeated_inside_an_answer_does_not_cut_it_short(self) -> None:
        """A line inside answer 1 starting with another answer's tag: both re-asked, not cut."""
        req = build_merged(["a?", "b?", "c?"], "text", nonce="n0n")
        reply = (
            "[n0n-1] a?\none\n[n0n-2] b?\nquoted in one\nmore of one\n[n0n-2] b?\ntwo\n"
            "[n0n-3] c?\nthree\n[n0n-end]"
        )
        assert parse_merged(reply, req, truncated=False) == {"n0n-3": "three"}

    def test_tags_in_the_middle_of_a_line_make_no_sections(self) -> None:
        """All tags on one line: nothing is read into answer 1; everything is re-asked."""
        req = build_merged(["a?", "b?", "c?"], "text", nonce="n0n")
        reply = "[n0n-1] a? one [n0n-2] b? two [n0n-3] c? three\n[n0n-end]"
        assert parse_merged(reply, req, truncated=False) == {}

    def test_a_tag_repeated_mid_line_in_an_answer_spoils_that_answer(self) -> None:
        """An answer that quotes its own tag (or another) mid-line is re-asked."""
        req = build_merged(["a?", "b?"], "text", nonce="n0n")
        reply = "[n0n-1] a?\none, as in [n0n-1]\n[n0n-2] b?\ntwo\n[n0n-end]"
        assert parse_merged(reply, req, truncated=False) == {"n0n-2": "two"}

    def test_postscripts_and_unknown_tags_are_not_appended_to_an_answer(self) -> None:
        """Text after the end line is ignored; a section of an unknown tag is dropped, and so
        is the answer it closes (the tag might have been written inside it)."""
        req = build_merged(["a?", "b?", "c?"], "text", nonce="n0n")
        reply = (
            "[n0n-1] a?\none\n[n0n-2] b?\ntwo\n[n0n-9] extra\n[n0n-3] c?\nthree\n[n0n-end]\n"
            "Hope this helps!"
        )
        assert parse_merged(reply, req, truncated=False) == {"n0n-1": "one", "n0n-3": "three"}

    def test_without_the_end_line_the_last_answer_is_reasked(self) -> None:
        """Where the last answer ends is unknown without the end line (a postscript?)."""
        req = build_merged(["a?", "b?"], "text", nonce="n0n")
        reply = "[n0n-1] a?\none\n[n0n-2] b?\ntwo\n\nI hope this helps!"
        assert parse_merged(reply, req, truncated=False) == {"n0n-1": "one"}


class TestParseJSON:
    """Each key is the question's tag and its first line: ``"t-1 a?"``."""

    def test_the_keys_carry_each_questions_own_words(self) -> None:
        """The schema's keys are '<tag> <first line of the question>', long ones cut."""
        long = "Why " + "really " * 30 + "is the sky blue?\nSecond line."
        req = build_merged(["What is X?", long], "json", nonce="t")
        assert req.keys[0] == "t-1 What is X?"
        assert req.keys[1].startswith("t-2 Why really") and req.keys[1].endswith(" …")
        assert len(req.keys[1]) <= len("t-2 ") + ANCHOR_CHARS + 2

    def test_a_key_seen_twice_is_not_trusted(self) -> None:
        """A duplicated key means the reply cannot be trusted for that question."""
        req = build_merged(["a?", "b?"], "json", nonce="t")
        reply = '{"t-1 a?": "right", "t-2 b?": "b", "t-1 a?": "WRONG"}'
        assert parse_merged(reply, req, truncated=False) == {"t-2": "b"}

    def test_a_bare_tag_is_not_a_key(self) -> None:
        """An answer under the tag alone, without its question's words, answers nothing."""
        req = build_merged(["a?", "b?"], "json", nonce="t")
        reply = '{"t-1": "one", "t-2 b?": "two"}'
        assert parse_merged(reply, req, truncated=False) == {"t-2": "two"}

    def test_unescaped_quotes_never_move_text_to_another_question(self) -> None:
        """Invalid JSON whose answer 1 holds '"t-2 b?": "..."' gives nothing, least of all t-2."""
        req = build_merged(["a?", "b?"], "json", nonce="t")
        reply = '{"t-1 a?": "A1 he wrote "t-2 b?": "FROM-A1", ok"}'
        assert parse_merged(reply, req, truncated=False) == {}
        assert parse_merged(reply, req, truncated=True) == {}

    def test_a_code_fence_around_the_object_is_allowed(self) -> None:
        """```json ... ``` around a valid object is read as the object."""
        req = build_merged(["a?", "b?"], "json", nonce="t")
        reply = '```json\n{"t-1 a?": "one", "t-2 b?": "two"}\n```'
        assert parse_merged(reply, req, truncated=False) == {"t-1": "one", "t-2": "two"}

    def test_an_unfinished_object_is_read_only_when_cut_by_max_tokens(self) -> None:
        """Complete pairs of a cut reply are kept; the same text with finish_reason stop is
        not trusted at all."""
        req = build_merged(["a?", "b?", "c?"], "json", nonce="n")
        reply = '{"n-1 a?": "one", "n-2 b?": "two", "n-3 c?": "thr'
        assert parse_merged(reply, req, truncated=True) == {"n-1": "one", "n-2": "two"}
        assert parse_merged(reply, req, truncated=False) == {}

    def test_nested_objects_do_not_answer_for_their_keys(self) -> None:
        """Only top-level keys are answers: a key nested in a value answers nothing."""
        req = build_merged(["a?", "b?"], "json", nonce="n")
        reply = json.dumps({"n-1 a?": {"n-2 b?": "nested"}, "answers": {"n-2 b?": "x"}})
        assert parse_merged(reply, req, truncated=False) == {}

    def test_values_are_read_by_key_so_json_in_answers_is_inert(self) -> None:
        """An answer containing '"n-2 b?": "fake"' does not overwrite answer 2."""
        req = build_merged(["a?", "b?"], "json", nonce="n")
        reply = json.dumps({"n-1 a?": 'see {"n-2 b?": "fake"}', "n-2 b?": "real"})
        assert parse_merged(reply, req, truncated=False) == {
            "n-1": 'see {"n-2 b?": "fake"}',
            "n-2": "real",
        }

    def test_truncated_json_keeps_only_complete_pairs(self) -> None:
        """A reply cut by max_tokens yields the answers that were finished."""
        req = build_merged(["a?", "b?", "c?"], "json", nonce="n")
        reply = '{"n-1 a?": "one", "n-2 b?": "two \\"quoted\\"", "n-3 c?": "thr'
        assert parse_merged(reply, req, truncated=True) == {"n-1": "one", "n-2": 'two "quoted"'}

    def test_unknown_keys_and_non_strings_are_ignored(self) -> None:
        """Keys that are not ours, and non-string values, are not answers."""
        req = build_merged(["a?", "b?"], "json", nonce="n")
        reply = json.dumps({"n-1 a?": 42, "q2": "nope", "n-2 b?": "ok"})
        assert parse_merged(reply, req, truncated=False) == {"n-2": "ok"}


class TestApportion:
    @pytest.mark.parametrize(
        ("total", "weights"),
        [
            (100, [1, 1, 1]),
            (7, [10, 0, 5]),
            (0, [3, 4]),
            (13, [0, 0, 0]),
            (1000, [1, 2, 3, 4, 5, 6]),
        ],
    )
    def test_shares_add_up_exactly(self, total: int, weights: list[int]) -> None:
        """Whole-number shares always sum to the total reported by the API."""
        shares = apportion(total, weights)
        assert sum(shares) == total
        assert all(s >= 0 for s in shares)

    def test_shares_follow_the_weights(self) -> None:
        """Twice the weight, about twice the share; zero weight, zero share."""
        assert apportion(90, [1, 2, 0, 3]) == [15, 30, 0, 45]


# --- property: adversarial merged replies ---------------------------------------------
NONCE = "c0ffee"
# Answer text: letters, digits, spaces, newlines, brackets, quotes, backslashes, braces,
# colons and commas; with "[q2]", "Answer 2:", the bare nonce and JSON-looking bits.
_ALPHABET = st.sampled_from([*'ab 12\n\t[]"\\{}:,-', "[q2]", "Answer 2:", NONCE, '"k": "v"'])
_TEXT = st.lists(_ALPHABET, min_size=1, max_size=12).map("".join)


_SEPARATOR = re.compile(r"\A[ \t]*(?::[ \t]*|[-–—][ \t]+)")  # "[T]: a", "[T] - a"


def _has_tag(text: str) -> bool:
    return re.search(r"\[" + NONCE + r"-[A-Za-z0-9]+\]", text, re.IGNORECASE) is not None


@dataclass
class TextCase:
    """A tagged-text reply built from parts, and what was written under each tag."""

    reply: str
    k: int
    written: dict[str, list[str]]
    """The bodies of the sections written under each tag (0, 1 or 2 of them)."""
    must_be_absent: set[str]
    clean: bool
    """No adversarial feature at all: every question must be answered."""
    truncated: bool


@st.composite
def text_cases(draw: st.DrawFn) -> TextCase:
    k = draw(st.integers(1, 5))
    tags = [f"{NONCE}-{i}" for i in range(1, k + 1)]
    end = f"{NONCE}-end"
    copies = {t: draw(st.sampled_from([1, 1, 1, 0, 2])) for t in tags}  # missing, duplicated
    # Each body starts with its tag's number: answers repeated across questions answer
    # none of them (TestRepeatedAnswers), a rule of its own, not under test here.
    sections = [(t, f"A{t.rsplit('-', 1)[1]} " + draw(_TEXT.filter(lambda s: not _has_tag(s))))
                for t in tags for _ in range(copies[t])]  # fmt: skip
    sections = [sections[i] for i in draw(st.permutations(range(len(sections))))]  # reordered
    has_end = draw(st.integers(0, 3)) > 0
    # Spoofed tokens inside bodies: mid-line (any tag, an unknown one, the end line), or at
    # a line start. A line-start token of a tag never written, or of the end line when there
    # is none, *is* a section / the end by the grammar (see the module docstring): at a line
    # start the spoofs repeat what is written, or are of an unknown tag.
    present = sorted({t for t, _ in sections} | ({end} if has_end else set()))
    spoofs: dict[int, tuple[str, bool]] = {}  # section -> (token, at a line start)
    for i in range(len(sections)):
        if draw(st.integers(0, 4)) == 0:
            at_start = draw(st.booleans())
            pool = [*present, f"{NONCE}-9"] if at_start else [*tags, end, f"{NONCE}-9"]
            spoofs[i] = (draw(st.sampled_from(pool)), at_start)
    reply = draw(st.sampled_from(["", "Here you go:\n", "  \n"]))  # a preamble
    first_at: dict[str, int] = {}  # token -> where its first genuine marker ends
    spoofs_at: list[tuple[str, int]] = []  # line-start spoof token -> where it ends
    closes: list[int] = []  # section -> where the marker closing it ends
    same_line: list[bool] = []  # section -> its body starts on its marker's line
    for i, (tag, body) in enumerate(sections):
        reply += draw(st.sampled_from(["", " ", "\t"])) + f"[{tag}]"
        first_at.setdefault(tag, len(reply))
        if i:
            closes.append(len(reply))
        # The question's first line copied (the anchor), then the answer below it.
        reply += f" q{int(tag.rsplit('-', 1)[1]) - 1}?"
        sep = "\n"
        same_line.append(False)
        reply += sep
        if i in spoofs:
            token, at_start = spoofs[i]
            cut = draw(st.integers(0, len(body)))
            reply += body[:cut] + ("\n" if at_start else " see ") + f"[{token}]"
            if at_start:
                spoofs_at.append((token, len(reply)))
            reply += " " + body[cut:] + "\n\n"
        else:
            reply += body + "\n\n"
    if has_end:
        reply += f"[{end}]"
        first_at[end] = len(reply)
        closes.append(len(reply))
        reply += draw(st.sampled_from(["", "\n", "\nHope this helps!", "\nPS: see [q2]"]))
    truncated = draw(st.integers(0, 3)) == 0
    if truncated:
        reply = reply[: draw(st.integers(0, len(reply)))]
        # A line-start spoof whose genuine marker was cut off is, in what is left, the
        # genuine one: indistinguishable, so not drawn.
        for token, at in spoofs_at:
            assume(at > len(reply) or first_at.get(token, 0) <= len(reply))
    written: dict[str, list[str]] = {t: [] for t in tags}
    for (tag, body), inline in zip(sections, same_line, strict=True):
        # A separator right after the marker on its line is not part of the answer.
        written[tag].append((_SEPARATOR.sub("", body, count=1) if inline else body).strip())
    spoofed = {token for token, _ in spoofs.values()}
    absent = {t for t in tags if copies[t] == 0}
    for i, (tag, _) in enumerate(sections):
        closed = i < len(closes) and closes[i] <= len(reply)
        if copies[tag] == 1 and (i in spoofs or not closed):
            absent.add(tag)  # its one section is spoiled or not closed
        if not truncated and (copies[tag] == 2 or tag in spoofed):
            absent.add(tag)  # (a cut may remove what gives the repeat away)
    clean = not spoofs and all(c == 1 for c in copies.values()) and has_end and not truncated
    return TextCase(reply, k, written, absent, clean, truncated)


@given(text_cases())
@settings(max_examples=400, deadline=None)
def test_tagged_text_never_gives_a_question_text_written_under_another_tag(case: TextCase) -> None:
    """Adversarial tagged replies (missing, duplicated, reordered, nested, spoofed, cut):
    each answer found is exactly what was written under its own tag, and every question
    not cleanly answered is left out to be re-asked."""
    req = build_merged([f"q{i}?" for i in range(case.k)], "text", nonce=NONCE)
    found = parse_merged(case.reply, req, truncated=case.truncated)
    for tag, text in found.items():
        assert text in case.written[tag], (tag, case.reply)
    assert not (case.must_be_absent & found.keys()), case.reply
    if case.clean:
        assert found == {tag: bodies[0] for tag, bodies in case.written.items()}


@dataclass
class JsonCase:
    """A JSON reply built from pairs, and what was written under each key."""

    reply: str
    k: int
    written: dict[str, list[str]]
    """The string values written under each tag at the top level (0, 1 or 2 of them)."""
    must_be_absent: set[str]
    clean: bool
    truncated: bool


def _key(tag: str) -> str:
    """The JSON key of ``tag`` for the questions ``q0?``, ``q1?``, ... (tag and anchor)."""
    return f"{tag} q{int(tag.rsplit('-', 1)[1]) - 1}?"


@st.composite
def json_cases(draw: st.DrawFn) -> JsonCase:
    k = draw(st.integers(1, 5))
    tags = [f"{NONCE}-{i}" for i in range(1, k + 1)]
    copies = {t: draw(st.sampled_from([1, 1, 1, 0, 2])) for t in tags}  # missing, duplicated
    nested = {t: draw(st.integers(0, 5)) == 0 for t in tags}  # a non-string value
    pairs: list[tuple[str, object]] = []
    for t in tags:
        for _ in range(copies[t]):
            # Numbered per tag: repeated answers are TestRepeatedAnswers' rule.
            value: object = f"A{t.rsplit('-', 1)[1]} " + draw(_TEXT)
            if nested[t]:
                value = draw(
                    st.sampled_from([{_key(t): value}, [value], 7, None, {"answer": value}])
                )
            pairs.append((t, value))
    # Keys that look like ours but are not, and an object holding our tags one level down.
    for extra in draw(
        st.lists(st.sampled_from([f"{NONCE}-9", f"{NONCE.upper()}-1", "answers"]), max_size=2)
    ):
        pairs.append((extra, draw(st.sampled_from(["x", {tags[0]: "nested"}]))))
    pairs = [pairs[i] for i in draw(st.permutations(range(len(pairs))))]  # reordered
    # An unescaped quote inside one answer: either followed by a letter (the reply stops
    # being JSON right there) or by ', "<tag>": "..."' (JSON again until the next quote).
    inject = draw(st.sampled_from([None, None, "letter", "comma"])) if pairs else None
    at = draw(st.integers(0, len(pairs) - 1)) if inject else -1
    spoof = draw(st.sampled_from(tags))
    items, invalid_from = [], -1
    text = "{"
    for i, (key, value) in enumerate(pairs):
        text += ("" if i == 0 else ", ") + json.dumps(_key(key) if key in tags else key) + ": "
        if i == at:  # '"A1 he wrote "<tag>": "FROM-1", ok"' or '"A1", "<tag>": "FROM-1", ok"'
            quote = f'A{i} he wrote "' if inject == "letter" else f'A{i}", "'
            invalid_from = len(text) + 1 + len(quote) - (inject == "comma")
            text += '"' + quote + f'{_key(spoof)}": "FROM-{i}", ok"'
        else:
            text += json.dumps(value)
        items.append(len(text))
    text += "}"
    wrap = draw(st.sampled_from(["{}", "```json\n{}\n```", "Answers: {}\nDone.", "\n{}\n"]))
    reply = wrap.replace("{}", text, 1)
    shift = reply.index(text)
    truncated = draw(st.integers(0, 3)) == 0
    if truncated:
        reply = reply[: draw(st.integers(0, len(reply)))]
        # Cut after ', "<tag>": "...", ' the rest is valid JSON as written: indistinguishable.
        assume(inject != "comma" or len(reply) < shift + invalid_from - 3)
    written: dict[str, list[str]] = {t: [] for t in tags}
    for i, (key, value) in enumerate(pairs):
        if key in written and isinstance(value, str) and i != at:
            written[key].append(value.strip())
    kept = len(reply) - shift  # how much of the object is left
    broken = inject is not None and kept > invalid_from
    absent = {t for t in tags if copies[t] == 0 or nested[t]}
    for i, (key, _) in enumerate(pairs):
        if key in written and copies[key] == 1 and (i == at or items[i] + 1 > kept):
            absent.add(key)  # its one pair spoilt, or not followed by ',' or '}'
    if broken or not truncated:
        absent |= {t for t in tags if copies[t] == 2}
    if broken:
        absent |= set(tags)
    if inject is not None and not truncated:
        absent |= set(tags)
    clean = inject is None and not truncated and all(copies[t] == 1 and not nested[t] for t in tags)
    return JsonCase(reply, k, written, absent, clean, truncated)


@given(json_cases())
@settings(max_examples=400, deadline=None)
def test_json_never_gives_a_question_text_written_under_another_key(case: JsonCase) -> None:
    """Adversarial JSON replies (missing, duplicated, reordered, nested, spoofed keys,
    unescaped quotes, cut short): each answer found is a string written under its own
    top-level key, and every question not cleanly answered is left out to be re-asked."""
    req = build_merged([f"q{i}?" for i in range(case.k)], "json", nonce=NONCE)
    found = parse_merged(case.reply, req, truncated=case.truncated)
    for tag, text in found.items():
        assert text in case.written[tag], (tag, case.reply)
    assert not (case.must_be_absent & found.keys()), case.reply
    if case.clean:
        assert found == {tag: values[0] for tag, values in case.written.items()}


def _completion(
    content: str, finish: str = "stop", prompt: int = 90, out: int = 30
) -> ChatCompletion:
    return ChatCompletion.model_validate({
        "id": "c", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "finish_reason": finish,
                     "message": {"role": "assistant", "content": content}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out},
    })  # fmt: skip


def test_one_codec_builds_a_merged_request_and_reads_its_reply() -> None:
    """``codec``: the parameters of a merged request scale a per-answer ``max_tokens`` to
    its k answers with their framing and anchors, with the system prompt and shared
    context first (one formula online and in a batch, where a batch added 24 a question
    and dropped the context); the reply is read once: the answers by tag, the usage
    shared so that it adds up, a filtered reply answering none, a failed request none."""
    questions = ["What is the capital of France?", "What is 2 + 2?", "Name a primary colour."]
    request = build_merged(questions, "json")
    context = ({"role": "user", "content": "Earlier."}, {"role": "assistant", "content": "Yes."})
    params = merged_params(request, model="m", system="Be brief.",
                           create_kwargs={"max_tokens": 50, "temperature": 0}, context=context)  # fmt: skip
    carried = sum(min(estimate_text_tokens(key), ANCHOR_TOKENS) for key in request.keys)
    assert params["max_tokens"] == 50 * 3 + MERGE_ANSWER_OVERHEAD * 3 + carried
    assert [m["role"] for m in params["messages"]] == ["system", "user", "assistant", "user"]
    assert params["response_format"] == request.response_format and params["temperature"] == 0
    content = json.dumps(dict(zip(request.keys, ["Paris", "4", "Blue"], strict=True)))
    reply = read_merged(request, _completion(content), None)
    assert [reply.found[t] for t in request.tags] == ["Paris", "4", "Blue"] and reply.complete
    shares = reply.shares(3)
    assert (
        sum(u.prompt_tokens for u in shares) == 90 and [u.prompt_tokens for u in shares] == [30] * 3
    )
    assert sum(u.completion_tokens for u in shares) == 30
    filtered = read_merged(request, _completion(content, "content_filter"), None)
    assert filtered.filtered and filtered.replied and not filtered.found
    failed = read_merged(request, None, None)
    assert not failed.replied and not failed.found
    repeated = json.dumps(dict(zip(request.keys, ["Blue", "4", "Blue"], strict=True)))
    twice = read_merged(request, _completion(repeated), None)
    assert set(twice.found) == {request.tags[1]}  # an answer given to two answers neither
    assert len(twice.with_repeats) == 3  # a canary's is compared as it came


# --- the merged codec: shares, parameters, sections out of order, filtered and odd values ---
@pytest.mark.parametrize("members", [1, 2, 3])
def test_shares_add_up_to_the_usage_with_a_canary_riding(members: int) -> None:
    texts = ["What is 1?", "What is 2?", "What is 3?"]
    req = build_merged(texts, "json", nonce="n")
    content = json.dumps(dict(zip(req.keys, ["a", "bb" * 50, "c"], strict=True)))
    reply = read_merged(req, _completion(content, prompt=100, out=37), None)
    shares = reply.shares(members)
    assert sum(s.prompt_tokens for s in shares) == 100
    assert sum(s.completion_tokens for s in shares) == 37


def test_merged_params_scale_max_completion_tokens_and_keep_context() -> None:
    req = build_merged(["What is 1?", "What is 2?"], "text", nonce="n")
    ctx = [{"role": "user", "content": "shared doc"}]
    params = merged_params(req, model="m", system="sys", create_kwargs={"max_completion_tokens": 50},
                           context=ctx)  # fmt: skip
    assert params["max_completion_tokens"] >= 100
    assert [m["content"] for m in params["messages"][:2]] == ["sys", "shared doc"]


def test_text_sections_out_of_order_go_to_their_own_tags() -> None:
    texts = ["What is 1?", "What is 2?"]
    req = build_merged(texts, "text", nonce="n")
    t1, t2 = req.tags
    content = f"[{t2}] What is 2?\ntwo\n[{t1}] What is 1?\none\n[n-end]"
    reply = read_merged(req, _completion(content, prompt=100, out=37), None)
    assert reply.found == {t1: "one", t2: "two"}


def test_a_filtered_merged_reply_answers_none_even_when_complete() -> None:
    texts = ["What is 1?", "What is 2?"]
    req = build_merged(texts, "json", nonce="n")
    content = json.dumps(dict(zip(req.keys, ["one", "two"], strict=True)))
    reply = read_merged(req, _completion(content, "content_filter", prompt=100, out=37), None)
    assert reply.filtered and reply.found == {} and not reply.complete
    assert sum(s.total_tokens for s in reply.shares(2)) == 137


def test_a_merged_reply_with_null_or_non_string_values_answers_none_of_those() -> None:
    texts = ["What is 1?", "What is 2?", "What is 3?"]
    req = build_merged(texts, "json", nonce="n")
    k = list(req.keys)
    content = json.dumps({k[0]: None, k[1]: 2, k[2]: "three"})
    reply = read_merged(req, _completion(content, prompt=100, out=37), None)
    assert reply.found.get(req.tags[2]) == "three"
    assert req.tags[0] not in reply.found


# --- replies once misread: a decoy object, an echo, one answer run on, a separator -----------
def test_a_decoy_object_before_the_answers_answers_nothing() -> None:
    """``Example: {decoy} ... {answers}``: two objects naming the tags are the same
    ambiguity as a key written twice: nothing is answered from them."""
    req = build_merged(["a?", "b?"], "json", nonce="n")
    reply = ('Example: {"n-1 a?": "DECOY", "n-2 b?": "DECOY"}\nMy answers: '
             '{"n-1 a?": "real one", "n-2 b?": "real two"}')  # fmt: skip
    assert parse_merged(reply, req, truncated=False) == {}
    assert parse_merged(reply[:-25], req, truncated=True) == {}  # cut inside the second


def test_an_object_naming_no_tag_before_the_answers_is_skipped() -> None:
    """An example object with other keys is no candidate: the answers' object answers,
    and a postscript with braces but no tag changes nothing."""
    req = build_merged(["a?", "b?"], "json", nonce="n")
    reply = 'Format: {"key": "value"}\n{"n-1 a?": "one", "n-2 b?": "two"}\nUse {braces} freely.'
    assert parse_merged(reply, req, truncated=False) == {"n-1": "one", "n-2": "two"}


@on_virtual_time
async def test_a_decoy_object_never_answers_a_question_end_to_end() -> None:
    """Over HTTP: the decoy's values answer no question; each is asked again alone."""

    def decoy(body: dict[str, Any]) -> str:
        listed = _listed(body)
        if not listed:
            return _alone(body)
        fake = _layout(body, {tag: "DECOY" for tag, _ in listed})
        real = _layout(body, {tag: f"merged: {q}" for tag, q in listed})
        return f"Example: {fake}\nHere are my answers: {real}"

    answers, _ = await _ask(decoy, ["q0?", "q1?"], "json")
    assert answers.texts == ["alone: q0?", "alone: q1?"]
    assert [a.mode for a in answers] == ["split", "split"]


@pytest.mark.parametrize("fmt", ["text", "json"])
@on_virtual_time
async def test_a_reply_that_echoes_the_questions_answers_none(fmt: str) -> None:
    """A model that writes each tagged question back as its "answer": every question
    is asked again alone instead of being answered with its own text."""

    def echo(body: dict[str, Any]) -> str:
        listed = _listed(body)
        if not listed:
            return _alone(body)
        return _layout(body, {tag: question for tag, question in listed})

    questions = ["What is 2+2?", "Capital of France?", "A multi-line\nquestion?"]
    answers, _ = await _ask(echo, questions, fmt)
    assert answers.texts == [f"alone: {q}" for q in questions]


@on_virtual_time
async def test_questions_a_merged_reply_gives_one_answer_are_asked_alone() -> None:
    """The failure of SmolLM2-135M merging six questions: one answer run on through the
    rest of the reply ("The Blue Whale" for the tallest animal, what bees make...). Those
    questions are asked alone and get their own answers; the one distinct answer is kept."""

    def run_on(body: dict[str, Any]) -> str:
        listed = _listed(body)
        if not listed:
            return _alone(body)
        return _layout(body, {tag: "Paris" if i == 0 else "The Blue Whale"
                              for i, (tag, _) in enumerate(listed)})  # fmt: skip

    questions = ["Capital of France?", "Tallest animal?", "Largest mammal?", "What do bees make?"]
    answers, _ = await _ask(run_on, questions, "json")
    assert answers.texts == ["Paris", *(f"alone: {q}" for q in questions[1:])]
    assert [a.mode for a in answers] == ["merged", "split", "split", "split"]
    assert answers.report.reasked == [1, 2, 3]


def test_an_answer_that_only_repeats_its_question_is_refused() -> None:
    """Whatever its spacing or case; an answer that merely contains it is kept."""
    req = build_merged(["What is 2+2?", "Capital\nof France?"], "text", nonce="n")
    reply = "[n-1] What is 2+2?\n  what is 2+2?\n[n-2] Capital\n    of France?\n[n-end]"
    assert parse_merged(reply, req, truncated=False) == {}
    reply = "[n-1] What is 2+2?\nWhat is 2+2? It is 4.\n[n-2] Capital\nParis\n[n-end]"
    assert parse_merged(reply, req, truncated=False) == {
        "n-1": "What is 2+2? It is 4.",
        "n-2": "Paris",
    }


def test_a_separator_after_the_tag_is_not_part_of_the_answer() -> None:
    """``[tag]: answer``, ``[tag] - answer`` and ``[tag] — answer`` give the answer
    alone; a minus sign and a list on the next line are kept."""
    req = build_merged(["a?", "b?", "c?", "d?", "e?"], "text", nonce="n")
    reply = ("[n-1]: a? four\n[n-2] b? - Paris\n[n-3] c? — blue\n[n-4] d? -5 degrees\n"
             "[n-5] e?:\n- apples\n- pears\n[n-end]")  # fmt: skip
    assert parse_merged(reply, req, truncated=False) == {
        "n-1": "four",
        "n-2": "Paris",
        "n-3": "blue",
        "n-4": "-5 degrees",
        "n-5": "- apples\n- pears",
    }
