"""The layout of the package: imports run one way, no function grows into several, the façade thin."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "src" / "fanout"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_level_imports(path: Path, *, in_functions: bool = False) -> set[str]:
    """fanout modules that ``path`` imports at module level, type-checking imports
    included; with ``in_functions``, inside functions and methods too (a lazy import,
    for the import time, is still a dependency)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    this = _module_name(path)
    package = this if path.name == "__init__.py" else this.rpartition(".")[0]
    found: set[str] = set()

    def visit(statements: list[ast.stmt]) -> None:
        for node in statements:
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[: len(base) - (node.level - 1)]
                    target = ".".join([*base, node.module] if node.module else base)
                else:
                    target = node.module or ""
                if target.startswith("fanout"):
                    if node.module is None:  # from . import x
                        found.update(f"{target}.{alias.name}" for alias in node.names)
                    else:
                        found.add(target)
            elif isinstance(node, ast.Import):
                found.update(a.name for a in node.names if a.name.startswith("fanout"))
            elif in_functions and isinstance(
                node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.With)
            ):
                visit(node.body)
            elif isinstance(node, (ast.If, ast.Try)):
                visit(node.body)
                visit(node.orelse)
                if isinstance(node, ast.Try):
                    for handler in node.handlers:
                        visit(handler.body)

    visit(tree.body)
    found.discard(this)
    return found


def _graph(*, in_functions: bool = False) -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    return {
        name: {t for t in _module_level_imports(path, in_functions=in_functions) if t in modules}
        for name, path in modules.items()
        if name not in ("fanout", "fanout.sim")  # the faces re-export; nothing imports them
    }


def test_no_module_imports_itself_through_others() -> None:
    """The import graph has no cycle: module-level, type-checking and lazy imports
    (``wrapper/_client.py`` and ``wrapper/_responses.py`` once imported each other, the
    one lazily, the other at module level)."""
    graph = _graph(in_functions=True)
    for deps in graph.values():
        deps.discard("fanout")
        deps.discard("fanout.sim")
    state: dict[str, int] = {}
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph.get(node, ())):
            if state.get(dep) == 1:
                cycle = [*path[path.index(dep) :], dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                walk(dep)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)


# The packages, bottom up: a module may import its own package and those ranked below it.
RANKS = {
    "fanout.core": 0,
    "fanout.limits": 1,
    "fanout.cache": 1,  # the response cache's key, entries and stores
    "fanout.telemetry": 1,
    "fanout.endpoint": 2,
    "fanout.engine": 3,
    "fanout.detection": 4,  # the LLM detector drives a Fanout
    "fanout.endpoint.profile": 4,  # the profiler measures an endpoint through a Fanout
    "fanout.planning": 4,  # public faces over the engine and the endpoint model
    "fanout.money": 4,
    "fanout.profile": 5,
    "fanout.wrapper": 5,
    "fanout.jobs": 5,
    "fanout.ray": 6,  # Ray Data actors over the engine, reading rows as jobs read lines
    "fanout.testing": 5,
    "fanout.cli": 6,
    "fanout.__main__": 7,
}


def _rank(module: str) -> tuple[str, int]:
    owner = max((p for p in RANKS if module == p or module.startswith(p + ".")), key=len)
    return owner, RANKS[owner]


def test_packages_import_only_downwards() -> None:
    """core <- limits, telemetry <- endpoint <- engine <- detection <- wrapper, jobs <- cli:
    no package imports one above it (type-checking imports included)."""
    graph = _graph()
    wrong = []
    for module, deps in graph.items():
        if module.startswith("fanout.sim"):
            continue
        owner, rank = _rank(module)
        for dep in deps:
            if dep.startswith("fanout.sim") or dep == "fanout":
                continue
            dep_owner, dep_rank = _rank(dep)
            if dep_owner != owner and dep_rank >= rank:
                wrong.append(f"{module} -> {dep}")
    assert wrong == []


def test_the_engine_imports_no_jobs_detection_wrapper_or_cli() -> None:
    """Jobs, detection, the wrapper and the CLI sit above the engine and use it."""
    graph = _graph()
    above = (
        "fanout.jobs",
        "fanout.detection",
        "fanout.wrapper",
        "fanout.cli",
        "fanout.endpoint.profile",
    )
    engine = [m for m in graph if m.startswith("fanout.engine")]
    assert len(engine) >= 10
    for module in engine:
        assert not {d for d in graph[module] if d.startswith(above)}, module


def test_nothing_imports_the_cli() -> None:
    """The command line is the top: no module outside it imports it."""
    graph = _graph()
    users = {m for m, deps in graph.items() if not m.startswith("fanout.cli")
             and any(d.startswith("fanout.cli") for d in deps)}  # fmt: skip
    assert users <= {"fanout.__main__"}


def test_the_package_shows_the_architecture() -> None:
    """`ls src/fanout` shows packages by concern, not dozens of modules side by side."""
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert {"core", "engine", "endpoint", "limits", "detection", "telemetry", "jobs",
            "wrapper", "cli", "sim"} <= packages  # fmt: skip
    modules = [p.name for p in PACKAGE.glob("*.py")]
    assert len(modules) <= 6, modules


FUNCTION_LINES = 100
"""The longest a function may be (issue 35: one 277-line function held the engine's
heart). Size is not cohesion; this only catches a function that grew into several."""


def test_no_function_is_longer_than_a_hundred_lines() -> None:
    """Every function and method in src, its decorators and docstring included."""
    long: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                lines = (node.end_lineno or node.lineno) - start + 1
                if lines > FUNCTION_LINES:
                    long.append(f"{path.relative_to(PACKAGE)}:{node.name} ({lines} lines)")
    assert not long, long
