"""Where everything lives in a memory root, and the user's own folder: names and paths,
no I/O (every other store module stands on this one)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NamedTuple

from engram.core.errors import EngramError

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


def replace_private_file(path: Path, text: str) -> None:
    """Write `text` to a file of the user's own Engram folder whole or not at all: written
    aside, flushed, readable by the user alone, then moved into place."""
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
    with open(aside, "w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.chmod(aside, 0o600)
    os.replace(aside, path)
