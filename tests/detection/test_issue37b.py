"""Issue 37, second round: rules that read the structure of a prompt across languages.

Each table holds prompts written for the rule in several languages, not taken from the
labelled sets: a rule fitted to one phrasing fails them."""

from __future__ import annotations

import pytest

from fanout import detect
from fanout.detection._detector import SPLIT_THRESHOLD


def _split_as(text: str, n: int) -> list[str]:
    d = detect(text)
    assert d.groups == [[i] for i in range(n)], d.reasons
    assert d.confidence >= SPLIT_THRESHOLD, d.reasons
    return [q.text for q in d.questions]


def _kept_whole(text: str) -> None:
    d = detect(text)
    assert not (d.independent and d.confidence >= SPLIT_THRESHOLD), (d.groups, d.reasons)


class TestAPostscriptOpensAPartOfItsOwn:
    @pytest.mark.parametrize(
        ("text", "second"),
        [
            (
                "Write me a short toast for my brother's wedding, he loves fishing.\n\n"
                "P.S. what's the difference between a tux and a suit?",
                "what's the difference",
            ),
            (
                "Escríbeme un correo para pedir un día libre a mi jefa.\n\n"
                "PD: ¿cuántos días de vacaciones me corresponden por ley en España?",
                "¿cuántos días",
            ),
            (
                "Napisz mi krótki wiersz na urodziny mamy.\n\n"
                "PS. ile kosztuje wysłanie listu poleconego?",
                "ile kosztuje",
            ),
            ("帮我写一段给房东的留言，说下个月要搬走。\n\n附言：押金一般多久能退回来？", "押金"),
            (
                "Buatkan caption Instagram untuk foto liburan di Bali.\n\n"
                "NB: jam berapa sunset di Uluwatu?",
                "jam berapa",
            ),
            (
                "Напиши короткое поздравление коллеге с днём рождения.\n\n"
                "П.С. сколько дней отпуска положено по закону?",
                "сколько дней",
            ),
            (
                "Bir arkadaşıma doğum günü mesajı yazar mısın?\n\n"
                "Not: İstanbul'da kargo kaç günde gelir?",
                "İstanbul'da",
            ),
        ],
    )
    def test_the_message_before_a_postscript_and_the_postscript_are_two_parts(
        self, text: str, second: str
    ) -> None:
        """P.S., PD, PS., 附言, NB, П.С., Not: after a paragraph that asks (even one that
        only says what is needed): the paragraph is one part, the postscript another,
        sent without its marker."""
        parts = _split_as(text, 2)
        assert parts[1].startswith(second)

    @pytest.mark.parametrize(
        "text",
        [
            "Can you summarize this in two lines? The meeting moved to Friday because the "
            "client is travelling.\n\nP.S. keep it formal.",
            "What's a good name for a golden retriever puppy?\n\nP.S. thanks so much!",
            "Help me write a birthday card for my grandma.\n\nPS: she is turning 90 and loves "
            "gardening.",
            "Bir arkadaşıma doğum günü mesajı yazar mısın?\n\nNot: Mesaj kısa olsun.",
        ],
    )
    def test_a_postscript_that_asks_nothing_stays_with_the_message(self, text: str) -> None:
        """A postscript that only instructs, thanks or adds context is not a part."""
        _kept_whole(text)
