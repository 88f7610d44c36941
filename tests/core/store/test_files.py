"""Contained file access in a memory root: no read, write, lock or removal follows a link."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.core.errors import ContainmentError
from engram.core.store import files as store
from engram.core.store import memoryfiles
from engram.core.store.layout import Root
from engram.core.store.roots import create_layout

VICTIM = b"outside the memory root\n"


@pytest.fixture(autouse=True, params=["descriptors", "lstat"])
def walk(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test runs with descriptor-relative walks and with the `lstat` walk of platforms
    that lack them."""
    if request.param == "lstat":
        monkeypatch.setattr(store, "_USE_FDS", False)
    return request.param


@pytest.fixture
def root(tmp_path: Path) -> Root:
    path = tmp_path / "project" / ".agents" / ".engram"
    create_layout(path)
    return Root(path, "workspace")


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "outside" / "victim.txt"
    v.parent.mkdir()
    v.write_bytes(VICTIM)
    return v


def outside_names(victim: Path) -> list[str]:
    return sorted(p.name for p in victim.parent.iterdir())


def test_atomic_write_inside_the_root_creates_folders_and_leaves_no_temp(root: Root) -> None:
    target = root.cache_dir / "deep" / "state.json"
    store.atomic_write(target, "{}\n", root=root)
    store.atomic_write(target, b"[]\n", root=root)
    assert target.read_bytes() == b"[]\n"
    assert os.listdir(target.parent) == ["state.json"]
    assert oct(target.stat().st_mode & 0o777) == "0o644"


def test_atomic_write_refuses_a_linked_target_and_keeps_the_link(root: Root, victim: Path) -> None:
    link = root.pending_path
    link.symlink_to(victim)
    with pytest.raises(
        ContainmentError, match=r"pending-approvals\.json is a symbolic link"
    ) as exc:
        store.atomic_write(link, "{}", root=root)
    assert exc.value.code == "file.symlink" and isinstance(exc.value, OSError)
    assert link.is_symlink() and victim.read_bytes() == VICTIM
    assert [n for n in os.listdir(root.path) if n.endswith(".tmp")] == []


def test_atomic_write_refuses_a_linked_folder_on_the_way(root: Root, victim: Path) -> None:
    root.cache_dir.symlink_to(victim.parent, target_is_directory=True)
    before = outside_names(victim)
    with pytest.raises(ContainmentError, match="cache is a symbolic link") as exc:
        store.atomic_write(root.cache_dir / "victim.txt", "owned", root=root)
    assert exc.value.code == "folder.symlink"
    assert victim.read_bytes() == VICTIM and outside_names(victim) == before  # no temp file there


def test_a_dangling_link_is_not_created_through(root: Root, tmp_path: Path) -> None:
    made = tmp_path / "outside" / "made-by-engram"
    made.parent.mkdir(exist_ok=True)
    (root.path / "rules" / "new.md").symlink_to(made)
    with pytest.raises(ContainmentError):
        store.atomic_write(root.path / "rules" / "new.md", "# x", root=root)
    with pytest.raises(ContainmentError):
        store.append_text(root, root.path / "rules" / "new.md", "x")
    assert not made.exists()


def test_paths_that_leave_the_root_are_refused(root: Root, victim: Path) -> None:
    for path in (root.path / ".." / "escape.json", victim, root.path):
        with pytest.raises(ContainmentError) as exc:
            store.atomic_write(path, "x", root=root)
        assert exc.value.code == "path.outside"
    assert victim.read_bytes() == VICTIM and not (root.path.parent / "escape.json").exists()


def test_reads_refuse_links_and_special_files(root: Root, victim: Path) -> None:
    (root.path / "rules" / "leak.md").symlink_to(victim)
    with pytest.raises(ContainmentError, match=r"leak\.md is a symbolic link"):
        store.read_bytes(root, root.path / "rules" / "leak.md")
    with pytest.raises(FileNotFoundError):
        store.read_bytes(root, root.path / "rules" / "absent.md")
    fifo = root.path / "rules" / "pipe.md"
    os.mkfifo(fifo)  # opening it must neither block nor read
    with pytest.raises(ContainmentError, match="not a regular file") as exc:
        store.read_bytes(root, fifo)
    assert exc.value.code == "file.not_regular"
    with pytest.raises(ContainmentError):
        store.file_stat(root, root.path / "rules" / "leak.md")


def test_a_memory_file_that_is_a_link_is_never_scanned_or_read(root: Root, victim: Path) -> None:
    (root.path / "rules" / "real.md").write_text("---\nid: real\ntype: rule\n---\n\n# Real\n")
    (root.path / "rules" / "leak.md").symlink_to(victim)
    (root.path / "skills").rmdir()
    (root.path / "skills").symlink_to(victim.parent, target_is_directory=True)
    (victim.parent / "other.md").write_text("---\nid: other\ntype: skill\n---\n\n# Other\n")
    assert [fs.rel for fs in store.scan_files(root)] == ["rules/real.md"]
    assert memoryfiles.find_memory_file(root, "leak") is None
    assert memoryfiles.find_memory_file(root, "other") is None
    found = {(f.code, f.rel) for f in store.link_findings(root)}
    assert found == {("file.symlink", "rules/leak.md"), ("folder.symlink", "skills/")}
    with pytest.raises(ContainmentError):
        memoryfiles.read_memory_file(root, "rules/leak.md")


def test_remove_file_removes_a_link_never_its_target(root: Root, victim: Path) -> None:
    link = root.cache_dir / "index.sqlite"
    root.cache_dir.mkdir(exist_ok=True)
    link.symlink_to(victim)
    assert store.remove_file(root, link) is True and not os.path.lexists(link)
    assert victim.read_bytes() == VICTIM
    assert store.remove_file(root, link) is False
    root.cache_dir.rmdir()
    root.cache_dir.symlink_to(victim.parent, target_is_directory=True)
    with pytest.raises(ContainmentError):
        store.remove_file(root, root.cache_dir / "victim.txt")
    assert victim.read_bytes() == VICTIM


def test_the_root_lock_is_never_taken_through_a_link(root: Root, victim: Path) -> None:
    root.cache_dir.mkdir(exist_ok=True)
    (root.cache_dir / store.LOCK_FILE).symlink_to(victim)
    with (
        pytest.raises(ContainmentError, match=r"write\.lock is a symbolic link"),
        store.root_lock(root),
    ):
        pass
    assert victim.read_bytes() == VICTIM
    (root.cache_dir / store.LOCK_FILE).unlink()
    with store.root_lock(root):
        assert (root.cache_dir / store.LOCK_FILE).is_file()


def test_sqlite_side_files_are_checked_too(root: Root, victim: Path) -> None:
    root.cache_dir.mkdir(exist_ok=True)
    (root.cache_dir / "index.sqlite-wal").symlink_to(victim)
    with pytest.raises(ContainmentError, match=r"index\.sqlite-wal"):
        store.contained_path(root, root.cache_dir / "index.sqlite", siblings=("-wal", "-shm"))


def test_a_workspace_root_built_on_a_link_is_refused(tmp_path: Path, victim: Path) -> None:
    shared = tmp_path / "shared"
    create_layout(shared)  # a real root elsewhere (not workspace-shaped)
    project = tmp_path / "cloned"
    (project / ".agents").mkdir(parents=True)
    (project / ".agents" / ".engram").symlink_to(shared, target_is_directory=True)
    linked = Root(project / ".agents" / ".engram", "workspace")
    with pytest.raises(ContainmentError) as exc:
        store.atomic_write(linked.pending_path, "{}", root=linked)
    assert exc.value.code == "root.symlink"
    with pytest.raises(ContainmentError, match="symbolic link"):
        create_layout(linked.path)
    assert not (shared / "pending-approvals.json").exists()


def test_a_global_root_may_be_a_link_the_user_made(tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "memory"
    create_layout(real)
    link = tmp_path / "global"
    link.symlink_to(real, target_is_directory=True)
    groot = Root(link, "global")
    store.atomic_write(groot.manifest_path, "{}\n", root=groot)
    assert (real / "hashes.json").read_text() == "{}\n"


def test_create_layout_refuses_a_linked_gitignore(tmp_path: Path) -> None:
    made = tmp_path / "made-by-engram"
    path = tmp_path / "p" / ".agents" / ".engram"
    path.mkdir(parents=True)
    (path / ".gitignore").symlink_to(made)
    with pytest.raises(ContainmentError, match=r"\.gitignore is a symbolic link"):
        create_layout(path)
    assert not made.exists()
