from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.core import api
from engram.core.store.layout import user_config_path
from engram.core.store.roots import create_layout, resolve_roots


@pytest.fixture
def global_only(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    glob = tmp_path / "global"
    create_layout(glob)
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(glob))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return resolve_roots(elsewhere)


def test_roles_and_rule_variant_go_to_the_user_config_without_a_workspace(global_only) -> None:
    result = api.set_role(global_only, ["backend"])
    assert "user configuration" in result.text
    result = api.set_rule_variant(global_only, "strict")
    assert "user configuration" in result.text
    stored = json.loads(user_config_path().read_text())
    assert stored["roles"] == ["backend"] and stored["rule_variant"] == "strict"
    assert api.config_get(global_only, "rule_variant").data["value"] == "strict"


def test_roles_and_rule_variant_stay_in_the_workspace_when_there_is_one(project: Path) -> None:
    roots = resolve_roots(project)
    api.set_role(roots, ["backend"])
    cfg = json.loads((project / ".agents/.engram/config.json").read_text())
    assert cfg["roles"] == ["backend"] and not user_config_path().exists()


def test_global_path_is_stored_absolute_and_a_missing_folder_is_flagged(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = api.config_set(resolve_roots(project), "global_path", "g", user=True)
    stored = json.loads(user_config_path().read_text())["global_path"]
    assert stored == str(tmp_path / "g") and result.data["value"] == stored
    assert any("engram init --global-path" in d.message for d in result.diagnostics)
    (tmp_path / "g").mkdir()
    result = api.config_set(resolve_roots(project), "global_path", str(tmp_path / "g"), user=True)
    assert result.diagnostics == []


def test_save_target_that_needs_a_missing_global_root_is_flagged(project: Path) -> None:
    result = api.config_set(resolve_roots(project), "save_target", "both")
    assert result.data["value"] == "both"
    assert any("global" in d.message for d in result.diagnostics)
    assert api.config_set(resolve_roots(project), "save_target", "workspace").diagnostics == []
