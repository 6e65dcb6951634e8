"""Memory of a large resumable job: `fanout run` over 100,000 and 1,000,000 tiny questions.

Writes the questions to a temporary file, runs ``fanout run`` in a child process
against the simulator (its own process, ``time_scale`` 1000, one-token answers),
merging 50 questions per request (``--policy merge --max-group-size 50``) so the run
takes minutes rather than hours, and reports the child's peak resident memory
(``ru_maxrss``) and wall time. Memory that stays flat from 100,000 to 1,000,000
lines shows the input is streamed; what grows is one entry per id (to find
duplicates and to skip what is done on resume).

Run: ``python benchmarks/jsonl_memory.py [N ...]``
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import save, sim_process


def run_job(n: int, base_url: str, workdir: Path) -> dict[str, float]:
    src, dst = workdir / f"q{n}.jsonl", workdir / f"a{n}.jsonl"
    with src.open("w") as f:
        for i in range(n):
            f.write(json.dumps({"id": i, "question": f"Tiny question {i}?"}) + "\n")
    cmd = [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--base-url", base_url, "--model", "m",
           "--api-key", "sim", "--policy", "merge", "--max-group-size", "50", "--concurrency", "64",
           "--no-progress"]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-2000:])
    with dst.open("rb") as f:
        lines = sum(1 for _ in f)
    assert lines == n, (lines, n)
    src.unlink()
    dst.unlink()
    return {
        "lines": n,
        "wall_s": round(wall, 1),
        "peak_rss_mib": round(max(peak_kib, before) / 1024, 1),
    }


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [100_000, 1_000_000]
    results = []
    with sim_process("--time-scale", "1000", "--rtt-ms", "0", "--answer-tokens", "1") as url, \
            tempfile.TemporaryDirectory() as tmp:  # fmt: skip
        for n in sorted(sizes):
            r = run_job(n, url, Path(tmp))
            results.append(r)
            print(
                f"{n:>9,} lines: {r['wall_s']:>7.1f}s, peak RSS {r['peak_rss_mib']:.1f} MiB (every line answered)"
            )
    save("jsonl_memory", {"runs": results})


if __name__ == "__main__":
    main()
