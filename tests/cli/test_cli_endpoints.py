"""``fanout run`` over several endpoints: ``--base-url`` repeated, or ``--endpoints FILE``,
through the real CLI in a subprocess against simulators on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from pathlib import Path

from ..conftest import SimFactory


async def _fanout(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fanout", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _questions(path: Path, count: int) -> Path:
    lines = (json.dumps({"id": i, "question": f"What is item {i}?"}) for i in range(count))
    path.write_text("".join(line + "\n" for line in lines))
    return path


def _records(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_run_with_the_base_url_repeated_uses_every_endpoint(
    sim: SimFactory, tmp_path: Path
) -> None:
    """``--base-url A --base-url B``: every id answered once, each record naming the
    endpoint that answered it, both endpoints used."""
    src, dst = _questions(tmp_path / "q.jsonl", 60), tmp_path / "a.jsonl"
    async with sim(time_scale=50, slots=4) as (a, _), sim(time_scale=50, slots=4) as (b, _):
        code, out, err = await _fanout(
            "run", str(src), str(dst), "--base-url", a.base_url, "--base-url", b.base_url,
            "--api-key", "sim", "--model", "m", "--policy", "split", "--no-progress",
        )  # fmt: skip
        assert code == 0, (out, err)
        sent = [len(a.stats.requests), len(b.stats.requests)]  # a list: the two may be equal
    records = _records(dst)
    assert Counter(r["id"] for r in records) == Counter(range(60))
    by = Counter(r["endpoint"] for r in records)
    assert set(by) == {f"127.0.0.1:{a.port}", f"127.0.0.1:{b.port}"}
    assert sorted(by.values()) == sorted(sent)


async def test_run_with_an_endpoints_file_keeps_the_fallback_for_failures(
    sim: SimFactory, tmp_path: Path
) -> None:
    """``--endpoints FILE``: names, priorities and limits from the file; the fallback
    (priority 1) answers nothing while the primary is up."""
    src, dst = _questions(tmp_path / "q.jsonl", 30), tmp_path / "a.jsonl"
    async with sim(time_scale=50) as (a, _), sim(time_scale=50) as (b, _):
        spec = [
            {"base_url": a.base_url, "name": "primary", "api_key": "sim", "rpm": 6000},
            {"base_url": b.base_url, "name": "backup", "api_key": "sim", "priority": 1},
        ]
        (tmp_path / "endpoints.json").write_text(json.dumps(spec))
        code, out, err = await _fanout(
            "run", str(src), str(dst), "--endpoints", str(tmp_path / "endpoints.json"),
            "--model", "m", "--policy", "split", "--no-progress",
        )  # fmt: skip
        assert code == 0, (out, err)
        assert b.stats.requests == []
    assert Counter(r["endpoint"] for r in _records(dst)) == {"primary": 30}
    (tmp_path / "bad.json").write_text(json.dumps([{"base_url": a.base_url, "rmp": 5}]))
    code, out, err = await _fanout(
        "run", str(src), str(dst), "--endpoints", str(tmp_path / "bad.json"), "--model", "m"
    )
    assert code == 2 and "unknown key 'rmp'" in err
