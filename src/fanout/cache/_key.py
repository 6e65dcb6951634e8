"""The key of a request in the response cache, and which requests are deterministic.

The key is the sha256 of the canonical JSON (sorted keys, no spaces, UTF-8) of: a
format version, the endpoint (its base URL without credentials), the API (Chat
Completions or Responses) and the ``create()`` parameters of the request as it
would be sent alone (model, messages and every parameter that shapes the reply),
less those that only the client sees or that do not change the reply
(``CLIENT_SIDE``). Two requests that differ in anything the endpoint reads have
different keys; a request whose parameters are not plain data (an object JSON has
no spelling for) has none, and is not cached.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping
from typing import Any

__all__ = ["CLIENT_SIDE", "KEY_VERSION", "is_deterministic", "request_key"]

KEY_VERSION = 1

CLIENT_SIDE = frozenset({
    "timeout",  # how long the client waits
    "extra_headers",  # what the client adds to the HTTP request
    "user", "safety_identifier",  # who the end user is, for abuse monitoring
    "metadata", "store",  # whether and how the provider keeps the exchange
    "prompt_cache_key", "service_tier",  # the provider's routing and pricing, not the reply
})  # fmt: skip
"""``create()`` parameters left out of the key: they do not change what the model writes."""


class _Unkeyable(Exception):
    """A value with no canonical JSON spelling."""


def _canonical(value: object) -> Any:
    """``value`` as plain JSON data, or :class:`_Unkeyable`."""
    if value is None or isinstance(value, (str, bool, int)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _Unkeyable(value)
        return value
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items() if not _not_given(v)}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    dump = getattr(value, "model_dump", None)
    if callable(dump) and not isinstance(value, type):  # a pydantic model instance
        return _canonical(dump(mode="json"))
    schema = getattr(value, "model_json_schema", None)
    if isinstance(value, type) and callable(schema):  # a pydantic model class
        return {"json_schema": _canonical(schema())}
    raise _Unkeyable(type(value).__name__)


def _not_given(value: object) -> bool:
    """The SDK's "not given" markers: nothing is sent for them."""
    return type(value).__name__ in ("NotGiven", "Omit") and type(value).__module__.startswith(
        "openai"
    )


def request_key(endpoint: str, api: str, params: Mapping[str, Any]) -> str | None:
    """The cache key of a request (64 hex digits); None if its parameters are not plain
    data (it is then not cached)."""
    sent = {k: v for k, v in params.items() if k not in CLIENT_SIDE}
    try:
        body = {"v": KEY_VERSION, "endpoint": endpoint, "api": api, "params": _canonical(sent)}
        text = json.dumps(
            body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (_Unkeyable, ValueError, RecursionError):
        return None
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def is_deterministic(params: Mapping[str, Any]) -> bool:
    """Would the endpoint answer this request the same way again, as far as its
    parameters say: ``temperature`` 0 (greedy decoding), or a ``seed`` (the caller asks
    for reproducible sampling)? A request with neither samples at the endpoint's
    default temperature: not deterministic."""
    temperature = params.get("temperature")
    seed = params.get("seed")
    greedy = (
        isinstance(temperature, (int, float))
        and not isinstance(temperature, bool)
        and temperature == 0
    )
    seeded = isinstance(seed, int) and not isinstance(seed, bool)
    return greedy or seeded
