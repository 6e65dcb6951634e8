"""``Endpoint``: one server of a model, among several behind one ``Fanout``.

::

    fo = fanout.Fanout(
        endpoints=[
            fanout.Endpoint(base_url="http://gpu-a:8000/v1", limits=fanout.Limits(max_concurrency=8)),
            fanout.Endpoint(client=AsyncOpenAI(), limits=fanout.Limits(rpm=500), priority=1),
        ],
        model="llama-3.1-8b",
    )

Each endpoint is a different server: its timing, its limits and its memory are learned
and kept on their own (see docs/endpoints.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from .config import Limits
from .exceptions import ConfigError
from .money import Pricing

__all__ = ["Endpoint"]


@dataclass(frozen=True, kw_only=True)
class Endpoint:
    """One endpoint of a ``Fanout(endpoints=[...])``: keyword-only, frozen, checked.

    ``client`` (an ``openai.AsyncOpenAI``, never changed) or ``base_url`` (fanout then
    makes a client for it, with ``api_key``, or ``"EMPTY"`` for a server that needs
    none). ``limits``: its own (None: ``Limits()``, learned from its headers); with a
    redis backend and the default namespace, the namespace is the endpoint's
    ``name``, so each endpoint has one budget for every process. ``price``: what its
    tokens cost (a server of your own: ``fanout.Pricing.free()``); it prices the
    answers it gives and, under ``Policy(objective="cost")``, places the questions on
    the cheapest endpoints. ``priority``: 0 first; an endpoint of priority 1 is asked
    only while every endpoint of priority 0 is cooled down or out (a fallback).
    ``name``: how the report calls it (default: the base URL's host and port).
    """

    client: Any = None
    base_url: str | None = None
    api_key: str | None = None
    limits: Limits | None = None
    price: Pricing | None = None
    priority: int = 0
    name: str | None = None

    def __post_init__(self) -> None:
        if (self.client is None) == (self.base_url is None):
            raise ConfigError("Endpoint takes client= or base_url=, one of them")
        if self.base_url is not None and not isinstance(self.base_url, str):
            raise ConfigError(f"Endpoint.base_url must be a str, got {self.base_url!r}")
        if self.client is not None and not hasattr(self.client, "with_options"):
            raise ConfigError(
                f"Endpoint.client must be an openai.AsyncOpenAI, not {type(self.client).__name__}"
            )
        if self.limits is not None and not isinstance(self.limits, Limits):
            raise ConfigError(f"Endpoint.limits must be a fanout.Limits, got {self.limits!r}")
        if self.price is not None and not isinstance(self.price, Pricing):
            raise ConfigError(f"Endpoint.price must be a fanout.Pricing, got {self.price!r}")
        if isinstance(self.priority, bool) or not isinstance(self.priority, int):
            raise ConfigError(f"Endpoint.priority must be an int, got {self.priority!r}")
        if self.priority < 0:
            raise ConfigError(f"Endpoint.priority must be >= 0, got {self.priority!r}")
        if self.name is not None and (not isinstance(self.name, str) or not self.name):
            raise ConfigError(f"Endpoint.name must be a non-empty str, got {self.name!r}")

    @property
    def url(self) -> str:
        """The base URL requests go to."""
        return str(self.base_url if self.client is None else self.client.base_url)

    @property
    def label(self) -> str:
        """Its ``name``, or its base URL's host and port."""
        if self.name is not None:
            return self.name
        parts = urlsplit(self.url)
        return parts.netloc or self.url

    def __repr__(self) -> str:
        shown = [f"name={self.label!r}", f"url={self.url!r}"]
        if self.limits is not None:
            shown.append(f"limits={self.limits!r}")
        if self.price is not None:
            shown.append(f"price={self.price!r}")
        if self.priority:
            shown.append(f"priority={self.priority}")
        return f"Endpoint({', '.join(shown)})"
