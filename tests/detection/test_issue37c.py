"""Issue 37, third round: structures of prompts that generalise across phrasings.

Each table holds prompts written for the structure in several languages, not taken from
the labelled sets, with the look-alikes the rule must leave alone."""

from __future__ import annotations

import pytest

from fanout import detect
from fanout.detection._detector import SPLIT_THRESHOLD


def _split_as(text: str, groups: list[list[int]]) -> list[str]:
    d = detect(text)
    assert d.groups == groups, d.reasons
    assert d.confidence >= SPLIT_THRESHOLD, d.reasons
    return [q.text for q in d.questions]


def _kept_whole(text: str) -> None:
    d = detect(text)
    assert not (d.independent and d.confidence >= SPLIT_THRESHOLD), (d.groups, d.reasons)


class TestAQuotedTextIsMaterial:
    @pytest.mark.parametrize(
        "text",
        [
            "Can you check the grammar here? 'Did you get my email? I sent it yesterday.'",
            "¿Puedes corregir este mensaje? 'Hola, ¿ya llegaste a casa? ¿Quieres cenar mañana?'",
            "Peux-tu corriger ce texte ? 'Salut, tu viens ce soir ? On se retrouve où ?'",
            "Kannst du das verbessern? 'Hallo, hast du morgen Zeit? Wollen wir uns treffen?'",
            "Puoi correggere questo messaggio? 'Ciao, sei libero sabato? Andiamo al mare?'",
            "Можешь проверить текст? 'Привет, ты завтра свободен? Где встретимся?'",
            "Bu mesajı düzeltir misin? 'Merhaba, yarın müsait misin? Nerede buluşalım?'",
            "Translate this to German: 'Where is the train station? How much is a ticket?'",
            "Is this polite enough? 'Why haven't you answered? Are you ignoring me?'",
            "Kun je dit nakijken? 'Hoi, heb je morgen tijd? Zullen we koffie drinken?'",
            "Czy to brzmi dobrze? 'Dzień dobry, czy zamówienie już wysłano? Kiedy dotrze?'",
            "Bisa perbaiki kalimat ini? 'Kamu sudah makan? Mau ke mana nanti?'",
        ],
    )
    def test_questions_inside_a_single_quoted_text_are_not_parts(self, text: str) -> None:
        """A message in single quotes that holds sentences is what the request works
        on: its questions are not asks of their own, the prompt is one question."""
        d = detect(text)
        assert len(d.questions) == 1, (d.groups, d.reasons)

    @pytest.mark.parametrize(
        ("text", "groups"),
        [
            (
                "How do you say 'good morning' in Italian? Also, what's the tallest building"
                " in Europe?",
                [[0], [1]],
            ),
            (
                "Is it 'whom' or 'who' here? Unrelated, how many bones are in the human body?",
                [[0], [1]],
            ),
            (
                "My kids' school starts at 8. What's a quick breakfast? Also how do I fix a"
                " squeaky door?",
                [[0], [1]],
            ),
            (
                "Was ist die Hauptstadt von Kanada? Und wer hat 'Faust' geschrieben? Wie hoch"
                " ist die Zugspitze?",
                [[0], [1], [2]],
            ),
        ],
    )
    def test_a_quoted_word_or_an_apostrophe_leaves_the_parts_as_they_are(
        self, text: str, groups: list[list[int]]
    ) -> None:
        _split_as(text, groups)
