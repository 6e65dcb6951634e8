"""``fanout demo``: the project's core claim, shown on the built-in simulator."""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from typing import Protocol, TextIO

from ..core.config import Limits
from ..core.money import Pricing
from ..engine.facade import Fanout

__all__ = ["DemoListener", "DemoRow", "LiveTable", "format_demo", "run_demo"]

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
    auto_requests: int = 0
    auto_checks: int = 0
    """Merge checks auto made (questions asked alone beside a merged request)."""

    @property
    def speedup(self) -> float:
        """How many times faster five concurrent requests were than one merged request."""
        return self.merged_s / self.split_s


class DemoListener(Protocol):
    """Told what the demo is doing while it runs (``fanout demo`` shows it)."""

    def started(self, scenario: str, mode: str) -> None: ...
    def answered(self, scenario: str, mode: str, done: int) -> None: ...
    def measured(self, scenario: str, mode: str, seconds: float, choice: str) -> None: ...


async def _scenario(
    name: str,
    *,
    time_scale: float,
    slots: int,
    rpm: int | None,
    listener: DemoListener | None = None,
) -> DemoRow:
    from openai import AsyncOpenAI

    from ..sim import SimConfig, serve

    config = SimConfig(time_scale=time_scale, slots=slots, rpm=rpm)
    # The limits fanout is told are per wall-clock minute, like the sim's headers.
    limits = Limits(rpm=rpm * time_scale if rpm else None)
    timings: dict[str, tuple[float, int, str, int]] = {}
    for mode in ("merge", "split", "auto"):
        if listener is not None:
            listener.started(name, mode)
        async with serve(config) as server:
            client = AsyncOpenAI(base_url=server.base_url, api_key="sim-demo")
            endpoint = None
            if mode == "auto":
                # What a Fanout in use has learned: an earlier call (on another API
                # key, so this one's request budget is untouched) teaches it the
                # endpoint's speed and whether it runs requests in parallel.
                warm_client = AsyncOpenAI(base_url=server.base_url, api_key="sim-demo-warm-up")
                warm = Fanout(warm_client, model="sim-1", memory=False, pricing=Pricing.free())
                await warm.ask_many(
                    [f"Warm-up {i} {{{{tokens={t}}}}}" for i, t in enumerate((40, 5, 60, 20, 80))],
                    policy="split",
                )
                await warm_client.close()
                endpoint = warm.endpoint
            fo = Fanout(
                client,
                model="sim-1",
                limits=limits,
                endpoint=endpoint,
                memory=False,
                pricing=Pricing.free(),
            )  # the simulator costs nothing
            done = 0

            def on_answer(_answer: object, mode: str = mode) -> None:
                nonlocal done
                done += 1
                if listener is not None:
                    listener.answered(name, mode, done)

            start = time.perf_counter()
            answers = await fo.ask_many(QUESTIONS, policy=mode, on_answer=on_answer)
            chosen = answers.report.plan.chosen.label if answers.report.plan else mode
            report = answers.report
            timings[mode] = (
                time.perf_counter() - start,
                report.requests,
                chosen,
                len(report.merge_checks),
            )
            await client.close()
            if listener is not None:
                listener.measured(name, mode, timings[mode][0], chosen)
    return DemoRow(
        scenario=name,
        merged_s=timings["merge"][0],
        split_s=timings["split"][0],
        merged_requests=timings["merge"][1],
        split_requests=timings["split"][1],
        auto_s=timings["auto"][0],
        auto_choice=timings["auto"][2],
        auto_requests=timings["auto"][1],
        auto_checks=timings["auto"][3],
    )


#: (scenario, slots, requests per minute), in the order the demo runs them.
SCENARIOS: list[tuple[str, int, int | None]] = [
    ("batching server (default sim)", 256, None),
    ("tight limit: 3 requests/minute", 256, 3),
    ("server that does not batch (slots=1)", 1, None),
]

_WHY = {
    "batching server (default sim)": "the five answers decode in the same steps",
    "tight limit: 3 requests/minute": (
        "split's requests wait for the limit, one merged request goes at once"
    ),
    "server that does not batch (slots=1)": (
        "the five requests take turns, and one merged reply writes the same five "
        "answers one after another (with their tags)"
    ),
}
"""What each scenario's server does to the two ways of asking."""


async def run_demo(time_scale: float = 10.0, listener: DemoListener | None = None) -> list[DemoRow]:
    """Five 200-token questions as one merged request and as five concurrent requests,
    on three servers: a batching one, one behind a 3-requests-per-minute limit, and
    one that does not batch (``slots=1``). ``listener`` hears of each step as it happens."""
    return [
        await _scenario(name, time_scale=time_scale, slots=slots, rpm=rpm, listener=listener)
        for name, slots, rpm in SCENARIOS
    ]


# --- the table: whole (format_demo), or filled in as the demo runs (LiveTable) ------------
def _header(time_scale: float) -> list[str]:
    return [
        "Five independent questions, ~200 tokens per answer, on fanout's simulated server",
        f"(time_scale={time_scale:g}: model seconds = wall seconds x {time_scale:g}).",
        "",
        f"{'scenario':<38} {'merged':>8} {'split':>8} {'split speedup':>14}   {'auto picks':<10} {'auto':>7}",
    ]


_CLOSING = [
    "fanout's auto policy picks per call, from what it has learned about the endpoint",
    "and its limits.",
]


def _footer(rows: list[DemoRow], time_scale: float) -> list[str]:
    """What the rows show, in words: the text says only what was measured."""
    lines = ["", "Times are model seconds; merged = one request, split = five at once."]
    for r in rows:
        if r.speedup >= 1.25:
            verdict = f"split was {r.speedup:.1f}x faster"
        elif r.speedup <= 0.8:
            verdict = f"merged was {1 / r.speedup:.1f}x faster"
        else:
            verdict = f"split and merged took about as long ({r.speedup:.2f}x)"
        why = _WHY.get(r.scenario)
        lines.append(f"- {r.scenario}: {verdict}" + (f": {why}." if why else "."))
        best, best_mode = min((r.merged_s, "merged"), (r.split_s, "split"))
        if r.auto_s > 1.1 * best:
            extra = (
                "the extra ones checked merged answers against the same questions asked "
                "alone (merged answers are not yet known to agree on a new endpoint)"
                if r.auto_checks
                else "it measured the endpoint with a first request before planning the rest"
            )
            lines.append(
                f"  auto ({r.auto_choice}) took {r.auto_s * time_scale:.1f}s against "
                f"{best * time_scale:.1f}s {best_mode}, in {r.auto_requests} requests: {extra}."
            )
    return [*lines, *_CLOSING]


def _cell(
    mode: str, seconds: float, time_scale: float, *, merged_s: float = 0.0, choice: str = ""
) -> str:
    """One measurement's columns of a row (the split column carries the speedup)."""
    if mode == "merge":
        return f" {seconds * time_scale:>7.1f}s"
    if mode == "split":
        return f" {seconds * time_scale:>7.1f}s {merged_s / seconds:>13.2f}x"
    return f"   {choice:<10} {seconds * time_scale:>6.1f}s"


def format_demo(rows: list[DemoRow], time_scale: float) -> str:
    out = _header(time_scale)
    for r in rows:
        out.append(
            f"{r.scenario:<38}"
            + _cell("merge", r.merged_s, time_scale)
            + _cell("split", r.split_s, time_scale, merged_s=r.merged_s)
            + _cell("auto", r.auto_s, time_scale, choice=r.auto_choice)
        )
    out += _footer(rows, time_scale)
    return "\n".join(out)


class LiveTable:
    """The demo's table written as it is measured: the header at once, each row as
    soon as its scenario is done. With ``live`` (a terminal), a status line below the
    last row shows the results so far and what is running, and gives way to the row."""

    def __init__(self, out: TextIO, time_scale: float, *, live: bool) -> None:
        self._out = out
        self._scale = time_scale
        self._live = live
        self._row = ""
        self._done: list[str] = []
        self._merged_s = 0.0
        self._shown = 0
        header = _header(time_scale)
        header.insert(
            2, "Each row appears as its scenario is measured (all three: ~30 s at --time-scale 10)."
        )
        self._write("\n".join(header) + "\n")

    def _write(self, text: str) -> None:
        self._out.write(text)
        self._out.flush()

    def _status(self, scenario: str, doing: str) -> None:
        if not self._live:
            return
        text = f"  {scenario}: " + ", ".join([*self._done, doing])
        text = text[: max(20, shutil.get_terminal_size().columns - 1)]
        self._write("\r" + text.ljust(self._shown))
        self._shown = len(text)

    def started(self, scenario: str, mode: str) -> None:
        if mode == "merge":
            self._row, self._done = f"{scenario:<38}", []
        doing = {"merge": "merged...", "split": "split...", "auto": "auto (warm-up)..."}
        self._status(scenario, doing[mode])

    def answered(self, scenario: str, mode: str, done: int) -> None:
        label = {"merge": "merged", "split": "split", "auto": "auto"}[mode]
        self._status(scenario, f"{label} {done}/{len(QUESTIONS)} answered...")

    def measured(self, scenario: str, mode: str, seconds: float, choice: str) -> None:
        if mode == "merge":
            self._merged_s = seconds
        self._row += _cell(mode, seconds, self._scale, merged_s=self._merged_s, choice=choice)
        label = {"merge": "merged", "split": "split", "auto": f"auto picks {choice}"}[mode]
        self._done.append(f"{label} {seconds * self._scale:.1f}s")
        if mode != "auto":
            return
        if self._shown:
            self._write("\r" + " " * self._shown + "\r")
            self._shown = 0
        self._write(self._row + "\n")

    def close(self, rows: list[DemoRow]) -> None:
        """The text under the table: what ``rows`` (the demo's result) show."""
        self._write("\n".join(_footer(rows, self._scale)) + "\n")
