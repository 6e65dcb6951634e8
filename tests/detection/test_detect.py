"""fanout.detect: finding independent questions in one prompt."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import fanout
from fanout import detect
from fanout.detection._detector import SPLIT_THRESHOLD

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
sys.path.insert(0, str(ROOT / "benchmarks"))
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
        "detection_holdout4.jsonl",
        "detection_dev37.jsonl",
    ],
)
def test_corpus_meets_the_targets(corpus: str) -> None:
    """>= 98 % of single questions kept whole, >= 85 % of multi-question prompts split
    exactly right, no dependent group ever split apart, every shared instruction sent
    with every part; on the sets before issue 27, >= 90 % of all prompts with several
    parts (dependent ones included) split exactly right. The issue-37 development set
    is held to the same targets."""
    result = evaluate(_load(corpus))
    assert result["single_kept_whole"] >= 0.98, result["misses"]
    assert result["multi_category_exact"] >= 0.85, result["misses"]
    assert result["dependent_groups_broken"] == 0, result["misses"]
    assert result["shared_carried"] == 1.0, result["not_carried"]
    if corpus not in ("detection_holdout4.jsonl", "detection_dev37.jsonl"):
        assert result["multi_exact"] >= 0.90, result["misses"]


def test_the_blind_set_of_issue_37_keeps_its_figures() -> None:
    """Blind 5 (292 prompts written blind for issue 37, scored once before its rules and
    once after; docs/wrap.md; a development set since the second round of issue 37):
    held at what the third round reached, a floor — every single kept whole, at least
    93 of 105 multi prompts split exactly (47 before issue 37's second round, 92 after
    it), no dependent group split apart (5 before it), every shared instruction sent
    with every part."""
    result = evaluate(_load("detection_blind5.jsonl"))
    assert result["single_kept_whole"] == 1.0, result["misses"]
    multi_exact, multi = map(int, result["exact_by_category"]["multi"].split("/"))
    assert multi == 105 and multi_exact >= 93, result["misses"]
    assert result["dependent_groups_broken"] == 0, result["misses"]
    assert result["shared_carried"] == 1.0, result["not_carried"]


def test_the_second_blind_set_of_issue_37_keeps_its_figures() -> None:
    """Blind 6 (270 prompts in 18 languages and 2 mixed ones, written blind for the second
    round of issue 37 and scored once before its rules and once after; its parts start
    at their cue, so a prompt is exact on its groups alone; a development set since the
    third round): held at what the third round reached, a floor — every one of the 92
    singles kept whole (86 after the second round), at least 87 of 98 multi prompts split
    exactly (60 after it), at most 3 dependent groups split apart (9 after it), every
    shared piece sent with every part."""
    result = evaluate(_load("detection_blind6.jsonl"))
    singles_whole, singles = map(int, result["exact_by_category"]["single"].split("/"))
    assert singles == 92 and singles_whole == 92, result["misses"]
    multi_exact, multi = map(int, result["exact_by_category"]["multi"].split("/"))
    assert multi == 98 and multi_exact >= 87, result["misses"]
    assert result["dependent_groups_broken"] <= 3, result["misses"]
    assert result["shared_carried"] == 1.0, result["not_carried"]


def test_the_third_blind_set_of_issue_37_keeps_its_figures() -> None:
    """Blind 7 (286 prompts in 18 languages and 3 mixed ones, written blind for the third
    round of issue 37 and scored once before its rules and once after; its parts start at
    their cue, so a prompt is exact on its groups alone): held at what that round reached,
    a floor, not the issue's targets, which it does not meet — 92 of 96 singles kept
    whole (90 before), 61 of 97 multi prompts split exactly (57 before), at most 6
    dependent groups split apart (6 before), every shared piece sent with every part."""
    result = evaluate(_load("detection_blind7.jsonl"))
    singles_whole, singles = map(int, result["exact_by_category"]["single"].split("/"))
    assert singles == 96 and singles_whole >= 92, result["misses"]
    multi_exact, multi = map(int, result["exact_by_category"]["multi"].split("/"))
    assert multi == 97 and multi_exact >= 61, result["misses"]
    assert result["dependent_groups_broken"] <= 6, result["misses"]
    assert result["shared_carried"] == 1.0, result["not_carried"]


def test_the_fourth_blind_set_of_issue_37_keeps_its_figures() -> None:
    """Blind 8 (314 prompts in 22 languages and 3 mixed ones, written blind in the fourth
    session of issue 37 by someone who read neither the detector, its tests and sets,
    nor the issue; scored once, on the rules unchanged since blind 7's round; parts
    judged on their count and groups, as blind 6 and 7): held at that figure, a floor,
    not the issue's targets — 99 of 103 singles kept whole, 61 of 109 multi prompts
    split exactly, at most 7 dependent groups split apart, every shared piece sent
    with every part."""
    result = evaluate(_load("detection_blind8.jsonl"))
    singles_whole, singles = map(int, result["exact_by_category"]["single"].split("/"))
    assert singles == 103 and singles_whole >= 99, result["misses"]
    multi_exact, multi = map(int, result["exact_by_category"]["multi"].split("/"))
    assert multi == 109 and multi_exact >= 61, result["misses"]
    assert result["dependent_groups_broken"] <= 7, result["misses"]
    assert result["shared_carried"] == 1.0, result["not_carried"]


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

    @pytest.mark.parametrize(
        ("text", "style", "texts"),
        [
            ("1. What is X? 2. Explain Y.", "numbered", ["What is X?", "Explain Y."]),
            ("(1) What is A? (2) What is B?", "paren", ["What is A?", "What is B?"]),
            ("Q1: What is A? Q2: What is B?", "q-prefix", ["What is A?", "What is B?"]),
            ("1、什么是A？2、什么是B？", "cjk", ["什么是A？", "什么是B？"]),
            ("a) Define mass. b) Define weight.", "letter", ["Define mass.", "Define weight."]),
            ("Quick quiz: 1. What is A? 2. What is B?", "numbered", ["What is A?", "What is B?"]),
        ],
    )
    def test_a_list_on_one_line_is_found(self, text: str, style: str, texts: list[str]) -> None:
        """Markers after the end of a sentence start items: each part keeps only its own text."""
        d = detect(text)
        assert d.independent
        assert d.style == style
        assert [q.text for q in d.questions] == texts

    @pytest.mark.parametrize(
        ("text", "style", "markers"),
        [
            ("问题一：什么是A？\n问题二：什么是B？", "q-prefix", ["问题一：", "问题二："]),
            ("问题一：什么是A？问题二：什么是B？", "q-prefix", ["问题一：", "问题二："]),
            ("第一题：什么是A？\n第二题：什么是B？", "q-prefix", ["第一题：", "第二题："]),
            ("問1：Aとは何ですか？\n問2：Bとは何ですか？", "q-prefix", ["問1：", "問2："]),
            (
                "문제 1. A는 무엇인가요?\n문제 2. B는 무엇인가요?",
                "q-prefix",
                ["문제 1.", "문제 2."],
            ),
            ("第一，什么是A？第二，什么是B？", "ordinal", ["第一，", "第二，"]),
            ("가) A는 무엇인가요? 나) B는 무엇인가요?", "hangul", ["가)", "나)"]),
        ],
    )
    def test_heading_numbering_in_cjk_is_found(
        self, text: str, style: str, markers: list[str]
    ) -> None:
        """问题一： / 第一题： / 問1： / 문제 1. / 第一， / 가) number the parts, on one line or several."""
        d = detect(text)
        assert d.independent
        assert d.style == style
        assert [q.marker for q in d.questions] == markers
        assert all(q.text.startswith(("什么", "A", "B")) for q in d.questions)

    def test_text_after_a_one_line_list_is_for_every_part(self) -> None:
        """'1. What is X? 2. What is Y? Keep it short.': the last sentence is a shared postamble."""
        d = detect("1. What is a quark? 2. What is a lepton? Keep each answer short.")
        assert [q.text for q in d.questions] == ["What is a quark?", "What is a lepton?"]
        assert d.postamble == "Keep each answer short."

    def test_numbers_inside_a_sentence_are_not_markers(self) -> None:
        """'1) a monthly pass or 2) ten tickets' inside one question stays one question."""
        d = detect(
            "Which is cheaper: 1) a monthly pass at $90 or 2) ten single tickets at $8 each?"
        )
        assert not d.independent

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
            "My config:\n\n    retries: 3   # enough?\n    timeout: 5   # ok?\n\nIs it right for a slow API?",
            "Look:\n    x = load()  # slow?\n    y = parse(x)  // or this?\nHow do I profile it?",
            "Rewrite these questions politely:\n1. Where is my order?\n2. Why is it late?",
        ],
    )
    def test_one_task_stays_whole(self, text: str) -> None:
        """Options, steps, items to consider, code, quotes and block quotes: one group."""
        d = detect(text)
        assert not d.independent
        assert len(d.groups) == 1

    @pytest.mark.parametrize(
        ("outer", "inner"), [("````", "```"), ("`````md", "````"), ("~~~~", "~~~"), ("```", "~~~")]
    )
    def test_a_fence_closes_only_on_a_fence_as_long_of_the_same_character(
        self, outer: str, inner: str
    ) -> None:
        """CommonMark: a ```` fence showing a ``` fence (or ~~~ inside ~~~~, or ~~~
        inside ```) runs to its own closing fence; the numbered line inside is code."""
        fence = outer.rstrip("md")
        text = (
            f"1. Explain this markdown:\n{outer}\n{inner}\n2. inside?\n{inner}\n{fence}\n"
            "2. What is a monad?\n3. Who wrote Hamlet?"
        )
        d = detect(text)
        assert [q.marker for q in d.questions] == ["1.", "2.", "3."]
        assert d.questions[0].text.endswith(f"2. inside?\n{inner}\n{fence}")
        assert d.questions[1].text == "What is a monad?"

    def test_a_fence_in_the_middle_of_a_line_is_a_code_span(self) -> None:
        """```x = 1``` inside a sentence masks itself only, not the rest of the prompt."""
        d = detect("1. Why does ```x = 1``` fail?\n2. What is a monad?\n3. Who wrote Hamlet?")
        assert [q.text for q in d.questions] == [
            "Why does ```x = 1``` fail?", "What is a monad?", "Who wrote Hamlet?",
        ]  # fmt: skip


class TestLongLists:
    @pytest.mark.parametrize("n", [100, 150, 1000])
    @pytest.mark.parametrize("form", ["{i}. What is item {i} about?", "{i}) Who made part {i}?",
                                      "({i}) Where is box {i}?", "Q{i}: Why is {i} odd?"])  # fmt: skip
    def test_every_numbered_question_is_a_part(self, n: int, form: str) -> None:
        """Numbers of three and four digits are markers too: 100 (150, 1000) numbered
        questions are as many parts, none left over as a postamble."""
        d = detect("\n".join(form.format(i=i) for i in range(1, n + 1)))
        assert len(d.questions) == n and d.postamble == ""
        assert d.questions[-1].marker == form.format(i=n).split(" ")[0]
        assert d.independent


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
        """Each group is sent with the shared context and its own part, its marker left out."""
        d = detect(
            "Context: cats.\n\n1. What do cats eat?\n2. How long do cats sleep?\n\nBe brief."
        )
        assert d.preamble == "Context: cats."
        assert d.postamble == "Be brief."
        assert (
            d.group_prompt(d.groups[1]) == "Context: cats.\n\nHow long do cats sleep?\n\nBe brief."
        )

    def test_parts_sent_together_keep_their_markers(self) -> None:
        """A group of several parts is sent with their markers: the answer follows them."""
        d = detect("1. Who wrote Dune?\n2. When did he die?\n3. What is a verb?")
        assert d.groups == [[0, 1], [2]]
        assert d.group_prompt(d.groups[0]) == "1. Who wrote Dune?\n2. When did he die?"
        assert d.group_prompt(d.groups[1]) == "What is a verb?"

    def test_answers_are_laid_out_in_the_users_numbering(self) -> None:
        """Answers come back under the user's own markers, in order."""
        d = detect("（1）什么是A？\n（2）什么是B？")
        assert d.layout(["甲", "乙"]) == "（1） 甲\n\n（2） 乙"

    def test_a_cut_answer_is_marked_and_the_parts_it_did_not_reach_are_named(self) -> None:
        """Parts 1 and 2 asked together: an answer cut before a line opens with part 2's
        marker (as the model writes it: ``**2)**``) names part 2 as cut before its answer;
        one cut inside part 2's answer does not. Bullets cannot be told apart: a part
        after the first is named as perhaps not reached."""
        d = detect("1. Who wrote Dune?\n2. When did he die?\n3. What is a verb?")
        assert d.layout(["1. Frank Herbert, who", "A word."], cut=["max_tokens", None]) == (
            "1. Frank Herbert, who (cut short: max_tokens)\n\n"
            '2. (cut short: max_tokens before the answer to "When did he die?")\n\n'
            "3. A word."
        )
        reached = "1. Frank Herbert.\n**2)** In"
        assert d.layout([reached, "A"], cut=["content_filter", None]) == (
            "1. Frank Herbert.\n**2)** In (cut short: content_filter)\n\n3. A"
        )
        assert d.layout([reached, "A"]) == "1. Frank Herbert.\n**2)** In\n\n3. A"
        bullets = detect("- Who wrote Dune?\n- When did he die?\n- What is a verb?")
        assert bullets.layout(["- Frank", "A word."], cut=["max_tokens", None]) == (
            "- Frank (cut short: max_tokens)\n\n"
            '- (cut short: max_tokens, perhaps before the answer to "When did he die?")\n\n'
            "- A word."
        )
        with pytest.raises(ValueError, match="2 answers but 1 cut reasons"):
            d.layout(["a", "b"], cut=[None])

    def test_an_unclosed_fence_ending_in_whitespace_is_read(self) -> None:
        """Whitespace masked inside an unclosed code fence does not upset the line reader."""
        assert not detect("Why?\n```\nx = 1\n\t").independent

    def test_detect_refuses_non_strings(self) -> None:
        """A clear error for the wrong type."""
        with pytest.raises(TypeError, match="str"):
            detect(42)  # type: ignore[arg-type]
        assert fanout.detect("").groups == [[0]]


class TestReferencesInEachLanguage:
    @pytest.mark.parametrize(
        "text",
        [
            "1. Who invented the phonograph?\n2. Where did he grow up?\n3. What is a prime?",
            "1. Wer hat das Penicillin entdeckt?\n2. Wo hat er studiert?\n3. Was ist ein Atom?",
            "1. Qui a inventé le phonographe ?\n2. Où a-t-il grandi ?\n3. Qu'est-ce qu'un atome ?",
            "1. ¿Quién inventó el fonógrafo?\n2. ¿Dónde creció él?\n3. ¿Qué es un átomo?",
            "1. 谁发明了留声机？\n2. 他在哪里长大？\n3. 什么是原子？",
            "1. 蓄音機を発明したのは誰ですか？\n2. 彼はどこで育ちましたか？\n3. 原子とは何ですか？",
            "1. 축음기를 발명한 사람은 누구인가요?\n2. 그는 어디서 자랐나요?\n3. 원자란 무엇인가요?",
        ],
    )
    def test_a_personal_pronoun_groups_with_the_part_that_named_the_person(self, text: str) -> None:
        """he / er / il / él / 他 / 彼 / 그는 with no one in its own part leans on the part before."""
        d = detect(text)
        assert d.groups == [[0, 1], [2]]
        assert any("leans on part 1" in r for r in d.reasons)

    @pytest.mark.parametrize(
        "text",
        [
            "1. Name a famous chemist.\n2. What was her greatest discovery?\n3. What is 9 times 7?",
            "1. Nenne eine berühmte Chemikerin.\n2. Was war ihre größte Entdeckung?\n3. Was ist 9 mal 7?",
            "1. Nomme une chimiste célèbre.\n2. Quelle fut sa plus grande découverte ?\n3. Combien font 9 fois 7 ?",
            "1. Nombra una química famosa.\n2. ¿Cuál fue su mayor descubrimiento?\n3. ¿Cuánto es 9 por 7?",
        ],
    )
    def test_a_possessive_groups_with_the_part_that_introduced_its_owner(self, text: str) -> None:
        """her / ihre / sa / su with no owner in its own part leans on the part before."""
        assert detect(text).groups == [[0, 1], [2]]

    def test_a_person_is_looked_for_back_to_the_part_that_names_one(self) -> None:
        """'he' in part 3 groups parts 1 to 3 when part 2 names no one."""
        d = detect(
            "1. Who built the first telescope?\n2. What is 12 squared?\n3. Where was he born?"
        )
        assert d.groups == [[0, 1, 2]]

    @pytest.mark.parametrize(
        "text",
        [
            "1. Who wrote Dracula, and when did he die?\n2. Why is the sea salty?",
            "1. How does a bee find its way home?\n2. Why is the sea salty?",
            "1. Is it safe to swim after eating?\n2. Why is the sea salty?",
            "1. Wie spät ist es in Tokio?\n2. Warum ist das Meer salzig?",
            "1. Pourquoi le ciel est-il bleu ?\n2. Quelle heure est-il à Tokyo ?",
            "1. 谁发明了电话？他是哪国人？\n2. 为什么海水是咸的？",
        ],
    )
    def test_a_pronoun_that_resolves_in_its_own_part_does_not_group(self, text: str) -> None:
        """An antecedent before the clause, a possessive of the subject, a dummy 'it': no link."""
        assert detect(text).groups == [[0], [1]]

    @pytest.mark.parametrize(
        "text",
        [
            "1. Pick a river in Africa.\n2. How long is the river?\n3. What is a verb?",
            "1. Which metal has the symbol Cu?\n2. Where is the metal mined?\n3. What is a verb?",
            "1. Suggest a book on chess.\n2. Who published this book?\n3. What is a verb?",
            "1. Wähle einen Fluss in Afrika.\n2. Wie lang ist der Fluss?\n3. Was ist ein Verb?",
            "1. Choisis un fleuve d'Afrique.\n2. Quelle est la longueur du fleuve ?\n3. Qu'est-ce qu'un verbe ?",
            "1. Elige un río de África.\n2. ¿Cuánto mide el río?\n3. ¿Qué es un verbo?",
            "1. 推荐一本关于象棋的书。\n2. 这本书是谁写的？\n3. 什么是动词？",
            "1. 川を一つ選んでください。\n2. その川の長さは？\n3. 動詞とは何ですか？",
            "1. 강을 하나 골라 주세요.\n2. 그 강의 길이는 얼마인가요?\n3. 동사란 무엇인가요?",
        ],
    )
    def test_a_definite_noun_phrase_names_what_an_earlier_part_introduced(self, text: str) -> None:
        """'a river' ... 'the river', 'which metal' ... 'the metal', 这本书, その川, 그 강."""
        assert detect(text).groups == [[0, 1], [2]]

    def test_the_same_definite_noun_in_two_questions_is_no_reference(self) -> None:
        """'the capital of France' and 'the capital of Spain' are two questions."""
        d = detect("1. What is the capital of France?\n2. What is the capital of Spain?")
        assert d.groups == [[0], [1]]

    @pytest.mark.parametrize(
        "text",
        [
            "1. What is the population of Peru?\n2. And of Chile?\n3. What is a verb?",
            "1. Wie hoch ist der Brocken?\n2. Und die Zugspitze?\n3. Was ist ein Verb?",
            "1. Quelle est la capitale du Pérou ?\n2. Et celle du Chili ?\n3. Qu'est-ce qu'un verbe ?",
            "1. ¿Cuántos habitantes tiene Lima?\n2. ¿Y Santiago?\n3. ¿Qué es un verbo?",
            "1. 广州的人口是多少？\n2. 深圳呢？\n3. 什么是动词？",
            "1. 京都の人口は？\n2. 奈良は？\n3. 動詞とは何ですか？",
            "1. 대구의 인구는 얼마인가요?\n2. 광주는요?\n3. 동사란 무엇인가요?",
            "1. ¿Quién pintó Las Meninas?\n2. ¿Dónde nació?\n3. ¿Qué es un verbo?",
            "1. 地動説を唱えたのは誰ですか？\n2. どこで生まれましたか？\n3. 動詞とは何ですか？",
        ],
    )
    def test_an_ellipsis_leans_on_the_part_before(self, text: str) -> None:
        """'And of Chile?', 'Et celle du ...', 深圳呢？, 奈良は？, 광주는요?, a question with no subject."""
        assert detect(text).groups == [[0, 1], [2]]

    def test_an_opening_and_before_a_whole_question_of_its_own_is_no_ellipsis(self) -> None:
        """'And who wrote The Hobbit?' names its own subject: a third question."""
        d = detect("What causes hiccups? Also, how far is Mars? And who wrote The Hobbit?")
        assert d.groups == [[0], [1], [2]]

    def test_after_a_shared_context_a_pronoun_still_follows_a_part_that_asked_for_someone(
        self,
    ) -> None:
        """With a long preamble, 'he' after 'Who ...?' still points at that part's answer."""
        text = (
            "I'm preparing a quiz for my history class tomorrow, so please help me:\n"
            "1. Who was the first emperor of China?\n2. How did he die?\n3. What is a verb?"
        )
        assert detect(text).groups == [[0, 1], [2]]


class TestInstructionsOverTheList:
    @pytest.mark.parametrize(
        "text",
        [
            "Rank these by how hard they are:\n1. What is 2+2?\n2. What is a derivative?",
            "Answer both with the same word:\n1. What color is snow?\n2. What color is milk?",
            "Write a fable in three parts:\n1. Who is the hero?\n2. What does he want?",
            "Which of these would you ask first? 1. Where are you from? 2. What do you do?",
            "Sort these animals by weight:\n1. Elephant\n2. Mouse\n3. Horse",
            "Vergleiche diese Sprachen:\n1. Python\n2. Rust",
            "Classe ces villes par population :\n1. Lyon\n2. Paris",
            "Elige una de estas opciones y explica por qué:\n1. Playa\n2. Montaña",
            "请按重要性排序：\n1. 健康\n2. 财富",
            "次の質問を難しい順に並べてください。\n1. 1+1は？\n2. 微分とは？",
            "다음 질문들을 쉬운 순서대로 정렬해 주세요.\n1. 2 더하기 2는?\n2. 미분이란?",
        ],
    )
    def test_a_list_under_an_instruction_over_all_its_items_stays_whole(self, text: str) -> None:
        """Rank, the same answer, parts of one work, choose or compare: one group, and why."""
        d = detect(text)
        assert not d.independent
        assert len(d.groups) == 1
        assert any(r.startswith("kept whole:") for r in d.reasons)

    def test_an_instruction_for_each_item_does_not_keep_the_list_whole(self) -> None:
        """'Answer each in one sentence' is per item: the list still splits."""
        d = detect("Answer each in one sentence:\n1. What is a quark?\n2. What is a lepton?")
        assert d.independent


class TestConfidence:
    def test_every_split_on_the_labelled_sets_is_right_at_every_level(self) -> None:
        """Calibration: no level at or above the threshold holds a wrong split, on any set."""
        for name in (
            "detection_corpus.jsonl", "detection_holdout.jsonl", "detection_holdout2.jsonl",
            "detection_holdout3.jsonl", "detection_holdout4.jsonl",
        ):  # fmt: skip
            table = evaluate(_load(name))["calibration"]
            assert table, name
            for level, row in table.items():
                assert float(level) >= SPLIT_THRESHOLD
                assert row["wrong"] == 0, (name, level)

    def test_levels_follow_the_evidence(self) -> None:
        """A list on its own lines beats one on one line, bullets, lines, and sentences."""
        levels = [
            detect("1. What is A?\n2. What is B?").confidence,
            detect("1. What is A? 2. What is B?").confidence,
            detect("- What is A?\n- What is B?").confidence,
            detect("What is A here?\nWhat is B here?").confidence,
            detect("What is A? What is B? What is C?").confidence,
        ]
        assert levels == sorted(levels, reverse=True)
        assert levels[-1] >= SPLIT_THRESHOLD

    def test_a_weak_split_below_the_threshold_is_kept_whole_and_says_so(self) -> None:
        """Question sentences with a pronoun judged to point inside its part: not split."""
        d = detect(
            "What is a quark? Did Anderson find the muon before he turned 30? What is a verb?"
        )
        assert d.confidence < SPLIT_THRESHOLD
        assert not d.independent
        assert len(d.groups) == 1
        assert any("below" in r for r in d.reasons)

    def test_the_reasons_say_why_parts_were_split(self) -> None:
        """A split names its evidence and that each group stands alone."""
        d = detect("1. What is a quark?\n2. What is a lepton?")
        assert d.reasons[0] == "a numbered list of 2 questions"
        assert d.reasons[-1] == "split into 2 groups that each stand alone"


class TestShapesPeopleSplit:
    """Issue 27: the shapes a person splits that the rules used to keep whole."""

    def test_an_instruction_before_the_questions_is_sent_with_every_part(self) -> None:
        """'Answer in one sentence each: A? B? C?': three parts, each sent with the instruction."""
        d = detect(
            "Answer in one sentence each: What causes tides? Why do cats purr? What is inflation?"
        )
        assert d.groups == [[0], [1], [2]]
        assert [q.text for q in d.questions] == [
            "What causes tides?",
            "Why do cats purr?",
            "What is inflation?",
        ]
        prompts = [d.group_prompt(g) for g in d.groups]
        assert all(p.startswith("Answer in one sentence each:") for p in prompts)
        assert prompts[2].endswith("What is inflation?")

    def test_an_instruction_after_the_questions_is_sent_with_every_part(self) -> None:
        """'A? B? Keep each answer under ten words.': the last sentence goes with both."""
        d = detect(
            "What year did the Berlin Wall fall? Who composed The Four Seasons? "
            "Keep each answer under ten words."
        )
        assert d.groups == [[0], [1]]
        assert d.postamble == "Keep each answer under ten words."
        assert all("Keep each answer" in d.group_prompt(g) for g in d.groups)

    @pytest.mark.parametrize(
        ("text", "shared"),
        [
            ("Reply in French. What is the boiling point of mercury? How many moons does Mars have?", "Reply in French"),
            ("Use metric units. How tall is the Burj Khalifa? How far is Lisbon from Madrid?", "Use metric units"),
            ("Responde en inglés, por favor. ¿Qué es la fotosíntesis? ¿Cómo funcionan las vacunas?", "Responde en inglés"),
            ("Bitte kurz antworten: Wie alt ist der Kölner Dom? Wer hat den Buchdruck erfunden?", "kurz antworten"),
            ("Rispondi in breve: qual è la capitale dell'Australia? Chi ha scritto I Promessi Sposi?", "Rispondi in breve"),
            ("Responda em poucas palavras. Qual é o maior rio do Brasil? Quem inventou o avião?", "Responda em"),
            ("Отвечай коротко. Сколько костей в теле человека? Кто написал роман «Война и мир»?", "Отвечай коротко"),
            ("Kısaca cevapla. Türkiye'nin en uzun nehri hangisi? Kediler neden mırlar?", "Kısaca cevapla"),
            ("أجب باختصار. ما هي عاصمة اليابان؟ كم عدد أيام السنة الكبيسة؟", "أجب باختصار"),
            ("संक्षेप में उत्तर दें। भारत की राजधानी क्या है? सूरज पूर्व से क्यों उगता है?", "संक्षेप में"),
            ("short me batao: python me list kaise sort karte hai? aur IPL 2023 kisne jeeta?", "short me batao"),
            ("请简要回答：光合作用是什么？地球到月球有多远？", "请简要回答"),
            ("簡潔に答えてください。富士山の高さは何メートルですか？日本で一番長い川は何ですか？", "簡潔に答えて"),
            ("짧게 대답해 주세요. 한국의 수도는 어디인가요? 물의 끓는점은 몇 도인가요?", "짧게 대답해"),
        ],
    )  # fmt: skip
    def test_question_sentences_after_a_shared_instruction_split(
        self, text: str, shared: str
    ) -> None:
        """In every language: an instruction, then two questions in one paragraph."""
        d = detect(text)
        assert d.groups == [[0], [1]], d.reasons
        assert all(shared in d.group_prompt(g) for g in d.groups)
        assert not any(shared in q.text for q in d.questions)

    @pytest.mark.parametrize(
        ("text", "second"),
        [
            ("¿Cuál es el río más largo de Europa? También, ¿quién descubrió la penicilina?", "¿quién"),
            ("Как приготовить борщ? И ещё: сколько лет Московскому Кремлю?", "сколько"),
            ("김치는 어떻게 만드나요? 그리고 서울에서 부산까지 KTX로 얼마나 걸리나요?", "서울에서"),
            ("カレーの作り方を教えてください。それと、東京タワーの高さは何メートルですか？", "東京タワー"),
            ("怎么煮米饭？还有，长江有多长？", "长江"),
            ("Qual é a capital do Canadá? E como se faz pão de queijo?", "como se faz"),
            ("Mercimek çorbası nasıl yapılır? Ayrıca, İstanbul'un nüfusu ne kadar?", "İstanbul"),
            ("Mumbai me best vada pav kahan milta hai? Aur Taj Mahal kisne banwaya tha?", "Taj Mahal"),
            ("Zwei kurze Fragen: Wie hoch ist die Zugspitze? Und wer hat die Relativitätstheorie entwickelt?", "wer hat"),
            ("سؤالان: ما هو أطول نهر في العالم؟ وكيف تعمل الألواح الشمسية؟", "كيف تعمل"),
            ("Explain what a hash map is. Also, who won the 2014 World Cup?", "who won"),
        ],
    )  # fmt: skip
    def test_a_connective_or_header_starts_a_part_and_is_left_out(
        self, text: str, second: str
    ) -> None:
        """También, И ещё:, 그리고, それと、还有，E, Ayrıca, Aur, Und, و, "Also," after a command."""
        d = detect(text)
        assert d.groups == [[0], [1]], d.reasons
        assert d.questions[1].text.startswith(second)
        assert d.group_prompt(d.groups[1]).startswith(second)

    def test_several_questions_joined_by_and_in_one_sentence_split(self) -> None:
        """'whats X and who Y and how many Z': three questions."""
        d = detect(
            "whats the tallest mountain in africa and who painted the mona lisa "
            "and how many ounces in a cup"
        )
        assert [q.text for q in d.questions] == [
            "whats the tallest mountain in africa",
            "who painted the mona lisa",
            "how many ounces in a cup",
        ]
        assert d.groups == [[0], [1], [2]]

    @pytest.mark.parametrize(
        ("text", "texts"),
        [
            (
                "Define entropy; explain how a transistor works; name three Baroque composers",
                [
                    "Define entropy",
                    "explain how a transistor works",
                    "name three Baroque composers",
                ],
            ),
            (
                "Quick facts please: capital of Mongolia; boiling point of ethanol; author of Moby-Dick",
                ["capital of Mongolia", "boiling point of ethanol", "author of Moby-Dick"],
            ),
        ],
    )
    def test_a_list_separated_by_semicolons_splits(self, text: str, texts: list[str]) -> None:
        """Requests or items between semicolons, without question marks."""
        d = detect(text)
        assert [q.text for q in d.questions] == texts
        assert d.independent

    @pytest.mark.parametrize(
        "text",
        [
            "Can you tell me 1) the height of Everest 2) who discovered gravity 3) how many hours are in a week",
            "I'd like to know (1) what causes earthquakes, and (2) how long a day on Venus lasts?",
        ],
    )
    def test_numbering_inside_a_sentence_numbers_its_parts(self, text: str) -> None:
        """'tell me 1) ... 2) ...', '(1) ..., and (2) ...?': one part per number, the joiner left out."""
        d = detect(text)
        assert d.independent
        assert d.questions[0].text in ("the height of Everest", "what causes earthquakes")

    @pytest.mark.parametrize(
        "text",
        [
            "Should I (1) repaint the walls or (2) put up wallpaper in a small bedroom?",
            "How do I (1) install Node and (2) run a script with it on Windows?",
            "What is the difference between (1) a virus and (2) a bacterium?",
        ],
    )
    def test_numbering_of_options_or_steps_inside_one_question_stays_whole(self, text: str) -> None:
        """Options joined by 'or', the steps of one how-to, the terms of one comparison."""
        assert not detect(text).independent

    def test_an_indented_list_splits_like_the_same_list_unindented(self) -> None:
        """A tab or four spaces before each marker change nothing."""
        plain = "1. What is the largest desert?\n2. Who painted The Starry Night?"
        for indent in ("\t", "    "):
            d = detect("\n".join(indent + line for line in plain.split("\n")))
            assert d.groups == [[0], [1]]
            assert d.confidence == detect(plain).confidence == 0.95

    def test_one_request_per_line_splits_though_not_every_line_asks(self) -> None:
        """Two questions and a request, one per line."""
        d = detect(
            "What's the population of Tokyo?\nGive me a synonym for brave\n"
            "How many strings does a violin have?"
        )
        assert d.style == "lines"
        assert [q.text for q in d.questions][1] == "Give me a synonym for brave"
        assert d.groups == [[0], [1], [2]]

    def test_lowercase_run_on_sentences_split(self) -> None:
        """Questions without question marks, joined by full stops."""
        d = detect(
            "whats the best way to learn guitar. how do i make cold brew coffee. "
            "who won the nba finals in 2016"
        )
        assert d.groups == [[0], [1], [2]]

    @pytest.mark.parametrize(
        "text",
        [
            "ما هي عاصمة أستراليا؟\nمن اخترع المصباح الكهربائي؟\nكم تبلغ سرعة الضوء؟",
            "1. ما هو الذكاء الاصطناعي؟\n2. كيف أتعلم اللغة الإنجليزية بسرعة؟\n3. متى بدأت الحرب العالمية الأولى؟",
            "ما هو أكبر محيط في العالم؟ من كتب رواية البؤساء؟ متى بدأت الحرب العالمية الأولى؟",
            "ताजमहल किसने बनवाया? गंगा नदी कहाँ से निकलती है? क्रिकेट में कितने खिलाड़ी होते हैं?",
            "भारत में कितने राज्य हैं?\nक्रिकेट का आविष्कार किसने किया?\nबारिश क्यों होती है?",
            "Кто изобрёл радио? Какая самая высокая гора в Европе? Как работает холодильник?",
            "Сколько стоит билет на метро?\nКак выучить английский язык?\nПочему небо голубое?",
        ],
    )
    def test_arabic_hindi_and_russian_questions_split(self, text: str) -> None:
        """'؟' ends a question as '?' does; Devanagari and Cyrillic sentences are read too."""
        assert len(detect(text).groups) == 3

    def test_a_code_question_then_an_unrelated_one_splits_with_the_code_in_the_first(
        self,
    ) -> None:
        """'Also, unrelated:' after a code block: the code belongs to the question before."""
        d = detect(
            "Why does this throw a KeyError?\n```python\nd = {}\nprint(d['x'])\n```\n"
            "Also, unrelated: what's a good name for a cat?"
        )
        assert d.groups == [[0], [1]]
        assert "print(d['x'])" in d.group_prompt(d.groups[0])
        assert d.group_prompt(d.groups[1]) == "what's a good name for a cat?"

    @pytest.mark.parametrize(
        "text",
        [
            "Can you make these survey questions more neutral? 1. Don't you agree our service is great? "
            "2. How much did you love the food? 3. Wasn't the staff friendly?",
            "Write an FAQ page for my bakery that answers: Do you sell gluten-free bread? "
            "Are you open on Sundays? Can I order a custom cake?",
            "Translate into French: Where is the station? How much is a ticket? When does the train leave?",
        ],
    )
    def test_one_instruction_over_several_questions_keeps_them_whole(self, text: str) -> None:
        """Questions to improve, to answer in one FAQ, to translate: one task."""
        assert not detect(text).independent

    @pytest.mark.parametrize(
        ("text", "first"),
        [
            ("🍕 What's the origin of pizza margherita?\n🚀 How fast does the ISS travel?", "What's the origin"),
            ("**Question 1:** What is the tallest tree species?\n**Question 2:** How do solar panels work?", "What is the tallest"),
            ("First, what is the capital of Norway? Second, how many teeth does a shark have?", "what is the capital"),
            ("Two unrelated questions: What's the deepest lake? How do I remove a wine stain?", "What's the deepest"),
        ],
    )  # fmt: skip
    def test_markers_connectives_and_headers_are_not_sent(self, text: str, first: str) -> None:
        """Each part is sent as its question alone: no emoji, bold label, 'First,' or header."""
        d = detect(text)
        assert d.independent
        assert d.group_prompt(d.groups[0]) == d.questions[0].text
        assert d.questions[0].text.startswith(first)

    @pytest.mark.parametrize(
        "text",
        [
            "Qual é o maior país da América do Sul? Também, qual é a capital dele?",
            "ما هي أكبر مدينة في مصر؟ أيضاً، كم عدد سكانها؟",
            "Ankara ne zaman başkent oldu? Ayrıca orada kaç kişi yaşıyor?",
            "संक्षेप में बताइए। ताजमहल किसने बनवाया? उसे बनाने में कितने साल लगे?",
            "short me batao: Virat Kohli ka birthday kab hai? aur uski wife kaun hai?",
            "Ответь кратко. Кто основал Санкт-Петербург? Когда он родился?",
            "Rispondi in breve. Chi ha scritto Pinocchio? E quando è uscito il libro?",
            "Be brief. How do I make a sourdough starter? How long does it take?",
            "Be brief. How long should I bake a lasagna? At what temperature?",
            "Keep it short. Is it safe to eat raw cookie dough? What are the risks?",
        ],
    )
    def test_parts_that_lean_on_each_other_stay_together_behind_a_cue(self, text: str) -> None:
        """An instruction or connective is no licence to separate 'dele', 'سكانها', 'orada',
        'उसे', 'uski', 'он', 'il libro' after a name, 'it' in 'how long does it take', or a
        fragment."""
        assert not detect(text).independent

    def test_two_questions_without_a_cue_are_held_below_the_threshold(self) -> None:
        """Two questions about the speaker's own matter: found, kept in one group, and why."""
        d = detect("Why is my sourdough so dense? What am I doing wrong?")
        assert len(d.questions) == 2
        assert d.groups == [[0, 1]]
        assert d.confidence < SPLIT_THRESHOLD
        assert any("no cue" in r or "own situation" in r for r in d.reasons)


class TestMoreShapes:
    """Shapes whose first scoring on held-out set 4 showed a general gap."""

    @pytest.mark.parametrize(
        ("text", "n"),
        [
            ("Yo, couple of quick things: how do I descale a kettle, and what's the capital of Ghana?", 2),
            ("In two words each: what is the largest planet, what gas do plants absorb, and who wrote Hamlet?", 3),
            ("## Health\nHow much water should I drink a day?\n\n## Tech\nHow do I reset my router?", 2),
            ("・日本の首都はどこですか？\n・富士山の高さは何メートルですか？", 2),
            ("cuantos años tiene la tierra y quien invento el telefono y donde queda machu picchu", 3),
            ("- ما فوائد القهوة؟\n- كم يبلغ عدد سكان طوكيو؟", 2),
        ],
    )  # fmt: skip
    def test_headers_greetings_sections_and_lists_split(self, text: str, n: int) -> None:
        """'A couple of things:' after a greeting, 'In two words each:' before questions
        separated by commas, markdown section headings, '・' with no space, questions
        joined by 'y' without accents, Arabic questions that name things without 'ال'."""
        d = detect(text)
        assert d.groups == [[i] for i in range(n)], d.reasons
        assert not any(q.text.startswith(("・", "#", "-")) for q in d.questions)

    @pytest.mark.parametrize(
        "text",
        [
            "What's the best way to learn piano as an adult? Should I get a teacher?",
            "Can you explain how compound interest works? Like, why does the balance grow faster later?",
            "Which gas makes up most of the air?\nWhat is it used for in industry?",
            "Who founded Tesla Motors?\nHow many employees did its first factory have?",
        ],
    )
    def test_no_cue_sql_placeholders_and_references_keep_it_whole(self, text: str) -> None:
        """Two questions of one matter (advice asked after it, a follow-up) with nothing
        to say they are separate are held below the threshold; 'what is it used for' and
        'how many X did its ...' point back. (Two questions that each stand alone, "What
        is the capital of Chile? Who wrote Dracula?", split since issue 37.)"""
        assert not detect(text).independent

    def test_a_question_mark_inside_sql_or_inside_a_sentence_ends_nothing(self) -> None:
        """SQL outside a fence is code; 'The ? marks ...' goes on after its '?'."""
        d = detect(
            "Is the syntax right?\nSELECT id FROM users WHERE email = ? AND name = ?;\n"
            "The ? marks are bound later."
        )
        assert len(d.questions) == 1
        assert not d.independent


class TestReferencesInTheAddedLanguages:
    @pytest.mark.parametrize(
        "text",
        [
            "1. Quem escreveu Dom Casmurro?\n2. Onde ele nasceu?\n3. O que é um átomo?",
            "1. Chi ha dipinto la Gioconda?\n2. Dove è nato?\n3. Che cos'è un atomo?",
            "1. Кто написал «Анну Каренину»?\n2. Где он родился?\n3. Что такое атом?",
            "1. Nutuk'u kim yazdı?\n2. Onun doğum yeri neresi?\n3. Atom nedir?",
            "1. من كتب رواية البؤساء؟\n2. أين ولد؟\n3. ما هي الذرة؟",
            "1. गीतांजलि किसने लिखी?\n2. उनका जन्म कहाँ हुआ?\n3. परमाणु क्या है?",
            "1. Sholay kisne direct ki?\n2. Uska next film kaunsa tha?\n3. Atom kya hota hai?",
        ],
    )
    def test_a_reference_groups_with_the_part_it_leans_on(self, text: str) -> None:
        """ele, a question with no subject, он, onun, a question with no noun of its own, उनका, uska."""
        assert detect(text).groups == [[0, 1], [2]]


def _ask(prompt: str) -> str:
    """What `fanout ask --explain` prints for ``prompt`` (answered by the built-in simulator)."""
    cmd = [sys.executable, "-m", "fanout", "ask", "--explain", "--sim-time-scale", "100", prompt]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def _documented_commands() -> list[tuple[str, str]]:
    """Each `fanout ask --explain "..."` in docs/wrap.md with the `# detected:` line under it."""
    text = (ROOT / "docs" / "wrap.md").read_text(encoding="utf-8")
    return re.findall(r'^fanout ask --explain "([^"]+)"\n# (detected: .+)$', text, re.MULTILINE)


class TestDocumentedExamples:
    def test_the_readme_ask_example_is_split_in_two(self) -> None:
        """README: `fanout ask --explain "1. What is X? 2. Explain Y."` answers two questions."""
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        match = re.search(r'fanout ask --explain "([^"]+)"', readme)
        assert match is not None
        assert "detected: 2 part(s), 2 group(s)" in _ask(match.group(1))

    @pytest.mark.parametrize("doc", ["README.md", "docs/wrap.md"])
    def test_the_wrap_example_is_answered_in_its_own_numbering(self, doc: str) -> None:
        """The wrapped client's example prompt splits into its three questions, answered 1. 2. 3."""
        text = (ROOT / doc).read_text(encoding="utf-8")
        match = re.search(r'"content": ("[^"\n]+")', text)
        assert match is not None
        out = _ask(ast.literal_eval(match.group(1)))
        assert "detected: 3 part(s), 3 group(s)" in out
        answers = out.split("actual:", 1)[1]
        assert all(f"\n{n}. " in answers for n in (1, 2, 3))

    def test_the_detect_example_in_the_docs_groups_as_documented(self) -> None:
        """docs/wrap.md: 'it' ties part 2 to part 1, at the confidence and style shown."""
        text = (ROOT / "docs" / "wrap.md").read_text(encoding="utf-8")
        prompt = re.search(r"fanout\.detect\((\"[^\n]+\")\)", text)
        groups = re.search(r"d\.groups  # (\[\[.+?\]\])", text)
        confidence = re.search(r"d\.confidence  # ([0-9.]+)", text)
        style = re.search(r'd\.style  # "(\w+)"', text)
        assert prompt and groups and confidence and style
        out = _ask(ast.literal_eval(prompt.group(1)))
        assert (
            f"detected: 3 part(s), 2 group(s), style {style.group(1)}, "
            f"confidence {float(confidence.group(1)):.2f}"
        ) in out
        assert "part 2 leans on part 1" in out
        assert detect(ast.literal_eval(prompt.group(1))).groups == ast.literal_eval(groups.group(1))

    def test_the_docs_show_command_line_examples(self) -> None:
        """docs/wrap.md keeps its command-line examples (each checked by the test below)."""
        assert len(_documented_commands()) >= 5

    @pytest.mark.parametrize(("prompt", "shown"), _documented_commands())
    def test_each_command_line_example_prints_what_the_docs_show(
        self, prompt: str, shown: str
    ) -> None:
        """docs/wrap.md: every `fanout ask --explain` example prints the detection shown under it."""
        assert _ask(prompt).splitlines()[0] == shown
