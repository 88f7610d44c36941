"""The page in a real browser (headless Chromium): approve and decline, a screenshot per view.

Runs only where the distribution's Chromium and Playwright are installed; skips otherwise.
Screenshots go to $ENGRAM_UI_ARTIFACTS (default: the test's temporary folder).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.core import api
from engram.core.roots import require_roots
from tests.conftest import MemoryWriter, ws_root

CHROMIUM = Path("/usr/bin/chromium")
if not CHROMIUM.exists():
    pytest.skip(
        "no /usr/bin/chromium: browser tests need the distribution's Chromium",
        allow_module_level=True,
    )
sync_api = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed")

from engram.ui.server import UIServer  # noqa: E402


@pytest.fixture
def served(project: Path) -> Iterator[UIServer]:
    from engram.core.index import forget_open_indexes

    forget_open_indexes()
    server = UIServer(project, 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def page(served: UIServer) -> Iterator[Any]:
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        pg = browser.new_page(viewport={"width": 1280, "height": 800})
        pg.goto(served.url)
        yield pg
        browser.close()


def _shots(tmp_path: Path) -> Path:
    out = Path(os.environ.get("ENGRAM_UI_ARTIFACTS") or tmp_path / "screenshots")
    out.mkdir(parents=True, exist_ok=True)
    return out


def test_every_view_renders_and_hostile_text_stays_text(
    page: Any, served: UIServer, project: Path, write_memory: MemoryWriter, tmp_path: Path
) -> None:
    write_memory(ws_root(project), "rule", "run-tests", "Run the tests",
                 body='- <img src=x onerror="window.pwned=1"><script>window.pwned=1</script>')  # fmt: skip
    page.reload()
    page.click("text=Run the tests")
    page.wait_for_selector("#memory-raw")
    assert "<script>window.pwned=1</script>" in page.inner_text("#memory-raw")
    assert page.evaluate("window.pwned") is None
    shots = _shots(tmp_path)
    page.screenshot(path=str(shots / "memory.png"))
    page.click("nav >> text=Try a task")
    page.fill("#task", "run the tests")
    page.click("text=Load")
    page.wait_for_selector("#load-text")
    page.screenshot(path=str(shots / "task.png"))
    page.click("nav >> text=Health")
    page.wait_for_selector("text=doctor")
    page.screenshot(path=str(shots / "health.png"))


def test_approve_and_decline_in_the_page(
    page: Any, served: UIServer, project: Path, tmp_path: Path
) -> None:
    roots = require_roots(project)
    token = served.run_core(api.save, roots, "rule", "Always run the linter before pushing")
    token = token.data["approval_token"]
    page.click("nav >> text=Proposals")
    page.fill("input[aria-label='approval token']", token)
    page.screenshot(path=str(_shots(tmp_path) / "proposals.png"))
    page.click("text=Approve checked")
    page.wait_for_selector("pre >> text=linter")
    files = list((ws_root(project) / "rules").glob("*.md"))
    assert len(files) == 1 and "Always run the linter" in files[0].read_text()

    other = served.run_core(api.save, roots, "rule", "Never push on Fridays").data["approval_token"]
    page.click("nav >> text=Proposals")
    page.fill("input[aria-label='approval token']", other)
    page.click("text=Decline")
    page.wait_for_selector("text=declined")
    assert len(list((ws_root(project) / "rules").glob("*.md"))) == 1
