"""The fanout command line."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fanout.cli.demo import DemoRow, LiveTable, format_demo
from fanout.cli.main import main

from ..conftest import SimFactory


@pytest.mark.parametrize("command", [[], ["sim"], ["demo"], ["ask"], ["run"], ["plan"], ["bench"]])
def test_every_command_has_help(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """--help works on the program and on each subcommand."""
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0
    assert "usage: fanout" in capsys.readouterr().out


def _questions(tmp_path: Path, count: int) -> Path:
    src = tmp_path / "q.jsonl"
    src.write_text(
        "".join(json.dumps({"id": i, "question": f"q{i}?"}) + "\n" for i in range(count))
    )
    return src


def _without(module: str) -> str:
    """``python -c`` code running the command line with ``import module`` failing,
    as when an optional dependency is not installed."""
    return (
        f"import runpy, sys; sys.modules[{module!r}] = None; "
        "sys.argv[0] = 'fanout'; runpy.run_module('fanout', run_name='__main__')"
    )


def test_verbose_works_after_the_subcommand_too(tmp_path: Path) -> None:
    """`fanout run -vv ...` logs at debug level, and -v before and after the command add up."""
    src = _questions(tmp_path, 2)
    for flags in (["run", "-vv"], ["-v", "run", "-v"]):
        dst = tmp_path / f"a{len(flags)}.jsonl"
        proc = subprocess.run(
            [sys.executable, "-m", "fanout", *flags, str(src), str(dst), "--sim-time-scale", "100"],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
        assert " DEBUG fanout " in proc.stderr


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


def test_sim_with_an_api_key_refuses_other_keys() -> None:
    """`fanout sim --api-key K`: a request with another key gets 401 invalid_api_key,
    one with K is answered."""
    import asyncio

    import openai

    with subprocess.Popen(
        [sys.executable, "-m", "fanout", "sim", "--port", "0", "--time-scale", "100",
         "--api-key", "let-me-in"],
        stdout=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        try:
            assert proc.stdout is not None
            base_url = proc.stdout.readline().split()[4]  # "fanout sim listening on URL ..."

            async def ask(key: str) -> str:
                client = openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0)
                try:
                    r = await client.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": "hi {{tokens=3}}"}]
                    )
                except openai.AuthenticationError as exc:
                    return f"{exc.status_code} {exc.code}"
                finally:
                    await client.close()
                return r.choices[0].message.content or ""

            assert asyncio.run(ask("guess")) == "401 invalid_api_key"
            assert asyncio.run(ask("let-me-in")).startswith("ref ")
        finally:
            proc.terminate()
            proc.wait(timeout=10)


def test_sim_on_a_taken_port_says_so_in_one_line() -> None:
    """`fanout sim --port N` when N is taken: one line naming the port, no traceback, exit 1."""
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-m", "fanout", "sim", "--port", str(port)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"fanout sim: port {port} on 127.0.0.1 is already in use; "
        "choose another with --port (0 picks a free one)"
    ]


def test_demo_table_reports_the_speedup() -> None:
    """The demo's table shows each scenario's merged and split times and the ratio."""
    rows = [DemoRow("batching", merged_s=1.6, split_s=0.4, merged_requests=1, split_requests=5,
                    auto_s=0.41, auto_choice="split")]  # fmt: skip
    text = format_demo(rows, time_scale=10)
    assert "batching" in text
    assert "4.00x" in text
    assert "16.0s" in text
    assert "split" in text and "4.1s" in text


def test_demo_prints_each_row_as_its_scenario_finishes() -> None:
    """`fanout demo` writes the header at once and each scenario's row while the next
    ones still run; piped, it writes whole lines only (no status line)."""
    with subprocess.Popen(
        [sys.executable, "-m", "fanout", "demo", "--time-scale", "50"],
        stdout=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        assert proc.stdout is not None
        lines = []
        for line in proc.stdout:
            lines.append(line)
            if line.startswith("batching server"):
                break
        still_running = proc.poll() is None  # two scenarios to go
        rest = proc.stdout.read()
    assert still_running
    assert proc.returncode == 0
    assert lines[0].startswith("Five independent questions")
    assert "split speedup" in lines[-2]
    out = "".join(lines) + rest
    for scenario in ("tight limit", "server that does not batch"):
        assert f"\n{scenario}" in out
    assert out.endswith("has learned about the endpoint\nand its limits.\n")
    assert "\r" not in out


def test_a_reader_that_leaves_early_gets_no_traceback() -> None:
    """`fanout demo | head -1`: the demo stops at its next write with exit 1, quietly."""
    with subprocess.Popen(
        [sys.executable, "-m", "fanout", "demo", "--time-scale", "100"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as proc:  # fmt: skip
        assert proc.stdout is not None and proc.stderr is not None
        assert proc.stdout.readline().startswith("Five independent questions")
        proc.stdout.close()
        err = proc.stderr.read()
    assert proc.returncode == 1
    assert err == ""


def test_demo_on_a_terminal_shows_what_runs_then_the_row() -> None:
    """On a terminal the demo's status line names each step and the results so far,
    and is replaced by the row, which reads as in the whole table."""
    import io

    out = io.StringIO()
    table = LiveTable(out, 10, live=True)
    table.started("batching", "merge")
    table.answered("batching", "merge", 5)
    table.measured("batching", "merge", 1.6, "merge")
    table.started("batching", "split")
    table.measured("batching", "split", 0.4, "split")
    table.started("batching", "auto")
    table.answered("batching", "auto", 2)
    table.measured("batching", "auto", 0.41, "split")
    row = DemoRow("batching", merged_s=1.6, split_s=0.4, merged_requests=1, split_requests=5,
                  auto_s=0.41, auto_choice="split")  # fmt: skip
    table.close([row])
    text = out.getvalue()
    assert "\r  batching: merged 5/5 answered..." in text
    assert "\r  batching: merged 16.0s, split 4.0s, auto 2/5 answered..." in text
    whole = format_demo([row], time_scale=10).splitlines()
    assert "\r" + whole[4] + "\n" in text
    assert text.endswith("\n".join(whole[5:]) + "\n")


def test_ask_answers_each_part_in_the_prompts_numbering(capsys: pytest.CaptureFixture[str]) -> None:
    """`fanout ask` on the built-in simulator, with the plan explained."""
    code = main(["ask", "--explain", "--sim-time-scale", "100", "1. What is A?\n2. What is B?"])
    out = capsys.readouterr().out
    assert code == 0
    assert "detected: 2 part(s), 2 group(s)" in out
    assert "chosen:" in out
    assert "\n1. ref " in out
    assert "\n\n2. ref " in out


def test_answers_of_the_built_in_simulator_are_said_to_be_made_up(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without --base-url (nor OPENAI_BASE_URL) the command answers from the built-in
    simulator and says so on stderr once its work is done (its answers looked real)."""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert main(["ask", "--sim-time-scale", "100", "What is A?"]) == 0
    err = capsys.readouterr().err
    assert err == (
        "fanout ask: answered by the built-in simulator (no --base-url, nor "
        "OPENAI_BASE_URL): its answers are made-up text\n"
    )


async def test_openai_base_url_is_the_endpoint_when_no_base_url_is_given(
    sim: SimFactory,
) -> None:
    """OPENAI_BASE_URL, as the openai SDK reads it, is the command's endpoint (it was
    ignored: the command answered from its own simulator)."""
    async with sim(time_scale=100, answer_tokens=3) as (server, _):
        env = {**os.environ, "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sim"}
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "fanout", "ask", "--model", "m", "1. What is A? 2. What is B?",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=env,
        )  # fmt: skip
        out, err = await proc.communicate()
        assert proc.returncode == 0, err.decode()
        assert len(server.stats.requests) >= 1
    assert "simulator" not in err.decode()
    assert out.decode().startswith("1. ")


def test_ask_shows_every_part_of_a_cut_answer_and_marks_it_cut(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Part 2 leans on part 1 ("he"): they are asked together, and at --max-tokens 12
    the simulator's answer stops inside part 1's. Part 2 is still shown, under its own
    number, as cut before its answer; every cut answer says it was cut."""
    prompt = "1. Who discovered penicillin? 2. Where did he study? 3. What is a prime number?"
    code = main(["ask", "--sim-time-scale", "100", "--max-tokens", "12", prompt])
    out = capsys.readouterr().out
    assert code == 0
    blocks = out.strip().split("\n\n")
    assert [block.split(" ", 1)[0] for block in blocks] == ["1.", "2.", "3."], out
    assert blocks[0].startswith("1. ref ") and blocks[0].endswith(" (cut short: max_tokens)")
    assert blocks[1] == '2. (cut short: max_tokens before the answer to "Where did he study?")'
    assert blocks[2].startswith("3. ref ") and blocks[2].endswith(" (cut short: max_tokens)")


def test_ask_marks_nothing_when_no_answer_was_cut(capsys: pytest.CaptureFixture[str]) -> None:
    """The same prompt with room for every answer: each part once, none marked cut."""
    prompt = "1. Who discovered penicillin? 2. Where did he study? 3. What is a prime number?"
    code = main(["ask", "--sim-time-scale", "100", prompt])
    out = capsys.readouterr().out
    assert code == 0
    assert [block.split(" ", 1)[0] for block in out.strip().split("\n\n")] == ["1.", "2.", "3."]
    assert "cut short" not in out


def test_plan_is_a_dry_run_with_every_candidate(capsys: pytest.CaptureFixture[str]) -> None:
    """`fanout plan` prints the candidates and the choice, and sends nothing."""
    # four: three would merge into one request and ask two of them alone as its merge
    # check, as many requests as split sends (the plan costs the check)
    prompt = "1. What is X?\n2. What is Y?\n3. What is Z?\n4. What is W?"
    code = main(["plan", "--rpm", "3", prompt])
    out = capsys.readouterr().out
    assert code == 0
    assert "*merge" in out
    merge = next(line for line in out.splitlines() if line.startswith("*merge"))
    assert merge.split()[1] == "1+2"  # the merged request, and the first check's sample
    assert "split" in out
    assert "rate limits" in out


@pytest.mark.parametrize("command", [["plan", "--file"], ["run", "--dry-run"]])
def test_a_dry_run_reads_the_input_as_fanout_run_does(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fanout plan --file` and `fanout run --dry-run` skip the lines `fanout run` skips
    (no question, not JSON, a duplicate id) and say so in its words, and plan the rest
    with each line's own parameters (`plan --file` failed with a traceback or a bare
    JSON error, and dropped the parameters; the dry run counted a duplicate id)."""
    src = tmp_path / "q.jsonl"
    src.write_text(
        '{"id": 1, "question": "What is A?"}\n{"id": "b"}\nnot json\n'
        '{"id": 1, "question": "Again?"}\n{"id": 2, "question": "What is B?", "max_tokens": 7}\n'
    )
    if command[0] == "plan":
        argv = [*command, str(src)]
    else:
        argv = ["run", str(src), str(tmp_path / "a.jsonl"), "--dry-run"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert err.splitlines() == [
        f'{src}:2: skipped: id "b": missing or empty question (the question goes under "question")',
        f"{src}:3: skipped: not JSON: Expecting value",
        f"{src}:4: skipped: duplicate id 1",
    ]
    *_, split = [line for line in out.splitlines() if line.startswith("*split")]  # the costs
    assert split.split()[1] == "2"  # two requests
    assert " 207 " in split  # 200 tokens assumed for one answer, max_tokens 7 for the other


def test_run_reports_bad_lines_once_and_exits_3(tmp_path: Path) -> None:
    """`fanout run` in a subprocess: answers out, each bad line named once, exit code 3."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text('{"id": 1, "question": "one?"}\nnot json\n{"id": 2, "question": "two?"}\n')
    proc = subprocess.run(
        [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--sim-time-scale", "100"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.count(":2: skipped") == 1, proc.stderr
    assert f"{src}:2: skipped: not JSON" in proc.stderr
    assert "answered 2" in proc.stdout
    ids = sorted(json.loads(line)["id"] for line in dst.read_text().splitlines())
    assert ids == [1, 2]


def test_run_logs_progress_with_a_total_by_default_off_a_terminal(tmp_path: Path) -> None:
    """Piped and without -v, `fanout run` logs progress lines whose total is counted
    from the file (less bad lines); --no-progress turns them off."""
    src = _questions(tmp_path, 3)
    with src.open("a") as f:
        f.write("not json\n")
    runs = {}
    for flag in ("--progress", "--no-progress"):
        proc = subprocess.run(
            [sys.executable, "-m", "fanout", "run", str(src), str(tmp_path / f"{flag}.jsonl"),
             "--sim-time-scale", "100", flag],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert proc.returncode == 3, proc.stderr  # finished, one line skipped
        runs[flag] = proc.stderr
    assert " INFO fanout.progress progress done=3 total=3 rate=" in runs["--progress"]
    assert "fanout.progress" not in runs["--no-progress"]


def test_run_on_a_terminal_without_rich_draws_a_plain_bar(tmp_path: Path) -> None:
    """With standard error a terminal and rich not installed (the plain install),
    `fanout run` draws a one-line bar with the file's total."""
    import os
    import pty

    src = _questions(tmp_path, 5)
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [sys.executable, "-c", _without("rich"), "run", str(src), str(tmp_path / "a.jsonl"),
         "--sim-time-scale", "100"],
        stdout=subprocess.PIPE, stderr=follower, text=True,
    ) as proc:  # fmt: skip
        os.close(follower)
        screen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            screen += chunk
        out = proc.communicate()[0]
    os.close(leader)
    assert proc.returncode == 0
    assert "answered 5" in out
    assert "\rfanout [################] 5/5  " in screen.decode()


async def test_run_after_a_failing_endpoint_answers_the_failed_ids(
    sim: SimFactory, tmp_path: Path
) -> None:
    """Against a failing endpoint: exit 1; the same command against a healthy one
    answers the failed ids, says so, and exits 0."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": f"q{i}?"}) + "\n" for i in range(20)))

    async def run(base_url: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "fanout", "run", str(src), str(dst), "--base-url", base_url,
            "--model", "m", "--api-key", "sim", "--policy", "split",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await proc.communicate()
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()

    async with sim(time_scale=100, answer_tokens=3, fault_rates={"500": 1.0}) as (server, _):
        code, out, err = await run(server.base_url)
    assert code == 1
    assert "failed 20" in out
    # Why, on the terminal as well as in the records: the first failure, naming its id.
    (said,) = [line for line in err.splitlines() if "failed; the first:" in line]
    assert said.startswith("fanout run: 20 failed; the first: QuestionError: id ") and "500" in said
    async with sim(time_scale=100, answer_tokens=3) as (server, _):
        code, out, _ = await run(server.base_url)
    assert code == 0, out
    assert "answered 20, failed 0, already done 0" in out
    assert "asked again: 20 that had failed" in out
    last = {json.loads(line)["id"]: json.loads(line) for line in dst.read_text().splitlines()}
    assert all(r["error"] is None and r["answer"] for r in last.values())


def test_run_on_a_locked_output_fails_at_once_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An output another run holds: one `fanout run:` line, exit code 2, nothing sent."""
    import fcntl

    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text('{"id": 1, "question": "one?"}\n')
    with dst.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code = main(["run", str(src), str(dst), "--sim-time-scale", "100"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith("fanout run: ") and err.count("\n") == 1, err
    assert "another run" in err
    assert dst.read_text() == ""


@pytest.mark.parametrize("case", ["a folder", "in a missing folder", "in a read-only folder"])
def test_run_reports_an_unusable_output_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    """An output that cannot be written: one `fanout run:` line and exit code 2, no traceback."""
    src = tmp_path / "q.jsonl"
    src.write_text('{"id": 1, "question": "one?"}\n')
    if case == "a folder":
        dst = tmp_path / "out"
        dst.mkdir()
    elif case == "in a missing folder":
        dst = tmp_path / "missing" / "a.jsonl"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes to read-only folders")
        folder = tmp_path / "ro"
        folder.mkdir(mode=0o555)
        dst = folder / "a.jsonl"
    code = main(["run", str(src), str(dst), "--sim-time-scale", "100"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.startswith(f"fanout run: cannot write the answers to {dst}: "), err
    assert err.count("\n") == 1, err


def test_run_stops_on_a_full_disk_in_one_line_and_resumes(tmp_path: Path) -> None:
    """A write refused by the OS mid-run (here a file size limit, as a full disk would):
    one `fanout run:` line, exit code 2; the next run repairs the tail and finishes."""
    import resource

    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": f"q{i}?"}) + "\n" for i in range(5)))
    cmd = [sys.executable, "-m", "fanout", "run", str(src), str(dst), "--sim-time-scale", "100",
           "--policy", "split", "--no-progress"]  # fmt: skip

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (300, 300))

    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, preexec_fn=limit)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"fanout run: cannot write to {dst}: File too large"), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    ids = [json.loads(line)["id"] for line in dst.read_text().splitlines()]
    assert sorted(ids) == list(range(5))


def test_bench_prints_a_table_and_draws_a_timeline(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fanout bench --plot` on the simulator: one row per policy and a PNG."""
    png = tmp_path / "timeline.png"
    code = main(
        [
            "bench",
            "--questions",
            "3",
            "--tokens",
            "20",
            "--sim-time-scale",
            "100",
            "--plot",
            str(png),
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    for policy in ("merge", "split", "auto"):
        assert f"\n{policy}" in out
    assert png.read_bytes().startswith(b"\x89PNG")


@pytest.mark.parametrize("command", ["bench", "profile"])
def test_plot_without_matplotlib_fails_first_with_a_hint_that_works(
    command: str, tmp_path: Path
) -> None:
    """`--plot` without matplotlib exits before measuring anything, with install
    commands that work as written (the extra they name exists)."""
    from importlib.metadata import metadata

    png = tmp_path / "out.png"
    proc = subprocess.run(
        [sys.executable, "-c", _without("matplotlib"), command, "--plot", str(png),
         "--sim-time-scale", "100"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 1
    assert proc.stdout == ""  # no table, no summary: nothing ran
    assert not png.exists()
    assert proc.stderr == (
        f"fanout {command} --plot needs matplotlib: pip install matplotlib "
        "(in a checkout of fanout: pip install -e '.[plot]')\n"
    )
    assert "plot" in (metadata("llm-fanout").get_all("Provides-Extra") or [])


def test_profile_saves_a_profile_the_sim_can_load_and_draws_its_scaling(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`fanout profile --save --plot` on the built-in simulator: a summary, a JSON
    that loads back as an EndpointProfile, and a PNG."""
    import fanout.profile

    saved, png = tmp_path / "p.json", tmp_path / "p.png"
    code = main(["profile", "--max-requests", "13", "--tokens", "16", "--sim-time-scale", "50",
                 "--save", str(saved), "--plot", str(png)])  # fmt: skip
    out = capsys.readouterr().out
    assert code == 0
    assert "requests at once" in out
    profile = fanout.profile.EndpointProfile.load(saved)
    assert profile.requests_used == 13
    assert set(profile.scaling) == {1, 2, 4}
    assert png.read_bytes().startswith(b"\x89PNG")


def test_plan_starts_from_a_saved_endpoint_profile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--endpoint-profile p.json` replaces the planner's priors with the profile's
    figures: the dry run shows the profile's round trip, decode speed and slowdown."""
    import fanout.profile

    path = tmp_path / "serial.json"
    fanout.profile.EndpointProfile(model="m", base_url="http://x/v1", rtt_s=0.25, ttft_s=0.3,
                           decode_s_per_token=0.04, prefill_s_per_token=0.0001,
                           scaling={1: 1.0, 2: 2.0, 4: 4.0}, slots=1).save(path)  # fmt: skip
    prompt = "1. What is X?\n2. What is Y?\n3. What is Z?"
    assert main(["plan", prompt]) == 0
    priors = capsys.readouterr().out
    assert main(["plan", "--endpoint-profile", str(path), prompt]) == 0
    profiled = capsys.readouterr().out
    assert "priors until" in priors
    assert "a saved profile until" in profiled
    assert "rtt 0.25s, decode 40.0 ms/token, slowdown per request 1.00" in profiled
    assert "slowdown per request 1.00" not in priors


async def test_run_stops_at_once_when_the_quota_is_gone_and_resumes_later(
    sim: SimFactory, tmp_path: Path
) -> None:
    """insufficient_quota: no request after the first refusal, exit code 4 and a
    message; the same command later, with quota, answers the rest."""
    src, dst = tmp_path / "q.jsonl", tmp_path / "a.jsonl"
    src.write_text("".join(json.dumps({"id": i, "question": f"q{i}?"}) + "\n" for i in range(40)))

    async def run(base_url: str) -> tuple[int, str, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "fanout", "run", str(src), str(dst), "--base-url", base_url,
            "--model", "m", "--api-key", "sim", "--policy", "split", "--concurrency", "1",
            "--no-progress",
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await proc.communicate()
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()

    # Enough quota for a few answers of 3 tokens (prompt about 13 each), then none.
    async with sim(time_scale=100, answer_tokens=3, quota_tokens=60) as (server, _):
        code, _out, err = await run(server.base_url)
        refused = [r for r in server.stats.requests if r.error_code == "insufficient_quota"]
        answered = [r for r in server.stats.requests if r.status == 200]
    assert code == 4, err
    assert "no quota left" in err
    assert len(refused) == 1  # nothing more was sent after the first refusal
    assert 1 <= len(answered) < 40
    async with sim(time_scale=100, answer_tokens=3) as (server, _):
        code, _out, err = await run(server.base_url)
    assert code == 0, err
    last = {json.loads(line)["id"]: json.loads(line) for line in dst.read_text().splitlines()}
    assert sorted(last) == list(range(40))
    assert all(r["error"] is None and r["answer"] for r in last.values())
