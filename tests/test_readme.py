"""README's two commands stay what CI and a new user run."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_ci_runs_the_test_command_from_the_readme() -> None:
    """.ci/run takes the command under the test-command marker, which runs lint, types and tests."""
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- test-command -->\n```bash\n(.+?)\n```", readme)
    assert match is not None
    command = match.group(1)
    for part in ("pip install", "ruff check", "mypy", "pytest"):
        assert part in command
    assert "test-command" in (ROOT / ".ci" / "run").read_text()


def test_readme_has_the_demo_command() -> None:
    """The first quick-start command installs and runs `fanout demo`."""
    readme = (ROOT / "README.md").read_text()
    assert "pip install -q -e . && .venv/bin/fanout demo" in readme
