"""The public API: everything in __all__ exists, is sorted, and nothing public is missing."""

from __future__ import annotations

import importlib

import pytest

import fanout
import fanout.sim


def _check(module: object) -> None:
    names = module.__all__  # type: ignore[attr-defined]

    # isort-style, as ruff's RUF022 keeps it: CONSTANTS, then Classes, then functions.
    def kind(n: str) -> int:
        return 0 if n.isupper() else 1 if n[0].isupper() else 2

    assert names == sorted(names, key=lambda n: (kind(n), n))
    for name in names:
        assert hasattr(module, name), name
    public = {n for n in vars(module) if not n.startswith("_") and n not in {"annotations"}}
    imported_modules = {n for n in public if type(getattr(module, n)).__name__ == "module"}
    assert public - imported_modules <= set(names), sorted(public - imported_modules - set(names))


def test_fanout_all_is_complete_and_sorted() -> None:
    """fanout.__all__ lists every public name, sorted."""
    _check(fanout)


def test_sim_all_is_complete_and_sorted() -> None:
    """fanout.sim.__all__ lists every public name, sorted."""
    _check(fanout.sim)


def test_ray_all_is_complete_and_sorted() -> None:
    """fanout.ray.__all__ lists every public name, sorted (importable without Ray)."""
    import fanout.ray

    _check(fanout.ray)


def test_every_error_derives_from_fanout_error() -> None:
    """One root for the exception tree."""
    errors = [getattr(fanout, n) for n in fanout.__all__ if n.endswith("Error")]
    assert len(errors) >= 6
    for err in errors:
        assert issubclass(err, fanout.FanoutError), err


def test_the_library_does_not_import_the_simulator() -> None:
    """Importing fanout leaves fanout.sim unloaded (checked in a fresh interpreter)."""
    import subprocess
    import sys

    code = "import sys, fanout; print('fanout.sim' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_detection_jobs_profiles_and_the_wrapper_load_when_first_used() -> None:
    """``import fanout`` loads the engine, not detection, jobs, profiles or the wrapper
    (a third of the import's time beyond the SDK's was detection's tables); each loads
    when first named, through the attribute or a ``from`` import (fresh interpreter)."""
    import subprocess
    import sys

    code = (
        "import sys, fanout\n"
        "lazy = ['fanout.detection', 'fanout.jobs', 'fanout.profile', 'fanout.wrapper']\n"
        "print([m for m in lazy if m in sys.modules])\n"
        "print(fanout.detect('1. Who? 2. Where?').style, callable(fanout.wrap))\n"
        "from fanout import report_of\n"
        "print(fanout.jobs.run_jsonl.__name__, fanout.profile.__name__, report_of.__name__)\n"
        "print([m for m in lazy if m not in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == [
        "[]",
        "numbered True",
        "run_jsonl fanout.profile report_of",
        "[]",
    ]


def test_the_response_cache_s_store_and_entries_load_when_a_call_uses_a_cache() -> None:
    """``import fanout`` leaves the cache's entry model, its sqlite store and difflib
    (the "did you mean" of a wrong name) unloaded; naming ``fanout.cache.Entry`` loads
    its module (the cache's own tests use them through calls; fresh interpreter)."""
    import subprocess
    import sys

    code = (
        "import sys, fanout, fanout.cache\n"
        "lazy = ['fanout.cache._entry', 'fanout.cache._disk', 'sqlite3', 'difflib']\n"
        "print([m for m in lazy if m in sys.modules])\n"
        "print(fanout.cache.Entry(text='a').text, fanout.cache.decode(b'[]'))\n"
        "print([m for m in lazy if m in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "a None", "['fanout.cache._entry']"]


def test_version_comes_from_package_metadata() -> None:
    """__version__ matches the installed distribution."""
    from importlib.metadata import version

    assert fanout.__version__ == version("llm-fanout")


@pytest.mark.parametrize(
    "module", ["detection", "jobs", "limits", "planning", "profile", "wrapper"]
)
def test_public_submodule_all_is_complete_and_sorted(module: str) -> None:
    """Each public submodule's __all__ lists every public name, sorted."""
    _check(importlib.import_module(f"fanout.{module}"))


def test_moved_names_still_import_with_a_deprecation_warning() -> None:
    """A name moved off the top level still works for a release, and says where it went."""
    from fanout.planning import Plan

    with pytest.warns(DeprecationWarning, match=r"fanout\.planning\.Plan"):
        old = fanout.Plan
    assert old is Plan
    with pytest.raises(AttributeError):
        fanout.NoSuchName  # noqa: B018


def test_the_top_level_holds_what_an_application_needs() -> None:
    """No planner internals or limiter classes crowd the top level."""
    # The entry points (ask_many, ask_many_sync, Fanout, wrap, ...), the data and
    # configuration models (Limits, Retry, Policy, Pricing, Cache, Endpoint), and the
    # exception tree (CallAbortedError included).
    not_errors = [n for n in fanout.__all__ if not n.endswith("Error")]
    assert len(not_errors) <= 21, not_errors
    for name in ("Budget", "Candidate", "PlanInputs", "EndpointEstimate", "LocalLimiter"):
        assert name not in fanout.__all__
