"""Helpers shared by the benchmarks: a simulator in its own process, a redis-server, and
result files."""

from __future__ import annotations

import contextlib
import json
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).parent / "results"

# Every benchmark measures what it names, from the state it sets up: a Fanout must not
# load what an earlier run (another simulator that had the same loopback port, say)
# left in the endpoint memory. The child processes a benchmark starts inherit this.
os.environ["FANOUT_MEMORY"] = "off"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@contextlib.contextmanager
def redis_process() -> Iterator[str]:
    """Run a redis-server of its own on loopback (nothing saved); yield its URL."""
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("redis-server is not on the PATH")
    port = free_port()
    cmd = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@contextlib.contextmanager
def sim_process(*args: str) -> Iterator[str]:
    """Run ``fanout sim`` in a child process (its own core); yield its base URL."""
    port = free_port()
    cmd = [sys.executable, "-m", "fanout", "sim", "--port", str(port), *args]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            if str(port) not in line:
                raise RuntimeError(f"simulator did not start: {line!r}")
            yield f"http://127.0.0.1:{port}/v1"
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def sim_stats(base_url: str) -> dict[str, Any]:
    import urllib.request

    root = base_url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(f"{root}/sim/stats", timeout=30) as r:  # loopback only
        data: dict[str, Any] = json.load(r)
        return data


def save(name: str, data: dict[str, Any]) -> Path:
    RESULTS.mkdir(exist_ok=True)
    data = {
        "benchmark": name,
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "python": platform.python_version(),
        "machine": f"{platform.machine()}, {_cores()} cores",
        **data,
    }
    path = RESULTS / f"{name}.json"
    path.write_text(json.dumps(data, indent=2) + "\n")
    return path


def _cores() -> int:
    import os

    return os.cpu_count() or 0
