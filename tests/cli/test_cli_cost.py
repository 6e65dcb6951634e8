"""The command line's money: ``fanout run --max-cost`` (stop, exit 5, resume),
``fanout run --dry-run`` (estimates, nothing sent) and ``fanout plan``'s costs, each
through the real CLI in a subprocess against a simulator on 127.0.0.1."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from fanout import Usage
from fanout.money import cost_of

from ..conftest import SimFactory


def _questions(path: Path, count: int, tokens: int) -> Path:
    path.write_text("".join(
        json.dumps({"id": i, "question": f"In one short paragraph, what does item {i} of the "
                    f"list mean? {{{{tokens={tokens}}}}}", "expected_tokens": tokens}) + "\n"
        for i in range(count)
    ))  # fmt: skip
    return path


async def _fanout(*args: str) -> tuple[int, str, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "fanout", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode is not None
    return proc.returncode, out.decode(), err.decode()


def _records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line, parse_float=Decimal) for line in path.read_text().splitlines()]


async def test_run_max_cost_stops_under_the_cap_and_a_higher_cap_finishes(
    sim: SimFactory, tmp_path: Path
) -> None:
    """``--max-cost X``: the job stops with exit code 5, its recorded spend at most X and
    within one request's worst case of it; run again with the same cap it sends
    nothing more; with a higher one it finishes, every id answered exactly once."""
    src, dst = _questions(tmp_path / "q.jsonl", 40, 40), tmp_path / "a.jsonl"
    cap = Decimal("0.0004")
    async with sim(time_scale=100) as (server, _):
        common = ["run", str(src), str(dst), "--base-url", server.base_url, "--api-key", "sim",
                  "--model", "gpt-4o-mini", "--policy", "split", "--max-tokens", "60",
                  "--no-progress"]  # fmt: skip
        code, out, err = await _fanout(*common, "--max-cost", str(cap))
        assert code == 5, (out, err)
        assert "stopped at the spend cap --max-cost 0.0004" in err
        spent = sum((r["cost"] for r in _records(dst)), Decimal(0))
        assert 0 < spent <= cap
        worst = cost_of(Usage(prompt_tokens=60, completion_tokens=60), "gpt-4o-mini")
        assert worst is not None and cap - spent < worst
        sent = len(server.stats.requests)

        code, out, err = await _fanout(*common, "--max-cost", str(cap))
        assert code == 5 and len(server.stats.requests) == sent

        code, out, err = await _fanout(*common, "--max-cost", "0.01")
        assert code == 0, (out, err)
    records = _records(dst)
    answered = Counter(r["id"] for r in records if r["error"] is None)
    assert sorted(answered) == list(range(40)) and set(answered.values()) == {1}
    assert len(server.stats.requests) == 40
    assert sum((r["cost"] for r in records), Decimal(0)) <= Decimal("0.01")


def _estimate(out: str) -> Decimal:
    """The chosen plan's estimated cost in ``fanout run --dry-run``'s table."""
    row = next(line for line in out.splitlines() if line.startswith("*"))
    return Decimal(re.findall(r"\$([0-9.]+)", row)[0])


async def test_dry_run_sends_nothing_and_estimates_within_10_percent(
    sim: SimFactory, tmp_path: Path
) -> None:
    """``fanout run --dry-run``: no request reaches the endpoint, the output is not
    created, and its cost estimate of the split and of the merged plan is within 10 %
    of the cost the run then reports."""
    src = _questions(tmp_path / "q.jsonl", 24, 40)
    async with sim(time_scale=100) as (server, _):
        for policy in ("split", "merge"):
            dst = tmp_path / f"{policy}.jsonl"
            common = ["run", str(src), str(dst), "--base-url", server.base_url, "--api-key",
                      "sim", "--model", "gpt-4o-mini", "--policy", policy, "--no-progress",
                      "--no-memory"]  # fmt: skip
            code, out, err = await _fanout(*common, "--dry-run")
            assert code == 0, err
            assert server.stats.requests == [] and not dst.exists()
            assert f"{policy} (batch)" in out and "within 24 h" in out
            estimate = _estimate(out)
            code, out, err = await _fanout(*common)
            assert code == 0, err
            reported = Decimal(re.findall(r"cost \$([0-9.]+)", out)[0])
            assert abs(estimate - reported) / reported < Decimal("0.10"), (
                policy,
                estimate,
                reported,
            )
            server.stats.requests.clear()


async def test_plan_prints_the_cost_of_each_plan_with_a_price_of_your_own(
    tmp_path: Path,
) -> None:
    """``fanout plan --file ... --price IN,OUT``: each plan's estimated cost at that
    price, sending nothing (no endpoint runs at all)."""
    src = _questions(tmp_path / "q.jsonl", 10, 50)
    code, out, err = await _fanout("plan", "--file", str(src), "--model", "house-llm",
                                   "--price", "1,2", "--policy", "split")  # fmt: skip
    assert code == 0, err
    row = [line for line in out.splitlines() if line.startswith("*split ")][-1]
    assert "est. cost" in out and "$0.00" in row and "unknown" not in row


async def test_run_max_cost_without_max_tokens_is_a_hard_cap(
    sim: SimFactory, tmp_path: Path
) -> None:
    """``--max-cost`` without ``--max-tokens``, answers longer than a request reserves
    (1,500 tokens against 1,000): each answer is capped at what its request reserved, so
    the job's spend stays within the cap (it passed it when answers ran past their
    reservation) and the answers cut say so (``finish_reason: length``)."""
    src, dst = _questions(tmp_path / "q.jsonl", 12, 1500), tmp_path / "a.jsonl"
    cap = Decimal("0.002")
    async with sim(time_scale=1000) as (server, _):
        code, out, err = await _fanout(
            "run", str(src), str(dst), "--base-url", server.base_url, "--api-key", "sim",
            "--model", "gpt-4o-mini", "--policy", "split", "--no-progress",
            "--max-cost", str(cap),
        )  # fmt: skip
    assert code == 5, (out, err)
    records = _records(dst)
    spent = sum((r["cost"] for r in records if r.get("cost") is not None), Decimal(0))
    assert 0 < spent <= cap, (spent, cap)
    answered = [r for r in records if r["error"] is None]
    assert answered and all(r["finish_reason"] == "length" for r in answered)
    assert all(r["usage"]["completion_tokens"] == 1000 for r in answered)
