"""The ``fanout`` command line."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from . import __version__

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["main"]


def _fault(value: str) -> tuple[str, float]:
    kind, sep, rate = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=RATE, got {value!r}")
    try:
        return kind, float(rate)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"rate must be a number, got {rate!r}") from exc


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fanout",
        description="Answer many independent LLM questions fast: fan out, rate-limit, reassemble.",
    )
    parser.add_argument("--version", action="version", version=f"fanout {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    demo = sub.add_parser(
        "demo",
        help="show split vs merge on the built-in simulator (no API key needed)",
        description="Five questions asked as one merged request and as five concurrent "
        "requests, on a batching server, under a tight RPM limit, and on a server "
        "that does not batch.",
    )
    demo.add_argument("--time-scale", type=float, default=10.0,
                      help="run the simulator this many times faster (default 10)")  # fmt: skip

    sim = sub.add_parser(
        "sim",
        help="run the simulated OpenAI-compatible server on 127.0.0.1",
        description="Serve /v1/chat/completions, /v1/models and /sim/stats on 127.0.0.1 "
        "until interrupted. Defaults imitate a hosted mid-size model.",
    )
    sim.add_argument(
        "--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0 picks one)"
    )
    sim.add_argument("--time-scale", type=float, default=1.0, help="run N times faster")
    sim.add_argument(
        "--slots", type=int, default=256, help="max running sequences (1 = no batching)"
    )
    sim.add_argument(
        "--kv-capacity", type=int, default=2_000_000, help="KV-cache capacity in tokens"
    )
    sim.add_argument("--step-ms", type=float, default=15.0, help="decode step at batch 1, in ms")
    sim.add_argument("--rtt-ms", type=float, default=150.0, help="network round trip, in ms")
    sim.add_argument("--answer-tokens", type=int, default=200, help="answer length in tokens")
    sim.add_argument("--rpm", type=int, default=None, help="requests per minute per API key")
    sim.add_argument("--tpm", type=int, default=None, help="tokens per minute per API key")
    sim.add_argument("--limit-period", type=float, default=60.0,
                     help="seconds the per-minute limits are policed over (default 60)")  # fmt: skip
    sim.add_argument(
        "--quota", type=int, default=None, help="total tokens before insufficient_quota"
    )
    sim.add_argument("--fault", type=_fault, action="append", default=[], metavar="KIND=RATE",
                     help="inject a fault with this probability; KIND is one of "
                     "500 502 503 408 reset hang malformed stream_cut")  # fmt: skip
    sim.add_argument("--seed", type=int, default=0, help="seed of the fault dice")
    return parser


async def _run_sim(args: argparse.Namespace) -> None:
    from .sim import SimConfig, serve

    config = SimConfig(
        time_scale=args.time_scale,
        slots=args.slots,
        kv_capacity_tokens=args.kv_capacity,
        step_s=args.step_ms / 1000,
        rtt_s=args.rtt_ms / 1000,
        answer_tokens=args.answer_tokens,
        rpm=args.rpm,
        tpm=args.tpm,
        limit_period_s=args.limit_period,
        quota_tokens=args.quota,
        fault_rates=dict(args.fault),
        seed=args.seed,
    )
    async with serve(config, port=args.port) as server:
        print(f"fanout sim listening on {server.base_url}  (stats: http://127.0.0.1:{server.port}/sim/stats)",
              flush=True)  # fmt: skip
        await asyncio.Event().wait()


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        if args.command == "sim":
            try:
                asyncio.run(_run_sim(args))
            except ValueError as exc:
                print(f"fanout sim: {exc}", file=sys.stderr)
                return 2
            return 0
        if args.command == "demo":
            from ._demo import format_demo, run_demo

            rows = asyncio.run(run_demo(args.time_scale))
            print(format_demo(rows, args.time_scale))
            return 0
    except KeyboardInterrupt:
        return 130
    return 2  # pragma: no cover - argparse rejects unknown commands


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
