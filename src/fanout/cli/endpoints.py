"""``--endpoints FILE``: several endpoints of one model, each with its own settings.

The file is JSON: a list of endpoints (or ``{"endpoints": [...]}``), each an object::

    [
      {"base_url": "http://gpu-a:8000/v1", "name": "gpu-a", "concurrency": 8},
      {"base_url": "http://gpu-b:8000/v1", "name": "gpu-b", "concurrency": 64},
      {"base_url": "https://api.openai.com/v1", "api_key_env": "OPENAI_API_KEY",
       "rpm": 500, "tpm": 200000, "priority": 1,
       "price": {"input": 0.15, "output": 0.60}}
    ]

``base_url`` is required; ``api_key`` or ``api_key_env`` (the name of a variable
holding it; default: ``--api-key``, then ``$OPENAI_API_KEY``); ``rpm``, ``tpm``,
``concurrency`` (default: the command line's); ``priority``, ``name``, ``price``.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.config import Limits
from ..core.endpoints import Endpoint
from ..core.exceptions import ConfigError
from ..core.money import Pricing

__all__ = ["endpoint_of", "read_endpoints"]

_KEYS = {"base_url", "api_key", "api_key_env", "rpm", "tpm", "concurrency", "priority"}
_KEYS |= {"name", "price"}


def read_endpoints(path: str) -> list[dict[str, Any]]:
    """The endpoints a file describes, checked (a ``ConfigError`` names what is wrong)."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not JSON: {exc}") from exc
    if isinstance(data, dict) and "endpoints" in data:
        data = data["endpoints"]
    if not isinstance(data, list) or not data:
        raise ConfigError(f"{path}: expected a list of endpoints")
    for n, spec in enumerate(data):
        if not isinstance(spec, dict) or not isinstance(spec.get("base_url"), str):
            raise ConfigError(f"{path}: endpoint {n} needs a base_url")
        unknown = sorted(set(spec) - _KEYS)
        if unknown:
            raise ConfigError(
                f"{path}: endpoint {n}: unknown key {unknown[0]!r} (known: {', '.join(sorted(_KEYS))})"
            )
    return data


def endpoint_of(spec: dict[str, Any], *, default_key: str | None, default: Limits) -> Endpoint:
    """One endpoint of the file, its limits on top of the command line's."""
    key = spec.get("api_key")
    if key is None and spec.get("api_key_env"):
        key = os.environ.get(str(spec["api_key_env"]))
    limits = Limits(
        rpm=spec.get("rpm", default.rpm),
        tpm=spec.get("tpm", default.tpm),
        max_concurrency=spec.get("concurrency", default.max_concurrency),
        backend=default.backend,
    )
    price = spec.get("price")
    return Endpoint(
        base_url=spec["base_url"],
        api_key=key or default_key,
        limits=limits,
        price=None if price is None else Pricing(**price),
        priority=spec.get("priority", 0),
        name=spec.get("name"),
    )
