"""One of several processes sharing limits through redis (run by limits/test_redis.py)."""

from __future__ import annotations

import asyncio
import json
import sys
import time

from openai import AsyncOpenAI

import fanout


async def main(base_url: str, redis_url: str, rpm: float, n: int, name: str) -> None:
    client = AsyncOpenAI(base_url=base_url, api_key="shared-key")
    limits = fanout.Limits(rpm=rpm, backend=redis_url, max_concurrency=32)
    fo = fanout.Fanout(client, model="m", limits=limits, policy="split")
    await fo._transport.check_limiter()  # connect before the start line, like a warm worker
    print("ready", flush=True)
    start_at = float(await asyncio.to_thread(sys.stdin.readline))  # when every worker is ready
    await asyncio.sleep(max(0.0, start_at - time.time()))
    answers = await fo.ask_many([f"{name} question {i}" for i in range(n)], on_error="return")
    print(json.dumps({"finished_at": time.time(), "answered": answers.report.answered,
                      "rate_limited": answers.report.rate_limited}))  # fmt: skip
    await client.close()


if __name__ == "__main__":
    b, r, rpm, n, name = sys.argv[1:6]
    asyncio.run(main(b, r, float(rpm), int(n), name))
