"""How long ``import fanout`` takes against ``import openai`` (which it loads), in fresh
interpreters taken in turn, so that both see the same load on the machine.

    python benchmarks/import_time.py [--runs 15]

Each run is a new ``python -c "import X"`` whose import is timed inside it
(``time.perf_counter`` around the import statement, so the interpreter's own start is
left out). Reported: the median of each and the median of the per-pair ratios
(fanout / openai). Both load from bytecode, as a regular install has it: pip compiles
an installed package's modules, and the benchmark compiles fanout's first (an editable
install under ``PYTHONDONTWRITEBYTECODE=1`` would otherwise compile every module from
source at each import, ~90 ms on these machines, and time that instead). fanout loads detection, jobs, profiles and the wrapper when first
used, so the ratio is the engine's own import cost on top of the SDK's.
"""

from __future__ import annotations

import argparse
import compileall
import importlib.util
import statistics
import subprocess
import sys

from _common import save

_TIMED = "import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"


def timed(module: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", _TIMED.format(module=module)],
        capture_output=True,
        text=True,
        check=True,
    )
    return float(out.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    spec = importlib.util.find_spec("fanout")
    assert spec is not None and spec.submodule_search_locations
    for where in spec.submodule_search_locations:
        compileall.compile_dir(where, quiet=1)
    timed("fanout")  # warm the file system cache first
    timed("openai")
    pairs = []
    for _ in range(args.runs):
        sdk = timed("openai")
        ours = timed("fanout")
        pairs.append((ours, sdk))
    ratio = statistics.median(o / s for o, s in pairs)
    result = {
        "runs": args.runs,
        "import_fanout_s": round(statistics.median(o for o, _ in pairs), 4),
        "import_openai_s": round(statistics.median(s for _, s in pairs), 4),
        "ratio_median": round(ratio, 3),
        "ratios": [round(o / s, 3) for o, s in pairs],
    }
    path = save("import_time", result)
    print(
        f"import fanout {result['import_fanout_s']:.3f} s, import openai "
        f"{result['import_openai_s']:.3f} s (medians of {args.runs}); "
        f"fanout / openai {ratio:.2f}x (median of the pairs) -> {path}"
    )


if __name__ == "__main__":
    main()
