"""Memory of streamed questions: ``Fanout.as_completed`` over a generator of N tiny
questions, split one request each, against the simulator in its own process.

    python benchmarks/stream_memory.py [N ...]      (default: 10000 100000)

Each N runs in a fresh child process, which reports its peak resident memory
(``ru_maxrss``) above what it held once fanout was imported and the client made, and
its wall time. The policy and settings are fixed (``policy="split"``, 64 in flight,
one-token answers, the simulator at ``time_scale`` 1000, no endpoint memory, no cache)
so that the figure is the engine's bookkeeping per question, not a change of plan.
README.md's promise: memory follows the in-flight window, not N.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from collections.abc import Iterator

from _common import save, sim_process


def questions(n: int) -> Iterator[str]:
    for i in range(n):
        yield f"Tiny question {i}?"


async def child(n: int, base_url: str) -> None:
    from openai import AsyncOpenAI

    import fanout

    client = AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0)
    fo = fanout.Fanout(client, model="sim-1", policy="split", memory=False)
    base_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    answered = 0
    async for answer in fo.as_completed(questions(n), max_tokens=1):
        assert answer.error is None, answer.error
        answered += 1
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    await client.close()
    assert answered == n
    result = {
        "questions": n,
        "wall_s": round(wall, 1),
        "peak_rss_above_start_mib": round((peak_kib - base_kib) / 1024, 1),
        "peak_rss_mib": round(peak_kib / 1024, 1),
    }
    print(json.dumps(result))


def main(sizes: list[int]) -> None:
    runs = []
    with sim_process("--time-scale", "1000", "--answer-tokens", "1") as base_url:
        for n in sizes:
            out = subprocess.run(
                [sys.executable, __file__, "--child", str(n), base_url],
                capture_output=True,
                text=True,
                check=True,
            )
            runs.append(json.loads(out.stdout.strip().splitlines()[-1]))
            r = runs[-1]
            print(
                f"{n:>7} questions: peak RSS {r['peak_rss_mib']:.1f} MiB, "
                f"{r['peak_rss_above_start_mib']:.1f} MiB above the start, {r['wall_s']:.1f} s"
            )
    if len(runs) >= 2:
        ratio = runs[-1]["peak_rss_above_start_mib"] / max(runs[0]["peak_rss_above_start_mib"], 0.1)
        print(f"above the start, {sizes[-1]} / {sizes[0]}: {ratio:.2f}x (target <= 1.5x)")
    save("stream_memory", {"runs": runs})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[10_000, 100_000])
    parser.add_argument("--child", nargs=2, metavar=("N", "BASE_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        asyncio.run(child(int(args.child[0]), args.child[1]))
    else:
        main(args.sizes)
