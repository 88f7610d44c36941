"""Fixtures: example workspaces and `engram-mcp` children closed after each test."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # the shared helpers in mcp_wire.py

from mcp_wire import McpProcess


@pytest.fixture
def example_project(tmp_path: Path) -> Path:
    """A project initialised with the example memories."""
    from engram.core import api

    proj = tmp_path / "project"
    proj.mkdir()
    api.init(proj, example=True)
    return proj


@pytest.fixture
def mcp(tmp_path: Path) -> Iterator[Callable[..., McpProcess]]:
    """Start `engram-mcp` children; all are closed at the end of the test."""
    started: list[McpProcess] = []

    def start(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> McpProcess:
        full_env = dict(os.environ)
        full_env.update(env or {})
        full_env.setdefault("PYTHONUNBUFFERED", "1")
        proc = McpProcess(list(args), cwd or tmp_path, full_env)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        proc.close()
