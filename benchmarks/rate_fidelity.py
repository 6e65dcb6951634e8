"""Rate-limit fidelity: 600 requests at a 600 requests-per-minute limit.

The simulator polices 600 rpm over 1-second windows (10 requests per model
second) and runs 10x faster, so a wall minute is 6 s and the ideal time for 600
requests is N / rate = 6 s. fanout is given the same limit (per wall minute) and
learns the 1-second window from the headers. Reports wall time / ideal (target
<= 1.05) and the 429s (target 0). A second run gives fanout no limits at all, so
it must learn them from headers.

Run: ``python benchmarks/rate_fidelity.py``
"""

from __future__ import annotations

import asyncio
import time

from _common import save, sim_process, sim_stats
from openai import AsyncOpenAI

import fanout

N = 600
RPM = 600
SCALE = 10


async def run(base_url: str, limits: fanout.Limits) -> tuple[float, int, int]:
    client = AsyncOpenAI(base_url=base_url, api_key="sim")
    fo = fanout.Fanout(client, model="sim-1", limits=limits)
    start = time.perf_counter()
    answers = await fo.ask_many([f"question {i}" for i in range(N)])
    wall = time.perf_counter() - start
    await client.close()
    return wall, answers.report.rate_limited, answers.report.answered


def main() -> None:
    ideal = N / (RPM * SCALE / 60)
    rows = {}
    for name, limits in (
        ("configured", fanout.Limits(rpm=RPM * SCALE, max_concurrency=100)),
        ("learned", fanout.Limits(max_concurrency=100)),
    ):
        args = ["--time-scale", str(SCALE), "--rpm", str(RPM), "--limit-period", "1",
                "--answer-tokens", "2", "--rtt-ms", "20"]  # fmt: skip
        with sim_process(*args) as url:
            wall, limited, answered = asyncio.run(run(url, limits))
            seen_429 = sim_stats(url)["rate_limited"]
        rows[name] = {"wall_s": round(wall, 3), "ratio_to_ideal": round(wall / ideal, 3),
                      "rate_limited_seen_by_fanout": limited, "rate_limited_sent_by_sim": seen_429,
                      "answered": answered}  # fmt: skip
        print(f"{name:>10}: {wall:.2f}s for {N} requests, ideal {ideal:.2f}s, "
              f"ratio {wall / ideal:.3f}, 429s {seen_429}, answered {answered}")  # fmt: skip
    save("rate_fidelity", {"n": N, "rpm": RPM, "time_scale": SCALE, "ideal_s": ideal, **rows})


if __name__ == "__main__":
    main()
