"""fanout.detect: finding independent questions in one prompt."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout import detect

DATA = Path(__file__).parent / "data"
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
from detection import evaluate  # noqa: E402


def _load(name: str) -> list[dict[str, Any]]:
    return [
        json.loads(line)
        for line in (DATA / name).read_text(encoding="utf-8").splitlines()
        if line.strip()
    ]


@pytest.mark.parametrize(
    "corpus",
    [
        "detection_corpus.jsonl",
        "detection_holdout.jsonl",
        "detection_holdout2.jsonl",
        "detection_holdout3.jsonl",
    ],
)
def test_corpus_meets_the_targets(corpus: str) -> None:
    """>= 98 % of single questions kept whole, >= 90 % of multi-part prompts split
    exactly right, and no dependent group ever split apart."""
    result = evaluate(_load(corpus))
    assert result["single_kept_whole"] >= 0.98, result["misses"]
    assert result["multi_exact"] >= 0.90, result["misses"]
    assert result["dependent_groups_broken"] == 0, result["misses"]


def test_the_corpus_is_large_and_varied() -> None:
    """At least 150 labelled prompts in several languages and every category."""
    entries = _load("detection_corpus.jsonl")
    assert len(entries) >= 150
    assert {e["lang"] for e in entries} >= {"en", "zh", "ja", "ko", "es", "de", "fr"}
    assert {e["category"] for e in entries} == {"single", "multi", "dependent", "shared"}


class TestStyles:
    @pytest.mark.parametrize(
        ("text", "style", "markers"),
        [
            ("1. What is A?\n2. What is B?", "numbered", ["1.", "2."]),
            ("1) What is A?\n2) What is B?", "numbered", ["1)", "2)"]),
            ("(1) What is A?\n(2) What is B?", "paren", ["(1)", "(2)"]),
            ("Q1: What is A?\nQ2: What is B?", "q-prefix", ["Q1:", "Q2:"]),
            ("1、什么是A？\n2、什么是B？", "cjk", ["1、", "2、"]),
            ("（1）什么是A？\n（2）什么是B？", "paren", ["（1）", "（2）"]),
            ("①什么是A？\n②什么是B？", "circled", ["①", "②"]),
            ("i. What is A?\nii. What is B?", "roman", ["i.", "ii."]),
            ("a) What is A?\nb) What is B?", "letter", ["a)", "b)"]),
            ("- What is A?\n- What is B?", "bullet", ["-", "-"]),
            ("一、什么是A？\n二、什么是B？", "cjk", ["一、", "二、"]),
        ],
    )
    def test_each_numbering_style_is_recognised(
        self, text: str, style: str, markers: list[str]
    ) -> None:
        """Every marker style of the brief splits, and keeps the user's markers."""
        d = detect(text)
        assert d.independent
        assert d.style == style
        assert [q.marker for q in d.questions] == markers

    def test_questions_on_separate_lines(self) -> None:
        """Unmarked lines that are each a question split."""
        d = detect("What is photosynthesis?\nHow do vaccines work?\nWhy do cats purr?")
        assert d.style == "lines"
        assert [q.text for q in d.questions] == [
            "What is photosynthesis?",
            "How do vaccines work?",
            "Why do cats purr?",
        ]

    def test_several_questions_in_one_paragraph(self) -> None:
        """Three question sentences in a paragraph split; a pair needs a cue."""
        assert detect("What is X? Who made Y? Where is Z located?").independent
        assert not detect("Is it safe to eat raw dough? What are the risks?").independent
        assert detect(
            "Two questions. What is the half-life of carbon-14? And what is the atomic number of gold?"
        ).independent


class TestNeverSplit:
    @pytest.mark.parametrize(
        "text",
        [
            "Which is prime?\nA. 21\nB. 29\nC. 33",
            "Follow these steps:\n1. Clone the repo\n2. Install\n3. Run the tests",
            "Compare the following:\n- PostgreSQL\n- SQLite",
            "What does this print?\n```\n# 1. make a list?\nxs = [1]\n# 2. print it?\nprint(xs)\n```",
            'He asked: "What is 2+2? What is 3+3?" How should I answer him?',
            "> 1. Is the earth flat?\n> 2. Is the moon cheese?\nHow do I reply politely?",
            "First sort the list, then print it. How do I do that in Python?",
        ],
    )
    def test_one_task_stays_whole(self, text: str) -> None:
        """Options, steps, items to consider, code, quotes and block quotes: one group."""
        d = detect(text)
        assert not d.independent
        assert len(d.groups) == 1


class TestDependencies:
    def test_a_pronoun_groups_with_the_part_before(self) -> None:
        """'How high is it?' stays with the question it refers to."""
        d = detect("1. What is the tallest mountain?\n2. How high is it?\n3. Who wrote Hamlet?")
        assert d.groups == [[0, 1], [2]]

    def test_a_named_part_is_the_one_grouped_with(self) -> None:
        """'from question 1' groups with part 1, not with the part just before."""
        d = detect(
            "1. Name a physicist.\n2. What is 2+2?\n3. What was the physicist from question 1 known for?"
        )
        assert d.groups == [[0, 2], [1]]

    @pytest.mark.parametrize(
        "text",
        [
            "1. 世界上最长的河流是哪条？\n2. 它流经哪些国家？\n3. 谁发明了电话？",
            "1. 세계에서 가장 큰 사막은 어디인가요?\n2. 그것의 면적은 얼마인가요?\n3. 물의 화학식은 무엇인가요?",
            "1. 日本で一番長い川は何ですか？\n2. それはどこを流れていますか？\n3. 地球の直径は？",
        ],
    )
    def test_references_in_cjk_group_too(self, text: str) -> None:
        """它 / 그것 / それ refer back, as 'it' does."""
        assert detect(text).groups == [[0, 1], [2]]

    def test_with_a_shared_context_a_pronoun_may_point_into_it(self) -> None:
        """'How much does it weigh?' after a product description is its own question."""
        text = "The X200 weighs 3 kg and costs $299.\n\n1. How heavy is the X200?\n2. How much does it cost?"
        d = detect(text)
        assert d.groups == [[0], [1]]
        assert "X200 weighs" in d.preamble


class TestLayout:
    def test_group_prompts_carry_the_preamble(self) -> None:
        """Each group is sent with the shared context and its own parts, markers kept."""
        d = detect(
            "Context: cats.\n\n1. What do cats eat?\n2. How long do cats sleep?\n\nBe brief."
        )
        assert d.preamble == "Context: cats."
        assert d.postamble == "Be brief."
        assert (
            d.group_prompt(d.groups[1])
            == "Context: cats.\n\n2. How long do cats sleep?\n\nBe brief."
        )

    def test_answers_are_laid_out_in_the_users_numbering(self) -> None:
        """Answers come back under the user's own markers, in order."""
        d = detect("（1）什么是A？\n（2）什么是B？")
        assert d.layout(["甲", "乙"]) == "（1） 甲\n\n（2） 乙"

    def test_detect_refuses_non_strings(self) -> None:
        """A clear error for the wrong type."""
        with pytest.raises(TypeError, match="str"):
            detect(42)  # type: ignore[arg-type]
        assert fanout.detect("").groups == [[0]]
