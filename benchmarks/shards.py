"""A JSONL job on 1, 2 and 4 processes: ``fanout run --shard K/N`` sharing one redis.

Two phases, each against one ``fanout sim`` process and one ``redis-server``, every
shard a ``fanout run`` process of its own (``--policy split``: one request per
question, so requests/s is questions/s):

throughput  tiny answers (1 token, 1 ms round trip, 1 ms decode step): the client
            side is the bottleneck, each request costing a process CPU, not waiting.
            The shared limit, ``--rpm`` through ``--redis`` and policed by the
            simulator, is high (``THROUGHPUT_RPM``), so that it holds no process back:
            every request still takes its slot in redis. Requests/s = questions ÷ the
            wall time from starting the N processes to the last one's exit, and the
            same without start-up: questions ÷ the longest job time a shard reports.
limit       4 shards on a shared limit below what they push (``--limit-rpm``; by
            default 60 % of the rate the four reached in the throughput phase, so that
            the limit binds however busy the machine is), which the simulator polices
            as a sliding window of ``LIMIT_PERIOD_S``: the 429s it answered (target 0),
            and the rate reached against the limit.

Every phase checks that the shards' outputs hold every id exactly once.

Run: ``python benchmarks/shards.py`` (``--questions 3000``). Needs
``redis-server``. On a machine of 2 cores the simulator, redis and the shards share
them: more processes than free cores cannot add throughput.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import redis_process, save, sim_process, sim_stats

THROUGHPUT_RPM = 600_000  # 10,000 a second: no process, nor four, comes near it
LIMIT_PERIOD_S = 3.0
TINY = ("--answer-tokens", "1", "--rtt-ms", "1", "--step-ms", "1")


def write_questions(path: Path, n: int) -> None:
    with path.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": i, "question": f"Item {i}: what is it?"}) + "\n")


def run_shards(
    src: Path, workdir: Path, n: int, base_url: str, redis_url: str, rpm: int
) -> dict[str, Any]:
    """N ``fanout run --shard K/N`` processes at once, into fresh outputs; their figures."""
    workdir = Path(tempfile.mkdtemp(dir=workdir))
    outs = [workdir / f"out.{k}-of-{n}.jsonl" for k in range(1, n + 1)]
    cmds = [[sys.executable, "-m", "fanout", "run", str(src), str(out), "--shard", f"{k}/{n}",
             "--base-url", base_url, "--model", "sim-1", "--api-key", "sim", "--policy", "split",
             "--redis", redis_url, "--rpm", str(rpm), "--concurrency", "64", "--no-progress"]
            for k, out in enumerate(outs, 1)]  # fmt: skip
    start = time.perf_counter()
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for c in cmds]  # fmt: skip
    results = [p.communicate() for p in procs]
    wall = time.perf_counter() - start
    for p, (out, err) in zip(procs, results, strict=True):
        if p.returncode != 0:
            raise RuntimeError(f"a shard failed ({p.returncode}): {out}{err}")
    jobs = [float(m[1]) for out, _ in results if (m := re.search(r"in ([\d.]+)s", out))]
    ids = Counter(json.loads(line)["id"] for out in outs for line in out.open())
    questions = sum(1 for _ in src.open())
    return {"processes": n, "questions": questions, "wall_s": round(wall, 2),
            "requests_per_s": round(questions / wall, 1),
            "longest_job_s": max(jobs), "requests_per_s_in_job": round(questions / max(jobs), 1),
            "every_id_once": len(ids) == questions and set(ids.values()) == {1}}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=3000)
    parser.add_argument("--limit-questions", type=int, default=1600)
    parser.add_argument("--limit-rpm", type=int, help="default: 60 %% of what 4 pushed")
    parser.add_argument(
        "--share",
        type=float,
        default=1.0,
        help="the shards' --rpm as a share of the endpoint's limit (default 1)",
    )
    parser.add_argument("--only-limit", action="store_true",
                        help="the limit phase alone (give --limit-rpm)")  # fmt: skip
    args = parser.parse_args()
    if args.only_limit and not args.limit_rpm:
        parser.error("--only-limit needs --limit-rpm")
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp, redis_process() as redis:
        work = Path(tmp)
        src = work / "in.jsonl"
        write_questions(src, args.questions)
        sim_args: tuple[str, ...] = ("--rpm", str(THROUGHPUT_RPM), "--limit-period", "60", *TINY)
        for db, n in enumerate(() if args.only_limit else (1, 2, 4)):
            with sim_process(*sim_args) as url:
                row = run_shards(src, work, n, url, f"{redis}/{db}", THROUGHPUT_RPM)
                row["429s"] = sim_stats(url)["rate_limited"]
            rows.append(row)
            print(f"{n} process(es): {row['requests_per_s']:7.1f} requests/s "
                  f"({row['requests_per_s_in_job']:.1f}/s without start-up), "
                  f"{row['429s']} x 429, every id once: {row['every_id_once']}", flush=True)  # fmt: skip
        src_limit = work / "limit.jsonl"
        write_questions(src_limit, args.limit_questions)
        rpm = args.limit_rpm or int(0.6 * rows[-1]["requests_per_s_in_job"] * 60)
        sim_args = (
            "--rpm",
            str(rpm),
            "--limit-period",
            str(LIMIT_PERIOD_S),
            "--sliding",
            *TINY,
        )
        with sim_process(*sim_args) as url:
            limit = run_shards(src_limit, work, 4, url, f"{redis}/9", int(args.share * rpm))
            stats = sim_stats(url)
        limit["429s"] = stats["rate_limited"]
        first = min(r["arrival"] for r in stats["requests"])
        limit["429_at_s"] = [round(r["arrival"] - first, 2) for r in stats["requests"]
                             if r["status"] == 429]  # fmt: skip
        limit["limit_per_s"] = rpm / 60
        limit["shards_rpm_share"] = args.share
        print(f"4 processes paced at {args.share:g} x a {rpm / 60:.0f}/s limit (a sliding window of "
              f"{LIMIT_PERIOD_S:g} s): {limit['429s']} x 429, "
              f"{limit['requests_per_s_in_job']:.1f} requests/s in the job, every id once: "
              f"{limit['every_id_once']}; 429s at {limit['429_at_s']} s")  # fmt: skip
    name = f"shards_limit_{args.share:g}" if args.only_limit else "shards"
    path = save(name, {"throughput": rows, "at_the_limit": limit})
    print(f"written to {path}")


if __name__ == "__main__":
    main()
