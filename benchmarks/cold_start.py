"""The auto policy on first contact: a one-shot ``fanout.ask_many`` that knows nothing
of the endpoint or of the answers (no warm-up, no ``expected_tokens``, no memory).

Two cases, each run as forced ``split`` and as the default ``auto``, on fresh
simulators in this process, with fanout's endpoint memory off (a remembered
endpoint would make the call warm):

* **short answers under a request limit**: 200 questions with 3-token answers; the
  simulator allows 200 requests per minute, policed over 3 s (sliding window, and
  token bucket); the call is told ``Limits(rpm=200)``. Target: auto's wall <= 0.15x
  split's, every answer the simulator's answer to its own question, in order.
* **long answers, ample limits**: 5 questions with 200-token answers. Target: auto
  still splits, wall <= 1.05x forced split (best of 3 each, interleaved).

The simulator runs at ``time_scale`` 1 (real seconds; a split run of the first case
takes a minute), so the priors fanout starts from meet the speeds they describe.

Each short-answer case also runs auto with the group cap lifted
(``Policy(max_group_size=None)``), to show what the default cap of 6 costs there, and
with the merge checks off (``Policy(merge_agreement=None)``), to show what checking the
merged answers costs (issue 35's targets: auto <= 0.25x split with the checks, <= 0.20x
without).

Run: ``python benchmarks/cold_start.py [--quick] [--virtual]`` (``--quick``: time_scale 10,
for a look in seconds, the figures less faithful; ``--virtual``: on a loop of virtual
time (``looptime``, a development dependency), where sleeps and the simulator's steps take
no real time and fanout's own CPU counts for nothing: the same figures on every run and
on any load, a measure of the engine's decisions (plans, checks, pacing) alone, in about
ten seconds); writes ``results/cold_start.json`` (``cold_start_virtual.json``).
"""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

from _common import save
from openai import AsyncOpenAI

import fanout
from fanout.sim import SimConfig, answer_for, serve

os.environ["FANOUT_MEMORY"] = "off"  # every call starts cold (a no-op before memory exists)


async def _one_shot(
    config: SimConfig,
    questions: list[str],
    policy: str | fanout.Policy,
    limits: fanout.Limits | None,
) -> tuple[float, fanout.Answers]:
    async with serve(config) as server:
        client = AsyncOpenAI(base_url=server.base_url, api_key="bench")
        _ = client.chat  # the SDK imports its resources on first use: not part of the call
        loop = asyncio.get_running_loop()  # its clock: virtual with --virtual
        start = loop.time()
        answers = await fanout.ask_many(
            questions, client=client, model="sim-1", limits=limits, policy=policy
        )
        wall = loop.time() - start
        await client.close()
    return wall, answers


def _correct(answers: fanout.Answers, questions: list[str], tokens: int) -> bool:
    return [a.index for a in answers] == list(range(len(questions))) and all(
        a.text == answer_for(q, tokens) for a, q in zip(answers, questions, strict=True)
    )


async def short_answers(scale: float, policing: str) -> dict[str, Any]:
    config = SimConfig(
        time_scale=scale, rpm=200, limit_period_s=3, limit_policing=policing, answer_tokens=3
    )
    questions = [f"Short question {i}: name one colour." for i in range(200)]
    limits = fanout.Limits(rpm=200 * scale)
    split_s, split = await _one_shot(config, questions, "split", limits)
    auto_s, auto = await _one_shot(config, questions, "auto", limits)
    # The same with the group cap lifted: what the quality cap of 6 costs here.
    free = fanout.Policy(max_group_size=None)
    uncapped_s, uncapped = await _one_shot(config, questions, free, limits)
    # And with the merge checks off: what checking the merged answers costs here.
    unchecked = fanout.Policy(merge_agreement=None)
    unchecked_s, unchecked_answers = await _one_shot(config, questions, unchecked, limits)
    report = auto.report
    row = {
        "policing": policing,
        "split_s": round(split_s, 3),
        "auto_s": round(auto_s, 3),
        "ratio": round(auto_s / split_s, 3),
        "split_requests": split.report.requests,
        "auto_requests": report.requests,
        "auto_429s": report.rate_limited,
        "correct_and_in_order": _correct(auto, questions, 3) and _correct(split, questions, 3),
        "uncapped_s": round(uncapped_s, 3),
        "uncapped_ratio": round(uncapped_s / split_s, 3),
        "uncapped_requests": uncapped.report.requests,
        "unchecked_s": round(unchecked_s, 3),
        "unchecked_ratio": round(unchecked_s / split_s, 3),
        "unchecked_requests": unchecked_answers.report.requests,
        "unchecked_correct_and_in_order": _correct(unchecked_answers, questions, 3),
        "revisions": [r.as_dict() for r in report.revisions],
    }
    print(f"short answers ({policing}): split {split_s:.2f}s ({split.report.requests} requests), "
          f"auto {auto_s:.2f}s ({report.requests} requests, {report.rate_limited} 429s): "
          f"{auto_s / split_s:.3f}x; correct and in order: {row['correct_and_in_order']}")  # fmt: skip
    for r in report.revisions:
        print(f"    {r.at_s:6.2f}s  {r.plan.chosen.label:>12} for {r.questions:3}  ({r.trigger})")
    print(f"    with Policy(max_group_size=None): {uncapped_s:.2f}s "
          f"({uncapped.report.requests} requests): {uncapped_s / split_s:.3f}x")  # fmt: skip
    print(f"    with Policy(merge_agreement=None): {unchecked_s:.2f}s "
          f"({unchecked_answers.report.requests} requests): {unchecked_s / split_s:.3f}x")  # fmt: skip
    return row


async def long_answers(scale: float) -> dict[str, Any]:
    config = SimConfig(time_scale=scale, answer_tokens=200)
    questions = [f"Long question {i}: explain it." for i in range(5)]
    split_s = auto_s = float("inf")
    labels = set()
    for _ in range(3):
        s, _answers = await _one_shot(config, questions, "split", None)
        a, answers = await _one_shot(config, questions, "auto", None)
        split_s, auto_s = min(split_s, s), min(auto_s, a)
        assert answers.report.plan is not None
        labels.add(answers.report.plan.chosen.label)
        assert _correct(answers, questions, 200)
    print(f"long answers: split {split_s:.2f}s, auto {auto_s:.2f}s ({', '.join(sorted(labels))}): "
          f"{auto_s / split_s:.3f}x")  # fmt: skip
    return {"split_s": round(split_s, 3), "auto_s": round(auto_s, 3),
            "ratio": round(auto_s / split_s, 3), "auto_plans": sorted(labels)}  # fmt: skip


async def main() -> None:
    scale = 10.0 if "--quick" in sys.argv else 1.0
    short = [await short_answers(scale, p) for p in ("sliding", "bucket")]
    long = await long_answers(scale)
    virtual = "--virtual" in sys.argv
    save("cold_start_virtual" if virtual else "cold_start",
         {"time_scale": scale, "virtual_time": virtual, "short_answers": short,
          "long_answers": long})  # fmt: skip


if __name__ == "__main__":
    if "--virtual" in sys.argv:
        import looptime

        loop = looptime.new_event_loop(start=0)
        try:
            loop.run_until_complete(main())
        finally:
            loop.close()
    else:
        asyncio.run(main())
