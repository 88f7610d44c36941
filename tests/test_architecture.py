"""The floors of the package, checked on its import graph (every import, at the top of a module
or inside a function, and the names `engram.core.api` hands out lazily).

- The core stands in floors, each importing only its own floor and those below it:
  `memory, errors, results` → `text, safety` → `store` → `read, write` (which do not import
  each other) → `api` → `benchmark`.
- Adapters (`cli, mcp, hooks, ui, importers, hosts`) take from the core only its public
  operations and building blocks (`engram.core.api`), its errors and results, and the
  benchmark (an application of `api`); among themselves `cli` may start any of them, the
  front ends (`mcp, hooks, ui`) may use the plug-ins (`importers, hosts`), and `importers`
  may use `hosts` (their file edits), never the other way round.
- No circle anywhere.
- Imports sit at the top of a module, except in the hot entry points listed below, whose
  start-up budget is guarded by the `sys.modules` tests (`tests/cli/test_hook.py`,
  `tests/cli/test_read_commands.py`).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "src"

CORE_FLOORS = [
    {"engram", "engram.core", "engram.core.memory", "engram.core.errors", "engram.core.results"},
    {"engram.core.text", "engram.core.words", "engram.core.safety"},
    {"engram.core.store"},
    {"engram.core.read", "engram.core.write"},
    {"engram.core.api"},
    {"engram.core.benchmark"},
]
SIBLINGS_APART = [("engram.core.read", "engram.core.write")]
ADAPTER_CORE = {
    "engram.core",
    "engram.core.api",
    "engram.core.errors",
    "engram.core.results",
    "engram.core.benchmark",
}
ADAPTER_USES = {
    "engram.cli": {"engram.mcp", "engram.hooks", "engram.ui", "engram.importers", "engram.hosts"},
    "engram.mcp": {"engram.importers", "engram.hosts"},
    "engram.hooks": {"engram.importers", "engram.hosts"},
    "engram.ui": {"engram.importers", "engram.hosts"},
    "engram.importers": {"engram.hosts"},
    "engram.hosts": set(),
}
# Where a function-level import is allowed: the hot entry points and the load chain, which
# import what a hook or a cold `engram load` needs only when it needs it.
LAZY_ALLOWED = {
    "engram.cli.main",
    "engram.cli.common",
    "engram.cli.read",
    "engram.cli.hook",
    "engram.hooks.run",
    "engram.mcp.server",
    "engram.mcp.tools",
    "engram.core.api",
    "engram.core.read.load",
    "engram.core.read.routing",
    "engram.core.read.render",
    "engram.core.read.signals",
    "engram.core.safety.screen",
    "engram.core.store.index",
    "engram.core.store.files",
    "engram.core.store.config",
    "engram.core.store.roots",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in SRC.rglob("*.py")}


def resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def imports() -> dict[str, dict[str, bool]]:
    """module -> {imported module: whether it is imported at the module's top}."""
    out: dict[str, dict[str, bool]] = defaultdict(dict)
    for mod, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = mod if path.name == "__init__.py" else mod.rpartition(".")[0]
        top_ids = {id(n) for n in tree.body}
        top_ids |= {  # `if TYPE_CHECKING:` blocks at the top
            id(c) for n in tree.body if isinstance(n, ast.If) for c in n.body
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            else:
                continue
            for name in names:
                target = resolve(name) if name.startswith("engram") else None
                if target and target != mod:
                    out[mod][target] = out[mod].get(target, False) or id(node) in top_ids
        if mod == "engram.core.api":  # the lazily handed-out names are imports too
            for value in ast.walk(tree):
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    target = resolve(value.value) if value.value.startswith("engram.") else None
                    if target and target != mod:
                        out[mod].setdefault(target, True)
    return out


GRAPH = imports()


def in_package(mod: str, package: str) -> bool:
    return mod == package or mod.startswith(package + ".")


def core_floor(mod: str) -> int | None:
    best = None
    for i, floor in enumerate(CORE_FLOORS):
        for package in floor:
            if in_package(mod, package) and (best is None or len(package) > best[1]):
                best = (i, len(package))
    return None if best is None else best[0]


def adapter_of(mod: str) -> str | None:
    return next((a for a in ADAPTER_USES if in_package(mod, a)), None)


def test_the_core_stands_in_floors() -> None:
    wrong = []
    for mod, targets in GRAPH.items():
        if not in_package(mod, "engram.core"):
            continue
        for target in targets:
            if in_package(target, "engram.core") and (core_floor(target) or 0) > (
                core_floor(mod) or 0
            ):
                wrong.append(f"{mod} -> {target}")
            for a, b in SIBLINGS_APART:
                if (in_package(mod, a) and in_package(target, b)) or (
                    in_package(mod, b) and in_package(target, a)
                ):
                    wrong.append(f"{mod} -> {target}")
            if adapter_of(target):
                wrong.append(f"{mod} -> {target} (the core knows no adapter)")
    assert wrong == []


def test_adapters_use_the_core_through_its_front_door() -> None:
    wrong = []
    for mod, targets in GRAPH.items():
        me = adapter_of(mod)
        if me is None:
            continue
        for target in targets:
            if in_package(target, "engram.core") and target not in ADAPTER_CORE:
                wrong.append(f"{mod} -> {target}")
            other = adapter_of(target)
            if other and other != me and other not in ADAPTER_USES[me]:
                wrong.append(f"{mod} -> {target}")
    assert wrong == []


def test_no_circles() -> None:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in GRAPH.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                circles.append(sorted(part))

    for mod in sorted(MODULES):
        if mod not in index:
            visit(mod)
    assert circles == []


def test_imports_sit_at_the_top_outside_the_hot_entry_points() -> None:
    lazy = sorted(
        f"{mod} -> {target}"
        for mod, targets in GRAPH.items()
        if mod not in LAZY_ALLOWED
        for target, at_top in targets.items()
        if not at_top
    )
    assert lazy == []


def test_the_floors_name_every_core_module() -> None:
    assert [m for m in MODULES if in_package(m, "engram.core") and core_floor(m) is None] == []
