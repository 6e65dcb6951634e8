"""fanout.wrap(client, endpoints=[...]): a multi-question prompt fanned out over several
endpoints, whole or streamed."""

from __future__ import annotations

import fanout
from fanout import Endpoint
from fanout.sim import answer_for
from fanout.testing import open_sim

from .._virtual import on_virtual_time

TWELVE = "\n".join(f"{i}. Explain topic number {i}. {{{{tokens=20}}}}" for i in range(1, 13))


def _expected(text: str) -> str:
    d = fanout.detect(text)
    return d.layout([answer_for(d.group_prompt(g), 20) for g in d.groups])


@on_virtual_time
async def test_a_wrapped_client_fans_a_prompt_out_over_every_endpoint() -> None:
    """The parts of one prompt go to both endpoints; the completion holds every answer
    in order, and its report says which endpoint answered how many. A copy shares the
    endpoints' Fanout."""
    async with open_sim(slots=2) as a, open_sim(slots=2) as b:
        eps = [Endpoint(client=a.client, name="a"), Endpoint(client=b.client, name="b")]
        wrapped = fanout.wrap(a.client, endpoints=eps, policy="split")
        result = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": TWELVE}]
        )
        copy = wrapped.with_options(timeout=10)
        assert copy.fanout is wrapped.fanout  # type: ignore[attr-defined]
    assert result.choices[0].message.content == _expected(TWELVE)
    report = fanout.report_of(result)
    assert report is not None
    assert report.endpoints["a"] > 0 and report.endpoints["b"] > 0
    assert sum(report.endpoints.values()) == 12
    assert len(a.stats.requests) + len(b.stats.requests) == 12


@on_virtual_time
async def test_a_streamed_prompt_streams_its_first_part_from_one_endpoint() -> None:
    """Streamed: the first part comes as it is written, from one of the endpoints; the
    others follow in order; every part asked once."""
    async with open_sim(slots=2) as a, open_sim(slots=2) as b:
        eps = [Endpoint(client=a.client, name="a"), Endpoint(client=b.client, name="b")]
        wrapped = fanout.wrap(a.client, endpoints=eps, policy="split")
        stream = await wrapped.chat.completions.create(
            model="m", messages=[{"role": "user", "content": TWELVE}], stream=True
        )
        text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    assert text == _expected(TWELVE)
    assert len(a.stats.requests) + len(b.stats.requests) == 12
    assert a.stats.requests and b.stats.requests
