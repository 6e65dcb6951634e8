"""fanout's overhead: throughput against a bare ``asyncio.gather`` with a semaphore.

5,000 tiny completions (1 token, no round trip, ``time_scale`` 1000) with 200 in
flight, through one ``AsyncOpenAI`` client, against the simulator in its own
process. Both sides use the same client (``max_retries=0``) in the same run;
they are run alternately, three times each, and the best of each is kept.

The overhead is measured with ``policy="split"``: one request per question, as the
bare loop sends, so the ratio is fanout's own cost (intake, planning, limiter,
retry layer, bookkeeping) and nothing else. Target: >= 0.9 x the bare loop.
The default policy's figure is printed beside it, labelled: with 1-token answers
``auto`` merges them, which is a measure of merging, not of overhead.

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


async def with_fanout(client: AsyncOpenAI, questions: list[str], policy: str) -> float:
    fo = fanout.Fanout(client, model="sim-1", limits=fanout.Limits(max_concurrency=CONCURRENCY))
    start = time.perf_counter()
    answers = await fo.ask_many(questions, policy=policy)
    elapsed = time.perf_counter() - start
    assert answers.report.answered == len(questions)
    return len(questions) / elapsed


async def run(base_url: str, n: int) -> dict[str, float]:
    client = AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0)
    await bare(client, [f"warm {i}" for i in range(CONCURRENCY)])
    best = {"bare": 0.0, "split": 0.0, "auto": 0.0}
    for round_ in range(3):
        qs = [f"tiny question {round_}-{i}" for i in range(n)]
        best["bare"] = max(best["bare"], await bare(client, qs))
        for policy in ("split", "auto"):
            qs = [f"tiny question {round_}-{i}-{policy}" for i in range(n)]
            best[policy] = max(best[policy], await with_fanout(client, qs, policy))
    await client.close()
    return best


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    with sim_process("--time-scale", "1000", "--rtt-ms", "0", "--answer-tokens", "1") as url:
        best = asyncio.run(run(url, n))
    ratio = best["split"] / best["bare"]
    auto_ratio = best["auto"] / best["bare"]
    print(f"bare gather+semaphore:             {best['bare']:,.0f} completions/s")
    print(f"fanout.ask_many, policy='split':   {best['split']:,.0f} completions/s")
    print(f"overhead ratio split/bare:         {ratio:.3f}  (target >= 0.9)")
    print(f"policy='auto' (merges 1-token answers; not overhead): {best['auto']:,.0f}/s, "
          f"{auto_ratio:.3f} x bare")  # fmt: skip
    save("overhead", {"n": n, "concurrency": CONCURRENCY, "bare_per_s": round(best["bare"], 1),
                      "fanout_split_per_s": round(best["split"], 1), "ratio": round(ratio, 3),
                      "fanout_auto_per_s": round(best["auto"], 1),
                      "auto_ratio_not_overhead": round(auto_ratio, 3)})  # fmt: skip


if __name__ == "__main__":
    main()
