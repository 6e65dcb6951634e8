"""What a test's captured log says."""

from __future__ import annotations

import logging

import pytest


def _warnings(caplog: pytest.LogCaptureFixture, text: str) -> list[str]:
    """The captured warnings whose message holds ``text``."""
    return [r.getMessage() for r in caplog.records
            if r.levelno == logging.WARNING and text in r.getMessage()]  # fmt: skip
