"""Warm estimates on a server of few slots (issue 26): a warm-up call of long answers,
then a second ``Fanout`` on the same endpoint, starting from the first's endpoint
memory, asks long answers split; the plan's estimate against the wall time.

The two scenarios of the policy grid's warm misses: 50 x 800 tokens on 4 slots (round
trip 1 s), and 8 x 800 on 1 slot (round trip 150 ms, 3 requests per minute; and with
no limit), at time scale 50 (the grid ran them at 485-565, where a busy machine's
client time per request is most of an answer). Before the endpoint model learned
slots (load average 4.7 on 2 cores): 0.42x, 0.90x (3 requests a minute space the
eight about as far apart as the one slot does) and 0.37x.

Run: ``python benchmarks/warm_slots.py`` (about 20 s).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path

from openai import AsyncOpenAI

import fanout
from fanout.sim import SimConfig, serve

SCALE = 50.0
SCENARIOS = [
    {"n": 50, "answer": 800, "slots": 4, "rtt": 1.0, "rpm": None, "warm": [800] * 12},
    {"n": 8, "answer": 800, "slots": 1, "rtt": 0.15, "rpm": 3, "warm": [800] * 4},
    {"n": 8, "answer": 800, "slots": 1, "rtt": 0.15, "rpm": None, "warm": [800] * 4},
]


async def run(n: int, answer: int, slots: int, rtt: float, rpm: int | None,
              warm: list[int]) -> None:  # fmt: skip
    # What a process pays once, at its first answers, paid before the warm-up.
    async with serve(SimConfig(time_scale=1000)) as prime:
        client = AsyncOpenAI(base_url=prime.base_url, api_key="prime")
        await fanout.Fanout(client, model="sim-1", memory=False).ask_many(
            ["a first answer {{tokens=2}}"] * 3, policy="split"
        )
    config = SimConfig(time_scale=SCALE, rtt_s=rtt, slots=slots, rpm=rpm, stream_chunk_tokens=16)
    limits = fanout.Limits(rpm=int(rpm * SCALE)) if rpm else None
    questions = [f"Question {i} of the grid {{{{tokens={answer}}}}}" for i in range(n)]
    with tempfile.TemporaryDirectory() as memory:
        async with serve(config) as server:
            warm_client = AsyncOpenAI(base_url=server.base_url, api_key="warm-up")
            first = fanout.Fanout(warm_client, model="sim-1", limits=limits, memory=Path(memory))
            await first.ask_many([f"warm-up {i} {{{{tokens={t}}}}}" for i, t in enumerate(warm)],
                                 policy="split")  # fmt: skip
            client = AsyncOpenAI(base_url=server.base_url, api_key="measured")
            fo = fanout.Fanout(client, model="sim-1", limits=limits, memory=Path(memory))
            start = time.perf_counter()
            answers = await fo.ask_many(questions, policy="split")
            wall = time.perf_counter() - start
    report = answers.report
    estimate = report.estimated_wall_s or 0.0
    endpoint = report.revisions[0].plan.inputs.endpoint
    print(f"{n} x {answer} on {slots} slot(s), rpm {rpm}: estimated {estimate:.2f} s, took {wall:.2f} s "
          f"({estimate / wall:.2f}x); slots learned: {endpoint.slots}; "
          f"load average {os.getloadavg()[0]:.1f}")  # fmt: skip


async def main() -> None:
    for scenario in SCENARIOS:
        await run(**scenario)  # type: ignore[arg-type]


if __name__ == "__main__":
    asyncio.run(main())
