"""The shape of a batch job's state (``OUTPUT.batches/state.json``), checked when it is
loaded: a state that is JSON but not of this shape (edited by hand, written by another
program, or damaged) stops the job with a :class:`~fanout.core.exceptions.JobError`
naming the file and what is wrong, before anything is sent, instead of a traceback
wherever the job first trips on it.

The state is kept as the JSON it was read as; the models below only check it (strict:
no value is converted), so what passes is exactly what the job reads."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from pathlib import Path, PurePath
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from ..core.exceptions import JobError

__all__ = ["check_state"]


def _file_name(name: str) -> str:
    if PurePath(name).name != name or not name.endswith(".jsonl"):
        raise ValueError(f"{name!r} is not the name of a .jsonl file in the state's directory")
    return name


def _amount(text: str) -> str:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise ValueError(f"{text!r} is not an amount") from None
    if not value.is_finite() or value < 0:
        raise ValueError(f"{text!r} is not an amount")
    return text


_Id = Annotated[list[str], Field(min_length=2, max_length=2)]
"""A question of a line: ``[id, fingerprint]``."""


class _Model(BaseModel):
    model_config = ConfigDict(strict=True)


class _Merged(_Model):
    format: Literal["json", "text"]
    nonce: Annotated[str, Field(min_length=1)]


class _Line(_Model):
    """What the state keeps of a request (by its ``custom_id``)."""

    ids: Annotated[list[_Id], Field(min_length=1)]
    merged: _Merged | None
    worst: Annotated[str, AfterValidator(_amount)] = "0"
    """The request's reserved worst case, in US dollars; absent (the default is never
    read) in a state written without a cap: costed again from the chunk's input file."""


class _Chunk(_Model):
    """A batch input file, and the batch made of it."""

    key: Annotated[str, Field(min_length=1)]
    round: Annotated[int, Field(ge=1)]
    file: Annotated[str, AfterValidator(_file_name)]
    file_id: str | None
    batch_id: str | None
    state: Literal["written", "done"]
    lines: dict[str, _Line]


class _StateFile(_Model):
    version: Literal[1] = 1
    deadline_at: Annotated[float, Field(allow_inf_nan=False)] | None = None
    chunks: list[_Chunk] = Field(default_factory=list)


_JSON_TYPES = {"model_type": "an object", "dict_type": "an object", "list_type": "an array"}


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _where(loc: tuple[int | str, ...]) -> str:
    """A place in the state, as ``chunks[0].lines``."""
    parts: list[str] = []
    for part in loc:
        if isinstance(part, int):
            parts.append(f"[{part}]")
        else:
            parts.append(f".{part}" if parts else part)
    return "".join(parts) or "the state"


def _say(error: Any) -> str:
    """One of pydantic's errors, in the JSON's terms."""
    where = _where(error["loc"])
    kind = error["type"]
    if kind == "missing":
        return f"{where} is missing"
    if kind in _JSON_TYPES:
        return f"{where} should be {_JSON_TYPES[kind]}, not {_json_type(error['input'])}"
    if kind == "value_error":  # ours, which name the value
        return f"{where}: {str(error['msg']).removeprefix('Value error, ')}"
    return f"{where}: {error['msg']} (got {_json_type(error['input'])})"


def check_state(data: object, path: Path) -> None:
    """Raise a :class:`JobError` naming ``path`` and what is wrong if ``data`` (the JSON
    read from it) is not a batch state."""
    try:
        _StateFile.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise JobError(f"cannot read the batch state {path}: {_say(errors[0])}{more}") from exc
