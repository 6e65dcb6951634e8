"""How much load the simulator itself can take, so it never limits fanout's benchmarks.

1. Concurrent connections: 600 requests held open at once (long answers), each on
   its own connection; the server's own stats must show them all in flight together.
2. Throughput: tiny completions (1 token, no round trip) with ``time_scale`` high,
   500 connections busy, for 10,000 requests: completions per second.

The server runs in its own process; the load comes from this one over loopback.
Run: ``python benchmarks/sim_capacity.py``
"""

from __future__ import annotations

import asyncio
import json
import time

import httpx
from _common import save, sim_process, sim_stats

BODY = {"model": "sim-1", "messages": [{"role": "user", "content": "hi"}]}


async def hold_connections(base_url: str, n: int) -> int:
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    async with httpx.AsyncClient(limits=limits, timeout=120) as http:
        held = {**BODY, "messages": [{"role": "user", "content": "hold {{tokens=400}}"}]}
        rs = await asyncio.gather(
            *[http.post(f"{base_url}/chat/completions", json=held) for _ in range(n)]
        )
        assert all(r.status_code == 200 for r in rs)
    return int(sim_stats(base_url)["peak_in_flight"])


async def throughput(base_url: str, total: int, concurrency: int) -> float:
    """Completions per second with ``concurrency`` keep-alive connections busy.

    The load comes from a bare asyncio HTTP/1.1 client (one connection per
    worker): httpx's pool grows slow with hundreds of connections and would
    measure itself rather than the server.
    """
    host_port = base_url.split("//", 1)[1].split("/", 1)[0]
    host, port = host_port.split(":")
    body = json.dumps(BODY).encode()
    request = (
        f"POST /v1/chat/completions HTTP/1.1\r\nhost: {host_port}\r\n"
        f"content-type: application/json\r\nauthorization: Bearer sim\r\n"
        f"content-length: {len(body)}\r\n\r\n"
    ).encode() + body
    remaining = total

    async def worker(ready: asyncio.Event) -> int:
        nonlocal remaining
        reader, writer = await asyncio.open_connection(host, int(port))
        await ready.wait()
        done = 0
        while remaining > 0:
            remaining -= 1
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head[:40])
            length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            done += 1
        writer.close()
        return done

    ready = asyncio.Event()
    tasks = [asyncio.create_task(worker(ready)) for _ in range(concurrency)]
    await asyncio.sleep(0.5)  # let every connection open
    start = time.perf_counter()
    ready.set()
    counts = await asyncio.gather(*tasks)
    return sum(counts) / (time.perf_counter() - start)


def main() -> None:
    with sim_process("--time-scale", "20", "--rtt-ms", "0") as url:
        peak = asyncio.run(hold_connections(url, 600))
    with sim_process("--time-scale", "1000", "--rtt-ms", "0", "--answer-tokens", "1") as url:
        rate = asyncio.run(throughput(url, 10_000, 500))
    print(f"concurrent connections held open together: {peak}  (target >= 500)")
    print(f"tiny completions per second, 500 busy connections: {rate:,.0f}  (target >= 500)")
    save("sim_capacity", {"peak_in_flight": peak, "completions_per_s": round(rate, 1)})


if __name__ == "__main__":
    main()
