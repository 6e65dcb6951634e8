"""The ``fanout`` command line: ask, run, combine, plan, bench, sim, demo."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import difflib
import errno
import logging
import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..core.config import Limits, Policy
from ..core.endpoints import Endpoint
from ..core.exceptions import FanoutError
from ..core.logs import redact
from ..core.models import Question
from ..core.plans import Plan
from ..detection._detector import Detection, detect
from ..endpoint.model import EndpointModel
from ..endpoint.profile import EndpointProfile, profile_endpoint
from ..engine.facade import Fanout
from ..jobs._batch import run_job
from ..jobs._run import JobSummary
from .batch import add_batch_args, batch_kwargs, policy_kwargs, tier_lines
from .caching import add_cache_args, cache_from_args
from .endpoints import endpoint_of, read_endpoints
from .money import (
    add_money_args,
    budget_stop,
    cap_answers,
    dry_run,
    estimates_table,
    pricing_of,
    read_questions,
)
from .plots import plot_timeline, pyplot
from .shards import add_combine_parser, add_shard_arg, combine
from .summary import run_summary

__all__ = ["main"]

if TYPE_CHECKING:
    _Subparsers = argparse._SubParsersAction[argparse.ArgumentParser]  # add_subparsers' type

_RUN_EXIT_CODES = """exit codes:
  0    every question of INPUT has an answer in OUTPUT
  1    some questions have no answer: they failed (their records hold the error)
  2    the job did not start or stopped: a bad option, INPUT unreadable, OUTPUT is
       INPUT, locked or not writable, a full disk; what was written is kept
  3    every valid question has an answer, but some INPUT lines were skipped
  4    stopped: API key refused (401, 403) or out of quota; run again once fixed
  5    stopped at --max-cost: the next request would have passed it; run again
       with a higher cap to finish (the spend recorded in OUTPUT counts)
  130  interrupted (Ctrl-C): says how many records it wrote; run again to resume"""

log = logging.getLogger("fanout")

_CUT_BY = {"length": "max_tokens", "content_filter": "content_filter"}
"""What cut an answer short, by its ``finish_reason``: ``fanout ask`` says so after it."""


def _fault(value: str) -> tuple[str, float]:
    kind, sep, rate = value.partition("=")
    if not sep:
        raise argparse.ArgumentTypeError(f"expected KIND=RATE, got {value!r}")
    try:
        return kind, float(rate)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"rate must be a number, got {rate!r}") from exc


def _fault_at(value: str) -> tuple[int, str]:
    number, sep, kind = value.partition("=")
    if not sep or not number.isdigit() or int(number) < 1:
        raise argparse.ArgumentTypeError(f"expected N=KIND (N counting from 1), got {value!r}")
    return int(number), kind


def _endpoint_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group(
        "endpoint (default: OPENAI_BASE_URL if set, else the built-in simulator, no API key needed)"
    )
    g.add_argument(
        "--base-url",
        action="append",
        dest="base_urls",
        metavar="URL",
        help="an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1 (default: "
        "OPENAI_BASE_URL, as the openai SDK reads it); repeated, several endpoints of one "
        "model (each paced with --rpm/--tpm/--concurrency)",
    )
    g.add_argument(
        "--endpoints",
        metavar="JSON",
        dest="endpoints_file",
        help="several endpoints of one model, each with its own limits, priority and "
        "price, from a JSON file (see docs/endpoints.md)",
    )
    g.add_argument("--model", help="model name (default sim-1 on the simulator)")
    g.add_argument(
        "--api-key",
        help="API key (default: $OPENAI_API_KEY; a 'fanout sim' takes any, e.g. --api-key sim)",
    )
    g.add_argument(
        "--sim-time-scale",
        type=float,
        default=10.0,
        help="time scale of the built-in simulator (default 10)",
    )
    g.add_argument(
        "--endpoint-profile",
        metavar="JSON",
        help="start the planner from what 'fanout profile --save' measured, "
        "not from generic priors",
    )
    g.add_argument(
        "--no-memory",
        dest="memory",
        action="store_false",
        help="neither start from what earlier runs learned of --base-url and "
        "--model, nor save what this one learns (also: FANOUT_MEMORY=0)",
    )
    g = p.add_argument_group("limits and policy")
    g.add_argument("--rpm", type=float, help="requests per minute")
    g.add_argument("--tpm", type=float, help="tokens per minute")
    g.add_argument(
        "--concurrency", type=int, default=64, help="max requests in flight (default 64)"
    )
    g.add_argument(
        "--redis",
        metavar="URL",
        help="share the limits through redis, e.g. redis://127.0.0.1:6379/0",
    )
    g.add_argument(
        "--policy", default="auto", choices=["auto", "split", "merge"], help="default auto"
    )
    g.add_argument(
        "--objective", default="latency", choices=["latency", "cost"], help="default latency"
    )
    g.add_argument("--max-group-size", type=int, help="cap on questions per merged request")
    g.add_argument("--system", help="system prompt for every question")
    g.add_argument("--max-tokens", type=int, help="max_tokens per answer")


def _api_arg(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--api",
        choices=("chat", "responses"),
        default="chat",
        help="send through chat completions (default) or the Responses API",
    )


def _add_ask(sub: _Subparsers) -> None:
    """``fanout ask``: a prompt's questions, answered in its own numbering."""
    ask = sub.add_parser(
        "ask",
        help="answer a prompt, fanning out the questions it holds",
        description="Detect the independent questions in PROMPT, plan, and answer "
        "them, laid out in the prompt's own numbering.",
    )
    ask.add_argument("prompt", help="the prompt (use - to read it from standard input)")
    ask.add_argument("--explain", action="store_true", help="print the detection, the plan and why")
    _endpoint_args(ask)
    _api_arg(ask)


def _add_run(sub: _Subparsers) -> None:
    """``fanout run``: a JSONL job, resumable."""
    run = sub.add_parser(
        "run",
        help="answer a JSONL file of questions into a JSONL file, resumably",
        description='Input lines: {"id": ..., "question": ...} plus optional '
        "per-question parameters. Output lines: id, answer, error, usage, attempts. "
        "Re-running the same command skips the ids already answered for the same "
        "request, and asks again those that failed or whose request changed.",
        epilog=_RUN_EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_money_args(run, run=True)
    add_batch_args(run)
    run.add_argument("input", help="questions, one JSON object per line")
    run.add_argument("output", help="answers, appended as they arrive")
    run.add_argument(
        "--resume",
        action="store_true",
        default=True,
        help="skip ids already answered in OUTPUT (the default)",
    )
    run.add_argument("--overwrite", action="store_true", help="start OUTPUT afresh")
    run.add_argument(
        "--no-retry-failed",
        dest="retry_failed",
        action="store_false",
        help="leave ids whose last record in OUTPUT is a failure alone (default: ask them again)",
    )
    run.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="on standard error: a bar on a terminal, else a log line every few "
        "seconds (default: on)",
    )
    add_shard_arg(run)
    _endpoint_args(run)
    add_cache_args(run)
    _api_arg(run)


def _add_plan(sub: _Subparsers) -> None:
    """``fanout plan``: the dry run."""
    plan = sub.add_parser(
        "plan",
        help="dry run: the plan for a prompt or a JSONL file, and why",
        description="Nothing is sent: prints the detection (for a prompt), every "
        "candidate plan with its estimated time and tokens, and the choice.",
    )
    add_money_args(plan, run=False)
    plan.add_argument("prompt", nargs="?", help="a prompt holding several questions")
    plan.add_argument("--file", help="a JSONL file of questions instead of a prompt")
    _endpoint_args(plan)


def _add_bench(sub: _Subparsers) -> None:
    """``fanout bench``: split, merge and auto side by side."""
    bench = sub.add_parser(
        "bench",
        help="split vs merge vs auto on the simulator or an endpoint",
        description="Asks the same questions with each policy and prints a "
        "table; with --plot (needs the 'plot' extra) draws each request's "
        "queueing, prefill and decode as a timeline.",
    )
    bench.add_argument("--questions", type=int, default=5, help="how many questions (default 5)")
    bench.add_argument(
        "--tokens", type=int, default=200, help="answer length on the simulator (default 200)"
    )
    bench.add_argument("--slots", type=int, default=256, help="simulator slots (default 256)")
    bench.add_argument("--plot", metavar="PNG", help="write a timeline of the requests to PNG")
    _endpoint_args(bench)


def _add_profile(sub: _Subparsers) -> None:
    """``fanout profile``: an endpoint measured."""
    prof = sub.add_parser(
        "profile",
        help="measure an endpoint: round trip, first token, decode, parallel scaling",
        description="Spends at most --max-requests requests measuring the endpoint; "
        "prints a summary, and saves a profile that Fanout(endpoint=...) and "
        "fanout.sim.SimConfig.from_profile can load.",
    )
    prof.add_argument("--max-requests", type=int, default=40, help="request budget (default 40)")
    prof.add_argument(
        "--tokens", type=int, default=64, help="tokens per measured answer (default 64)"
    )
    prof.add_argument(
        "--ignore-eos",
        action="store_true",
        help="ask a local server (llama.cpp, vLLM) to write exactly --tokens tokens",
    )
    prof.add_argument("--save", metavar="JSON", help="write the profile to this file")
    prof.add_argument(
        "--plot", metavar="PNG", help="plot the parallel scaling (needs the 'plot' extra)"
    )
    _endpoint_args(prof)


def _add_demo(sub: _Subparsers) -> None:
    """``fanout demo``: the core claim on the built-in simulator."""
    demo = sub.add_parser(
        "demo",
        help="show split vs merge on the built-in simulator (no API key needed)",
        description="Five questions asked as one merged request and as five concurrent "
        "requests, on a batching server, under a tight RPM limit, and on a server "
        "that does not batch.",
    )
    demo.add_argument(
        "--time-scale",
        type=float,
        default=10.0,
        help="run the simulator this many times faster (default 10)",
    )


def _add_sim(sub: _Subparsers) -> None:
    """``fanout sim``: the simulated server and its settings."""
    sim = sub.add_parser(
        "sim",
        help="run the simulated OpenAI-compatible server on 127.0.0.1",
        description="Serve /v1/chat/completions, /v1/responses (the Responses API), "
        "/v1/models and /sim/stats on 127.0.0.1 until interrupted, streamed and not; any "
        "API key is accepted unless --api-key names one. Defaults imitate a hosted mid-size "
        "model.",
    )
    sim.add_argument(
        "--port", type=int, default=8000, help="port on 127.0.0.1 (default 8000; 0 picks one)"
    )
    sim.add_argument(
        "--profile",
        metavar="JSON",
        help="imitate the endpoint a 'fanout profile --save' file describes "
        "(the options below override it)",
    )
    sim.add_argument("--time-scale", type=float, default=1.0, help="run N times faster")
    sim.add_argument(
        "--slots", type=int, help="max running sequences (default 256; 1 = no batching)"
    )
    sim.add_argument(
        "--kv-capacity", type=int, help="KV-cache capacity in tokens (default 2,000,000)"
    )
    sim.add_argument("--step-ms", type=float, help="decode step at batch 1, in ms (default 15)")
    sim.add_argument("--rtt-ms", type=float, help="network round trip, in ms (default 150)")
    sim.add_argument("--answer-tokens", type=int, help="answer length in tokens (default 200)")
    sim.add_argument("--rpm", type=int, default=None, help="requests per minute per API key")
    sim.add_argument("--tpm", type=int, default=None, help="tokens per minute per API key")
    sim.add_argument(
        "--limit-period",
        type=float,
        default=60.0,
        help="seconds the per-minute limits are policed over (default 60)",
    )
    sim.add_argument(
        "--sliding",
        action="store_true",
        help="police each period as a sliding window (at most one period's "
        "budget in any period) instead of a token bucket",
    )
    sim.add_argument(
        "--reset-header",
        choices=("empty", "oldest"),
        default="empty",
        help="what x-ratelimit-reset-* reports: the time until the window is "
        "empty (default, OpenAI's meaning) or until its oldest entry leaves "
        "(as some gateways do)",
    )
    sim.add_argument(
        "--quota", type=int, default=None, help="total tokens before insufficient_quota"
    )
    sim.add_argument(
        "--fault",
        type=_fault,
        action="append",
        default=[],
        metavar="KIND=RATE",
        help="inject a fault with this probability; KIND is one of "
        "500 502 503 408 reset hang malformed stream_cut",
    )
    sim.add_argument(
        "--fault-at",
        type=_fault_at,
        action="append",
        default=[],
        metavar="N=KIND",
        help="inject fault KIND on the N-th request (counting from 1)",
    )
    sim.add_argument("--seed", type=int, default=0, help="seed of the fault dice")
    sim.add_argument(
        "--api-key",
        metavar="KEY",
        help="accept only this API key (default: any); others get 401 invalid_api_key",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fanout",
        description="Answer many independent LLM questions fast: fan out, rate-limit, reassemble.",
    )
    parser.add_argument("--version", action="version", version=f"fanout {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="log more (-vv: debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    _add_ask(sub)
    _add_run(sub)
    add_combine_parser(sub)
    _add_plan(sub)
    _add_bench(sub)
    _add_profile(sub)
    _add_demo(sub)
    _add_sim(sub)
    for command in sub.choices.values():
        _common_args(command)
    return parser


def _usage_error(message: str) -> None:
    """A command that cannot start for a missing or bad option: one line, exit 2."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def _common_args(p: argparse.ArgumentParser) -> None:
    """Options every subcommand also takes after its name (``fanout run -v ...``).

    They count into their own destination: a subcommand's default would otherwise
    overwrite what was given before its name (``fanout -v run``)."""
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=0,
        dest="verbose_after",
        help="log more (-vv: debug); also accepted before the command",
    )


# --- endpoints -------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def _endpoint(
    args: argparse.Namespace, **sim_config: Any
) -> AsyncIterator[tuple[Any, str, Any]]:
    """(client, model, sim server or None) for the endpoint the arguments name."""
    from openai import AsyncOpenAI

    if args.base_url:
        api_key = args.api_key or os.environ.get("OPENAI_API_KEY")
        if not api_key and getattr(args, "endpoint_specs", None):
            api_key = "unused"  # each endpoint of the file has its own client and key
        if not api_key:
            _usage_error(
                "fanout: no API key: pass --api-key or set OPENAI_API_KEY (a 'fanout sim' "
                "started without --api-key takes any key: --api-key sim)"
            )
        if not args.model:
            _usage_error("fanout: --model is required with --base-url")
        client = AsyncOpenAI(base_url=args.base_url, api_key=api_key)
        try:
            yield client, args.model, None
        finally:
            await client.close()
        return
    from ..sim import SimConfig, serve

    config = SimConfig(time_scale=args.sim_time_scale, **sim_config)
    async with serve(config) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key=args.api_key or "sim")
        try:
            yield client, args.model or "sim-1", server
        finally:
            await client.close()
    if args.command != "bench":  # bench compares policies on the simulator, and says so
        # Said once the command's work is done (an error stays one line).
        print(
            f"fanout {args.command}: answered by the built-in simulator (no --base-url, nor "
            "OPENAI_BASE_URL): its answers are made-up text",
            file=sys.stderr,
        )


def _first_endpoint(args: argparse.Namespace) -> None:
    """``args.base_url``: the first endpoint's (None: the simulator); the others are
    ``_endpoints``' to make. Several endpoints read from ``--endpoints`` are checked now."""
    urls: list[str] = list(getattr(args, "base_urls", None) or [])
    args.endpoint_specs = []
    file = getattr(args, "endpoints_file", None)
    if file:
        if urls:
            _usage_error("fanout: give --base-url or --endpoints, not both")
        args.endpoint_specs = read_endpoints(file)
        urls = [spec["base_url"] for spec in args.endpoint_specs]
    if not urls and hasattr(args, "base_urls") and os.environ.get("OPENAI_BASE_URL"):
        urls = [os.environ["OPENAI_BASE_URL"]]  # as the openai SDK reads it
    args.base_urls = urls
    args.base_url = urls[0] if urls else None


def _endpoints(args: argparse.Namespace, client: Any, limits: Limits) -> list[Endpoint] | None:
    """Several endpoints (``--base-url`` repeated, or ``--endpoints``): the first on
    ``client``, the others on clients of their own; None for one."""
    specs = getattr(args, "endpoint_specs", None) or []
    urls = getattr(args, "base_urls", None) or []
    if not specs and len(urls) < 2:
        return None
    key = args.api_key or os.environ.get("OPENAI_API_KEY")
    if not specs:
        return [Endpoint(client=client, limits=limits)] + [
            Endpoint(base_url=url, api_key=key, limits=limits) for url in urls[1:]
        ]
    return [endpoint_of(spec, default_key=key, default=limits) for spec in specs]


def _fanout(args: argparse.Namespace, client: Any, model: str) -> Fanout:
    limits = Limits(
        rpm=args.rpm, tpm=args.tpm, max_concurrency=args.concurrency, backend=args.redis
    )
    policy = Policy(
        mode=args.policy,
        objective=args.objective,
        max_group_size=args.max_group_size,
        **policy_kwargs(args),
    )
    extra: dict[str, Any] = {}
    if args.max_tokens is not None:  # 0 too: refused as the Python API refuses it
        extra["max_tokens"] = args.max_tokens
    if getattr(args, "endpoint_profile", None):
        extra["endpoint"] = EndpointModel.from_profile(EndpointProfile.load(args.endpoint_profile))
    # The built-in simulator is on a new port each time; bench compares policies cold.
    if not args.memory or not args.base_url or args.command == "bench":
        extra["memory"] = False
    extra["api"] = getattr(args, "api", "chat")
    extra.update(pricing_of(args))
    extra["cache"] = cache_from_args(args)
    several = _endpoints(args, client, limits)
    if several is not None:
        return Fanout(
            endpoints=several,
            model=model,
            system=args.system,
            limits=limits,
            policy=policy,
            **extra,
        )
    return Fanout(client, model=model, system=args.system, limits=limits, policy=policy, **extra)


def _plan_table(plan: Plan) -> str:
    rows = [
        f"{'plan':<16} {'requests':>8} {'est. time':>10} {'prompt tok':>11} {'answer tok':>11} {'limit wait':>11}"
    ]
    for c in plan.candidates:
        mark = "*" if c is plan.chosen else " "
        requests = f"{c.requests}+{c.check_requests}" if c.check_requests else str(c.requests)
        rows.append(
            f"{mark}{c.label:<15} {requests:>8} {c.est_wall_s:>9.2f}s {c.est_prompt_tokens:>11} "
            f"{c.est_completion_tokens:>11} {c.est_limit_wait_s:>10.2f}s"
        )
    if any(c.check_requests for c in plan.candidates):
        rows.append("(+N: requests of the merge checks, questions of merged groups asked alone)")
    rows.append("(limit wait: summed over the requests)")
    return "\n".join(rows) + f"\n\nchosen: {plan.reason}"


# --- commands ----------------------------------------------------------------------------
async def _ask(args: argparse.Namespace) -> int:
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    detection = detect(prompt)
    async with _endpoint(args) as (client, model, _server):
        fo = _fanout(args, client, model)
        if detection.independent:
            texts = [detection.group_prompt(g) for g in detection.groups]
        else:
            texts = [prompt]
        answers = await fo.ask_many(texts, on_error="return")
    if args.explain:
        print(
            f"detected: {len(detection.questions)} part(s), {len(detection.groups)} group(s), "
            f"style {detection.style}, confidence {detection.confidence:.2f} ({'; '.join(detection.reasons)})"
        )
        if detection.preamble:
            print(f"shared preamble: {detection.preamble[:200]!r}")
        if answers.report.plan is not None:
            print(_plan_table(answers.report.plan))
        r = answers.report
        print(f"actual: {r.wall_s:.2f}s, {r.requests} request(s), {r.total_tokens} tokens\n")
    texts_out = [a.text or f"[error: {a.error}]" for a in answers]
    cut = [_CUT_BY.get(a.finish_reason or "") if a.error is None else None for a in answers]
    if detection.independent:
        print(detection.layout(texts_out, cut))
    else:
        print(texts_out[0] if cut[0] is None else f"{texts_out[0].strip()} (cut short: {cut[0]})")
    return 0 if answers.report.failed == 0 else 1


async def _run(args: argparse.Namespace) -> int:
    cap_answers(args)
    if args.dry_run:
        return dry_run(args, _fanout)
    capped = {} if args.max_cost is None else {"max_cost": args.max_cost}
    async with _endpoint(args) as (client, model, _server):
        fo = _fanout(args, client, model)
        start, summary = time.monotonic(), JobSummary()
        try:
            await run_job(
                summary,
                fo,
                args.input,
                args.output,
                resume=not args.overwrite,
                retry_failed=args.retry_failed,
                progress=args.progress,
                shard=args.shard,
                **batch_kwargs(args),
                **capped,
            )
        except asyncio.CancelledError:  # Ctrl-C: asyncio.run cancels this task
            print(
                f"fanout run: interrupted: {summary.answered + summary.failed} record(s) "
                f"written to {args.output}; run the same command again to resume",
                file=sys.stderr,
            )
            raise
    # Bad lines were logged as they were read (FILE:LINE: skipped: reason).
    print(run_summary(summary, time.monotonic() - start))
    print(tier_lines(summary))
    if summary.stopped_for_key or summary.stopped_for_quota:
        why = (
            f"the endpoint refused the API key ({summary.stopped_for_key}): check --api-key "
            "or OPENAI_API_KEY, and its access to --model"
            if summary.stopped_for_key
            else "the API key has no quota left (insufficient_quota)"
        )
        print(
            f"fanout run: stopped: {why}; nothing more was sent: run the same command again "
            "once fixed, and it answers the rest",
            file=sys.stderr,
        )
        return 4
    stopped = budget_stop(summary, args)
    if stopped is not None:
        return stopped
    if summary.first_error is not None:  # the records say it too; the terminal should
        print(
            f"fanout run: {summary.failed} failed; the first: {summary.first_error}",
            file=sys.stderr,
        )
    if summary.failed or summary.skipped_failed:
        return 1
    return 3 if summary.bad_lines else 0


def _plan(args: argparse.Namespace) -> int:
    """A dry run: synchronous, it sends nothing."""
    from openai import AsyncOpenAI

    detection: Detection | None = None
    questions: list[Question] | list[str]
    if args.file:
        questions = read_questions(Path(args.file))  # as fanout run reads them
    elif args.prompt:
        detection = detect(sys.stdin.read() if args.prompt == "-" else args.prompt)
        questions = [detection.group_prompt(g) for g in detection.groups]
    else:
        raise SystemExit("fanout plan: give a prompt or --file")
    client = AsyncOpenAI(api_key="dry-run", base_url=args.base_url or "http://127.0.0.1:9/v1")
    fo = _fanout(args, client, args.model or "dry-run")
    plan = fo.plan(questions)
    if detection is not None:
        print(
            f"detected: {len(detection.questions)} part(s) in {len(detection.groups)} group(s), "
            f"style {detection.style}, confidence {detection.confidence:.2f}"
        )
    ep = plan.inputs.endpoint
    source = "a saved profile" if args.endpoint_profile else "priors"
    known = (
        f"{ep.observations} observations remembered from earlier runs"
        if ep.observations
        else f"{ep.observations} observations; {source} until the endpoint is measured"
    )
    print(
        f"endpoint estimate ({known}): "
        f"rtt {ep.rtt_s:.2f}s, decode {ep.decode_s_per_token * 1000:.1f} ms/token, "
        f"slowdown per request {ep.slowdown_per_request:.2f}\n"
    )
    print(_plan_table(plan))
    print(f"\n{estimates_table(plan)}")
    return 0


async def _bench(args: argparse.Namespace) -> int:
    if args.plot and args.base_url:
        print(
            "--plot draws the simulator's view of each request (queued, prefill, decode); "
            "an external endpoint does not report it",
            file=sys.stderr,
        )
        return 2
    plt = pyplot("bench") if args.plot else None  # before the benchmark, not after it
    rows = []
    spans: dict[str, list[dict[str, Any]]] = {}
    for mode in ("merge", "split", "auto"):
        async with _endpoint(args, slots=args.slots) as (client, model, server):
            fo = _fanout(args, client, model)
            if mode == "auto":
                await fo.ask_many(
                    [f"warm-up {i} {{{{tokens={t}}}}}" for i, t in enumerate((40, 5, 80, 20))],
                    policy="split",
                )
                if server is not None:
                    server.reset_stats()
            qs = [
                f"Benchmark question {i}. {{{{tokens={args.tokens}}}}}"
                for i in range(args.questions)
            ]
            start = time.perf_counter()
            answers = await fo.ask_many(qs, policy=mode, on_error="return")
            wall = time.perf_counter() - start
            chosen = answers.report.plan.chosen.label if answers.report.plan else mode
            rows.append((mode, chosen, wall, answers.report.requests, answers.report.total_tokens))
            if server is not None:
                spans[mode] = [
                    {
                        "arrival": r.arrival,
                        "admitted": r.admitted,
                        "first": r.first_token,
                        "finished": r.finished,
                    }
                    for r in server.stats.requests
                ]
    scale = 1.0 if args.base_url else args.sim_time_scale
    unit = "s" if args.base_url else "s (model time)"
    print(
        f"{args.questions} questions, ~{args.tokens} tokens each"
        + ("" if args.base_url else " on the simulator")
    )
    print(f"{'policy':<8} {'chose':<14} {'wall':>10} {'requests':>9} {'tokens':>8}")
    for mode, chosen, wall, reqs, tokens in rows:
        print(f"{mode:<8} {chosen:<14} {wall * scale:>9.2f}{unit[0]} {reqs:>9} {tokens:>8}")
    if not args.base_url:
        print("(times are model seconds: wall x time scale)")
    if plt is not None:
        plot_timeline(plt, spans, args.plot, scale)
        print(f"timeline written to {args.plot}")
    return 0


async def _profile(args: argparse.Namespace) -> int:
    plt = pyplot("profile") if args.plot else None  # before spending any request
    async with _endpoint(args) as (client, model, _server):
        fo = _fanout(args, client, model)
        extra = {"ignore_eos": True} if args.ignore_eos else None
        result = await profile_endpoint(
            fo, max_requests=args.max_requests, tokens=args.tokens, extra_body=extra
        )
    print(result.summary())
    if args.save:
        result.save(args.save)
        print(f"profile saved to {args.save}")
    if plt is not None:
        ks = sorted(result.scaling)
        fig, ax = plt.subplots(figsize=(6, 4))
        ax.plot(ks, [result.scaling[k] for k in ks], marker="o", label="slowest request")
        dks = sorted(result.decode_scaling)
        ax.plot(
            dks,
            [result.decode_scaling[k] for k in dks],
            marker="s",
            label="time per token, k decoding together",
        )
        if result.parallel_slots is not None:
            ax.axvline(result.parallel_slots, color="grey", linewidth=0.8, label="slots")
        ax.plot(ks, ks, linestyle=":", label="one at a time")
        ax.plot(ks, [1.0] * len(ks), linestyle="--", label="perfect batching")
        ax.set_xlabel("concurrent requests")
        ax.set_ylabel("x one request alone")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=100)
        print(f"plot written to {args.plot}")
    return 0


async def _run_sim(args: argparse.Namespace) -> None:
    from ..sim import SimConfig, serve

    given = {
        "slots": args.slots,
        "kv_capacity_tokens": args.kv_capacity,
        "step_s": None if args.step_ms is None else args.step_ms / 1000,
        "rtt_s": None if args.rtt_ms is None else args.rtt_ms / 1000,
        "answer_tokens": args.answer_tokens,
    }
    settings: dict[str, Any] = {k: v for k, v in given.items() if v is not None}
    settings.update(
        time_scale=args.time_scale,
        rpm=args.rpm,
        tpm=args.tpm,
        limit_period_s=args.limit_period,
        quota_tokens=args.quota,
        limit_policing="sliding" if args.sliding else "bucket",
        reset_header=args.reset_header,
        fault_rates=dict(args.fault),
        fault_schedule=dict(args.fault_at),
        seed=args.seed,
        api_key=args.api_key,
    )
    if args.profile:
        config = SimConfig.from_profile(EndpointProfile.load(args.profile), **settings)
    else:
        config = SimConfig(**settings)
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be 0-65535 (0 picks a free one), got {args.port}")
    async with contextlib.AsyncExitStack() as stack:
        try:
            server = await stack.enter_async_context(serve(config, port=args.port))
        except OSError as exc:
            raise SystemExit(_listen_error(args.port, exc)) from None
        print(
            f"fanout sim listening on {server.base_url}  (stats: http://127.0.0.1:{server.port}/sim/stats)",
            flush=True,
        )
        await asyncio.Event().wait()


def _listen_error(port: int, exc: OSError) -> str:
    """One line for a port the simulator cannot listen on (taken, or privileged)."""
    if exc.errno == errno.EADDRINUSE:
        return (
            f"fanout sim: port {port} on 127.0.0.1 is already in use; "
            "choose another with --port (0 picks a free one)"
        )
    return f"fanout sim: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}"


def _setup_logging(verbose: int) -> None:
    from ..core.logs import configure

    configure(logging.DEBUG if verbose >= 2 else logging.INFO if verbose == 1 else logging.WARNING)
    logging.getLogger("fanout.progress").setLevel(logging.INFO)  # shown without -v


def _misspelt_option(parser: argparse.ArgumentParser, argv: Sequence[str]) -> None:
    """An option the command does not take, that is close to one it does: an error that
    names it (``fanout run --rmp 50 IN OUT`` said "the following arguments are required:
    output", the value taken for INPUT). Abbreviations argparse accepts are left to it."""
    commands = next(
        (a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {}
    )
    command = next((commands[arg] for arg in argv if arg in commands), parser)
    known = sorted({*command._option_string_actions, *parser._option_string_actions})
    for arg in argv:
        if arg == "--":
            return
        name = arg.split("=", 1)[0]
        if not name.startswith("--") or any(option.startswith(name) for option in known):
            continue
        close = difflib.get_close_matches(name, known, n=1)
        if close:
            command.error(f"unrecognized option {name} (did you mean {close[0]}?)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    _misspelt_option(parser, sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    _setup_logging(args.verbose + args.verbose_after)
    try:
        _first_endpoint(args)
        if args.command == "sim":
            try:
                asyncio.run(_run_sim(args))
            except ValueError as exc:
                print(f"fanout sim: {exc}", file=sys.stderr)
                return 2
            return 0
        if args.command == "demo":
            from .demo import LiveTable, run_demo

            table = LiveTable(sys.stdout, args.time_scale, live=sys.stdout.isatty())
            table.close(asyncio.run(run_demo(args.time_scale, listener=table)))
            return 0
        if args.command == "plan":
            return _plan(args)
        if args.command == "combine":
            return combine(args)
        commands = {"ask": _ask, "run": _run, "bench": _bench, "profile": _profile}
        return asyncio.run(commands[args.command](args))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader left early (fanout demo | head): no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (OSError, ValueError, FanoutError) as exc:
        print(f"fanout {args.command}: {redact(str(exc))}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
