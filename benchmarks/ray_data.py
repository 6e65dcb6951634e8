"""fanout.ray beside ray.data.llm's HTTP processor: 1, 2 and 4 actors at one shared limit.

Each case runs a fresh ``fanout sim`` in its own process, policing ``--rpm`` as a
sliding window of ``--limit-period`` seconds (as hosted APIs police a per-minute limit
over a shorter window), on a local Ray (``ray.init(num_cpus=2)``, on 127.0.0.1), and
answers the same ``--rows`` questions (one line each):

* ``fanout.ray`` — ``fanout.ray.answer(..., limits=Limits(rpm=R), redis_url=...,
  concurrency=N)``, policy ``split`` (one request a row, as the Ray processor sends) and
  ``auto`` (the plan per batch: it may merge);
* ``ray.data.llm`` — ``HttpRequestProcessorConfig(url=..., qps=R/60, max_retries=3,
  concurrency=N)``: ``qps`` is "the maximum number of requests per second to avoid rate
  limit" (its docstring), set to the endpoint's limit, retries on as its 429 handling
  needs; and, with more than one worker, ``qps=R/60/N``, the limit divided over the workers by
  hand, which its docs do not ask for. A row out of retries fails its block; the run
  goes on (``DataContext.max_errored_blocks = -1``) and the rows it lost are counted.

Columns: wall time, 429s the simulator sent, rows answered, requests the simulator saw,
and the most requests it saw in any second. Then, for the paper estimate in
docs/ray.md: one actor's ceiling with no limit (tiny answers), and the redis round
trips per request of a limited run (``INFO commandstats``).

    python benchmarks/ray_data.py            # about 11 minutes on 2 cores
    python benchmarks/ray_data.py --rpm 1800 --ceiling-rows 0 --save-as ray_data_1800
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
import uuid
import warnings
from typing import Any

from _common import redis_process, save, sim_process, sim_stats

QUICK = ("--answer-tokens", "5", "--rtt-ms", "30", "--step-ms", "10")


def start_ray() -> Any:
    import ray
    import ray.data

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False,
             runtime_env={"env_vars": {"FANOUT_MEMORY": "off"}})  # fmt: skip
    return ray


class SimClient:
    """Makes the AsyncOpenAI client in each actor."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url

    def __call__(self) -> Any:
        from openai import AsyncOpenAI

        return AsyncOpenAI(base_url=self.base_url, api_key="sim", timeout=60)


def questions(ray: Any, n: int) -> Any:
    """``n`` rows in blocks of 64 (a batch of either system), so that every actor of a
    pool has blocks to take."""
    items = [{"id": i, "question": f"Item {i}: what is it?"} for i in range(n)]
    return ray.data.from_items(items, override_num_blocks=max(1, -(-n // 64))).materialize()


def peak_per_s(stats: dict[str, Any]) -> int:
    """The most requests the simulator saw arrive in any one second."""
    times = sorted(r["arrival"] for r in stats["requests"])
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] >= 1.0:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def run_fanout(
    ray: Any, ds: Any, url: str, redis: str, rpm: int, n: int, policy: str
) -> dict[str, Any]:
    import fanout
    import fanout.ray

    out = fanout.ray.answer(
        ds, client=SimClient(url), model="sim-1", policy=policy, concurrency=n, batch_size=50,
        limits=fanout.Limits(rpm=rpm, namespace=f"bench-{uuid.uuid4().hex[:8]}"),
        redis_url=redis,
    )  # fmt: skip
    rows = out.take_all()
    answered = sum(1 for r in rows if r["error"] is None and r["answer"])
    return {"rows_out": len(rows), "rows_answered": answered,
            "plans": dict(fanout.ray.summarize(rows).plans)}  # fmt: skip


def run_ray_llm(ray: Any, ds: Any, url: str, qps: int, n: int) -> dict[str, Any]:
    from ray.data.llm import HttpRequestProcessorConfig, build_processor

    config = HttpRequestProcessorConfig(
        url=f"{url}/chat/completions", headers={"Authorization": "Bearer sim"},
        qps=qps, max_retries=3, concurrency=n, batch_size=64,
        http_request_stage={"num_cpus": 0.25},  # as fanout.ray's actors: 4 fit on 2 CPUs
    )  # fmt: skip
    processor = build_processor(
        config,
        preprocess=lambda row: {"payload": {"model": "sim-1", "messages": [
            {"role": "user", "content": row["question"]}]}},
        postprocess=lambda row: {"id": row["id"],
                                 "answer": row["http_response"]["choices"][0]["message"]["content"]},
    )  # fmt: skip
    out = processor(ds)
    # A row out of retries fails its block: go on, and count the rows lost. (A Dataset
    # runs under a copy of the DataContext made when it was created: set it on its own.)
    out.context.max_errored_blocks = -1
    rows = out.take_all()
    answered = sum(1 for r in rows if r.get("answer"))
    return {"rows_out": len(rows), "rows_answered": answered}


def one_case(ray: Any, ds: Any, system: str, n: int, rpm: int, period: float, redis: str,
             rows: int) -> dict[str, Any]:  # fmt: skip
    sim_args = ("--rpm", str(rpm), "--limit-period", str(period), "--sliding", *QUICK)
    conn = redis_client(redis)
    with sim_process(*sim_args) as url:
        conn.config_resetstat()
        start = time.perf_counter()
        if system == "fanout.ray split":
            got = run_fanout(ray, ds, url, redis, rpm, n, "split")
        elif system == "fanout.ray auto":
            got = run_fanout(ray, ds, url, redis, rpm, n, "auto")
        elif system == "ray.data.llm qps=limit":
            got = run_ray_llm(ray, ds, url, max(1, rpm // 60), n)
        else:
            got = run_ray_llm(ray, ds, url, max(1, rpm // 60 // n), n)
        wall = time.perf_counter() - start
        stats = sim_stats(url)
    sent = len(stats["requests"])
    used = redis_use(conn, sent) if system.startswith("fanout") else {}
    conn.close()
    return {"system": system, "actors": n, "rows": rows, "wall_s": round(wall, 1),
            "429s": stats["rate_limited"], **got, "requests": sent,
            "peak_per_s": peak_per_s(stats), "limit_per_s": rpm / 60, **used}  # fmt: skip


def redis_client(url: str) -> Any:
    import redis

    return redis.Redis.from_url(url)


def redis_use(conn: Any, sent: int) -> dict[str, Any]:
    """Redis per request since the last ``CONFIG RESETSTAT``: round trips of the
    limiter's scripts (``EVALSHA``), every command (those the scripts run included),
    and connections opened (``HELLO``)."""
    stats = {k.removeprefix("cmdstat_"): v["calls"] for k, v in conn.info("commandstats").items()}
    commands = sum(v for k, v in stats.items() if not k.startswith("config"))
    return {"redis_scripts_per_request": round(stats.get("evalsha", 0) / sent, 2),
            "redis_commands_per_request": round(commands / sent, 2),
            "redis_connections": stats.get("hello", 0)}  # fmt: skip


def ceiling(ray: Any, redis: str, rows: int) -> dict[str, Any]:
    """One actor, no limit the endpoint could reach (tiny answers, limits in redis):
    the requests a second one actor sends; and redis commands per request."""
    ds = questions(ray, rows)
    conn = redis_client(redis)
    with sim_process("--answer-tokens", "1", "--rtt-ms", "1", "--step-ms", "1") as url:
        conn.config_resetstat()
        start = time.perf_counter()
        got = run_fanout(ray, ds, url, redis, 600_000, 1, "split")
        wall = time.perf_counter() - start
        stats = sim_stats(url)
    sent = len(stats["requests"])
    used = redis_use(conn, sent)
    conn.close()
    first = min(r["arrival"] for r in stats["requests"])
    last = max(r["arrival"] for r in stats["requests"])
    return {"rows": rows, "wall_s": round(wall, 1), "requests": sent,
            "requests_per_s": round(sent / wall, 1),
            "requests_per_s_sending": round(sent / max(last - first, 1e-9), 1),
            "rows_answered": got["rows_answered"], **used}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=320)
    parser.add_argument("--rpm", type=int, default=600, help="the shared limit (per minute)")
    parser.add_argument("--limit-period", type=float, default=5.0)
    parser.add_argument("--actors", default="1,2,4")
    parser.add_argument("--no-ray-split", action="store_true",
                        help="leave out ray.data.llm with qps = limit / workers")  # fmt: skip
    parser.add_argument("--ceiling-rows", type=int, default=2000, help="0: no ceiling run")
    parser.add_argument("--save-as", default="ray_data", help="results/<name>.json")
    args = parser.parse_args()
    systems = ["fanout.ray split", "fanout.ray auto", "ray.data.llm qps=limit"]
    ray = start_ray()
    table: list[dict[str, Any]] = []
    with redis_process() as redis:
        ds = questions(ray, args.rows)
        for n in (int(a) for a in args.actors.split(",")):
            split = [] if args.no_ray_split or n == 1 else ["ray.data.llm qps=limit/N"]
            for system in systems + split:
                row = one_case(ray, ds, system, n, args.rpm, args.limit_period, redis, args.rows)
                table.append(row)
                print(f"{system:26} {n} actor(s): {row['wall_s']:6.1f} s, {row['429s']:4} x 429, "
                      f"{row['rows_answered']:4}/{args.rows} rows answered, {row['requests']:4} "
                      f"requests, peak {row['peak_per_s']}/s (limit {row['limit_per_s']:g}/s)"
                      + (f"; redis: {row['redis_scripts_per_request']} scripts, "
                         f"{row['redis_commands_per_request']} commands a request"
                         if "redis_connections" in row else ""), flush=True)  # fmt: skip
        top = ceiling(ray, redis, args.ceiling_rows) if args.ceiling_rows else None
        if top:
            print(f"one actor, no limit: {top['requests_per_s']} requests/s "
                  f"({top['requests_per_s_sending']}/s from its first request to its last); "
                  f"{top['redis_scripts_per_request']} redis scripts "
                  f"({top['redis_commands_per_request']} commands) a request, "
                  f"{top['redis_connections']} connections", flush=True)  # fmt: skip
    ray.shutdown()
    path = save(args.save_as, {"rpm": args.rpm, "limit_period_s": args.limit_period,
                             "cases": table, "ceiling": top})  # fmt: skip
    print(f"written to {path}")


if __name__ == "__main__":
    asyncio.set_event_loop_policy(None)
    os.environ.setdefault("RAY_DEDUP_LOGS", "0")
    main()
