"""fanout's overhead: throughput against a bare ``asyncio.gather`` with a semaphore.

5,000 tiny completions (1 token, no round trip, ``time_scale`` 1000) with 200 in
flight, through one ``AsyncOpenAI`` client, against the simulator in its own
process. Both sides use the same client (``max_retries=0``) in the same run;
they are run alternately, five rounds by default, and the best of each is kept.

The overhead is measured with ``policy="split"``: one request per question, as the
bare loop sends, so the ratio is fanout's own cost (intake, planning, limiter,
retry layer, bookkeeping) and nothing else. Target: >= 0.9 x the bare loop.
The default policy's figure is printed beside it, labelled: with 1-token answers
``auto`` merges them, which is a measure of merging, not of overhead.

Each round also records the client process's CPU time per completion on each side
(``time.process_time``): the server has its own core, so at saturation the client's
CPU is what limits, and it is less disturbed than wall time by other work on a shared
machine. The ratio is printed as the best of each side and as the median of the
rounds' side-by-side ratios. The client's connect timeout is raised from the SDK's 5 s
to 60 s (on both sides): on a loaded two-core machine opening 200 connections at once
can take longer, and a benchmark that dies of it measures nothing.

Run: ``python benchmarks/overhead.py [N] [ROUNDS]``
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from typing import Any

import openai
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


async def with_fanout(
    client: AsyncOpenAI, questions: list[str], policy: str, peak: list[int] | None = None
) -> float:
    fo = fanout.Fanout(client, model="sim-1", limits=fanout.Limits(max_concurrency=CONCURRENCY))
    start = time.perf_counter()
    answers = await fo.ask_many(questions, policy=policy)
    elapsed = time.perf_counter() - start
    assert answers.report.answered == len(questions)
    if peak is not None:
        peak.append(answers.report.peak_concurrency)
    return len(questions) / elapsed


async def _timed(run: Any) -> tuple[float, float]:
    """(completions/s, client CPU seconds) of one measured run."""
    cpu = time.process_time()
    rate = await run
    return rate, time.process_time() - cpu


async def run(base_url: str, n: int, rounds: int) -> dict[str, Any]:
    client = AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0,
                         timeout=openai.Timeout(600.0, connect=60.0))  # fmt: skip
    await bare(client, [f"warm {i}" for i in range(CONCURRENCY)])
    await with_fanout(client, [f"warm fanout {i}" for i in range(CONCURRENCY)], "split")
    runs: dict[str, list[float]] = {"bare": [], "split": []}
    cpu: dict[str, list[float]] = {"bare": [], "split": []}
    peaks: list[int] = []
    for round_ in range(rounds):
        qs = [f"tiny question {round_}-{i}" for i in range(n)]
        rate, seconds = await _timed(bare(client, qs))
        runs["bare"].append(rate)
        cpu["bare"].append(seconds / n)
        qs = [f"tiny question {round_}-{i}-split" for i in range(n)]
        rate, seconds = await _timed(with_fanout(client, qs, "split", peaks))
        runs["split"].append(rate)
        cpu["split"].append(seconds / n)
    qs = [f"tiny question auto-{i}" for i in range(n)]
    auto = await with_fanout(client, qs, "auto")
    await client.close()
    return {"runs": runs, "cpu": cpu, "peaks": peaks, "auto": auto}


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    with sim_process("--time-scale", "1000", "--rtt-ms", "0", "--answer-tokens", "1") as url:
        got = asyncio.run(run(url, n, rounds))
    runs, cpu = got["runs"], got["cpu"]
    best = {side: max(rates) for side, rates in runs.items()}
    ratio = best["split"] / best["bare"]
    paired = statistics.median(s / b for s, b in zip(runs["split"], runs["bare"], strict=True))
    cpu_us = {side: 1e6 * min(seconds) for side, seconds in cpu.items()}
    auto_ratio = got["auto"] / best["bare"]
    print("rounds (completions/s):")
    for side in ("bare", "split"):
        print(f"  {side:5s} " + "  ".join(f"{r:6,.0f}" for r in runs[side]))
    print(f"bare gather+semaphore:             {best['bare']:,.0f} completions/s (best)")
    print(f"fanout.ask_many, policy='split':   {best['split']:,.0f} completions/s (best)")
    print(f"overhead ratio split/bare:         {ratio:.3f} best of each, {paired:.3f} median of "
          f"the rounds side by side  (target >= 0.9)")  # fmt: skip
    print(f"client CPU per completion:         bare {cpu_us['bare']:,.0f} us, split "
          f"{cpu_us['split']:,.0f} us (least of the rounds)")  # fmt: skip
    print(f"fanout's peak in flight:           {max(got['peaks'])} (bare: {CONCURRENCY})")
    print(f"policy='auto' (merges 1-token answers; not overhead): {got['auto']:,.0f}/s, "
          f"{auto_ratio:.3f} x bare")  # fmt: skip
    save("overhead", {"n": n, "concurrency": CONCURRENCY, "rounds": rounds,
                      "bare_per_s": round(best["bare"], 1),
                      "fanout_split_per_s": round(best["split"], 1), "ratio": round(ratio, 3),
                      "ratio_paired_median": round(paired, 3),
                      "runs_per_s": {k: [round(r, 1) for r in v] for k, v in runs.items()},
                      "cpu_us_per_completion": {k: round(v, 1) for k, v in cpu_us.items()},
                      "fanout_peak_in_flight": max(got["peaks"]),
                      "fanout_auto_per_s": round(got["auto"], 1),
                      "auto_ratio_not_overhead": round(auto_ratio, 3)})  # fmt: skip


if __name__ == "__main__":
    main()
