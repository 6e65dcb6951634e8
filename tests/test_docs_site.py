"""The documentation site: every page under docs/ can be reached from its navigation."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_docs_page_is_in_the_site_nav() -> None:
    """A page left out of mkdocs.yml's nav is built but linked from nowhere on the
    site (docs/cost.md was)."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8").split("\nnav:\n", 1)[1]
    listed = set(re.findall(r":\s*([\w/-]+\.md)\s*$", nav, re.MULTILINE))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert pages - listed == set()
