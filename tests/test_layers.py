"""The harness is layered and has no import circle (issue 18.1), read from the imports themselves.

Layers, lowest first: base (device, store, processes, pure data) < problems < providers <
measure < run (config, sweep, plan, runner, shard, collectives) < commands; report reads the
store only (base and report). A module may import its own layer and the layers below; every
import counts, inside functions too (a lazy import is still an arrow). Kernels (kernels/, imported
as harness_kernels) import nothing from the harness.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HARNESS = ROOT / "harness"
KERNELS = ROOT / "kernels"

ORDER = ("base", "problems", "providers", "measure", "run", "commands")
# What each layer may import. report sits beside the ladder: it reads rows, never measures.
ALLOWED = {layer: set(ORDER[: i + 1]) for i, layer in enumerate(ORDER)}
ALLOWED["report"] = {"base", "report"}
ALLOWED["commands"] = set(ORDER) | {"report"}

# Module (or package prefix) -> layer; the longest matching prefix wins, so a new file in a
# layered package is placed without editing this table.
LAYER_OF = {
    "harness": "base",
    "harness.device": "base",
    "harness.children": "base",
    "harness.lock": "base",
    "harness.store": "base",
    "harness.schema": "base",
    "harness.schema_history": "base",
    "harness.provenance": "base",
    "harness.outputs": "base",
    "harness.cliargs": "base",
    "harness.units": "base",  # printing sizes: read by problems and report, no torch
    "harness.workloads": "base",  # model shapes and presets: data, read by report and sweeps
    "harness.measure.stats": "base",  # one statistics module, shared by measure and report
    "harness.problems": "problems",
    "harness.providers": "providers",
    "harness.measure": "measure",
    "harness.config": "run",
    "harness.sweep": "run",
    "harness.plan": "run",
    "harness.runner": "run",
    "harness.tune_pass": "run",
    "harness.compile_ahead": "run",
    "harness.shard": "run",
    "harness.collectives": "run",
    "harness.inflight": "run",
    "harness.runrecord": "run",
    "harness.report": "report",
    "harness.summary": "report",
    "harness.commands": "commands",
    "harness.report.commands": "commands",
    "harness.cli": "commands",
    "harness.cluster": "commands",
    "harness.compact": "commands",
    "harness.inspect": "commands",
    "harness.crosscheck": "commands",
}

# Arrows that break the rule today, each with its reason; keep this list short.
EXCEPTIONS: dict[tuple[str, str], str] = {}  # cmd_ceilings moved to harness/commands/ceilings.py
# Import circles that exist today, as sorted tuples of their modules, each with its reason.
CYCLE_EXCEPTIONS: dict[tuple[str, ...], str] = {}


def _modules() -> dict[str, Path]:
    out = {}
    for path in HARNESS.rglob("*.py"):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _imported_names(path: Path, module: str) -> set[str]:
    """Every dotted name `path` imports (module level and inside functions), relative resolved;
    `from a import b` yields a.b, which resolves to module a.b if there is one, else to a."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(up + ([base] if base else []))
            names.update(f"{base}.{a.name}" for a in node.names)
    return names


def _graph() -> dict[str, set[str]]:
    """harness module -> the harness modules it imports (a name resolves to its longest module)."""
    modules = _modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph = {}
    for module, path in modules.items():
        targets = {resolve(n) for n in _imported_names(path, module) if n.startswith("harness")}
        graph[module] = {t for t in targets if t and t != module and t != "harness"}
    return graph


def layer_of(module: str) -> str | None:
    name = module
    while name:
        if name in LAYER_OF:
            return LAYER_OF[name]
        name = name.rpartition(".")[0]
    return None


def _cycles(graph: dict[str, set[str]]) -> list[tuple[str, ...]]:
    """Strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_every_module_has_a_layer():
    unplaced = sorted(m for m in _modules() if layer_of(m) is None)
    assert not unplaced, f"place these in LAYER_OF: {unplaced}"


def test_no_import_runs_up_a_layer():
    bad = []
    for module, targets in sorted(_graph().items()):
        for target in sorted(targets):
            if layer_of(target) in ALLOWED[layer_of(module)]:
                continue
            if (module, target) not in EXCEPTIONS:
                bad.append(f"{module} ({layer_of(module)}) -> {target} ({layer_of(target)})")
    assert not bad, "imports into a higher layer:\n" + "\n".join(bad)


def test_no_import_circle():
    cycles = [c for c in _cycles(_graph()) if c not in CYCLE_EXCEPTIONS]
    assert not cycles, f"import circles: {cycles}"


def test_exceptions_are_still_needed():
    """An exception that no longer happens is deleted, so the list only shrinks."""
    graph = _graph()
    stale = [e for e in EXCEPTIONS if e[1] not in graph.get(e[0], set())]
    stale += [c for c in CYCLE_EXCEPTIONS if c not in _cycles(graph)]
    assert not stale, f"no longer needed, delete: {stale}"


def test_kernels_import_nothing_from_the_harness():
    bad = []
    for path in KERNELS.rglob("*.py"):
        names = _imported_names(path, "harness_kernels")
        if any(n == "harness" or n.startswith("harness.") for n in names):
            bad.append(str(path.relative_to(ROOT)))
    assert not bad, f"kernels importing the harness: {bad}"


def test_the_walk_sees_function_level_and_relative_imports(tmp_path):
    """The checker itself: a lazy import inside a function and a relative import both count."""
    pkg = tmp_path / "harness" / "sub"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from harness.runner import run_sweep\n")
    (pkg / "b.py").write_text("from . import a\nfrom .a import f\n")
    assert "harness.runner.run_sweep" in _imported_names(pkg / "a.py", "harness.sub.a")
    assert {"harness.sub.a", "harness.sub.a.f"} <= _imported_names(pkg / "b.py", "harness.sub.b")
    assert _cycles({"x": {"y"}, "y": {"z"}, "z": {"x"}, "w": {"x"}}) == [("x", "y", "z")]
