"""Logging: structured fields, and no secret ever written.

fanout logs on the ``fanout`` logger with ``extra=`` fields (``question``,
``attempt``, ``status``, ``wait_s``, ...). :class:`RedactSecrets` passes every record
— message, arguments, fields and traceback — through :func:`~fanout.core.redact.redact`
(the keys each ``Fanout`` registered, and anything shaped like a key) before any
handler sees it, whoever configured the handlers. It sits on the ``fanout`` logger
and on each logger below it that fanout uses (:func:`get_logger`).
"""

from __future__ import annotations

import logging
import sys
from typing import Any

from .redact import redact, redact_registered, register_secret

__all__ = [
    "RedactSecrets",
    "configure",
    "get_logger",
    "redact",
    "redact_registered",
    "register_secret",
]

_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}
_TRACEBACKS = logging.Formatter()


def _fields(record: logging.LogRecord) -> dict[str, Any]:
    return {k: v for k, v in vars(record).items() if k not in _STANDARD and not k.startswith("_")}


class RedactSecrets(logging.Filter):
    """Replaces every secret in a record with ``***`` (see :mod:`fanout.core.redact`)."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.getMessage())
        record.args = None
        for key, value in _fields(record).items():
            if isinstance(value, str):
                setattr(record, key, redact(value))
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
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
