from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import UsageError
from engram.core.store.layout import GITIGNORE_TEXT
from engram.core.store.roots import resolve_roots


def test_init_creates_the_layout_and_is_idempotent(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "src" / "pkg"
    sub.mkdir(parents=True)
    first = api.init(sub)
    root = tmp_path / ".agents" / ".engram"
    assert first.data["root"] == str(root)
    for d in ("rules", "skills", "knowledge", "archive", "working"):
        assert (root / d).is_dir()
    assert (root / ".gitignore").read_text() == GITIGNORE_TEXT
    for ignored in ("working/", "pending-approvals.json", "cache/"):
        assert ignored in GITIGNORE_TEXT
    assert json.loads((root / "hashes.json").read_text())["files"] == {}
    (root / ".gitignore").write_text("# mine\n")
    (root / "config.json").write_text('{"load": {"limit": 3}}\n')
    second = api.init(tmp_path)
    assert second.data["created"] is False
    assert (root / ".gitignore").read_text() == "# mine\n"
    assert json.loads((root / "config.json").read_text()) == {"load": {"limit": 3}}


def test_init_adopts_existing_memory_files_without_touching_them(
    tmp_path: Path, write_memory
) -> None:
    root = tmp_path / ".agents" / ".engram"
    path = write_memory(root, "rule", "keep-me", "Keep me")
    before = path.read_bytes()
    result = api.init(tmp_path)
    assert result.data["adopted"] == ["rules/keep-me.md"]
    assert path.read_bytes() == before
    assert "rules/keep-me.md" in json.loads((root / "hashes.json").read_text())["files"]
    assert api.verify(resolve_roots(tmp_path)).ok


def test_commands_find_the_root_from_a_subfolder(project: Path) -> None:
    deep = project / "a" / "b"
    deep.mkdir(parents=True)
    assert resolve_roots(deep).project_dir == project.resolve()


def test_global_path_is_created_and_remembered(tmp_path: Path, project: Path) -> None:
    g = tmp_path / "global-mem"
    api.init(project, global_path=g)
    assert (g / "rules").is_dir()
    assert resolve_roots(project).global_ is not None
    assert resolve_roots(project).global_.path == g.resolve()


def test_env_global_dir_wins(
    tmp_path: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    g = tmp_path / "env-global"
    g.mkdir()
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(g))
    assert resolve_roots(project).global_.path == g


def test_root_that_is_a_file_is_refused(tmp_path: Path) -> None:
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / ".engram").write_text("not a folder")
    with pytest.raises(UsageError, match="is a file"):
        api.init(tmp_path)
    g = tmp_path / "gfile"
    g.write_text("x")
    with pytest.raises(UsageError, match="is a file"):
        api.init(tmp_path, global_path=g)


def test_example_workspace_loads_a_routed_pack(tmp_path: Path) -> None:
    api.init(tmp_path, example=True)
    result = api.load(resolve_roots(tmp_path), api.LoadRequest(query="prepare a release"))
    assert "release-process" in result.data["selected_keys"]
    # prerequisites come before the skill that depends on them
    keys = result.data["selected_keys"]
    assert keys.index("run-tests-before-release") < keys.index("release-process")


def test_a_second_init_says_the_root_is_already_set_up(project: Path) -> None:
    result = api.init(project)
    assert result.text.startswith("Workspace memory root ")
    assert "already set up" in result.text.splitlines()[0]


def test_a_gitignore_that_misses_private_files_is_flagged_not_rewritten(tmp_path: Path) -> None:
    root = tmp_path / ".agents" / ".engram"
    root.mkdir(parents=True)
    (root / ".gitignore").write_text("cache/\n")
    result = api.init(tmp_path)
    assert (root / ".gitignore").read_text() == "cache/\n"
    (warning,) = [d for d in result.diagnostics if d.code == "root.gitignore"]
    assert "working/" in warning.message and "pending-approvals.json" in warning.message
    (root / ".gitignore").write_text("# mine\nworking/\npending-approvals.json\ncache/\n")
    assert not [d for d in api.init(tmp_path).diagnostics if d.code == "root.gitignore"]
