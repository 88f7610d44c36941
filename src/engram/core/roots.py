"""Finding and creating memory roots (workspace and global) and their fixed layout."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import NamedTuple

from engram.core.errors import EngramError, UsageError

WORKSPACE_SUBDIR = Path(".agents") / ".engram"
TYPE_DIRS = {"rule": "rules", "skill": "skills", "knowledge": "knowledge"}
ARCHIVE_DIR = "archive"
WORKING_DIR = "working"
CACHE_DIR = "cache"
MANIFEST_FILE = "hashes.json"
CONFIG_FILE = "config.json"
PENDING_FILE = "pending-approvals.json"
IGNORE_FILE = ".engramignore"
GITIGNORE_MARKER = "# Written by Engram"
GITIGNORE_TEXT = f"""{GITIGNORE_MARKER}: private and derived files stay out of Git.
{WORKING_DIR}/
{PENDING_FILE}
{CACHE_DIR}/
*.tmp
"""


class Root(NamedTuple):
    """One memory root directory; `scope` is "workspace" or "global"."""

    path: Path
    scope: str

    def type_dir(self, mtype: str) -> Path:
        return self.path / TYPE_DIRS[mtype]

    @property
    def archive_dir(self) -> Path:
        return self.path / ARCHIVE_DIR

    @property
    def working_dir(self) -> Path:
        return self.path / WORKING_DIR

    @property
    def cache_dir(self) -> Path:
        return self.path / CACHE_DIR

    @property
    def manifest_path(self) -> Path:
        return self.path / MANIFEST_FILE

    @property
    def config_path(self) -> Path:
        return self.path / CONFIG_FILE

    @property
    def pending_path(self) -> Path:
        return self.path / PENDING_FILE


class Roots(NamedTuple):
    """The roots visible from one place: workspace wins over global on the same id."""

    project_dir: Path | None
    workspace: Root | None
    global_: Root | None

    @property
    def all(self) -> list[Root]:
        return [r for r in (self.workspace, self.global_) if r is not None]

    @property
    def primary(self) -> Root:
        """The root that owns derived data (index, usage, caches) for this view."""
        root = self.workspace or self.global_
        if root is None:
            raise EngramError(
                "no Engram memory root found; run `engram init` in your project "
                "(or set ENGRAM_GLOBAL_DIR for a global root)",
                code="root.missing",
            )
        return root

    def by_scope(self, scope: str) -> Root | None:
        return self.workspace if scope == "workspace" else self.global_


def user_config_dir() -> Path:
    """Per-user settings: $ENGRAM_HOME, else the platform's user config folder."""
    env = os.environ.get("ENGRAM_HOME")
    if env:
        return Path(env).expanduser()
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / "engram"
    if os.name == "nt":
        return Path(os.environ.get("APPDATA", str(Path.home()))) / "engram"
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else Path.home() / ".config") / "engram"


def user_config_path() -> Path:
    return user_config_dir() / CONFIG_FILE


def read_json_object(path: Path) -> dict:
    """A JSON configuration file as a dict ({} when absent); a clear error when it is broken."""
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise EngramError(
            f"configuration {path} is not valid JSON: {exc}", code="config.invalid"
        ) from exc
    if not isinstance(data, dict):
        raise EngramError(f"configuration {path} must hold a JSON object", code="config.invalid")
    return data


def read_user_config() -> dict:
    return read_json_object(user_config_path())


def global_root_path() -> Path | None:
    """$ENGRAM_GLOBAL_DIR wins; otherwise `global_path` from the user configuration."""
    env = os.environ.get("ENGRAM_GLOBAL_DIR")
    if env:
        return Path(env).expanduser()
    configured = read_user_config().get("global_path")
    if isinstance(configured, str) and configured:
        return Path(configured).expanduser()
    return None


def find_project_dir(start: Path) -> Path | None:
    """Walk up from `start` (like git) to the folder holding `.agents/.engram`."""
    start = start.resolve()
    for folder in (start, *start.parents):
        candidate = folder / WORKSPACE_SUBDIR
        if candidate.is_dir():
            return folder
        if candidate.exists():
            raise UsageError(
                f"memory root {candidate} is a file; it must be a folder (move it away, then run `engram init`)"
            )
    return None


def find_init_dir(start: Path) -> Path:
    """Where `engram init` creates a workspace: an existing one, the git top level, or `start`."""
    start = start.resolve()
    existing = find_project_dir(start)
    if existing:
        return existing
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return start


def resolve_roots(start: Path | None = None) -> Roots:
    """The roots seen from `start` (default: $ENGRAM_WORKSPACE or the current folder)."""
    if start is None:
        env = os.environ.get("ENGRAM_WORKSPACE")
        start = Path(env) if env else Path.cwd()
    project = find_project_dir(start)
    workspace = Root(project / WORKSPACE_SUBDIR, "workspace") if project else None
    gpath = global_root_path()
    global_root = None
    if gpath is not None:
        if gpath.exists() and not gpath.is_dir():
            raise UsageError(f"global root {gpath} is a file; it must be a folder")
        if gpath.is_dir():
            global_root = Root(gpath, "global")
    return Roots(project, workspace, global_root)


def require_roots(start: Path | None = None) -> Roots:
    """Like resolve_roots, but fails clearly when no root at all is visible."""
    roots = resolve_roots(start)
    roots.primary  # noqa: B018 - raises the clear "run engram init" error
    return roots


def create_layout(root_path: Path) -> list[str]:
    """Create the fixed layout under `root_path`; never overwrites a file. Returns what was made."""
    if root_path.exists() and not root_path.is_dir():
        raise UsageError(f"memory root {root_path} is a file; it must be a folder")
    made: list[str] = []
    try:
        for sub in (*TYPE_DIRS.values(), ARCHIVE_DIR, WORKING_DIR):
            d = root_path / sub
            if not d.is_dir():
                d.mkdir(parents=True, exist_ok=True)
                made.append(sub + "/")
        gitignore = root_path / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text(GITIGNORE_TEXT, encoding="utf-8")
            made.append(".gitignore")
    except PermissionError as exc:
        raise EngramError(
            f"cannot write to memory root {root_path}: permission denied", code="root.read_only"
        ) from exc
    return made
