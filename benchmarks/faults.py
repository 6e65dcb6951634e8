"""Faults: 1,000 questions with 10 % 5xx and 5 % connection resets injected.

Reports the share of answers delivered (target 100 %), whether every answer is
the one for its question, retries per injected fault, and the wall time as a
ratio to the same run without faults (same process, same settings).

Run: ``python benchmarks/faults.py``
"""

from __future__ import annotations

import asyncio
import time

from _common import save, sim_process, sim_stats
from openai import AsyncOpenAI

import fanout
from fanout.sim import answer_for

N = 1000
FAULTS = [
    "--fault",
    "500=0.04",
    "--fault",
    "502=0.03",
    "--fault",
    "503=0.03",
    "--fault",
    "reset=0.05",
]


async def run(base_url: str) -> tuple[float, fanout.Answers]:
    client = AsyncOpenAI(base_url=base_url, api_key="sim")
    questions = [f"question {i} {{{{tokens={5 + i % 40}}}}}" for i in range(N)]
    start = time.perf_counter()
    answers = await fanout.ask_many(
        questions, client=client, model="sim-1", on_error="return",
        limits=fanout.Limits(max_concurrency=100),
        retry=fanout.Retry(initial_wait=0.05, max_wait=1.0, max_attempts=10),
    )  # fmt: skip
    wall = time.perf_counter() - start
    await client.close()
    for q, a in zip(questions, answers, strict=True):
        assert a.text is None or a.text == answer_for(q, 5 + a.index % 40), (
            f"answer {a.index} misattributed"
        )
    return wall, answers


def main() -> None:
    common = ["--time-scale", "20", "--seed", "11"]
    with sim_process(*common) as url:
        clean_s, _ = asyncio.run(run(url))
    with sim_process(*common, *FAULTS) as url:
        faulty_s, answers = asyncio.run(run(url))
        injected = sum(sim_stats(url)["faults"].values())
    delivered = answers.report.answered / N
    per_fault = answers.report.retries / max(1, injected)
    print(
        f"answers delivered: {answers.report.answered}/{N} ({delivered:.1%}), all matched to their question"
    )
    print(
        f"faults injected: {injected}; retries: {answers.report.retries} ({per_fault:.2f} per fault)"
    )
    print(
        f"wall time: {faulty_s:.2f}s with faults vs {clean_s:.2f}s without (ratio {faulty_s / clean_s:.2f})"
    )
    save("faults", {"n": N, "delivered": answers.report.answered, "faults_injected": injected,
                    "retries": answers.report.retries, "retries_per_fault": round(per_fault, 3),
                    "wall_s_faults": round(faulty_s, 3), "wall_s_clean": round(clean_s, 3),
                    "wall_ratio": round(faulty_s / clean_s, 3)})  # fmt: skip


if __name__ == "__main__":
    main()
