"""Values that fit a JSON schema: what the simulated model writes for structured output
and for a tool call's arguments.

Deterministic: every value is drawn from a digest of the question and of the value's
path in the document, so the same question gets the same JSON and two fields get
different values. The strings share the answer's length between them (``tokens``, at
most 50 tokens each), so a structured answer takes about as long to write as a plain one.

Covered: ``type`` (one or a list), ``properties`` (every one is written, as strict mode
asks), ``items`` / ``prefixItems`` with ``minItems`` / ``maxItems``, ``enum``,
``const``, ``anyOf`` / ``oneOf`` (the first choice that is not null), ``allOf``,
local ``$ref`` (``#/$defs/...``, ``#/definitions/...``, recursion cut off), string
``format`` (date, date-time, time, email, uri, uuid, ipv4, hostname), ``minLength`` /
``maxLength``, and the bounds of numbers (``minimum``, ``maximum``, the exclusive
ones, ``multipleOf``). ``pattern`` is not followed.
"""

from __future__ import annotations

import hashlib
import json
import math
import uuid
from typing import Any

from ._text import answer_for

__all__ = ["find_schema", "instance"]

_MAX_DEPTH = 6  # below it, a recursive schema gets its smallest value
_DEFAULT_ITEMS = 2
_MAX_STRING_TOKENS = 50  # a 200-token "name" reads as a bug, not as an answer


def _seed(question: str, path: str) -> int:
    return int(hashlib.sha256(f"{question}\x00{path}".encode()).hexdigest()[:12], 16)


class _Filler:
    def __init__(self, root: dict[str, Any], question: str, string_tokens: int) -> None:
        self.root = root
        self.question = question
        self.string_tokens = string_tokens
        self.strings = 0  # free-text strings written (to share the length out)

    def resolve(self, schema: Any) -> dict[str, Any]:
        seen = 0
        while isinstance(schema, dict) and isinstance(schema.get("$ref"), str) and seen < 32:
            target: Any = self.root
            ref = schema["$ref"]
            if not ref.startswith("#"):
                return {}
            for part in ref[1:].split("/"):
                if part:
                    part = part.replace("~1", "/").replace("~0", "~")
                    target = target.get(part) if isinstance(target, dict) else None
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            schema = {**(target if isinstance(target, dict) else {}), **rest}
            seen += 1
        if not isinstance(schema, dict):
            return {}
        if isinstance(schema.get("allOf"), list):
            merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
            for part in schema["allOf"]:
                part = self.resolve(part)
                props = {**merged.get("properties", {}), **part.get("properties", {})}
                merged = {**part, **merged, "properties": props}
            return merged
        return schema

    def value(self, schema: Any, path: str, depth: int = 0) -> Any:
        schema = self.resolve(schema)
        seed = _seed(self.question, path)
        if "const" in schema:
            return schema["const"]
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            return schema["enum"][seed % len(schema["enum"])]
        for key in ("anyOf", "oneOf"):
            choices = schema.get(key)
            if isinstance(choices, list) and choices:
                resolved = [self.resolve(c) for c in choices]
                usable = [c for c in resolved if c.get("type") != "null"]
                if depth >= _MAX_DEPTH and len(usable) < len(resolved):
                    return None
                return self.value(usable[0] if usable else resolved[0], path, depth)
        kind = schema.get("type")
        if isinstance(kind, list):
            kinds = [k for k in kind if k != "null"]
            if depth >= _MAX_DEPTH and len(kinds) < len(kind):
                return None
            kind = kinds[0] if kinds else "null"
        if kind is None:
            if "properties" in schema:
                kind = "object"
            elif "items" in schema or "prefixItems" in schema:
                kind = "array"
            else:
                kind = "string"
        if kind == "object":
            props = schema.get("properties")
            if not isinstance(props, dict):
                return {}
            return {
                name: self.value(sub, f"{path}/{name}", depth + 1) for name, sub in props.items()
            }
        if kind == "array":
            return self._array(schema, path, depth)
        if kind == "string":
            return self._string(schema, path, seed)
        if kind == "integer":
            return int(self._number(schema, seed, integer=True))
        if kind == "number":
            return self._number(schema, seed, integer=False)
        if kind == "boolean":
            return seed % 2 == 0
        return None

    def _array(self, schema: dict[str, Any], path: str, depth: int) -> list[Any]:
        low = int(schema.get("minItems") or 0)
        high = schema.get("maxItems")
        count = low if depth >= _MAX_DEPTH else max(low, _DEFAULT_ITEMS)
        if isinstance(high, int):
            count = min(count, high)
        prefix = schema.get("prefixItems")
        items = schema.get("items")
        out = []
        for i in range(count):
            sub = prefix[i] if isinstance(prefix, list) and i < len(prefix) else items
            out.append(self.value(sub if isinstance(sub, dict) else {}, f"{path}/{i}", depth + 1))
        if schema.get("uniqueItems"):
            unique: list[Any] = []
            for item in out:
                if item not in unique:
                    unique.append(item)
            out = unique if len(unique) >= low else out
        return out

    def _string(self, schema: dict[str, Any], path: str, seed: int) -> str:
        fmt = schema.get("format")
        day = 1 + seed % 28
        formatted = {
            "date": f"2024-01-{day:02d}",
            "date-time": f"2024-01-{day:02d}T{seed % 24:02d}:{seed % 60:02d}:00Z",
            "time": f"{seed % 24:02d}:{seed % 60:02d}:00",
            "email": f"user{seed % 10_000}@example.com",
            "uri": f"https://example.com/{seed % 1_000_000:x}",
            "url": f"https://example.com/{seed % 1_000_000:x}",
            "uuid": str(uuid.UUID(int=seed << 80 | seed, version=4)),
            "ipv4": f"10.{seed % 256}.{seed // 256 % 256}.{seed // 65_536 % 254 + 1}",
            "hostname": f"host{seed % 1000}.example.com",
        }.get(str(fmt))
        if formatted is not None:
            text = formatted
        else:
            self.strings += 1
            text = answer_for(f"{self.question}\x00{path}", self.string_tokens)
        low = schema.get("minLength")
        high = schema.get("maxLength")
        if isinstance(low, int) and len(text) < low:
            text = (text + " " + text * low)[:low] if text else "x" * low
        if isinstance(high, int) and len(text) > high:
            text = text[:high].rstrip() or text[:high]
        return text

    @staticmethod
    def _number(schema: dict[str, Any], seed: int, *, integer: bool) -> float:
        def bound(name: str) -> float | None:
            value = schema.get(name)
            return (
                float(value)
                if isinstance(value, (int, float)) and not isinstance(value, bool)
                else None
            )

        low, high = bound("minimum"), bound("maximum")
        unit = 1.0 if integer else 0.5
        exclusive_low, exclusive_high = bound("exclusiveMinimum"), bound("exclusiveMaximum")
        if exclusive_low is not None:
            low = exclusive_low + unit if low is None else max(low, exclusive_low + unit)
        if exclusive_high is not None:
            high = exclusive_high - unit if high is None else min(high, exclusive_high - unit)
        if low is None:
            low = 0.0 if high is None or high >= 100 else high - 100
        if high is None:
            high = low + 100
        if integer:
            low, high = float(math.ceil(low)), float(math.floor(high))
        step = bound("multipleOf")
        if step is not None and step > 0:
            first, last = math.ceil(low / step), math.floor(high / step)
            if last < first:
                return low
            return step * (first + seed % (last - first + 1))
        if high < low:
            return low
        return low + unit * (seed % (int((high - low) / unit) + 1))


def instance(
    schema: dict[str, Any], question: str, tokens: int, *, root: dict[str, Any] | None = None
) -> Any:
    """A value that fits ``schema``, drawn from ``question``; its free-text strings hold
    about ``tokens`` tokens between them (at least two each: ``ref`` and the digest; at
    most 50 each). ``root``: the document ``schema`` is part of, where its references
    are resolved (``schema`` itself by default)."""
    root = schema if root is None else root
    counter = _Filler(root, question, 2)
    counter.value(schema, "")
    share = min(_MAX_STRING_TOKENS, max(2, tokens // max(1, counter.strings)))
    return _Filler(root, question, share).value(schema, "")


def find_schema(texts: list[str]) -> dict[str, Any] | None:
    """The JSON schema a prompt shows (instructor's JSON mode puts one in the system
    message): the largest JSON object in ``texts`` that reads as a schema."""
    decoder = json.JSONDecoder()
    best: dict[str, Any] | None = None
    best_size = 0
    for text in texts:
        start = text.find("{")
        while start >= 0:
            try:
                found, end = decoder.raw_decode(text, start)
            except ValueError:
                start = text.find("{", start + 1)
                continue
            if isinstance(found, dict) and _reads_as_schema(found) and end - start > best_size:
                best, best_size = found, end - start
            start = text.find("{", end)
    return best


def _reads_as_schema(obj: dict[str, Any]) -> bool:
    return isinstance(obj.get("properties"), dict) or obj.get("type") in ("object", "array")
