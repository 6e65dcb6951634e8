"""fanout inside Ray Data: a column of a Ray Dataset answered by a pool of actors,
one ``Fanout`` each, under one budget for the cluster (see docs/ray.md)::

    import fanout
    import fanout.ray
    import ray

    ds = ray.data.read_parquet("questions.parquet")
    out = fanout.ray.answer(
        ds,
        column="question",
        model="gpt-4o-mini",
        client=fanout.ray.ClientSettings(base_url="https://api.openai.com/v1"),
        limits=fanout.Limits(rpm=5000),
        redis_url="redis://cache:6379/0",
        concurrency=4,
    )
    out.write_parquet("answers/")

Needs ``pip install 'llm-fanout[ray]'`` (Ray Data and the redis client).
"""

from __future__ import annotations

from ._actor import ClientSettings as ClientSettings
from ._answer import RaySummary as RaySummary
from ._answer import answer as answer
from ._answer import summarize as summarize
from ._rows import ANSWER_COLUMNS as ANSWER_COLUMNS

__all__ = ["ANSWER_COLUMNS", "ClientSettings", "RaySummary", "answer", "summarize"]
