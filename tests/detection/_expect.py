"""What the detection tables expect of a prompt: split into given groups at or above
the split threshold, or kept whole."""

from __future__ import annotations

from fanout import detect
from fanout.detection._detector import SPLIT_THRESHOLD


def split_as(text: str, groups: int | list[list[int]]) -> list[str]:
    """``text`` split into ``groups`` (a number: that many parts, each its own group),
    sure enough to be split; returns the parts' texts."""
    expected = [[i] for i in range(groups)] if isinstance(groups, int) else groups
    d = detect(text)
    assert d.groups == expected, d.reasons
    assert d.confidence >= SPLIT_THRESHOLD, d.reasons
    return [q.text for q in d.questions]


def kept_whole(text: str) -> None:
    """``text`` is not split (or not surely enough to be)."""
    d = detect(text)
    assert not (d.independent and d.confidence >= SPLIT_THRESHOLD), (d.groups, d.reasons)
