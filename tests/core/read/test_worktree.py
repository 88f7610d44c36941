"""The files the work touches, read from git without running anything the repository can
configure (`engram.core.read.worktree`), driven through the installed `engram hook`.

Each hostile repository names a program that writes a marker file, in one of the ways git
would run it during `git status` (a clean filter however its section is spelled or included,
an fsmonitor hook, hooks, a pager, an external diff, an alias), and makes a tracked file
stat-dirty so that git must look at its content. The hook must answer, name the changed
file, and no marker may appear. A FIFO where git's files should be must not block it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.core.read import worktree

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
ENGRAM = [sys.executable, "-m", "engram.cli.main"]


def environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        HOME=str(tmp_path / "home"),
        ENGRAM_HOME=str(tmp_path / "home" / ".engram-home"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_AUTHOR_NAME="a",
        GIT_AUTHOR_EMAIL="a@example.com",
        GIT_COMMITTER_NAME="a",
        GIT_COMMITTER_EMAIL="a@example.com",
    )
    (tmp_path / "home").mkdir(exist_ok=True)
    return env


def git(repo: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def repository(tmp_path: Path, env: dict[str, str]) -> Path:
    """A project with memory; `src/a.txt` changed, `src/same.txt` stat-dirty (filter `evil`)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    subprocess.run([*ENGRAM, "init", "--example"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*ENGRAM, "set-read", "always"], cwd=repo, env=env, check=True,
                   capture_output=True)  # fmt: skip
    (repo / ".gitattributes").write_text("*.txt filter=evil diff=evil\n")
    (repo / "src").mkdir()
    (repo / "src" / "a.txt").write_text("hello\n")
    (repo / "src" / "same.txt").write_text("unchanged\n")
    git(repo, env, "init", "-q", "-b", "feature/release")
    git(repo, env, "add", "-A")
    git(repo, env, "commit", "-q", "-m", "start")
    (repo / "src" / "a.txt").write_text("hello again\n")
    # same bytes, new times: git must read it (through its filter) to know it is unchanged
    os.utime(repo / "src" / "same.txt", (1_000_000_000, 1_000_000_000))
    return repo


def hook(repo: Path, env: dict[str, str], event: str = "user-prompt-submit") -> tuple[str, float]:
    payload = json.dumps({"session_id": "s", "cwd": str(repo), "prompt": "cut a release"})
    start = time.monotonic()
    done = subprocess.run([*ENGRAM, "hook", "claude", event], input=payload, cwd=repo, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    return done.stdout, time.monotonic() - start


def program(marker: Path) -> str:
    """A program that leaves `marker` and passes its input through (a working filter)."""
    script = marker.with_name("evil.sh")
    script.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec cat\n')
    script.chmod(0o755)
    return str(script)


HOSTILE_CONFIGS = {
    "filter section": '[filter "evil"]\n\tclean = {p}\n\tprocess = {p}\n',
    "upper-case section": '[FILTER "evil"]\n\tclean = {p}\n',
    "mixed-case key": '[Filter "evil"]\n\tCLEAN = {p}\n',
    "old dotted section": "[filter.evil]\n\tclean = {p}\n",
    "include.path": "[include]\n\tpath = {inc}\n",
    "includeIf gitdir": '[includeIf "gitdir:{repo}/"]\n\tpath = {inc}\n',
    "core.fsmonitor": "[core]\n\tfsmonitor = {p}\n",
    "core.hooksPath": "[core]\n\thooksPath = {hooks}\n",
    "diff.external and textconv": '[diff]\n\texternal = {p}\n[diff "evil"]\n\ttextconv = {p}\n',
    "pager": "[core]\n\tpager = {p}\n[pager]\n\tstatus = {p}\n",
    "alias for status": "[alias]\n\tstatus = !{p}\n",
    "worktree elsewhere": "[core]\n\tworktree = /\n" + '[filter "evil"]\n\tclean = {p}\n',
}


@pytest.mark.parametrize("shape", list(HOSTILE_CONFIGS))
def test_no_program_the_repository_names_ever_runs(tmp_path: Path, shape: str) -> None:
    env = environment(tmp_path)
    repo = repository(tmp_path, env)
    marker = tmp_path / "RAN"
    included = tmp_path / "included.cfg"
    included.write_text(f'[filter "evil"]\n\tclean = {program(marker)}\n')
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("post-index-change", "pre-commit", "post-checkout", "reference-transaction"):
        (hooks / name).write_text(f"#!/bin/sh\ntouch {marker}\n")
        (hooks / name).chmod(0o755)
    config = HOSTILE_CONFIGS[shape].format(p=program(marker), inc=included, repo=repo, hooks=hooks)
    with open(repo / ".git" / "config", "a", encoding="utf-8") as fh:
        fh.write(config)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* filter=evil\n")

    for event in ("session-start", "user-prompt-submit"):
        hook(repo, env, event)
    seen = worktree.changed_files(str(repo), ".agents/.engram")
    assert not marker.exists(), shape
    assert seen is not None and seen == (["src/a.txt"], "feature/release"), seen


def test_the_changed_files_and_branch_are_read_as_before(tmp_path: Path) -> None:
    env = environment(tmp_path)
    repo = repository(tmp_path, env)
    (repo / "src" / "b.txt").write_text("new\n")
    git(repo, env, "add", "src/b.txt")  # staged
    (repo / ".agents" / ".engram" / "rules" / "x.md").write_text("not the work\n")
    seen = worktree.changed_files(str(repo / "src"), ".agents/.engram")
    assert seen == (["a.txt", "b.txt"], "feature/release")
    git(repo, env, "checkout", "-q", "--detach")
    assert worktree.changed_files(str(repo), ".agents/.engram") == (
        ["src/a.txt", "src/b.txt"],
        "",
    )


def test_an_unborn_branch_and_a_packed_ref(tmp_path: Path) -> None:
    env = environment(tmp_path)
    repo = tmp_path / "r"
    repo.mkdir()
    git(repo, env, "init", "-q", "-b", "topic/x")
    (repo / "f.txt").write_text("x\n")
    git(repo, env, "add", "f.txt")
    assert worktree.changed_files(str(repo), ".agents/.engram") == (["f.txt"], "topic/x")
    git(repo, env, "commit", "-q", "-m", "c")
    git(repo, env, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "topic" / "x").exists()
    (repo / "f.txt").write_text("y\n")
    assert worktree.changed_files(str(repo), ".agents/.engram") == (["f.txt"], "topic/x")


@pytest.mark.parametrize("where", ["config", "HEAD", "index", "gitdir file", "linked config"])
def test_a_fifo_in_git_never_blocks_the_hook(tmp_path: Path, where: str) -> None:
    env = environment(tmp_path)
    repo = repository(tmp_path, env)
    git_dir = repo / ".git"
    if where in ("gitdir file", "linked config"):
        moved = tmp_path / "elsewhere.git"
        git_dir.rename(moved)
        if where == "gitdir file":
            os.mkfifo(repo / ".git")
        else:
            (repo / ".git").write_text(f"gitdir: {moved}\n")
            (moved / "config").unlink()
            os.mkfifo(moved / "config")
    else:
        (git_dir / where).unlink()
        os.mkfifo(git_dir / where)
    for event in ("session-start", "user-prompt-submit"):
        _, took = hook(repo, env, event)
        assert took < 10, (where, took)
    assert worktree.read_regular(str(git_dir / "HEAD"), 100) in (
        None,
        b"ref: refs/heads/feature/release\n",
    )


def test_a_git_that_hangs_is_killed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = environment(tmp_path)
    repo = repository(tmp_path, env)
    bin_dir, pid_file = tmp_path / "bin", tmp_path / "git.pid"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho $$ > "{pid_file}"\nexec sleep 30\n')
    (bin_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setattr(worktree, "GIT_TIMEOUT_S", 0.3)
    assert worktree.changed_files(str(repo), ".agents/.engram") is None
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed and reaped, not left running
        os.kill(pid, 0)


def test_the_private_git_folder_is_removed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = environment(tmp_path)
    repo = repository(tmp_path, env)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    assert worktree.changed_files(str(repo), ".agents/.engram") is not None
    assert list(scratch.iterdir()) == []


def test_a_filter_of_the_persons_own_config_still_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The person's user config is theirs (git-lfs installs its filter there): git reads it
    as usual, which also shows that the stat-dirty file above would run a filter."""
    env = environment(tmp_path)
    repo = repository(tmp_path, env)
    monkeypatch.setenv("HOME", env["HOME"])
    marker = tmp_path / "USER-FILTER-RAN"
    (tmp_path / "home" / ".gitconfig").write_text(f'[filter "evil"]\n\tclean = {program(marker)}\n')
    assert worktree.changed_files(str(repo), ".agents/.engram") == (
        ["src/a.txt"],
        "feature/release",
    )
    assert marker.exists()
