"""Several endpoints shared across processes through redis: one budget per endpoint
(wall clock: redis-server is another process, see docs/testing.md)."""

from __future__ import annotations

import asyncio
import time

import fanout
from fanout import Endpoint, Limits
from fanout.sim import answer_for

from ..conftest import SimFactory

RPM = 600  # the endpoints' limit: 10 a second, policed as a sliding window of 3 s
POLICED = {"rpm": RPM, "limit_period_s": 3.0, "limit_policing": "sliding",
           "answer_tokens": 2, "rtt_s": 0.01}  # fmt: skip
PACED = 540
"""What the Fanouts are told: 90 % of it. Paced at exactly the window's rate, a request
that took a few milliseconds longer than the one 30 before it on the loopback of a busy
machine arrives inside that one's window: one 429 in a full suite's run of this test
(rehearsal r20), none in five alone. Each endpoint's budget is what this test is about;
its edge is the single-endpoint tests' (tests/limits)."""


async def test_fanouts_of_several_endpoints_share_one_budget_per_endpoint(
    sim: SimFactory, redis_url: str
) -> None:
    """Two Fanouts (two shards, say) over the same two endpoints, each endpoint paced at
    540 rpm through one redis: neither endpoint is sent more than its limit (no 429), and
    the two budgets are apart (the call takes about the time of 1,080 rpm, not 540)."""
    async with sim(**POLICED) as (a, _), sim(**POLICED) as (b, _):
        limits = Limits(rpm=PACED, backend=redis_url)

        def shard() -> fanout.Fanout:
            eps = [
                Endpoint(base_url=a.base_url, api_key="sim", limits=limits, name="a"),
                Endpoint(base_url=b.base_url, api_key="sim", limits=limits, name="b"),
            ]
            return fanout.Fanout(endpoints=eps, model="m", policy="split", memory=False)

        shards = [shard(), shard()]
        questions = [[f"shard {s} question {i}" for i in range(60)] for s in range(2)]
        start = time.monotonic()
        try:
            answers = await asyncio.gather(
                *(fo.ask_many(qs) for fo, qs in zip(shards, questions, strict=True))
            )
        finally:
            for fo in shards:
                await fo.aclose()
        took = time.monotonic() - start
        refused = a.stats.rate_limited + b.stats.rate_limited
    for got, qs in zip(answers, questions, strict=True):
        assert [x.text for x in got] == [answer_for(q, 2) for q in qs]
    assert refused == 0, refused  # per Fanout (not shared), each endpoint gets 1,080 rpm
    assert took < 10.0  # 60 requests at 9/s on each endpoint: ~5 s; one budget for both: 13
