"""Task signals read from git (`engram.core.read.signals.work_signals`) and named by a caller."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import UsageError
from engram.core.read.signals import checked_signals, work_signals

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(folder: Path, *args: str) -> None:
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folder),
           "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
           "GIT_COMMITTER_EMAIL": "a@b", "GIT_CONFIG_NOSYSTEM": "1"}  # fmt: skip
    subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True, env=env)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@needs_git
def test_a_project_in_a_folder_of_a_repository_gets_its_own_paths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    project = repo / "apps" / "billing"
    api.init(project)
    for rel in ("src/invoice.py", "src/old_name.py", ".agents/.engram/rules/r.md"):
        _write(project / rel, "one\n")
    _write(repo / "web" / "app.ts", "one\n")
    _git(repo, "init", "-q", "-b", "fix/invoice-rounding")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "start")
    _write(project / "src/invoice.py", "two\n")  # changed
    _git(repo, "mv", "apps/billing/src/old_name.py", "apps/billing/src/new_name.py")  # staged
    _write(project / ".agents/.engram/rules/r.md", "two\n")  # memory: not the work
    _write(repo / "web" / "app.ts", "two\n")  # outside the project
    paths, branch = work_signals(project, project / "src")
    assert branch == "fix/invoice-rounding"
    assert sorted(paths) == ["src", "src/invoice.py", "src/new_name.py"]


def test_outside_a_repository_there_are_no_git_signals(tmp_path: Path, monkeypatch) -> None:
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-git-here"))  # git could not even start
    project = tmp_path / "plain"
    api.init(project)
    if any((p / ".git").exists() for p in (project, *project.parents)):
        pytest.skip("the temporary folder is inside a git repository")
    assert work_signals(project, project) == ([], "")


def test_named_signals_are_project_paths_or_a_clear_error(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / "src").mkdir(parents=True)
    assert checked_signals(["src/a.py", "./src/../src/b.py", "c.py"], " main ", project) == (
        ["src/a.py", "src/b.py", "c.py"],
        "main",
    )
    assert checked_signals(["a.py"], "", project, project / "src") == (["src/a.py"], "")
    assert checked_signals([str(project / "x.py")], None, project) == (["x.py"], "")
    for paths, branch, message in (
        (["../x.py"], "", "outside the project"),
        (["/etc/passwd"], "", "outside the project"),
        ([""], "", "is not a file path"),
        ("src/a.py", "", "must be a list"),
        ([1], "", "must be a list"),
        ([f"{i}.py" for i in range(51)], "", "at most 50"),
        ([], "x" * 201, "longer than 200"),
        ([], 7, "branch must be a string"),
    ):
        with pytest.raises(UsageError, match=message):
            checked_signals(paths, branch, project)
    with pytest.raises(UsageError, match="no project memory root"):
        checked_signals(["a.py"], "", None)


def test_a_git_that_hangs_is_stopped_and_the_hook_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import engram.core.read.worktree as worktree

    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    project = tmp_path / "p"
    api.init(project)
    (project / ".git").mkdir()  # git would be asked
    (project / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    bin_dir, pid_file = tmp_path / "bin", tmp_path / "git.pid"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho $$ > "{pid_file}"\nexec sleep 30\n')
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr(worktree, "GIT_TIMEOUT_S", 0.3)
    assert work_signals(project, project / "src") == (["src"], "")
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(pid, 0)


def test_the_recorded_globs_survive_a_flag_and_follow_an_edit(project: Path, write_memory) -> None:
    from engram.core.read.signals import path_matches
    from engram.core.store.index import open_index
    from engram.core.store.roots import resolve_roots
    from tests.conftest import ws_root

    root = ws_root(project)
    write_memory(root, "rule", "money", "Money is cents", "- no floats", paths=["src/billing/**"])
    write_memory(root, "rule", "other", "Other rule", "- something else")
    roots = resolve_roots(project)
    conn = open_index(roots).conn
    money = conn.execute("SELECT rowid FROM memories WHERE id = 'money'").fetchone()[0]

    def state() -> object:
        return conn.execute("SELECT value FROM signal_state WHERE key = 'paths'").fetchone()

    assert path_matches(conn, ["src/billing/a.py"])[0] == {money}
    recorded = state()
    assert recorded is not None
    with conn:  # what the read path stores on a memory's first display
        conn.execute("UPDATE memories SET flag = '' WHERE id = 'other'")
    assert state() == recorded  # still valid: no glob is read again
    write_memory(root, "rule", "money", "Money is cents", "- no floats", paths=["web/**"])
    conn = open_index(roots).conn  # the next load re-indexes the edited file
    assert state() is None
    money = conn.execute("SELECT rowid FROM memories WHERE id = 'money'").fetchone()[0]
    assert path_matches(conn, ["src/billing/a.py"])[0] == set()
    assert path_matches(conn, ["web/app.tsx"])[0] == {money}


@needs_git
def test_a_filter_the_repository_configures_is_never_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`git status` runs a stat-dirty file's clean filter; the hook turns off the filters the
    repository's own config defines, so no program it names runs on every prompt."""
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    repo = tmp_path / "repo"
    api.init(repo)
    _write(repo / ".gitattributes", "*.txt filter=evil\n")
    _write(repo / "a.txt", "hello\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "start")
    marker = tmp_path / "RAN"
    _git(repo, "config", "filter.evil.clean", f"touch {marker}; cat")
    _git(repo, "config", "filter.evil.process", f"touch {marker}")
    os.utime(repo / "a.txt", (1_000_000_000, 1_000_000_000))  # stat-dirty: git must look
    _paths, branch = work_signals(repo)
    assert branch == "main"
    assert not marker.exists()


@needs_git
def test_a_submodules_filter_is_never_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    sub = tmp_path / "sub"
    _write(sub / ".gitattributes", "* filter=evil\n")
    _write(sub / "f.txt", "hi\n")
    _git(sub, "init", "-q", "-b", "main")
    _git(sub, "add", "-A")
    _git(sub, "commit", "-q", "-m", "s")
    repo = tmp_path / "repo"
    api.init(repo)
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "sub")
    _git(repo, "commit", "-q", "-m", "t")
    marker = tmp_path / "RAN"
    _git(repo / "sub", "config", "filter.evil.clean", f"sh -c 'touch {marker}; cat'")
    _write(repo / "sub" / "f.txt", "hi\nx\n")
    work_signals(repo)
    assert not marker.exists()
