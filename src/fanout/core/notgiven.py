"""The marker of an argument not given, in the manner of openai-python's ``NOT_GIVEN``.

A call's option left out takes the ``Fanout``'s setting; given, even as ``None``, it is
the call's: ``fo.ask_many(qs, system=None)`` sends no system prompt where the
``Fanout`` has one. fanout's own marker, not the SDK's, so that what it means here
does not follow the SDK's changes (openai-python now prefers ``omit``).
"""

from __future__ import annotations

from typing import Final, TypeVar

__all__ = ["NOT_GIVEN", "NotGiven", "given_or"]

T = TypeVar("T")


class NotGiven:
    """The type of :data:`NOT_GIVEN`: an argument the caller did not pass."""

    _instance: NotGiven | None = None

    def __new__(cls) -> NotGiven:  # one marker, so that ``is`` and ``isinstance`` agree
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __bool__(self) -> bool:
        return False

    def __repr__(self) -> str:
        return "NOT_GIVEN"

    def __reduce__(self) -> str:  # pickled and unpickled, still the one marker
        return "NOT_GIVEN"


NOT_GIVEN: Final = NotGiven()
"""An argument not given: the ``Fanout``'s setting applies."""


def given_or(value: T | NotGiven, default: T) -> T:
    """``value`` if it was given (``None`` included), else ``default``."""
    return default if isinstance(value, NotGiven) else value
