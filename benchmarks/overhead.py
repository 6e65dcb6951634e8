"""fanout's overhead: throughput against a bare ``asyncio.gather`` with a semaphore.

5,000 tiny completions (1 token, no round trip, ``time_scale`` 1000) with 200 in
flight, through one ``AsyncOpenAI`` client, against the simulator in its own
process. Both sides use the same client (``max_retries=0``) in the same run;
the two are run alternately, three times each, and the best of each is kept.
Target: fanout's throughput >= 0.9 x the bare loop's.

Run: ``python benchmarks/overhead.py [N]``
"""

from __future__ import annotations

import asyncio
import sys
import time

from _common import save, sim_process
from openai import AsyncOpenAI

import fanout

CONCURRENCY = 200


async def bare(client: AsyncOpenAI, questions: list[str]) -> float:
    sem = asyncio.Semaphore(CONCURRENCY)

    async def one(q: str) -> str:
        async with sem:
            r = await client.chat.completions.create(
                model="sim-1", messages=[{"role": "user", "content": q}]
            )
            return r.choices[0].message.content or ""

    start = time.perf_counter()
    texts = await asyncio.gather(*[one(q) for q in questions])
    elapsed = time.perf_counter() - start
    assert len(texts) == len(questions)
    return len(questions) / elapsed


async def with_fanout(client: AsyncOpenAI, questions: list[str]) -> float:
    fo = fanout.Fanout(client, model="sim-1", limits=fanout.Limits(max_concurrency=CONCURRENCY))
    start = time.perf_counter()
    answers = await fo.ask_many(questions)
    elapsed = time.perf_counter() - start
    assert answers.report.answered == len(questions)
    return len(questions) / elapsed


async def run(base_url: str, n: int) -> dict[str, float]:
    client = AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0)
    await bare(client, [f"warm {i}" for i in range(CONCURRENCY)])
    best = {"bare": 0.0, "fanout": 0.0}
    for round_ in range(3):
        qs = [f"tiny question {round_}-{i}" for i in range(n)]
        best["bare"] = max(best["bare"], await bare(client, qs))
        qs = [f"tiny question {round_}-{i}-f" for i in range(n)]
        best["fanout"] = max(best["fanout"], await with_fanout(client, qs))
    await client.close()
    return best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with sim_process("--time-scale", "1000", "--rtt-ms", "0", "--answer-tokens", "1") as url:
        best = asyncio.run(run(url, n))
    ratio = best["fanout"] / best["bare"]
    print(f"bare gather+semaphore: {best['bare']:,.0f} completions/s")
    print(f"fanout.ask_many:       {best['fanout']:,.0f} completions/s")
    print(f"ratio fanout/bare:     {ratio:.3f}  (target >= 0.9)")
    save("overhead", {"n": n, "concurrency": CONCURRENCY, "bare_per_s": round(best["bare"], 1),
                      "fanout_per_s": round(best["fanout"], 1), "ratio": round(ratio, 3)})  # fmt: skip


if __name__ == "__main__":
    main()
