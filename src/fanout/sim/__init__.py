"""``fanout.sim``: an OpenAI-compatible server that behaves like a continuous-batching engine.

It is what fanout's tests and benchmarks run against, and what a new user can try
the library on without an API key::

    from openai import AsyncOpenAI
    from fanout.sim import SimConfig, serve

    async with serve(SimConfig(slots=1, rpm=60)) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="sim")
        ...
        server.stats.peak_running

The library itself never imports this package.
"""

from __future__ import annotations

from ._config import BATCH_LINE_DAMAGE as BATCH_LINE_DAMAGE
from ._config import FAULT_KINDS as FAULT_KINDS
from ._config import SimConfig as SimConfig
from ._limits import go_duration as go_duration
from ._server import SimServer as SimServer
from ._server import serve as serve
from ._stats import RequestRecord as RequestRecord
from ._stats import SimStats as SimStats
from ._text import TOKEN_HINT as TOKEN_HINT
from ._text import answer_for as answer_for
from ._text import count_tokens as count_tokens

__all__ = [
    "BATCH_LINE_DAMAGE",
    "FAULT_KINDS",
    "TOKEN_HINT",
    "RequestRecord",
    "SimConfig",
    "SimServer",
    "SimStats",
    "answer_for",
    "count_tokens",
    "go_duration",
    "serve",
]
