"""``fanout demo``: the project's core claim, shown on the built-in simulator."""

from __future__ import annotations

import time
from dataclasses import dataclass

from ._config import Limits
from ._fanout import Fanout

__all__ = ["DemoRow", "run_demo"]

QUESTIONS = [
    "Why is the sky blue? {{tokens=200}}",
    "How does a refrigerator keep food cold? {{tokens=200}}",
    "What causes the seasons on Earth? {{tokens=200}}",
    "How do vaccines train the immune system? {{tokens=200}}",
    "Why do cats purr? {{tokens=200}}",
]


@dataclass(frozen=True)
class DemoRow:
    scenario: str
    merged_s: float
    split_s: float
    merged_requests: int
    split_requests: int
    auto_s: float = 0.0
    auto_choice: str = ""

    @property
    def speedup(self) -> float:
        """How many times faster five concurrent requests were than one merged request."""
        return self.merged_s / self.split_s


async def _scenario(name: str, *, time_scale: float, slots: int, rpm: int | None) -> DemoRow:
    from openai import AsyncOpenAI

    from .sim import SimConfig, serve

    config = SimConfig(time_scale=time_scale, slots=slots, rpm=rpm)
    # The limits fanout is told are per wall-clock minute, like the sim's headers.
    limits = Limits(rpm=rpm * time_scale if rpm else None)
    timings: dict[str, tuple[float, int, str]] = {}
    for mode in ("merge", "split", "auto"):
        async with serve(config) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="sim-demo")
            endpoint = None
            if mode == "auto":
                # What a Fanout in use has learned: an earlier call (on another API
                # key, so this one's request budget is untouched) teaches it the
                # endpoint's speed and whether it runs requests in parallel.
                warm_client = AsyncOpenAI(base_url=server.base_url, api_key="sim-demo-warm-up")
                warm = Fanout(warm_client, model="sim-1")
                await warm.ask_many([f"Warm-up {i} {{{{tokens={t}}}}}" for i, t in enumerate((40, 5, 60, 20, 80))],
                                    policy="split")  # fmt: skip
                await warm_client.close()
                endpoint = warm.endpoint
            fo = Fanout(client, model="sim-1", limits=limits, endpoint=endpoint)
            start = time.perf_counter()
            answers = await fo.ask_many(QUESTIONS, policy=mode)
            chosen = answers.report.plan.chosen.label if answers.report.plan else mode
            timings[mode] = (time.perf_counter() - start, answers.report.requests, chosen)
            await client.close()
    return DemoRow(
        scenario=name,
        merged_s=timings["merge"][0],
        split_s=timings["split"][0],
        merged_requests=timings["merge"][1],
        split_requests=timings["split"][1],
        auto_s=timings["auto"][0],
        auto_choice=timings["auto"][2],
    )


async def run_demo(time_scale: float = 10.0) -> list[DemoRow]:
    """Five 200-token questions as one merged request and as five concurrent requests,
    on three servers: a batching one, one behind a 3-requests-per-minute limit, and
    one that does not batch (``slots=1``)."""
    return [
        await _scenario(
            "batching server (default sim)", time_scale=time_scale, slots=256, rpm=None
        ),
        await _scenario("tight limit: 3 requests/minute", time_scale=time_scale, slots=256, rpm=3),
        await _scenario(
            "server that does not batch (slots=1)", time_scale=time_scale, slots=1, rpm=None
        ),
    ]


def format_demo(rows: list[DemoRow], time_scale: float) -> str:
    out = [
        "Five independent questions, ~200 tokens per answer, on fanout's simulated server",
        f"(time_scale={time_scale:g}: model seconds = wall seconds x {time_scale:g}).",
        "",
        f"{'scenario':<38} {'merged':>8} {'split':>8} {'split speedup':>14}   {'auto picks':<10} {'auto':>7}",
    ]
    for r in rows:
        out.append(
            f"{r.scenario:<38} {r.merged_s * time_scale:>7.1f}s {r.split_s * time_scale:>7.1f}s"
            f" {r.speedup:>13.2f}x   {r.auto_choice:<10} {r.auto_s * time_scale:>6.1f}s"
        )
    out += [
        "",
        "Times are model seconds; merged = one request, split = five at once.",
        "Splitting wins on a batching server: the five answers decode in the same steps.",
        "Under a tight request limit or on a server that does not batch, one merged",
        "request is as fast or faster. fanout's auto policy picks per call, from what it",
        "has learned about the endpoint and its limits.",
    ]
    return "\n".join(out)
