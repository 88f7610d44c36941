from __future__ import annotations

from pathlib import Path

import pytest

from engram.core import api
from engram.core.store.roots import create_layout, resolve_roots


def test_status_of_an_empty_workspace_reads_well(project: Path) -> None:
    result = api.status(resolve_roots(project))
    assert "memories: 0\n" in result.text + "\n"
    assert "(; ; )" not in result.text


def test_pending_approvals_of_a_global_only_setup_are_counted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    glob = tmp_path / "global"
    create_layout(glob)
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(glob))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    roots = resolve_roots(elsewhere)
    api.save(roots, "rule", "Sign commits.", scope="global")
    result = api.status(roots)
    assert result.data["pending_approvals"] == 1
    assert "pending approvals: 1" in result.text
