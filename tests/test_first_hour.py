"""A newcomer's first hour: what the README shows works as shown, mistakes get one clear
line, and ``import fanout`` stays light (issue 25, item 5)."""

from __future__ import annotations

import ast
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import cast

import openai
import pytest

import fanout

from .conftest import SimFactory

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "src" / "fanout"


def _fanout(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "fanout", *args],
                          capture_output=True, text=True, timeout=60)  # fmt: skip


def test_the_readmes_plan_example_shows_a_plan() -> None:
    """`fanout plan --rpm 3 "..."` as the README writes it: several parts detected and
    more than one candidate weighed."""
    readme = (ROOT / "README.md").read_text()
    line = next(ln for ln in readme.splitlines() if ln.startswith("fanout plan "))
    command = shlex.split(line.split("  #", 1)[0])
    proc = _fanout(*command[1:])
    assert proc.returncode == 0, proc.stderr
    detected = re.search(r"detected: (\d+) part\(s\) in (\d+) group\(s\)", proc.stdout)
    assert detected is not None, proc.stdout
    assert int(detected.group(2)) >= 3
    candidates = [
        ln for ln in proc.stdout.splitlines() if re.match(r"^[ *](split|merge|groups)", ln)
    ]
    assert len(candidates) >= 2, proc.stdout


def test_sim_on_a_port_out_of_range_says_so_in_one_line() -> None:
    proc = _fanout("sim", "--port", "99999")
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "fanout sim: --port must be 0-65535 (0 picks a free one), got 99999"
    ]


def test_wrapping_a_sync_client_says_what_to_use_instead() -> None:
    """There is no synchronous wrapper: the error says so, and names what works (an
    AsyncOpenAI; from sync code, detect + ask_many_sync + layout), not ask_many_sync
    alone as if it replaced wrap."""
    with pytest.raises(fanout.ConfigError) as info:
        fanout.wrap(openai.OpenAI(api_key="sk-test", base_url="http://127.0.0.1:9/v1"))  # type: ignore[type-var]
    message = str(info.value)
    assert "wrap needs an openai.AsyncOpenAI" in message
    assert "no synchronous wrapper" in message
    assert "fanout.detect" in message
    assert "layout" in message


def test_the_sync_recipe_the_wrap_error_gives_works(sim: SimFactory) -> None:
    """detect, ask_many_sync with a sync OpenAI, layout: what wrap would have returned."""
    import asyncio
    import threading

    text = "1. What is A?\n2. What is B?"
    results: list[str] = []

    async def serve_and_ask() -> None:
        async with sim(time_scale=100, answer_tokens=4) as (server, _):
            client = openai.OpenAI(base_url=server.base_url, api_key="sim")

            def recipe() -> None:
                d = fanout.detect(text)
                answers = fanout.ask_many_sync(
                    [d.group_prompt(g) for g in d.groups], client=client, model="m"
                )
                results.append(d.layout(cast("list[str]", answers.texts)))

            thread = threading.Thread(target=recipe)
            thread.start()
            while thread.is_alive():
                await asyncio.sleep(0.02)

    asyncio.run(serve_and_ask())
    d = fanout.detect(text)
    expected = d.layout([fanout.sim.answer_for(d.group_prompt(g), 4) for g in d.groups])
    assert results == [expected]


def test_dir_of_the_package_shows_no_annotations() -> None:
    assert "annotations" not in dir(fanout)


def _module_level_imports(path: Path) -> list[str]:
    """Modules a file imports when it is imported (not under TYPE_CHECKING, not in a
    function)."""
    tree = ast.parse(path.read_text())
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
    return names


def test_importing_fanout_builds_none_of_the_sdks_response_types() -> None:
    """openai.types (the response models) is imported when a reply is read or built,
    not by ``import fanout``: an SDK that loads its types lazily keeps the import light
    (the wrapper pulled in 230 ms of them)."""
    offenders = {
        str(path.relative_to(SRC)): name
        for path in SRC.rglob("*.py")
        if "sim" not in path.relative_to(SRC).parts
        for name in _module_level_imports(path)
        if name.startswith("openai.types")
    }
    assert offenders == {}
