"""Detection quality on the labelled sets in tests/data/ (the development corpus and
three held-out sets).

Reports, for each set: single-question prompts left whole (target >= 98 %), prompts
with several parts split exactly right (target >= 90 %), dependent groups split apart
(target 0), precision / recall of the decision to split, the precision of splits at
each confidence level (a split is wrong if it splits a single question or separates a
dependent group), prompts held back below the split threshold, and the time
``detect`` takes per prompt (best of several passes over every set).

Run: ``python benchmarks/detection.py [--show-misses]``
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from fanout import detect

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
SETS = ("detection_corpus", "detection_holdout", "detection_holdout2", "detection_holdout3")


def load(name: str = "detection_corpus") -> list[dict[str, Any]]:
    path = DATA / f"{name}.jsonl"
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def judge(entry: dict[str, Any]) -> dict[str, Any]:
    d = detect(entry["text"])
    expected = entry["groups"]
    should_split = len(expected) > 1
    n_parts = sum(len(g) for g in expected)
    exact = not should_split and not d.independent
    if len(expected) > 1 or n_parts > 1:
        exact = len(d.questions) == n_parts and d.groups == expected
        for part, start in zip(d.questions, entry.get("parts", []), strict=False):
            exact = exact and part.text.startswith(start)
        if "preamble" in entry:
            exact = exact and entry["preamble"] in d.preamble
    # A dependent group is split apart if its parts land in different detected groups.
    broken = False
    if len(d.questions) == n_parts:
        where = {i: gi for gi, g in enumerate(d.groups) for i in g}
        broken = any(len({where[i] for i in g}) > 1 for g in expected if len(g) > 1)
    wrong = d.independent and (not should_split or broken)
    held_back = any(r.startswith("kept whole: confidence") for r in d.reasons)
    return {
        "exact": exact, "split": d.independent, "should_split": should_split, "broken": broken,
        "wrong": wrong, "confidence": d.confidence, "held_back": held_back,
    }  # fmt: skip


def calibration(verdicts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """For each confidence level at which ``detect`` split: how many splits, how many
    were wrong (a single question split, or a dependent group split apart), how many
    were exactly right, and the precision (splits that were not wrong)."""
    table: dict[str, dict[str, Any]] = {}
    for v in sorted(verdicts, key=lambda v: -v["confidence"]):
        if not v["split"]:
            continue
        row = table.setdefault(f"{v['confidence']:.2f}", {"splits": 0, "wrong": 0, "exact": 0})
        row["splits"] += 1
        row["wrong"] += v["wrong"]
        row["exact"] += v["exact"]
    for row in table.values():
        row["precision"] = round(1 - row["wrong"] / row["splits"], 3)
    return table


def evaluate(entries: list[dict[str, Any]]) -> dict[str, Any]:
    verdicts = [(e, judge(e)) for e in entries]
    singles = [v for e, v in verdicts if e["category"] == "single"]
    multis = [v for e, v in verdicts if e["category"] != "single"]
    tp = sum(v["split"] and v["should_split"] for _, v in verdicts)
    fp = sum(v["split"] and not v["should_split"] for _, v in verdicts)
    fn = sum(not v["split"] and v["should_split"] for _, v in verdicts)
    by_cat: Counter[str] = Counter()
    by_cat_ok: Counter[str] = Counter()
    for e, v in verdicts:
        by_cat[e["category"]] += 1
        by_cat_ok[e["category"]] += v["exact"]
    by_lang: Counter[str] = Counter()
    by_lang_ok: Counter[str] = Counter()
    for e, v in verdicts:
        by_lang[e["lang"]] += 1
        by_lang_ok[e["lang"]] += v["exact"]
    return {
        "prompts": len(entries),
        "single_kept_whole": sum(not v["split"] for v in singles) / len(singles),
        "multi_exact": sum(v["exact"] for v in multis) / len(multis),
        "dependent_groups_broken": sum(v["broken"] for _, v in verdicts),
        "split_precision": tp / (tp + fp) if tp + fp else 1.0,
        "split_recall": tp / (tp + fn) if tp + fn else 1.0,
        "exact_by_category": {k: f"{by_cat_ok[k]}/{by_cat[k]}" for k in sorted(by_cat)},
        "calibration": calibration([v for _, v in verdicts]),
        "held_back_below_threshold": sum(v["held_back"] for _, v in verdicts),
        "exact_by_language": {k: round(by_lang_ok[k] / by_lang[k], 3) for k in sorted(by_lang)},
        "misses": [e["id"] for e, v in verdicts if not v["exact"]],
    }


def time_per_prompt(texts: list[str], passes: int = 7) -> float:
    """Seconds ``detect`` takes per prompt: the fastest of ``passes`` passes over ``texts``."""
    best = float("inf")
    for _ in range(passes):
        start = time.perf_counter()
        for text in texts:
            detect(text)
        best = min(best, time.perf_counter() - start)
    return best / len(texts)


def main() -> None:
    results: dict[str, Any] = {}
    for name in SETS:
        entries = load(name)
        result = evaluate(entries)
        results[name] = result
        print(f"== {name}: {result['prompts']} prompts")
        print(
            f"single-question prompts left whole: {result['single_kept_whole']:.1%} (target >= 98 %)"
        )
        print(
            f"multi-question prompts split exactly right: {result['multi_exact']:.1%} (target >= 90 %)"
        )
        print(f"dependent groups split apart: {result['dependent_groups_broken']} (target 0)")
        print(
            f"split decision: precision {result['split_precision']:.3f}, recall {result['split_recall']:.3f}"
        )
        print(f"exact by category: {result['exact_by_category']}")
        print(f"exact by language: {result['exact_by_language']}")
        print(f"held back below the split threshold: {result['held_back_below_threshold']}")
        for level, row in result["calibration"].items():
            print(
                f"  splits at confidence {level}: {row['splits']}, wrong {row['wrong']}, "
                f"exact {row['exact']}, precision {row['precision']:.3f}"
            )
        if "--show-misses" in sys.argv:
            by_id = {e["id"]: e for e in entries}
            for mid in result["misses"]:
                e = by_id[mid]
                d = detect(e["text"])
                print(f"\n--- {mid} expected {e['groups']} got {d.groups} ({d.style}, {d.reasons})")
                print(e["text"])
    texts = [e["text"] for name in SETS for e in load(name)]
    per_prompt = time_per_prompt(texts)
    results["time_per_prompt_us"] = round(per_prompt * 1e6, 1)
    print(
        f"\n== time per prompt: {per_prompt * 1e6:.1f} us (best of 7 passes over {len(texts)} prompts)"
    )
    from _common import save

    save("detection", results)


if __name__ == "__main__":
    main()
