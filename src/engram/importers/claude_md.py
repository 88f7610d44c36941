"""CLAUDE.md and `.claude/rules/*.md` (Claude Code memory, docs.claude.com "Manage Claude's memory").

CLAUDE.md (root, nested, or `.claude/CLAUDE.md`; `CLAUDE.local.md` for one person) is
plain Markdown that may import other files with `@path` (relative to the importing file,
up to five levels). Files under `.claude/rules/` may carry front matter `paths:` globs
that scope them. A nested CLAUDE.md applies to its subtree. User level (same page, "Choose
where to put CLAUDE.md files"): `~/.claude/CLAUDE.md` and `~/.claude/rules/**/*.md`, for
every project of the person.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from engram.core.api import read_plain
from engram.importers import FileResult, Workspace, front_matter, glob_list, subtree_globs
from engram.importers._imports import read_with_imports
from engram.importers.split import split_markdown

HOST = "claude"
USER_FILES = (".claude/CLAUDE.md", ".claude/rules/*.md", ".claude/rules/**/*.md")


def matches(rel: str) -> bool:
    name = rel.rpartition("/")[2]
    if name in ("CLAUDE.md", "CLAUDE.local.md"):
        return True
    return rel.startswith(".claude/rules/") and rel.endswith(".md")


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    if rel.startswith(".claude/rules/"):
        fields, body, at = front_matter(ws.read(rel))
        res.pieces += split_markdown(
            body, rel, first_line=at, paths=glob_list(fields.get("paths", ""))
        )
        return
    folder = rel.removesuffix("/.claude/CLAUDE.md") if rel.endswith(".claude/CLAUDE.md") else rel
    paths = [] if rel == ".claude/CLAUDE.md" else subtree_globs(ws, folder)
    read_with_imports(ws, rel, res, paths=paths)


def claude_home() -> Path:
    """Claude Code's configuration folder: `$CLAUDE_CONFIG_DIR`, else `~/.claude`."""
    return Path(os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude").expanduser()


def project_key(path: Path) -> str:
    """The folder name Claude Code gives a project under `~/.claude/projects/`.

    Every character that is not an ASCII letter or digit becomes `-`
    (`/home/me/my_app` → `-home-me-my-app`), as in the project folders Claude Code writes
    next to its session transcripts.
    """
    return re.sub(r"[^A-Za-z0-9]", "-", str(path))


def _git_root(start: Path) -> Path | None:
    """The repository's main folder: worktrees of one repository share one auto memory."""
    for folder in (start, *start.parents):
        dot = folder / ".git"
        if dot.is_dir():
            return folder
        if dot.is_file():
            try:
                first = read_plain(dot, 64 * 1024).decode("utf-8", "replace")[:4096]
            except (OSError, ValueError):  # not a regular file, too large
                return folder
            m = re.match(r"gitdir:\s*(.+)", first.strip())
            if m:
                gitdir = (folder / m.group(1).strip()).resolve()
                if gitdir.parent.name == "worktrees" and gitdir.parent.parent.name == ".git":
                    return gitdir.parent.parent.parent
            return folder
    return None


def auto_memory(project: Path) -> tuple[Path, str] | None:
    """Claude Code's auto memory for `project`: (its memory folder, "MEMORY.md"), if present.

    Claude Code keeps notes it wrote itself in
    `~/.claude/projects/<project>/memory/MEMORY.md` (code.claude.com/docs/en/memory, "Auto
    memory": one folder per git repository, shared by its worktrees and subfolders; the
    project folder outside a repository). `<project>` is the path with every character other
    than a letter or digit replaced by `-`.
    """
    project = project.resolve()
    projects = claude_home() / "projects"
    for base in dict.fromkeys(p for p in (_git_root(project), project) if p is not None):
        key = project_key(base)
        # A key longer than 200 characters is cut there and given a hash suffix.
        names = [key] if len(key) <= 200 else sorted(p.name for p in projects.glob(key[:200] + "*"))
        for name in names:
            folder = projects / name / "memory"
            if (folder / "MEMORY.md").is_file():
                return folder, "MEMORY.md"
    return None
