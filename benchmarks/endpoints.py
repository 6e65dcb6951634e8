"""Several endpoints behind one Fanout, against the best static split and LiteLLM's Router.

Setups (simulators in this process, one model, 500 questions of 50-token answers):

replicas   a fast replica with 8 slots (decode step 15 ms) and a slow one with 64 slots
           (decode step 60 ms: four times slower a token, eight times the slots).
hosted     a rate-limited hosted endpoint (256 slots, 120 rpm, policed by the simulator)
           and an unlimited self-hosted one (64 slots, 60 ms steps).

For each setup:

fanout     ``Fanout(endpoints=[...], policy="split")`` on a cold start: the placement
           learns each endpoint as it goes.
sweep      the best static split, found by a sweep: k questions to the first endpoint
           and 500 - k to the second, both sent at once by a single-endpoint Fanout each
           (``policy="split"``); k = 0, 25, ..., 500, then every 5 around the best. The
           wall of a split is the later of the two.
litellm    LiteLLM's ``Router`` over the same two endpoints (``rpm`` of the hosted one
           given), each routing strategy, every question sent at once with
           ``asyncio.gather`` (LiteLLM's own retries, ``num_retries=3``).

fanout and the sweep run on virtual time (looptime: the simulators' model time, exact
and instant). LiteLLM reads the wall clock (its latencies, its rpm windows), so the
fanout-vs-LiteLLM rows run on the wall clock against simulators ``--time-scale`` times
faster than model time (default 5), fanout again among them; their walls are given in
model seconds (wall × scale), and the hosted endpoint's rpm is given to both in
wall-clock minutes (× scale), as the simulator polices it. Lost: questions without an answer; 429s: as the
simulators counted them.

killed     two ``fanout sim`` processes of 8 slots; the second is killed (SIGKILL) once
           100 answers are in: every question answered once, the report's cool-down.

Run: ``python benchmarks/endpoints.py`` (``--no-litellm`` to skip it; it needs
``pip install litellm``).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import looptime
from _common import save

import fanout
from fanout.testing import open_sim

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no download of its prices

T = TypeVar("T")
N = 500
ANSWER_TOKENS = 50
SETUPS: dict[str, tuple[dict[str, Any], dict[str, Any], fanout.Limits | None]] = {
    "replicas": (
        {"slots": 8, "step_s": 0.015},
        {"slots": 64, "step_s": 0.06},
        None,
    ),
    "hosted": (
        {"slots": 256, "step_s": 0.015, "rpm": 120, "limit_period_s": 60.0},
        {"slots": 64, "step_s": 0.06},
        fanout.Limits(rpm=120),
    ),
}
QUESTIONS = [f"Question number {i}: say something about it." for i in range(N)]


def virtual(body: Awaitable[T]) -> T:
    """Run a coroutine on a loop of virtual time."""
    loop = looptime.new_event_loop(start=0)
    try:
        return loop.run_until_complete(body)
    finally:
        loop.close()


def endpoints(first: Any, second: Any, limits: fanout.Limits | None) -> list[fanout.Endpoint]:
    return [
        fanout.Endpoint(
            client=first.client, name="first", limits=limits, price=fanout.Pricing.free()
        ),
        fanout.Endpoint(client=second.client, name="second", price=fanout.Pricing.free()),
    ]


def scaled(limits: fanout.Limits | None, scale: float) -> fanout.Limits | None:
    """The limits in wall-clock minutes, against a simulator ``scale`` times faster than
    model time (its rpm is per model minute)."""
    if limits is None or limits.rpm is None:
        return limits
    return dataclasses.replace(limits, rpm=limits.rpm * scale)


async def run_fanout(setup: str, scale: float = 1.0) -> dict[str, Any]:
    a, b, limits = SETUPS[setup]
    limits = scaled(limits, scale)
    common = {"answer_tokens": ANSWER_TOKENS, "time_scale": scale}
    async with open_sim(**a, **common) as first, open_sim(**b, **common) as second:
        fo = fanout.Fanout(endpoints=endpoints(first, second, limits), model="m", policy="split")
        loop = asyncio.get_running_loop()
        start = loop.time()
        answers = await fo.ask_many(QUESTIONS, on_error="return")
        wall = (loop.time() - start) * scale
        r = answers.report
        return {
            "wall_s": round(wall, 2),
            "lost": sum(1 for x in answers if x.error is not None),
            "rate_limited": first.stats.rate_limited + second.stats.rate_limited,
            "split": dict(r.endpoints),
            "cooldowns": list(r.cooldowns),
            "requests": r.requests,
            "placements": len(r.placements),
        }


async def run_static(setup: str, k: int) -> float:
    a, b, limits = SETUPS[setup]
    common = {"answer_tokens": ANSWER_TOKENS}
    async with open_sim(**a, **common) as first, open_sim(**b, **common) as second:
        one = fanout.Fanout(first.client, model="m", policy="split", limits=limits)
        two = fanout.Fanout(second.client, model="m", policy="split")
        loop = asyncio.get_running_loop()
        start = loop.time()
        ends: list[float] = []

        async def part(fo: fanout.Fanout, qs: list[str]) -> None:
            if qs:
                await fo.ask_many(qs)
            ends.append(loop.time() - start)

        await asyncio.gather(part(one, QUESTIONS[:k]), part(two, QUESTIONS[k:]))
        return max(ends)


def sweep(setup: str) -> tuple[int, float, dict[int, float]]:
    walls: dict[int, float] = {}
    for k in range(0, N + 1, 25):
        walls[k] = virtual(run_static(setup, k))
    best = min(walls, key=walls.__getitem__)
    for k in range(max(0, best - 20), min(N, best + 20) + 1, 5):
        if k not in walls:
            walls[k] = virtual(run_static(setup, k))
    best = min(walls, key=walls.__getitem__)
    return best, walls[best], walls


async def run_litellm(setup: str, strategy: str, scale: float) -> dict[str, Any]:
    import litellm
    from litellm.router import Router

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    a, b, limits = SETUPS[setup]
    limits = scaled(limits, scale)
    common = {"answer_tokens": ANSWER_TOKENS, "time_scale": scale}
    async with open_sim(**a, **common) as first, open_sim(**b, **common) as second:
        deployments = []
        for sim, lim in ((first, limits), (second, None)):
            params: dict[str, Any] = {
                "model": "openai/m",
                "api_base": sim.server.base_url,
                "api_key": "sim",
            }
            if lim is not None and lim.rpm is not None:
                params["rpm"] = int(lim.rpm)
            deployments.append({"model_name": "m", "litellm_params": params})
        router = Router(model_list=deployments, routing_strategy=strategy, num_retries=3)
        bases = {first.server.base_url: "first", second.server.base_url: "second"}
        start = time.monotonic()

        async def one(q: str) -> str | None:
            try:
                response = await router.acompletion(
                    model="m", messages=[{"role": "user", "content": q}]
                )
            except Exception:
                return None
            base = (response._hidden_params or {}).get("api_base") or ""
            return next((name for url, name in bases.items() if url.rstrip("/") in base), "?")

        got = await asyncio.gather(*(one(q) for q in QUESTIONS))
        wall = (time.monotonic() - start) * scale
        split: dict[str, int] = {}
        for name in got:
            if name is not None:
                split[name] = split.get(name, 0) + 1
        return {
            "wall_s": round(wall, 2),
            "lost": sum(1 for x in got if x is None),
            "rate_limited": first.stats.rate_limited + second.stats.rate_limited,
            "split": split,
        }


def run_killed(scale: float) -> dict[str, Any]:
    """Two ``fanout sim`` processes (8 slots each); one is killed (SIGKILL) once 100
    answers are in: every question answered once, by the other after the kill."""
    import signal
    import subprocess
    import sys

    from _common import free_port

    procs: list[subprocess.Popen[str]] = []
    urls = []
    try:
        for _ in range(2):
            port = free_port()
            cmd = [sys.executable, "-m", "fanout", "sim", "--port", str(port), "--slots", "8",
                   "--answer-tokens", str(ANSWER_TOKENS), "--time-scale", str(scale)]  # fmt: skip
            proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            procs.append(proc)
            assert proc.stdout is not None
            proc.stdout.readline()
            urls.append(f"http://127.0.0.1:{port}/v1")
        got = asyncio.run(_killed_call(urls, lambda: procs[1].send_signal(signal.SIGKILL)))
    finally:
        for proc in procs:
            proc.kill()
            proc.wait(timeout=10)
    got["wall_s"] = round(got["wall_s"] * scale, 2)
    got["killed_at_s"] = round(got["killed_at_s"] * scale, 2)
    return got


async def _killed_call(urls: list[str], kill: Callable[[], None]) -> dict[str, Any]:
    eps = [
        fanout.Endpoint(base_url=urls[0], api_key="sim", name="first"),
        fanout.Endpoint(base_url=urls[1], api_key="sim", name="second"),
    ]
    fo = fanout.Fanout(endpoints=eps, model="m", policy="split")
    start = time.monotonic()
    killed_at: list[float] = []

    seen: list[int] = []

    def on_answer(answer: fanout.Answer) -> None:
        seen.append(answer.index)
        if len(seen) == 100:
            kill()
            killed_at.append(time.monotonic() - start)

    answers = await fo.ask_many(QUESTIONS, on_error="return", on_answer=on_answer)
    wall = time.monotonic() - start
    await fo.aclose()
    r = answers.report
    return {
        "wall_s": wall,
        "killed_at_s": killed_at[0],
        "lost": sum(1 for a in answers if a.error is not None),
        "answered_once": sorted(a.index for a in answers) == list(range(N)),
        "split": dict(r.endpoints),
        "fallbacks": r.fallbacks,
        "cooldowns": list(r.cooldowns),
    }


STRATEGIES = ("simple-shuffle", "least-busy", "usage-based-routing-v2", "latency-based-routing")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument("--time-scale", type=float, default=5.0)
    parser.add_argument("--setup", choices=list(SETUPS), action="append")
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for setup in args.setup or list(SETUPS):
        print(f"== {setup}")
        row: dict[str, Any] = {}
        best_k, best_wall, walls = sweep(setup)
        row["sweep"] = {"best_k_first": best_k, "best_wall_s": round(best_wall, 2),
                        "walls": {k: round(v, 2) for k, v in sorted(walls.items())}}  # fmt: skip
        print(f"best static split: {best_k} to first, {N - best_k} to second: {best_wall:.2f} s")
        got = virtual(run_fanout(setup))
        got["vs_best_static"] = round(got["wall_s"] / best_wall, 3)
        row["fanout_virtual"] = got
        print(f"fanout (virtual time): {got}")
        if not args.no_litellm:
            scale = args.time_scale
            row["wall_clock"] = {"time_scale": scale}
            got = asyncio.run(run_fanout(setup, scale))
            row["wall_clock"]["fanout"] = got
            print(f"fanout (wall clock, x{scale}): {got}")
            for strategy in STRATEGIES:
                got = asyncio.run(run_litellm(setup, strategy, scale))
                row["wall_clock"][f"litellm {strategy}"] = got
                print(f"litellm {strategy} (wall clock, x{scale}): {got}")
        results[setup] = row
    if not args.setup:
        got = run_killed(args.time_scale)
        results["killed"] = got
        print(f"one endpoint killed mid-call (wall clock, x{args.time_scale}): {got}")
    save("endpoints", results)


if __name__ == "__main__":
    main()
