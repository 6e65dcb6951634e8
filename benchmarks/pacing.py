"""Pacing, limits and retries against an endpoint that polices like a hosted API.

Six cases, each run in its own process against ``fanout sim`` in another, with the
policy fixed to ``split`` (one request per question) so that what is measured is the
pacing and the retry layer, not the planner:

(a)  200 questions, ``Limits(rpm=200)``; the endpoint allows 200 rpm, policed as a
     sliding window of 3 s (at most 10 requests in any 3 s).
(a2) the same through redis: 4 processes x 100 questions sharing
     ``Limits(rpm=1000, backend=redis://...)``; the endpoint 1,000 rpm per 3 s.
(b)  90 questions, ``Limits(tpm=...)`` equal to the endpoint's, policed per second.
(c)  no ``Limits`` at all; the endpoint allows 30 rpm over a 60 s sliding window; 45
     questions.
(d)  300 questions, 20 % sporadic faults (500, 503, connection resets), 16 in flight,
     against the same call without faults.
(e)  default settings; the endpoint never answers one request (it hangs).
(f)  a JSONL job on a key that runs out of quota: requests sent after the first
     ``insufficient_quota``.

Cases (a), (a2) and (b) run in real time, as stated: a policing window of 3 s or 1 s
is short enough, and the client's own delays (a first connection, the first
request's set-up) do not shrink with a simulated clock. In (c)-(f) model time runs
``SCALE`` times faster than wall time (windows, rates and answer times alike), so the
60 s window of (c) takes 6 s here; the headers report the limits per wall minute,
which is what a client paces to. Ideal times:
(a) a client that knows the window sends 10, then 10 more each time a window ends:
(ceil(200/10) - 1) windows; (a2) the rate: 400 / 1000 per minute; (c) 30 at once, the
other 15 when the window ends.

Run: ``python benchmarks/pacing.py`` (every case; ``--case a`` for one).
Needs ``redis-server`` on the PATH for (a2) (skipped without it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _common import free_port, save, sim_process, sim_stats
from openai import AsyncOpenAI

import fanout
from fanout.jobs import run_jsonl

SCALE = 10.0
REAL_TIME = 1.0
CASES = ("a", "a2", "b", "c", "d", "e", "f")
TARGETS = {
    "a": "0 x 429, wall <= 1.05 x ideal",
    "a2": "0 x 429, wall <= 1.05 x ideal",
    "b": "<= 1 x 429",
    "c": "<= 3 % 429s, wall <= 1.3 x ideal",
    "d": "wall <= 1.5 x fault-free, 0 lost, <= 1.3 retries per fault",
    "e": "hung request abandoned and retried within a bound from the endpoint model",
    "f": "0 requests after the first insufficient_quota",
}


def _sim(*args: str, scale: float = SCALE) -> Any:
    return sim_process("--time-scale", str(scale), "--rtt-ms", "20", *args)


def _requests(base_url: str) -> list[dict[str, Any]]:
    return list(sim_stats(base_url)["requests"])


async def _ask(base_url: str, n: int, **kwargs: Any) -> tuple[float, fanout.Answers]:
    client = AsyncOpenAI(base_url=base_url, api_key="sim", timeout=600)
    start = time.perf_counter()
    answers = await fanout.ask_many(
        [f"question {i} {{{{tokens=3}}}}" for i in range(n)], client=client, model="sim-1",
        policy="split", on_error="return", **kwargs,
    )  # fmt: skip
    wall = time.perf_counter() - start
    await client.close()
    return wall, answers


def case_a() -> dict[str, Any]:
    window, rpm, n = 3.0, 200, 200
    per_window = round(rpm * window / 60)
    with _sim(
        "--rpm", str(rpm), "--limit-period", str(window), "--sliding", scale=REAL_TIME
    ) as url:
        wall, answers = asyncio.run(_ask(url, n, limits=fanout.Limits(rpm=rpm)))
        stats = sim_stats(url)
    ideal = (math.ceil(n / per_window) - 1) * window
    return {"429s": stats["rate_limited"], "wall_s": wall, "ideal_s": ideal,
            "ratio": wall / ideal, "answered": answers.report.answered, "questions": n,
            "met": stats["rate_limited"] == 0 and wall <= 1.05 * ideal}  # fmt: skip


def case_a2() -> dict[str, Any]:
    server = shutil.which("redis-server")
    if server is None:
        return {"skipped": "redis-server is not on the PATH"}
    window, rpm, per_process = 3.0, 1000, 100
    port = free_port()
    redis = subprocess.Popen([server, "--port", str(port), "--save", "", "--appendonly", "no"],
                             stdout=subprocess.DEVNULL)  # fmt: skip
    try:
        time.sleep(0.5)
        with _sim("--rpm", str(rpm), "--limit-period", str(window), "--sliding",
                  scale=REAL_TIME) as url:  # fmt: skip
            redis_url = f"redis://127.0.0.1:{port}/0"
            workers = [_spawn_worker(url, redis_url, rpm, per_process, f"w{i}") for i in range(4)]
            for w in workers:
                assert w.stdout is not None and w.stdout.readline().strip() == "ready"
            start_at = time.time() + 0.3
            for w in workers:
                assert w.stdin is not None
                w.stdin.write(f"{start_at}\n")
                w.stdin.flush()
            outs = [json.loads(w.communicate()[0]) for w in workers]
            stats = sim_stats(url)
    finally:
        redis.terminate()
        redis.wait()
    wall = max(o["finished_at"] for o in outs) - start_at
    ideal = 4 * per_process / (rpm / 60)
    answered = sum(o["answered"] for o in outs)
    return {"429s": stats["rate_limited"], "wall_s": wall, "ideal_s": ideal,
            "ratio": wall / ideal, "answered": answered, "questions": 4 * per_process,
            "refused": _refusals(stats["requests"], window),
            "met": stats["rate_limited"] == 0 and wall <= 1.05 * ideal}  # fmt: skip


def _refusals(records: list[dict[str, Any]], window: float) -> list[dict[str, Any]]:
    """Each 429: when (s after the first request), and how many requests the
    endpoint had let through (it charges them on arrival) in the window before it."""
    admitted = sorted(r["arrival"] for r in records if r["status"] != 429)
    first = min(r["arrival"] for r in records) if records else 0.0
    return [
        {"at_s": round(r["arrival"] - first, 3),
         "admitted_in_window": sum(r["arrival"] - window < a <= r["arrival"] for a in admitted)}
        for r in records if r["status"] == 429
    ]  # fmt: skip


def _spawn_worker(url: str, redis_url: str, rpm: int, n: int, name: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, __file__, "--worker", url, redis_url, str(rpm), str(n), name]
    return subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)


async def _worker(base_url: str, redis_url: str, rpm: float, n: int, name: str) -> None:
    client = AsyncOpenAI(base_url=base_url, api_key="sim")
    limits = fanout.Limits(rpm=rpm, backend=redis_url, max_concurrency=32)
    fo = fanout.Fanout(client, model="sim-1", limits=limits, policy="split")
    await fo._transport.check_limiter()
    print("ready", flush=True)
    start_at = float(await asyncio.to_thread(sys.stdin.readline))
    await asyncio.sleep(max(0.0, start_at - time.time()))
    answers = await fo.ask_many([f"{name} question {i} {{{{tokens=3}}}}" for i in range(n)],
                                on_error="return")  # fmt: skip
    print(json.dumps({"finished_at": time.time(), "answered": answers.report.answered}))
    await client.close()


def case_b() -> dict[str, Any]:
    n, max_tokens = 90, 50
    # About 10 requests a second: each charged its prompt plus max_tokens at admission.
    tpm = 600 * (15 + max_tokens)
    with _sim("--tpm", str(tpm), "--limit-period", "1", "--sliding", scale=REAL_TIME) as url:
        wall, answers = asyncio.run(
            _ask(url, n, limits=fanout.Limits(tpm=tpm), max_tokens=max_tokens)
        )
        stats = sim_stats(url)
    return {"429s": stats["rate_limited"], "wall_s": wall, "answered": answers.report.answered,
            "questions": n, "refused": _refusals(stats["requests"], 1.0),
            "met": stats["rate_limited"] <= 1}  # fmt: skip


def case_c() -> dict[str, Any]:
    rpm, window, n = 30, 60.0, 45
    with _sim("--rpm", str(rpm), "--limit-period", str(window), "--sliding") as url:
        wall, answers = asyncio.run(_ask(url, n))
        stats = sim_stats(url)
    ideal = window / SCALE  # 30 at once; the other 15 when the window ends
    share = stats["rate_limited"] / len(stats["requests"])
    return {"429s": stats["rate_limited"], "429_share": share, "wall_s": wall,
            "ideal_s": ideal, "ratio": wall / ideal, "answered": answers.report.answered,
            "questions": n, "met": share <= 0.03 and wall <= 1.3 * ideal}  # fmt: skip


def case_d() -> dict[str, Any]:
    n = 300
    kwargs: dict[str, Any] = {"limits": fanout.Limits(max_concurrency=16)}
    with _sim("--answer-tokens", "20") as url:
        # The better of two fault-free runs: the first pays for warming up the client.
        clean, clean_answers = min(asyncio.run(_ask(url, n, **kwargs)) for _ in range(2))
    faults = ["--fault", "500=0.08", "--fault", "503=0.06", "--fault", "reset=0.06"]
    with _sim("--answer-tokens", "20", *faults, "--seed", "7") as url:
        wall, answers = asyncio.run(_ask(url, n, **kwargs))
        stats = sim_stats(url)
    injected = sum(stats["faults"].values())
    lost = n - answers.report.answered + clean_answers.report.failed
    per_fault = answers.report.retries / injected if injected else 0.0
    ratio = wall / clean
    return {"faults": injected, "retries": answers.report.retries, "retries_per_fault": per_fault,
            "wall_s": wall, "fault_free_s": clean, "ratio": ratio, "lost": lost,
            "met": ratio <= 1.5 and lost == 0 and per_fault <= 1.3}  # fmt: skip


def case_e() -> dict[str, Any]:
    warm, n = 8, 20
    # The 12th request (the 4th question after the warm-up) never gets an answer.
    with _sim("--answer-tokens", "20", "--fault-at", f"{warm + 4}=hang") as url:
        wall, deadline, held = asyncio.run(_hung(url, warm, n))
    return {"deadline_s": deadline, "hung_question_answered_after_s": held, "wall_s": wall,
            "sdk_timeout_s": 600.0, "met": held <= deadline + 5.0}  # fmt: skip


async def _hung(url: str, warm: int, n: int) -> tuple[float, float, float]:
    client = AsyncOpenAI(base_url=url, api_key="sim")
    fo = fanout.Fanout(client, model="sim-1", policy="split", on_error="return",
                       limits=fanout.Limits(max_concurrency=4))  # fmt: skip
    # A Fanout that has seen the endpoint answer (default retry settings throughout).
    await fo.ask_many([f"warm {i} {{{{tokens=20}}}}" for i in range(warm)])
    deadline = fo._transport.deadline({"model": "sim-1"}, 20, fo.retry) or 0.0
    start = time.perf_counter()
    answers = await fo.ask_many([f"question {i} {{{{tokens=20}}}}" for i in range(n)])
    wall = time.perf_counter() - start
    held = max(a.latency_s or 0.0 for a in answers)
    assert answers.report.answered == n
    await client.close()
    return wall, deadline, held


def case_f() -> dict[str, Any]:
    n = 200
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "q.jsonl", Path(tmp) / "a.jsonl"
        src.write_text("".join(json.dumps({"id": i, "question": f"q{i}?"}) + "\n"
                               for i in range(n)))  # fmt: skip
        with _sim("--answer-tokens", "3", "--quota", "400") as url:
            summary, sent, refused_at = asyncio.run(_quota_job(url, src, dst))
            requests = _requests(url)
    refused = [r for r in requests if r.get("error_code") == "insufficient_quota"]
    # Seen from the client: requests that left after the first refusal came back.
    after = sum(1 for t in sent if t > refused_at)
    return {"requests": len(requests), "refused": len(refused), "sent_after_first_refusal": after,
            "answered": summary.answered, "stopped_for_quota": summary.stopped_for_quota,
            "met": after == 0 and summary.stopped_for_quota}  # fmt: skip


async def _quota_job(url: str, src: Path, dst: Path) -> tuple[Any, list[float], float]:
    import httpx2 as httpx  # what the openai SDK (3.x) is built on

    sent: list[float] = []
    refused_at = [math.inf]

    async def on_request(request: httpx.Request) -> None:
        sent.append(time.monotonic())

    async def on_response(response: httpx.Response) -> None:
        if response.status_code == 429:
            refused_at[0] = min(refused_at[0], time.monotonic())

    http = httpx.AsyncClient(event_hooks={"request": [on_request], "response": [on_response]})
    client = AsyncOpenAI(base_url=url, api_key="sim", http_client=http)
    fo = fanout.Fanout(client, model="sim-1", policy="split")
    summary = await run_jsonl(fo, src, dst)
    await client.close()
    return summary, sent, refused_at[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", choices=CASES)
    parser.add_argument("--worker", nargs=5)
    args = parser.parse_args()
    if args.worker:
        url, redis_url, rpm, n, name = args.worker
        asyncio.run(_worker(url, redis_url, float(rpm), int(n), name))
        return
    if args.case:
        result = globals()[f"case_{args.case}"]()
        print(json.dumps(result))
        return
    results = {}
    for case in CASES:  # one process per case
        out = subprocess.run([sys.executable, __file__, "--case", case], capture_output=True,
                             text=True, check=True, env={**os.environ})  # fmt: skip
        results[case] = json.loads(out.stdout.strip().splitlines()[-1])
        r = results[case]
        shown = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in r.items()}
        print(f"({case}) {shown}\n     target: {TARGETS[case]}", flush=True)
    save("pacing", {"time_scale": SCALE, "results": results})


if __name__ == "__main__":
    main()
