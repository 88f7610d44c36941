"""The page's own script, run under node against the real server through a minimal DOM.

Where no browser is installed this still drives every view and the approve/decline
buttons end to end; the DOM has no HTML parser, so memory text can only arrive as text.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.core import api
from engram.core.store.roots import require_roots
from engram.ui.server import UIServer
from tests.conftest import MemoryWriter, ws_root
from tests.ui.test_page import SCRIPT

NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")
SHIM = Path(__file__).with_name("dom_shim.js")


@pytest.fixture
def served(project: Path) -> Iterator[UIServer]:
    from engram.core.store.index import forget_open_indexes

    forget_open_indexes()
    server = UIServer(project, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def run_page(server: UIServer, plan: list[dict[str, Any]]) -> dict[str, Any]:
    base = f"http://127.0.0.1:{server.port}/"
    cookie = f"engram_ui={server.token}"
    p = subprocess.run(
        [str(NODE), str(SHIM), base, cookie, server.csrf, SCRIPT, json.dumps(plan)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_views_show_memory_as_text(
    served: UIServer, project: Path, write_memory: MemoryWriter
) -> None:
    root = ws_root(project)
    write_memory(root, "rule", "run-tests", "Run the tests", body="- <b>bold</b> stays text")
    write_memory(root, "skill", "release", "Release steps", depends_on=["run-tests", "gone"])
    out = run_page(served, [
        {"text": "list", "tags": "list_tags"},
        {"clickText": "Run the tests"}, {"text": "detail"},
        {"view": "graph", "text": "graph"},
        {"view": "health", "text": "health"},
        {"view": "task"}, {"fill": "task", "value": "run the tests"}, {"click": "Load"},
        {"text": "task"},
    ])  # fmt: skip
    for name in ("list", "detail", "graph", "health", "task"):
        assert "[object" not in out[name] and "null" not in out[name], name
    assert "2 of 2 memories" in out["list"]
    assert "b" not in out["list_tags"]  # the <b> in the text made no element
    assert "<b>bold</b> stays text" in out["detail"]
    assert "depended on by" in out["detail"]
    assert "gone (missing)" in out["graph"]
    assert "doctor" in out["health"] and "verify" in out["health"]
    assert "tokens of a 1500-token budget" in out["task"]
    assert "Why each memory (--explain)" in out["task"] and "confidence" in out["task"]


def test_approve_and_decline_with_the_buttons(served: UIServer, project: Path) -> None:
    roots = require_roots(project)
    token = served.run_core(api.save, roots, "rule", "Always run the linter before pushing")
    out = run_page(served, [
        {"view": "proposals", "text": "before"},
        {"fill": "approval token", "value": token.data["approval_token"]},
        {"click": "Approve checked"}, {"text": "after"},
    ])  # fmt: skip
    assert "Always run the linter before pushing" in out["before"]
    assert "Verdict:" in out["before"]
    files = list((ws_root(project) / "rules").glob("*.md"))
    assert len(files) == 1 and "Always run the linter" in files[0].read_text()

    other = served.run_core(api.save, roots, "rule", "Never push on Fridays")
    out = run_page(served, [
        {"view": "proposals"},
        {"fill": "approval token", "value": other.data["approval_token"]},
        {"click": "Decline"}, {"text": "after"},
    ])  # fmt: skip
    assert "declined" in out["after"]
    assert len(list((ws_root(project) / "rules").glob("*.md"))) == 1


def test_a_wrong_token_in_the_page_shows_the_error(served: UIServer, project: Path) -> None:
    served.run_core(api.save, require_roots(project), "rule", "Never push on Fridays")
    out = run_page(served, [
        {"view": "proposals"}, {"fill": "approval token", "value": "nope"},
        {"click": "Approve checked"}, {"text": "after"},
    ])  # fmt: skip
    assert "approval.malformed" in out["after"]
    assert list((ws_root(project) / "rules").glob("*.md")) == []
