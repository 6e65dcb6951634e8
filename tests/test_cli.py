"""The fanout command line."""

from __future__ import annotations

import subprocess
import sys

import pytest

from fanout._cli import main
from fanout._demo import DemoRow, format_demo


@pytest.mark.parametrize("command", [[], ["sim"], ["demo"]])
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--help works on the program and on each subcommand."""
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0
    assert "usage: fanout" in capsys.readouterr().out


def test_sim_rejects_bad_options_with_a_clear_message(capsys: pytest.CaptureFixture[str]) -> None:
    """An unknown fault kind is an error that names it, not a traceback."""
    assert main(["sim", "--fault", "meteor=0.1"]) == 2
    assert "meteor" in capsys.readouterr().err


def test_sim_serves_over_http_from_the_command_line() -> None:
    """`fanout sim` starts a server the openai SDK can talk to."""
    import asyncio
    import socket

    from openai import AsyncOpenAI

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with subprocess.Popen(
        [sys.executable, "-m", "fanout", "sim", "--port", str(port), "--time-scale", "100"],
        stdout=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline()
            assert f"127.0.0.1:{port}" in line

            async def ask() -> str:
                client = AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="sim")
                r = await client.chat.completions.create(
                    model="m", messages=[{"role": "user", "content": "hi {{tokens=3}}"}]
                )
                await client.close()
                return r.choices[0].message.content or ""

            assert asyncio.run(ask()).startswith("ref ")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_demo_table_reports_the_speedup() -> None:
    """The demo's table shows each scenario's merged and split times and the ratio."""
    rows = [DemoRow("batching", merged_s=1.6, split_s=0.4, merged_requests=1, split_requests=5,
                    auto_s=0.41, auto_choice="split")]  # fmt: skip
    text = format_demo(rows, time_scale=10)
    assert "batching" in text
    assert "4.00x" in text
    assert "16.0s" in text
    assert "split" in text and "4.1s" in text
