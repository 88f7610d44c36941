"""Hostile repositories: a committed symbolic link never turns an Engram read or write into one
outside the memory root.

Each case is a real Git repository that ships links inside `.agents/.engram/`, cloned with
`git clone`, then driven through the installed `engram` executable (HOME in a temporary
folder): load, both hook events, save --force, verify, doctor and status. What the user
keeps is asserted every time: the files outside are byte-identical (and nothing new appears
there), no traceback, one clear line naming the link, and ordinary writes work once the
link is gone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(".agents") / ".engram"
MARKER = "LEAKED-MARKER-7f3a"
VICTIM_BYTES = b"victim file: Engram must never write here\n"
LEAK_MEMORY = f"""---
schema_version: 3
id: leak
type: rule
triggers: [release]
---

# Release secret {MARKER}

## Content

- Release {MARKER}: the text of a file outside the memory root.
"""


def executable(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    assert found, f"{name} is not installed"
    return found


@dataclass
class Box:
    """A temporary HOME, a victim area outside every root, and the installed executables."""

    tmp: Path
    env: dict[str, str]

    @property
    def outside(self) -> Path:
        return self.tmp / "outside"

    @property
    def victim(self) -> Path:
        return self.outside / "secret.txt"

    @property
    def victim_dir(self) -> Path:
        return self.outside / "notes"

    def run(
        self, *args: str, cwd: Path, stdin: str | None = None, exe: str = "engram"
    ) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            [executable(exe), *args],
            cwd=cwd,
            env=self.env,
            input=stdin if stdin is not None else "",
            capture_output=True,
            text=True,
            timeout=60,
        )
        both = proc.stdout + proc.stderr
        assert "Traceback" not in both, both
        return proc

    def hook(
        self, project: Path, event: str, prompt: str = "prepare the release", session: str = "s1"
    ) -> str:
        payload = {"cwd": str(project), "session_id": session, "prompt": prompt}
        proc = self.run("hook", "claude", event, cwd=project, stdin=json.dumps(payload))
        assert proc.returncode == 0
        if proc.stdout.strip():
            json.loads(proc.stdout)  # the host always gets valid JSON (or nothing)
        return proc.stdout

    def snapshot(self) -> dict[str, bytes | None]:
        """Every name under the victim area with its bytes (None for a folder)."""
        out: dict[str, bytes | None] = {}
        for p in sorted(self.outside.rglob("*")):
            rel = str(p.relative_to(self.outside))
            out[rel] = None if p.is_dir() and not p.is_symlink() else p.read_bytes()
        return out

    def git(self, *args: str, cwd: Path) -> None:
        subprocess.run(
            ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", *args],
            cwd=cwd,
            env=self.env,
            check=True,
            capture_output=True,
        )


@pytest.fixture
def box(tmp_path: Path) -> Box:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "GIT_"))}
    env.update(
        HOME=str(home),
        ENGRAM_HOME=str(home / ".engram-home"),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
    )
    b = Box(tmp_path, env)
    b.victim_dir.mkdir(parents=True)
    b.victim.write_bytes(VICTIM_BYTES)
    (b.victim_dir / "leak.md").write_text(LEAK_MEMORY, encoding="utf-8")
    shared = b.outside / "shared" / ".engram"  # a complete memory root somewhere else
    for sub in ("rules", "skills", "knowledge", "archive", "working", "cache"):
        (shared / sub).mkdir(parents=True)
    (shared / "rules" / "leak.md").write_text(LEAK_MEMORY, encoding="utf-8")
    return b


def upstream(box: Box) -> Path:
    """A repository with a real workspace root and one ordinary memory, committed."""
    src = box.tmp / "upstream"
    src.mkdir()
    box.git("init", "-q", cwd=src)
    assert box.run("init", cwd=src).returncode == 0
    saved = box.run("save", "rule", "Run the release checklist before tagging", "--force", cwd=src)
    assert saved.returncode == 0, saved.stderr
    return src


def clone_with(box: Box, links: dict[str, Path], files: dict[str, str] | None = None) -> Path:
    """Commit `links` (paths relative to the project) and `files`, then `git clone` the repo."""
    src = upstream(box)
    for rel, text in (files or {}).items():
        (src / rel).write_text(text, encoding="utf-8")
    for rel, target in links.items():
        p = src / rel
        if p.is_dir() and not p.is_symlink():
            shutil.rmtree(p)
        elif os.path.lexists(p):
            p.unlink()
        p.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, p)
    box.git("add", "-f", ".", cwd=src)
    box.git("commit", "-qm", "ship links", cwd=src)
    dest = box.tmp / "clone"
    box.git("clone", "-q", str(src), str(dest), cwd=box.tmp)
    for rel in links:
        assert (dest / rel).is_symlink(), f"the clone did not keep the link {rel}"
    return dest


# Links inside the memory root: (name of the case) -> {path in the root: what it points at}.
FILE, FOLDER, LEAK, DANGLING = "file", "folder", "leak", "dangling"
LINK_CASES: dict[str, tuple[str, str, str]] = {
    # case: (path in the root, kind of target, the code verify/doctor name it with)
    "hook-log": ("cache/hook.log", FILE, "file.symlink"),
    "hook-log-dangling": ("cache/hook.log", DANGLING, "file.symlink"),
    "hook-state": ("cache/hook-state.json", FILE, "file.symlink"),
    "cache-folder": ("cache", FOLDER, "folder.symlink"),
    "index": ("cache/index.sqlite", FILE, "file.symlink"),
    "index-wal": ("cache/index.sqlite-wal", FILE, "file.symlink"),
    "lock": ("cache/write.lock", FILE, "file.symlink"),
    "last-verify": ("cache/last-verify.json", FILE, "file.symlink"),
    "journal": ("cache/commit-journal.json", FILE, "file.symlink"),
    "pending": ("pending-approvals.json", FILE, "file.symlink"),
    "pending-dangling": ("pending-approvals.json", DANGLING, "file.symlink"),
    "manifest": ("hashes.json", FILE, "file.symlink"),
    "config": ("config.json", FILE, "file.symlink"),
    "gitignore": (".gitignore", FILE, "file.symlink"),
    "engramignore": (".engramignore", FILE, "file.symlink"),
    "rules-folder": ("rules", FOLDER, "folder.symlink"),
    "knowledge-folder": ("knowledge", FOLDER, "folder.symlink"),
    "working-folder": ("working", FOLDER, "folder.symlink"),
    "archive-folder": ("archive", FOLDER, "folder.symlink"),
    "memory-file": ("rules/leak.md", LEAK, "file.symlink"),
    "memory-file-dangling": ("rules/indent-makefile-recipes-tabs.md", DANGLING, "file.symlink"),
    "working-note": ("working/leak.md", LEAK, "file.symlink"),
    "knowledge-file": ("knowledge/leak.md", FILE, "file.symlink"),
}


def remove_links(root: Path) -> None:
    """What the person does once Engram named the link (it may have been set aside in cache/)."""
    for p in [root, *root.rglob("*")]:
        if p.is_symlink():
            p.unlink()


def target_of(box: Box, kind: str) -> Path:
    return {
        FILE: box.victim,
        FOLDER: box.victim_dir,
        LEAK: box.victim_dir / "leak.md",
        DANGLING: box.outside / "created-through-a-link",
    }[kind]


@pytest.mark.parametrize("case", sorted(LINK_CASES))
def test_a_committed_link_in_the_root_is_never_followed(box: Box, case: str) -> None:
    rel, kind, code = LINK_CASES[case]
    project = clone_with(box, {str(ROOT / rel): target_of(box, kind)})
    before = box.snapshot()

    load = box.run("load", "prepare the release", cwd=project)
    assert MARKER not in load.stdout + load.stderr
    for event in ("session-start", "user-prompt-submit", "user-prompt-submit"):
        assert MARKER not in box.hook(project, event)
    save = box.run("save", "rule", "Indent Makefile recipes with tabs", "--force", cwd=project)
    if save.returncode != 0:  # refused: one clear line that names the link
        assert "symbolic link" in save.stderr and rel.split("/")[-1] in save.stderr, save.stderr
        assert len(save.stderr.strip().splitlines()) == 1, save.stderr
    status = box.run("status", cwd=project)
    assert MARKER not in status.stdout
    verify = box.run("verify", cwd=project)
    assert verify.returncode == 1 and "symbolic link" in verify.stdout + verify.stderr
    assert Path(rel).name.lstrip(".").split(".")[0] in verify.stdout + verify.stderr
    doctor = box.run("doctor", "--json", cwd=project)
    codes = {f["code"]: f for f in json.loads(doctor.stdout)["data"]["findings"]}
    assert code in codes and codes[code]["level"] == "error", codes
    assert MARKER not in doctor.stdout
    for args in (
        ("init",),
        ("rebuild-index",),  # the derived index may be rebuilt: a linked one is unlinked
        ("note", "The flaky test is test_sync", "--objective", "fix the sync bug", "--force"),
    ):
        proc = box.run(*args, cwd=project)
        assert MARKER not in proc.stdout
        if proc.returncode != 0:
            assert "symbolic link" in proc.stderr, (args, proc.stderr)
            assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr

    assert box.snapshot() == before, "a file outside the memory root changed"
    assert box.victim.read_bytes() == VICTIM_BYTES

    # Once the link is gone, ordinary reads and writes work again.
    remove_links(project / ROOT)
    again = box.run("save", "rule", "Indent Makefile recipes with tabs", "--force", cwd=project)
    assert again.returncode == 0, again.stderr
    assert list((project / ROOT / "rules").glob("indent-makefile-recipes-tabs*.md"))
    context = box.hook(project, "user-prompt-submit", "indent the Makefile recipes", "s2")
    assert "tabs" in context
    assert box.run("verify", cwd=project).returncode in (0, 1)
    doctor = box.run("doctor", "--json", cwd=project)
    codes = {f["code"] for f in json.loads(doctor.stdout)["data"]["findings"]}
    assert not {c for c in codes if c.endswith(".symlink")}, codes
    assert box.snapshot() == before


def test_a_linked_hook_log_is_not_written_when_the_hook_fails(box: Box) -> None:
    """The hook's error path (broken config) is where it writes its log: never through a link."""
    log = ROOT / "cache" / "hook.log"
    project = clone_with(box, {str(log): box.victim}, files={str(ROOT / "config.json"): "{broken"})
    before = box.snapshot()
    for event in ("session-start", "user-prompt-submit"):
        assert box.hook(project, event) == ""  # the host is never broken
    assert box.snapshot() == before
    os.unlink(project / log)
    box.hook(project, "user-prompt-submit")
    assert "config" in (project / log).read_text()  # the same failure is now logged in the root
    assert box.snapshot() == before


def test_a_huge_linked_hook_log_is_not_truncated(box: Box) -> None:
    """Past its size limit the log is cut to its tail: a link to a big file is left whole."""
    big = box.outside / "big.log"
    big.write_bytes(b"keep this line\n" * 10_000)
    log = ROOT / "cache" / "hook.log"
    project = clone_with(box, {str(log): big}, files={str(ROOT / "config.json"): "[]"})
    before = box.snapshot()
    box.hook(project, "user-prompt-submit")
    assert box.snapshot() == before


@pytest.mark.parametrize("linked", [".agents", ".agents/.engram"])
def test_a_workspace_root_shipped_as_a_link_is_refused(box: Box, linked: str) -> None:
    target = box.outside / "shared" if linked == ".agents" else box.outside / "shared" / ".engram"
    src = box.tmp / "upstream"
    src.mkdir()
    box.git("init", "-q", cwd=src)
    if linked == ".agents/.engram":
        (src / ".agents").mkdir()
    os.symlink(target, src / linked)
    (src / "README.md").write_text("a project\n")
    box.git("add", "-f", ".", cwd=src)
    box.git("commit", "-qm", "ship a linked memory root", cwd=src)
    project = box.tmp / "clone"
    box.git("clone", "-q", str(src), str(project), cwd=box.tmp)
    before = box.snapshot()

    for args in (
        ("load", "prepare the release"),
        ("save", "rule", "Indent Makefile recipes with tabs", "--force"),
        ("verify",),
        ("status",),
        ("init",),
    ):
        proc = box.run(*args, cwd=project)
        assert proc.returncode != 0, args
        assert MARKER not in proc.stdout
        assert "symbolic link" in proc.stderr and "memory root" in proc.stderr, proc.stderr
        assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    for event in ("session-start", "user-prompt-submit"):
        assert box.hook(project, event) == ""
    logged = Path(box.env["ENGRAM_HOME"]) / "cache" / "hook.log"
    assert "symbolic link" in logged.read_text()  # the refusal is logged in the user's folder
    doctor = box.run("doctor", "--json", cwd=project)
    codes = {f["code"] for f in json.loads(doctor.stdout)["data"]["findings"]}
    assert "root.symlink" in codes
    assert box.snapshot() == before

    os.unlink(project / linked)
    assert box.run("init", cwd=project).returncode == 0
    assert (
        box.run(
            "save", "rule", "Indent Makefile recipes with tabs", "--force", cwd=project
        ).returncode
        == 0
    )
    assert not (project / ROOT).is_symlink() and (project / ROOT / "rules").is_dir()
    assert box.snapshot() == before


def test_init_never_creates_the_layout_through_a_linked_agents_folder(box: Box) -> None:
    """A repository whose `.agents` points elsewhere (and holds no root yet) gets no root there."""
    project = box.tmp / "project"
    project.mkdir()
    box.git("init", "-q", cwd=project)
    os.symlink(box.victim_dir, project / ".agents")
    before = box.snapshot()
    proc = box.run("init", cwd=project)
    assert proc.returncode != 0 and "symbolic link" in proc.stderr
    assert box.snapshot() == before and not (box.victim_dir / ".engram").exists()


def test_a_global_root_the_user_linked_is_their_choice(box: Box) -> None:
    """ENGRAM_GLOBAL_DIR may name a link the user made; links inside it are still refused."""
    real = box.tmp / "dotfiles" / "engram-global"
    real.mkdir(parents=True)
    link = box.tmp / "home" / "global-memory"
    os.symlink(real, link)
    env = {**box.env, "ENGRAM_GLOBAL_DIR": str(link)}
    project = box.tmp / "solo"
    project.mkdir()
    user = Box(box.tmp, env)
    assert user.run("init", "--global-path", str(link), cwd=project).returncode == 0
    saved = user.run(
        "save",
        "rule",
        "Indent Makefile recipes with tabs",
        "--force",
        "--scope",
        "global",
        cwd=project,
    )
    assert saved.returncode == 0, saved.stderr
    assert (real / "rules" / "indent-makefile-recipes-tabs.md").is_file()
    os.symlink(box.victim, real / "rules" / "leak.md")
    before = box.snapshot()
    verify = user.run("verify", cwd=project)
    assert "file.symlink" in verify.stdout and "leak.md" in verify.stdout
    assert MARKER not in user.run("load", "release", cwd=project).stdout
    assert box.snapshot() == before


def test_an_engramignore_in_the_project_that_links_out_is_not_read(box: Box) -> None:
    """The project-level `.engramignore` is read without following a link either."""
    secret = box.outside / "patterns"
    secret.write_text("rules/*\n")
    project = clone_with(box, {".engramignore": secret})
    load = box.run("load", "prepare the release", cwd=project)
    assert "release checklist" in load.stdout  # the linked patterns did not hide the rule


def test_names_a_folder_watch_reports_in_a_linked_folder_are_never_indexed(box: Box) -> None:
    """A long-lived server re-checks only the names the kernel reports: links stay out there too."""
    from engram.core.store.index import open_index
    from engram.core.store.roots import resolve_roots

    project = clone_with(box, {str(ROOT / "skills"): box.victim_dir})
    (project / ROOT / "rules" / "leak.md").symlink_to(box.victim_dir / "leak.md")
    idx = open_index(resolve_roots(project))
    idx._sync_names({("workspace/skills", "leak.md"), ("workspace/rules", "leak.md")})
    rels = {r["rel"] for r in idx.all_rows()}
    assert rels and not {r for r in rels if r.endswith("leak.md")}
    assert not [k for k in idx.parse_errors if k[1].endswith("leak.md")]
