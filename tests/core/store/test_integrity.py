from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import UsageError
from engram.core.store.roots import resolve_roots
from tests.conftest import ws_root


def test_verify_reports_modified_missing_unmanaged_and_invalid(project: Path, write_memory) -> None:
    root = ws_root(project)
    a = write_memory(root, "rule", "a-rule", "A rule")
    b = write_memory(root, "knowledge", "b-fact", "B fact")
    roots = resolve_roots(project)
    assert not api.verify(roots).ok  # both unmanaged
    assert api.verify(roots, accept_all=True).ok
    a.write_text(a.read_text() + "\n- edited\n")
    b.unlink()
    write_memory(root, "skill", "c-skill", "C skill")
    (root / "knowledge" / "bad.md").write_text("no front matter")
    res = api.verify(roots)
    assert not res.ok
    report = res.data["roots"][0]
    assert report["modified"] == ["rules/a-rule.md"]
    assert report["missing"] == ["knowledge/b-fact.md"]
    assert report["unmanaged"] == ["knowledge/bad.md", "skills/c-skill.md"]
    assert report["invalid"][0]["path"] == "knowledge/bad.md"


def test_accept_specific_paths_only(project: Path, write_memory) -> None:
    root = ws_root(project)
    write_memory(root, "rule", "a-rule", "A rule")
    write_memory(root, "rule", "b-rule", "B rule")
    roots = resolve_roots(project)
    res = api.verify(roots, accept=["rules/a-rule.md"])
    assert res.data["accepted"] == ["workspace:rules/a-rule.md"]
    assert res.data["roots"][0]["unmanaged"] == ["rules/b-rule.md"]
    res = api.verify(roots, accept=["b-rule"])  # an id works too
    assert res.ok
    manifest = json.loads((root / "hashes.json").read_text())["files"]
    assert set(manifest) == {"rules/a-rule.md", "rules/b-rule.md"}


def test_accept_of_unknown_path_changes_nothing(project: Path, write_memory) -> None:
    root = ws_root(project)
    write_memory(root, "rule", "a-rule", "A rule")
    before = (root / "hashes.json").read_bytes()
    with pytest.raises(UsageError, match="not a memory file"):
        api.verify(resolve_roots(project), accept=["rules/a-rule.md", "nope/x.md"])
    assert (root / "hashes.json").read_bytes() == before


def test_status_reports_counts_and_last_verify(project: Path, write_memory) -> None:
    root = ws_root(project)
    write_memory(root, "rule", "a-rule", "A rule")
    write_memory(root, "knowledge", "b-fact", "B fact")
    roots = resolve_roots(project)
    st = api.status(roots)
    assert st.data["counts"]["total"] == 2
    assert st.data["counts"]["type"] == {"rule": 1, "knowledge": 1}
    assert st.data["last_verify"] is None
    api.verify(roots)
    st = api.status(roots)
    assert st.data["last_verify"]["ok"] is False
    assert "pending approvals: 0" in st.text


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every memory file verify reads, recorded."""
    from engram.core.store import integrity

    seen: list[str] = []
    real_bytes, real_file = integrity.read_bytes, integrity.read_memory_file

    def read_bytes(root, path, *args, **kwargs):  # type: ignore[no-untyped-def]
        seen.append(str(path))
        return real_bytes(root, path, *args, **kwargs)

    def read_memory_file(root, rel):  # type: ignore[no-untyped-def]
        seen.append(rel)
        return real_file(root, rel)

    monkeypatch.setattr(integrity, "read_bytes", read_bytes)
    monkeypatch.setattr(integrity, "read_memory_file", read_memory_file)
    return seen


def test_a_second_verify_reads_no_unchanged_file(
    project: Path, write_memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = ws_root(project)
    for i in range(5):
        write_memory(root, "rule", f"rule-{i}", f"Rule {i}")
    (root / "knowledge" / "bad.md").write_text("no front matter")
    roots = resolve_roots(project)
    first = api.verify(roots).data
    seen = _reads(monkeypatch)
    second = api.verify(roots).data
    assert seen == []
    assert second == first
    assert second["roots"][0]["invalid"][0]["path"] == "knowledge/bad.md"


def test_an_edit_that_keeps_size_and_time_is_still_seen(
    project: Path, write_memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    root = ws_root(project)
    path = write_memory(root, "rule", "a-rule", "A rule")
    roots = resolve_roots(project)
    assert api.verify(roots, accept_all=True).ok
    st = path.stat()
    text = path.read_text()
    path.write_text(text.replace("A rule", "B rule"))  # same size
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # and the old modification time
    seen = _reads(monkeypatch)
    assert api.verify(roots).data["roots"][0]["modified"] == ["rules/a-rule.md"]
    assert seen  # the changed file was read again


def test_a_forged_file_record_does_not_hide_an_edit(project: Path, write_memory) -> None:
    root = ws_root(project)
    path = write_memory(root, "rule", "a-rule", "A rule")
    roots = resolve_roots(project)
    assert api.verify(roots, accept_all=True).ok
    cache = root / "cache" / "screened.json"
    path.write_text(path.read_text() + "\n- edited\n")
    st = path.stat()
    data = json.loads(cache.read_text())
    old = data["files"]["rules/a-rule.md"]
    data["files"]["rules/a-rule.md"] = [st.st_mtime_ns, st.st_ctime_ns, st.st_size, *old[3:]]
    cache.write_text(json.dumps(data))  # "unchanged", without the user's key
    assert api.verify(roots).data["roots"][0]["modified"] == ["rules/a-rule.md"]


def test_verify_names_files_that_give_the_same_id(project: Path, write_memory) -> None:
    root = ws_root(project)
    write_memory(root, "skill", "release-process", "How to cut a release", "- Tag, then push.")
    (root / "knowledge" / "shadow.md").write_text(
        "---\nid: release-process\ntype: knowledge\n---\n# Release\n\n- Push to main.\n"
    )
    roots = resolve_roots(project)
    api.load(roots, api.LoadRequest(query="cut a release", count_usage=False))
    res = api.verify(roots)
    dupes = sorted(d.path for d in res.diagnostics if d.code == "memory.duplicate_id")
    assert dupes == ["knowledge/shadow.md", "skills/release-process.md"]
    assert not res.ok
