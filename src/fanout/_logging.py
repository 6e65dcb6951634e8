"""Logging: structured fields, and no secret ever written.

fanout logs on the ``fanout`` logger with ``extra=`` fields (``question``,
``attempt``, ``status``, ``wait_s``, ...). Every API key a ``Fanout`` is given is
registered here, and :class:`RedactSecrets` replaces it with ``***`` in every
record — message, arguments and fields — before any handler sees it, whoever
configured the handlers. :func:`redact` does the same for text fanout puts in
errors and reports.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

__all__ = [
    "RedactSecrets",
    "configure",
    "get_logger",
    "redact",
    "redact_registered",
    "register_secret",
]

_SECRETS: set[str] = set()
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


def register_secret(value: object) -> None:
    """Never let ``value`` (an API key) appear in fanout's logs, errors or reports."""
    if isinstance(value, str) and len(value) >= 6:
        _SECRETS.add(value)


def redact_registered(text: str) -> str:
    """``text`` with every registered secret replaced by ``***``."""
    for secret in _SECRETS:
        if secret in text:
            text = text.replace(secret, "***")
    return text


def redact(text: str) -> str:
    return redact_registered(text)


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class RedactSecrets(logging.Filter):
    """Replaces every registered secret in a record with ``***``."""

    def filter(self, record: logging.LogRecord) -> bool:
        if _SECRETS:
            record.msg = redact(record.getMessage())
            record.args = None
            for key, value in _fields(record).items():
                if isinstance(value, str):
                    setattr(record, key, redact(value))
        return True


class StructuredFormatter(logging.Formatter):
    """``time level logger message key=value ...`` with the record's extra fields."""

    def format(self, record: logging.LogRecord) -> str:
        base = super().format(record)
        fields = " ".join(f"{k}={v!r}" for k, v in sorted(_fields(record).items()))
        return redact(f"{base} {fields}" if fields else base)


_filter = RedactSecrets()
logging.getLogger("fanout").addFilter(_filter)


def get_logger(name: str) -> logging.Logger:
    """A logger below ``fanout`` with the redacting filter on it too: a logger's
    filters do not see the records of its children, so each one needs its own."""
    logger = logging.getLogger(name)
    if _filter not in logger.filters:
        logger.addFilter(_filter)
    return logger


def configure(level: int = logging.INFO) -> None:
    """Log fanout's records to standard error (what the command line uses)."""
    logger = logging.getLogger("fanout")
    logger.setLevel(level)
    if not any(getattr(h, "_fanout", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(StructuredFormatter("%(asctime)s %(levelname)s %(name)s %(message)s"))
        handler.addFilter(_filter)
        handler._fanout = True  # type: ignore[attr-defined]
        logger.addHandler(handler)
