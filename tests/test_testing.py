"""The fanout.testing pytest plugin: the fanout_sim fixtures, as users get them."""

from __future__ import annotations

import subprocess
import sys
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

import openai
import pytest

from fanout.testing import SimFactory, SimHandle

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletionMessageParam

MSG: list[ChatCompletionMessageParam] = [{"role": "user", "content": "What is a token?"}]

STRICT_MODE_TESTS = """
import pytest


@pytest.mark.asyncio
@pytest.mark.fanout_sim(time_scale=100, answer_tokens=3, api_key="sk-mine")
async def test_the_marker_configures_the_simulator(fanout_sim):
    reply = await fanout_sim.client.chat.completions.create(
        model=fanout_sim.model, messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.usage.completion_tokens == 3
    assert fanout_sim.server.config.api_key == "sk-mine"
    assert fanout_sim.stats.completions == 1


@pytest.mark.asyncio
async def test_without_a_marker_the_defaults(fanout_sim):
    server, client = fanout_sim
    assert [m.id for m in (await client.models.list()).data] == ["sim-1"]
    assert server.config.time_scale == 50  # fast by default (FIXTURE_TIME_SCALE)


@pytest.mark.asyncio
@pytest.mark.fanout_sim(time_scale=1)
async def test_a_marker_can_ask_for_real_time(fanout_sim):
    assert fanout_sim.server.config.time_scale == 1


@pytest.mark.asyncio
async def test_the_factory_runs_several(fanout_sim_factory):
    async with fanout_sim_factory(slots=1) as one, fanout_sim_factory() as two:
        assert one.base_url != two.base_url
        assert (one.server.config.slots, two.server.config.slots) == (1, 256)
        assert one.server.config.time_scale == two.server.config.time_scale == 50
"""

ANYIO_TESTS = """
import pytest

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.mark.fanout_sim(time_scale=100, answer_tokens=2)
async def test_under_anyio(fanout_sim):
    reply = await fanout_sim.client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}]
    )
    assert reply.usage.completion_tokens == 2
"""


def test_the_plugin_is_registered_through_its_entry_point(request: pytest.FixtureRequest) -> None:
    """Installing llm-fanout registers fanout.testing as the pytest plugin "fanout"."""
    plugins = {e.name: e.value for e in entry_points(group="pytest11")}
    assert plugins.get("fanout") == "fanout.testing"
    assert request.config.pluginmanager.has_plugin("fanout")


def test_a_user_in_strict_mode_gets_the_fixtures_and_the_marker(pytester: pytest.Pytester) -> None:
    """A project of its own (pytest-asyncio strict mode, warnings as errors, strict
    markers, no conftest) uses fanout_sim with the marker, and fanout_sim_factory."""
    pytester.makeini(
        "[pytest]\nasyncio_mode = strict\nasyncio_default_fixture_loop_scope = function\n"
        "filterwarnings = error\naddopts = --strict-markers\n"
    )
    pytester.makepyfile(test_mine=STRICT_MODE_TESTS)
    result = pytester.runpytest_subprocess()
    result.assert_outcomes(passed=4)


def test_anyio_users_get_the_fixture_too(pytester: pytest.Pytester) -> None:
    """With anyio's pytest plugin running the tests (pytest-asyncio turned off),
    fanout_sim works as well."""
    pytester.makeini("[pytest]\nfilterwarnings = error\naddopts = --strict-markers\n")
    pytester.makepyfile(test_mine=ANYIO_TESTS)
    # looptime's plugin (fanout's dev extra, not the user's) needs pytest-asyncio loaded.
    result = pytester.runpytest_subprocess("-p", "no:asyncio", "-p", "no:looptime_plugin")
    result.assert_outcomes(passed=1)


def test_importing_the_plugin_is_light() -> None:
    """pytest imports fanout.testing at startup for every user: it leaves the simulator
    unloaded, and imports without pytest (the helpers only)."""
    code = (
        "import sys; sys.modules['pytest'] = None; import fanout.testing; "
        "print('fanout.sim' in sys.modules, hasattr(fanout.testing, 'pytest_configure'))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "False"]


@pytest.mark.fanout_sim(time_scale=100, answer_tokens=4, rpm=600)
async def test_fanout_sim_is_a_running_simulator_and_a_client(fanout_sim: SimHandle) -> None:
    """The marker's settings reach the simulator; the client talks to it over HTTP."""
    server, client = fanout_sim
    reply = await client.chat.completions.create(model=fanout_sim.model, messages=MSG)
    assert reply.usage is not None and reply.usage.completion_tokens == 4
    assert fanout_sim.base_url == server.base_url
    assert fanout_sim.stats.completions == 1
    assert server.config.rpm == 600


async def test_the_factory_takes_a_config_and_overrides(fanout_sim_factory: SimFactory) -> None:
    """``fanout_sim_factory(config, **settings)``: the config with those fields replaced;
    the client sends the key the simulator requires."""
    from fanout.sim import SimConfig

    base = SimConfig(time_scale=100, answer_tokens=5, api_key="sk-project")
    async with fanout_sim_factory(base, answer_tokens=2) as sim:
        reply = await sim.client.chat.completions.create(model="m", messages=MSG)
        assert reply.usage is not None and reply.usage.completion_tokens == 2
        wrong = sim.client.with_options(api_key="sk-other", max_retries=0)
        with pytest.raises(openai.AuthenticationError):
            await wrong.chat.completions.create(model="m", messages=MSG)


def test_the_readme_example_passes_as_copied_in_a_strict_mode_project(
    pytester: pytest.Pytester,
) -> None:
    """The README's fixture example, copied into a fresh project under pytest-asyncio's
    default (strict) mode with warnings as errors, passes as it stands."""
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "fanout_sim" in b)
    pytester.makeini("[pytest]\nfilterwarnings = error\naddopts = --strict-markers\n"
                     "asyncio_default_fixture_loop_scope = function\n")  # fmt: skip
    pytester.makepyfile(test_copied=block)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
