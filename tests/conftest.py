"""Shared fixtures: every test runs with HOME and Engram's user folders inside tmp_path."""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


def bench_module(name: str) -> ModuleType:
    """A script of benchmarks/ as a module (the scorers are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(autouse=True)
def isolated_home(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGRAM_HOME", str(home / ".engram-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    monkeypatch.delenv("ENGRAM_WORKSPACE", raising=False)
    monkeypatch.delenv("ENGRAM_SESSION_OBJECTIVE", raising=False)
    yield home
    from engram.core.store.index import forget_open_indexes

    forget_open_indexes()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """An initialised project folder (empty memory)."""
    from engram.core import api

    proj = tmp_path / "project"
    proj.mkdir()
    api.init(proj)
    return proj


MemoryWriter = Callable[..., Path]


@pytest.fixture
def write_memory() -> MemoryWriter:
    """Write a schema v3 memory file by hand, as a person would."""

    def write(
        root: Path,
        mtype: str,
        mid: str,
        title: str,
        body: str = "",
        *,
        folder: str | None = None,
        **fm: object,
    ) -> Path:
        folder = (
            folder
            or {"rule": "rules", "skill": "skills", "workflow": "skills", "knowledge": "knowledge"}[
                mtype
            ]
        )
        lines = ["---", "schema_version: 3", f"id: {mid}", f"type: {mtype}"]
        for key, value in fm.items():
            if isinstance(value, list):
                lines.append(f"{key}: [{', '.join(str(v) for v in value)}]")
            else:
                lines.append(f"{key}: {value}")
        lines += ["---", "", f"# {title}", "", "## Content", "", body or f"- {title}.", ""]
        path = root / folder / f"{mid}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines), encoding="utf-8")
        return path

    return write


def ws_root(project: Path) -> Path:
    return project / ".agents" / ".engram"


# Subprocess-heavy end-to-end tests: the real host programs, the README's two commands, a
# real browser, the MCP Inspector and the official SDK clients. `pytest -m "not e2e"` is the
# quick edit–test loop; CI runs everything.
E2E_FILES = frozenset(
    {
        "test_real_hosts.py",
        "test_readme.py",
        "test_browser.py",
        "test_inspector.py",
        "test_sdk_clients.py",
    }
)


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    for item in items:
        if item.path.name in E2E_FILES:
            item.add_marker(pytest.mark.e2e)
