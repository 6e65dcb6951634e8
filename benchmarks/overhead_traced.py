"""fanout's overhead with OpenTelemetry tracing on, against the same run without it.

The measurement of ``overhead.py`` (tiny completions, ``policy="split"``, 200 in
flight, the simulator in its own process), in four modes:

- ``bare``: a bare ``asyncio.gather`` loop with a semaphore (the reference);
- ``absent``: fanout with ``opentelemetry`` made unimportable (the extra not installed);
- ``untraced``: fanout with the API installed and no provider set (spans non-recording);
- ``traced``: the SDK's ``TracerProvider`` with a ``BatchSpanProcessor`` into an
  ``InMemorySpanExporter``, and a ``MeterProvider`` with an ``InMemoryMetricReader``:
  every call and request span and every metric point is made and kept.

A tracer provider cannot be unset in a process, so each measurement runs in a child
process of its own (its start-up is not timed, and each child warms up with 1,000
requests first); the modes alternate, seven rounds. Printed for each ratio to
untraced: the best of each mode (as ``overhead.py`` does), and, since the machine is
shared and noisy, the median over rounds of the ratio between runs side by side.
Target: traced >= 0.9 x untraced, and absent about equal to untraced.

Run: ``python benchmarks/overhead_traced.py [N]``
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from _common import save, sim_process

MODES = ("bare", "absent", "untraced", "traced")
ROUNDS = 7
WARM_UP = 1000


class _Block:
    """An import finder that makes ``opentelemetry`` look uninstalled."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ImportError(f"blocked for the benchmark: {name}")


def _set_up_sdk() -> Any:
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    reader = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))
    return provider, exporter, reader


async def _child(mode: str, base_url: str, n: int) -> float:
    from openai import AsyncOpenAI
    from overhead import bare, with_fanout

    client = AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0)
    warm = [f"warm {mode} {i}" for i in range(WARM_UP)]
    qs = [f"tiny question {mode} {time.time_ns()} {i}" for i in range(n)]
    if mode == "bare":
        await bare(client, warm)
        rate = await bare(client, qs)
    else:
        await with_fanout(client, warm, "split")
        rate = await with_fanout(client, qs, "split")
    await client.close()
    return rate


def child(mode: str, base_url: str, n: int) -> None:
    if mode == "absent":
        sys.meta_path.insert(0, _Block())
    sdk = _set_up_sdk() if mode == "traced" else None
    rate = asyncio.run(_child(mode, base_url, n))
    spans = -1
    if sdk is not None:
        provider, exporter, _reader = sdk
        provider.force_flush()
        spans = len(exporter.get_finished_spans())
    if mode == "absent":
        assert not [m for m in sys.modules if m.startswith("opentelemetry")]
    print(f"{rate} {spans}")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    runs: dict[str, list[float]] = {mode: [] for mode in MODES}
    spans = 0
    with sim_process("--time-scale", "1000", "--rtt-ms", "0", "--answer-tokens", "1") as url:
        for _round in range(ROUNDS):
            for mode in MODES:
                out = subprocess.run(
                    [sys.executable, str(Path(__file__)), "--child", mode, url, str(n)],
                    capture_output=True, text=True, check=True,
                ).stdout.split()  # fmt: skip
                runs[mode].append(float(out[0]))
                if mode == "traced":
                    spans = int(out[1])
    best = {mode: max(rates) for mode, rates in runs.items()}

    def paired(mode: str) -> float:
        """The median, over rounds, of ``mode`` / untraced measured side by side."""
        return statistics.median(a / b for a, b in zip(runs[mode], runs["untraced"], strict=True))

    ratios = {
        mode: {"best": best[mode] / best["untraced"], "paired": paired(mode)}
        for mode in ("traced", "absent")
    }  # fmt: skip
    for mode in MODES:
        print(f"{mode:<9} best {best[mode]:>5,.0f} completions/s ({best[mode] / best['bare']:.3f} x bare); "
              f"runs {', '.join(f'{r:,.0f}' for r in runs[mode])}")  # fmt: skip
    for mode, what in (("traced", "target >= 0.9"), ("absent", "the extra not installed: about 1")):
        r = ratios[mode]
        print(f"{mode} / untraced: {r['best']:.3f} best of each, {r['paired']:.3f} median of "
              f"side-by-side rounds  ({what})")  # fmt: skip
    print(f"spans kept in the last traced run: {spans:,} (expected {n + WARM_UP + 2:,}: "
          "the warm-up call's and the measured call's)")  # fmt: skip
    save("overhead_traced", {
        "n": n, "rounds": ROUNDS, "best_per_s": {m: round(v, 1) for m, v in best.items()},
        "runs_per_s": {m: [round(r, 1) for r in rs] for m, rs in runs.items()},
        "ratios_to_untraced": {m: {k: round(v, 3) for k, v in r.items()} for m, r in ratios.items()},
        "spans_in_last_traced_run": spans,
    })  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        main()
