"""Structured outputs: a call's ``response_format`` (a JSON schema, or a pydantic model),
what it is sent as, how an answer is checked against it, and the schema a merged
request of several such questions is sent with.

* ``response_format={"type": "json_schema", "json_schema": {"schema": {...}}}`` is sent
  as it is; an answer is checked with ``jsonschema`` against its schema.
* ``response_format=Model`` (a pydantic ``BaseModel`` subclass, as
  ``client.chat.completions.parse`` takes it) is sent as the SDK sends it (its strict
  JSON schema); an answer is checked with ``Model.model_validate_json``.

Either way ``Answer.parsed`` holds the checked value (the model's instance, or the
JSON value), and an answer that does not fit is no answer (asked again; a merged
one's question is asked alone).

**The composed schema.** Questions sharing one such format may be merged: the merged
reply is one JSON object whose keys are the questions' anchored keys
(``"<tag> <first line of the question>"``, see ``merging``), each value the user's
schema. The user's schema is put once under ``$defs`` and each property is a
``$ref`` to it; every key is required and no other is allowed. Its own ``$defs`` (and
``definitions``) are lifted to the root, so its references still resolve; a reference
to its root (``#``, ``#/properties/...``) is pointed at its new place. The composed
format is ``strict`` when the user's was and the user's schema follows the strict
rules of OpenAI's structured outputs (every object closed with
``additionalProperties: false`` and all of its properties required); else not.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from ..core.exceptions import ConfigError
from .retrying import EmptyReplyError

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion

__all__ = [
    "SCHEMA_FORMAT",
    "Structured",
    "UnfitReplyError",
    "check_fits",
    "checked_values",
    "strict_compatible",
    "structured_of",
]

_ITEM = "answer"


@dataclass(frozen=True)
class Structured:
    """A structured ``response_format``: what a question alone is sent with, the
    user's JSON schema, and how an answer is checked."""

    response_format: dict[str, Any]
    """The ``response_format`` sent with a question alone (a model as its JSON schema)."""
    schema: dict[str, Any]
    strict: bool
    model: type[BaseModel] | None = None
    _validator: Any = field(default=None, repr=False, compare=False)

    def validate(self, text: str | None) -> Any:
        """The value ``text`` holds, checked: the model's instance, or the JSON value.
        Raises ValueError saying why it does not fit."""
        if text is None or not text.strip():
            raise ValueError("the answer is empty")
        if self.model is not None:
            return self.model.model_validate_json(text)  # a ValidationError is a ValueError
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise ValueError(f"the answer is not JSON: {exc}") from None
        error = next(iter(self._validator.iter_errors(value)), None)
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path)
            raise ValueError(
                f"the answer does not fit the schema{f' at {where}' if where else ''}"
                f": {error.message}"
            )
        return value

    def composed(self, keys: list[str] | tuple[str, ...]) -> dict[str, Any]:
        """The ``response_format`` of a merged request whose reply holds one answer per
        key (see the module docstring)."""
        item = copy.deepcopy(self.schema)
        root: dict[str, Any] = {}
        defs: dict[str, Any] = dict(item.pop("$defs", None) or {})
        definitions = item.pop("definitions", None)
        if definitions:
            root["definitions"] = definitions
        for name in ("$schema", "$id"):
            item.pop(name, None)
        name = _ITEM
        while name in defs:
            name += "_"
        defs[name] = _moved(item, f"#/$defs/{name}")
        schema = {
            "type": "object",
            "properties": {key: {"$ref": f"#/$defs/{name}"} for key in keys},
            "required": list(keys),
            "additionalProperties": False,
            **root,
            "$defs": defs,
        }
        strict = self.strict and strict_compatible(self.schema)
        return {
            "type": "json_schema",
            "json_schema": {"name": "answers", "strict": strict, "schema": schema},
        }


def _moved(node: Any, place: str) -> Any:
    """``node`` with its references to the root of its document (``#``,
    ``#/properties/...``) pointed at ``place``; those to its ``$defs`` and
    ``definitions``, lifted to the new root, are kept."""
    if isinstance(node, list):
        return [_moved(v, place) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "$ref" and isinstance(value, str) and value.startswith("#"):
            lifted = value.startswith(("#/$defs/", "#/definitions/"))
            out[key] = value if lifted else place + value[1:]
        else:
            out[key] = _moved(value, place)
    return out


def strict_compatible(schema: Any) -> bool:
    """Whether ``schema`` follows the strict rules of OpenAI's structured outputs:
    every object schema (one with ``properties``, or of type ``object``) has
    ``additionalProperties: false`` and all of its properties required."""
    if isinstance(schema, list):
        return all(strict_compatible(v) for v in schema)
    if not isinstance(schema, dict):
        return True
    kind = schema.get("type")
    is_object = (
        "properties" in schema or kind == "object" or (isinstance(kind, list) and "object" in kind)
    )
    if is_object:
        props = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False:
            return False
        if not isinstance(props, dict) or set(schema.get("required") or ()) != set(props):
            return False
    return all(
        strict_compatible(value)
        for key, value in schema.items()
        if key not in ("enum", "const", "default", "examples")
    )


def _is_model(value: object) -> bool:
    return isinstance(value, type) and issubclass(value, BaseModel)


def structured_of(response_format: object) -> Structured | None:
    """The structured format ``response_format`` asks for; None if it asks for none
    (absent, ``text``, ``json_object``). Raises :class:`~fanout.ConfigError` for a
    ``json_schema`` format without a schema, or with one that is no JSON schema."""
    if _is_model(response_format):
        from openai.lib._parsing._completions import type_to_response_format_param

        assert isinstance(response_format, type)
        sent = json.loads(json.dumps(type_to_response_format_param(response_format)))
        spec = sent["json_schema"]
        return Structured(
            response_format=sent,
            schema=spec["schema"],
            strict=bool(spec.get("strict")),
            model=response_format,
        )
    if not isinstance(response_format, Mapping) or response_format.get("type") != "json_schema":
        return None
    spec = response_format.get("json_schema")
    schema = spec.get("schema") if isinstance(spec, Mapping) else None
    if not isinstance(schema, Mapping):
        raise ConfigError(
            "response_format: a json_schema format needs its schema: "
            '{"type": "json_schema", "json_schema": {"name": ..., "schema": {...}}}'
        )
    assert isinstance(spec, Mapping)
    import jsonschema  # imported when needed: not with fanout

    plain = json.loads(json.dumps(schema))
    kind = jsonschema.validators.validator_for(plain, default=jsonschema.Draft202012Validator)
    try:
        kind.check_schema(plain)
    except jsonschema.SchemaError as exc:
        raise ConfigError(f"response_format: the schema is no JSON schema: {exc.message}") from None
    return Structured(
        response_format=dict(response_format),
        schema=plain,
        strict=bool(spec.get("strict")),
        _validator=kind(plain),
    )


SCHEMA_FORMAT = "schema"
"""The merged format whose merge checks count for structured questions (the JSON
format with the call's own schema per answer): kept apart from plain JSON's."""


class UnfitReplyError(EmptyReplyError):
    """A reply that does not fit the question's structured format (retried unless it
    was cut at ``max_tokens``); the question's :class:`~fanout.StructuredOutputError`."""

    def __init__(self, reason: str, *, reply: str, retry: bool) -> None:
        super().__init__(f"the reply does not fit the response_format: {reason}", retry=retry)
        self.reason = reason
        self.reply = reply


def check_fits(completion: ChatCompletion, structured: Structured) -> Any:
    """The checked value of the first choice's answer; raises :class:`UnfitReplyError`
    if it does not fit ``structured``."""
    choice = min(completion.choices, key=lambda c: c.index if isinstance(c.index, int) else 0)
    text = choice.message.content or ""
    try:
        return structured.validate(text)
    except ValueError as exc:
        raise UnfitReplyError(
            str(exc), reply=text, retry=choice.finish_reason != "length"
        ) from None


def checked_values(
    found: Mapping[str, str], structured: Structured
) -> tuple[dict[str, str], dict[str, Any]]:
    """Of a merged reply's answers (by tag), those that fit ``structured``, and their
    checked values; the others are left out (their questions are asked alone)."""
    kept: dict[str, str] = {}
    values: dict[str, Any] = {}
    for tag, text in found.items():
        try:
            values[tag] = structured.validate(text)
        except ValueError:
            continue
        kept[tag] = text
    return kept, values
