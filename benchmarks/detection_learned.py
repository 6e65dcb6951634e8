"""Leave-one-set-out measurement of the learned second look (``benchmarks/_learned_split.py``)
on the labelled sets of tests/data/, against the rules alone.

For each set held out, the two logistic regressions (a part starts at this place; the
part is independent of the one before) are trained on every other set, and the held-out
set is scored with ``benchmarks/detection.py``'s ``judge``: the rules alone, then the
rules with the learned second look on the prompts they kept whole for want of evidence.
Per set: singles kept whole, prompts of the ``multi`` category split exactly, all
prompts with several parts exact, dependent groups broken, and the time ``detect``
takes per prompt with and without the second look.

Training labels come from each prompt's ``parts`` (the verbatim start of each part; for
the sets in ``CUE_IN_PARTS`` the start includes its connective) and ``groups``: a place
is a part start when a labelled part starts between it and the end of its connective
or marker; a part start is independent when its part is in another group than the part
before. Prompts whose parts are not labelled (most singles, the dependent prompts of
the older sets) give only negative places, or none (a dependent prompt without parts).

The boundary model is trained on every prompt of the training sets (on only the
prompts the rules kept whole with ``--kept-whole-only``: they hold too few part starts
to learn from). A cut is made where the boundary score is ``--tb`` or more (0.7) and
starts a new group where the independence score is ``--ts`` or more (0.95); with
``--nested`` the two are chosen for each held-out set without it (inner leave one set
out over the other sets: the grid point with the most multi prompts gained among those
that lose no single and break no dependent group on any inner set; off when none).
``--tb-low T``: once one cut of a prompt scores ``--tb`` and ``--ts``, its other cuts are
made from boundary score T (hysteresis). ``--show SET`` lists the prompts of SET gained and lost (``--all``: every miss).
Results go to benchmarks/results/detection_learned(_stumps)(_nested).json.

Run: ``python benchmarks/detection_learned.py [--nested] [--tb 0.7 --ts 0.95]
[--kept-whole-only] [--stumps] [--show SET [--all]] [--no-time]`` (``--stumps``: boosted
decision stumps instead of logistic regressions).
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _learned_split as _learned

import detection as bench
from fanout.detection import _detector
from fanout.detection._lang import language_of, script_of
from fanout.detection._markers import mask

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Prepared:
    entry: dict[str, Any]
    rules: _detector.Detection
    masked: str
    lang: str
    triggered: bool
    b_rows: list[dict[str, float]] = field(default_factory=list)
    b_labels: list[int] = field(default_factory=list)
    g_rows: list[dict[str, float]] = field(default_factory=list)
    g_labels: list[int] = field(default_factory=list)
    covered: int = 0
    gold_cuts: int = 0


def prepare(entry: dict[str, Any]) -> Prepared:
    text = entry["text"]
    d = _detector.detect(text)
    masked = mask(text)
    lang = "en" if script_of(text) else language_of(text)
    p = Prepared(entry, d, masked, lang, _learned.looks_again(d))
    held = d.reasons[-1].startswith("kept whole: confidence")
    cands = _learned.candidates(masked)
    rows = _learned.features(masked, cands, lang, held, _learned.rule_cuts(text, d))
    groups = entry["groups"]
    n_parts = sum(len(g) for g in groups)
    parts = entry.get("parts")
    if n_parts > 1 and not parts:
        return p  # parts not labelled: no place can be labelled
    offsets: list[int] = []
    at = 0
    for start in parts or []:
        o = text.find(start, at)
        offsets.append(o)
        at = o + 1
    group_of = {i: gi for gi, g in enumerate(groups) for i in g}
    cuts = {o: k for k, o in enumerate(offsets) if o > 0}
    p.gold_cuts = len(cuts)
    matched: dict[int, int] = {}
    for n, (c, row) in enumerate(zip(cands, rows, strict=True)):
        k = next((cuts[o] for o in cuts if c.pos <= o <= c.body), None)
        if k is not None and k not in matched.values():
            matched[n] = k
        p.b_rows.append(row)
        p.b_labels.append(int(k is not None))
    p.covered = len(matched)
    for n, k in matched.items():
        if k == 0:
            continue
        c = cands[n]
        a = offsets[k - 1]
        end = offsets[k + 1] if k + 1 < len(offsets) else len(text)
        p.g_rows.append(_learned.group_features(masked, lang, rows[n], a, c.pos, c.body, end))
        p.g_labels.append(int(group_of[k] != group_of[k - 1]))
    return p


def fit(rows: list[dict[str, float]], labels: list[int], l2: float = 1.0) -> dict[str, float]:
    """L2-regularised logistic regression by Newton's method."""
    names = sorted({k for r in rows for k in r})
    index = {k: i for i, k in enumerate(names)}
    x = np.zeros((len(rows), len(names)))
    for i, r in enumerate(rows):
        for k, v in r.items():
            x[i, index[k]] = v
    y = np.array(labels, dtype=float)
    w = np.zeros(len(names))
    reg = np.full(len(names), l2)
    reg[index["bias"]] = 1e-6 if "bias" in index else l2
    for _ in range(30):
        z = np.clip(x @ w, -30, 30)
        pr = 1 / (1 + np.exp(-z))
        grad = x.T @ (pr - y) + reg * w
        hess = (x * (pr * (1 - pr))[:, None]).T @ x + np.diag(reg)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return {k: round(float(w[i]), 4) for k, i in index.items() if abs(w[i]) > 1e-4}


def fit_stumps(
    rows: list[dict[str, float]], labels: list[int], rounds: int = 150, rate: float = 0.2
) -> _learned.Stumps:
    """Gradient-boosted decision stumps on the logistic loss (Newton steps per leaf)."""
    names = sorted({k for r in rows for k in r})
    x = np.array([[r.get(k, 0.0) for k in names] for r in rows])
    y = np.array(labels, dtype=float)
    prior = float(np.log((y.mean() + 1e-3) / (1 - y.mean() + 1e-3)))
    z = np.full(len(y), prior)
    stumps: _learned.Stumps = [("bias", -1.0, 0.0, prior)]
    splits = []
    for j, k in enumerate(names):
        values = np.unique(x[:, j])
        cuts = values[:-1] if len(values) <= 6 else np.quantile(x[:, j], [0.2, 0.4, 0.6, 0.8])
        splits += [(k, float(t), x[:, j] > t) for t in np.unique(cuts)]
    for _ in range(rounds):
        p = 1 / (1 + np.exp(-z))
        g, h = y - p, p * (1 - p) + 1e-6
        best = None
        for k, t, above in splits:
            gh, hh = g[above].sum(), h[above].sum()
            gl, hl = g.sum() - gh, h.sum() - hh
            gain = gh * gh / (hh + 1.0) + gl * gl / (hl + 1.0)
            if best is None or gain > best[0]:
                best = (gain, k, t, above, gl / (hl + 1.0), gh / (hh + 1.0))
        assert best is not None
        _, k, t, above, lo, hi = best
        z += rate * np.where(above, hi, lo)
        stumps.append((k, t, round(rate * lo, 4), round(rate * hi, 4)))
    return stumps


def train(
    prepared: list[Prepared], train_all: bool
) -> tuple[dict[str, float] | _learned.Stumps, dict[str, float] | _learned.Stumps]:
    use = [p for p in prepared if train_all or p.triggered]
    b_rows = [r for p in use for r in p.b_rows]
    b_labels = [y for p in use for y in p.b_labels]
    # independence is learned from every labelled part start (they are few)
    g_rows = [r for p in prepared for r in p.g_rows]
    g_labels = [y for p in prepared for y in p.g_labels]
    if "--stumps" in sys.argv:
        return fit_stumps(b_rows, b_labels), fit_stumps(g_rows, g_labels)
    return fit(b_rows, b_labels), fit(g_rows, g_labels)


def with_look(prepared: list[Prepared], weights: _learned.Weights | None) -> dict[str, Any]:
    """The held-out set judged by ``bench.judge`` with the second look (or without)."""
    chosen: dict[str, _detector.Detection] = {}
    for p in prepared:
        d = p.rules
        if weights is not None and p.triggered:
            found = _learned.second_look(p.entry["text"], p.masked, p.lang, d, weights)
            d = found or d
        chosen[p.entry["text"]] = d
    # judge() calls the module's detect: it is given the detections chosen here
    saved = vars(bench)["detect"]
    setattr(bench, "detect", lambda text: chosen[text])  # noqa: B010
    try:
        result = bench.evaluate([p.entry for p in prepared])
    finally:
        setattr(bench, "detect", saved)  # noqa: B010
    return result


def row(name: str, r: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    singles = sum(e["category"] == "single" for e in entries)
    by_cat = r["exact_by_category"]
    kept = round(r["single_kept_whole"] * singles)
    return (
        f"{name:<22} singles kept {kept:>3}/{singles:<3} multi exact {by_cat.get('multi', '-'):>7} "
        f"all-several exact {r['multi_exact']:.1%}  broken {r['dependent_groups_broken']}"
    )


GRID = [(tb, ts) for tb in (0.5, 0.6, 0.7, 0.8) for ts in (0.85, 0.9, 0.95, 0.97)]


def counts(r: dict[str, Any], entries: list[dict[str, Any]]) -> tuple[int, int, int]:
    """Multi prompts exact, dependent groups broken, singles kept whole."""
    multi = int(r["exact_by_category"].get("multi", "0/0").split("/")[0])
    singles = sum(e["category"] == "single" for e in entries)
    return multi, r["dependent_groups_broken"], round(r["single_kept_whole"] * singles)


def choose(sets: dict[str, list[Prepared]], held_out: str, train_all: bool) -> tuple[float, float]:
    """The thresholds for ``held_out`` chosen without it: inner leave-one-set-out over
    the other sets, the grid point with the most multi prompts gained among those that
    split no single and break no dependent group more than the rules on any inner set
    (the highest thresholds on a tie)."""
    names = [n for n in sets if n != held_out]
    gains = dict.fromkeys(GRID, 0)
    safe = dict.fromkeys(GRID, True)
    for inner in names:
        train_on = [p for n in names if n != inner for p in sets[n]]
        wb, wg = train(train_on, train_all)
        entries = [p.entry for p in sets[inner]]
        m0, b0, s0 = counts(with_look(sets[inner], None), entries)
        for tb, ts in GRID:
            m, b, s_ = counts(with_look(sets[inner], _learned.Weights(wb, wg, tb, ts)), entries)
            gains[(tb, ts)] += m - m0
            safe[(tb, ts)] = safe[(tb, ts)] and b <= b0 and s_ >= s0
    ok = [g for g in GRID if safe[g]] or [(1.1, 1.1)]
    return max(ok, key=lambda g: (gains.get(g, 0), g))


def timing(texts: list[str], weights: _learned.Weights | None) -> float:
    def run(text: str) -> None:
        d = _detector.detect(text)
        if weights is not None and _learned.looks_again(d):
            masked = mask(text)
            lang = "en" if script_of(text) else language_of(text)
            _learned.second_look(text, masked, lang, d, weights)

    best = float("inf")
    for _ in range(3):
        start = time.process_time()
        for t in texts:
            run(t)
        best = min(best, time.process_time() - start)
    return best / len(texts) * 1e6


def arg(name: str, default: float) -> float:
    return float(sys.argv[sys.argv.index(name) + 1]) if name in sys.argv else default


def main() -> None:
    tb, ts = arg("--tb", 0.7), arg("--ts", 0.95)
    train_all = "--kept-whole-only" not in sys.argv
    sets = {name: [prepare(e) for e in bench.load(name)] for name in bench.SETS}
    for name, prepared in sets.items():
        gold = sum(p.gold_cuts for p in prepared)
        cov = sum(p.covered for p in prepared)
        trig = sum(p.triggered for p in prepared)
        print(f"{name}: candidate places cover {cov}/{gold} labelled part starts; "
              f"{trig}/{len(prepared)} prompts kept whole for want of evidence")  # fmt: skip
    print(f"\nleave one set out (tb {tb}, ts {ts}, boundary model trained on "
          f"{'all prompts' if train_all else 'prompts kept whole'})")  # fmt: skip
    totals = {"rules": [0, 0, 0], "learned": [0, 0, 0]}
    results: dict[str, Any] = {"tb": tb, "ts": ts, "nested": "--nested" in sys.argv}
    for name, prepared in sets.items():
        others = [p for n, ps in sets.items() if n != name for p in ps]
        wb, wg = train(others, train_all)
        set_tb, set_ts = choose(sets, name, train_all) if "--nested" in sys.argv else (tb, ts)
        if "--nested" in sys.argv:
            print(f"{name}: thresholds chosen without it: tb {set_tb}, ts {set_ts}")
        weights = _learned.Weights(wb, wg, set_tb, set_ts, arg("--tb-low", -1.0))
        entries = [p.entry for p in prepared]
        base = with_look(prepared, None)
        learned = with_look(prepared, weights)
        print(row(f"{name} rules", base, entries))
        print(row(f"{name} +learned", learned, entries))
        if "--show" in sys.argv and sys.argv[sys.argv.index("--show") + 1] == name:
            show(prepared, weights, base, learned)
        results[name] = {
            "thresholds": [set_tb, set_ts],
            "rules": dict(
                zip(("multi_exact", "broken", "singles_kept"), counts(base, entries), strict=True)
            ),
            "learned": dict(
                zip(
                    ("multi_exact", "broken", "singles_kept"), counts(learned, entries), strict=True
                )
            ),
            "gained": sorted(set(base["misses"]) - set(learned["misses"])),
            "lost": sorted(set(learned["misses"]) - set(base["misses"])),
        }
        for key, r in (("rules", base), ("learned", learned)):
            cat = r["exact_by_category"]
            totals[key][0] += int(cat.get("multi", "0/0").split("/")[0])
            totals[key][1] += r["dependent_groups_broken"]
            totals[key][2] += round(
                r["single_kept_whole"] * sum(e["category"] == "single" for e in entries)
            )
    print(f"\ntotals (multi exact, broken, singles kept): rules {totals['rules']}, "
          f"learned {totals['learned']}")  # fmt: skip
    texts = [p.entry["text"] for ps in sets.values() for p in ps]
    wb, wg = train([p for ps in sets.values() for p in ps], train_all)
    weights = _learned.Weights(wb, wg, tb, ts)
    if "--no-time" not in sys.argv:
        results["time_per_prompt_us"] = {
            "rules": round(timing(texts, None), 1),
            "rules_and_second_look": round(timing(texts, weights), 1),
        }
        print(f"time per prompt: rules {results['time_per_prompt_us']['rules']} us, rules + second look "
              f"{results['time_per_prompt_us']['rules_and_second_look']} us (CPU, best of 3)")  # fmt: skip
    from _common import save

    name = "detection_learned" + ("_stumps" if "--stumps" in sys.argv else "")
    save(name + ("_nested" if "--nested" in sys.argv else ""), results)


def show(
    prepared: list[Prepared],
    weights: _learned.Weights,
    base: dict[str, Any],
    learned: dict[str, Any],
) -> None:
    gained = set(base["misses"]) - set(learned["misses"])
    lost = set(learned["misses"]) - set(base["misses"])
    for p in prepared:
        e = p.entry
        if (
            e["id"] in gained
            or e["id"] in lost
            or (e["id"] in learned["misses"] and "--all" in sys.argv)
        ):
            d = (
                _learned.second_look(e["text"], p.masked, p.lang, p.rules, weights)
                if p.triggered
                else None
            )
            tag = "GAINED" if e["id"] in gained else "LOST" if e["id"] in lost else "miss"
            print(f"  {tag} {e['id']} exp {e['groups']} parts {e.get('parts')}")
            print(f"     text: {e['text'][:300]!r}")
            if d:
                print(
                    f"     got {d.groups} {[q.text[:25] for q in d.questions]} pre {d.preamble[:40]!r} {d.reasons[-2]}"
                )


if __name__ == "__main__":
    main()
