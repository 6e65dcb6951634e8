"""How long the planner takes per call (target: under 1 ms for 50 questions).

Times ``Fanout.plan`` (the planning an ``ask_many`` call does before sending:
token estimates, the endpoint estimate, the limiter's budget, every candidate
plan) for 5, 50 and 500 questions, with a learned endpoint model and an rpm limit.

Run: ``python benchmarks/planner_speed.py``
"""

from __future__ import annotations

import asyncio
import random
import time

from _common import save
from openai import AsyncOpenAI

import fanout


async def main_async() -> dict[str, float]:
    client = AsyncOpenAI(api_key="unused", base_url="http://127.0.0.1:9/v1")  # nothing is sent
    fo = fanout.Fanout(client, model="m", limits=fanout.Limits(rpm=500, tpm=200_000))
    rng = random.Random(1)
    for _ in range(200):  # a model that has seen traffic
        c = rng.randint(5, 300)
        fo.endpoint.observe(prompt_tokens=rng.randint(20, 800), completion_tokens=c,
                            latency_s=0.3 + c * 0.015, others_prompt_tokens=rng.randint(0, 2000),
                            others_completion_tokens=rng.randint(0, 500))  # fmt: skip
    results = {}
    for n in (5, 50, 500):
        questions = [
            f"Question number {i}: explain topic {i} in a few sentences." for i in range(n)
        ]
        repeats = 2000 if n <= 50 else 100
        fo.plan(questions)  # warm
        start = time.perf_counter()
        for _ in range(repeats):
            fo.endpoint._cached = None  # refit the endpoint model every time, as after a response
            fo.plan(questions)
        per_call = (time.perf_counter() - start) / repeats
        results[f"ms_per_plan_{n}"] = round(per_call * 1000, 4)
        print(
            f"{n:>4} questions: {per_call * 1000:.3f} ms per plan (endpoint model refitted each time)"
        )
    await client.close()
    return results


def main() -> None:
    results = asyncio.run(main_async())
    save("planner_speed", results)


if __name__ == "__main__":
    main()
