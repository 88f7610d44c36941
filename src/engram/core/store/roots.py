"""Finding and creating memory roots (workspace and global); their layout is `layout`.

Symbolic links and roots: a workspace root lives in a project the user may not have
written (a clone, a teammate's branch), so `.agents` and `.agents/.engram` must be real
folders; a repository that ships either as a link is refused with one clear line, never
followed. The global root is the user's own choice: `ENGRAM_GLOBAL_DIR` or `global_path`
may name a link, and it is used where it points. Below either root nothing is followed
(see `engram.core.store.files`).
"""

from __future__ import annotations

import os
from pathlib import Path

from engram.core.errors import ContainmentError, EngramError, UsageError
from engram.core.store.layout import (
    ARCHIVE_DIR,
    GITIGNORE_TEXT,
    TYPE_DIRS,
    WORKING_DIR,
    WORKSPACE_SUBDIR,
    Root,
    Roots,
    user_config_path,
)


def read_json_object(path: Path, root: Root | None = None) -> dict:
    """A JSON configuration file as a dict ({} when absent); a clear error when it is broken.

    With `root`, the file is read without following a link (a workspace's config.json).
    """
    from engram.core.store.bounded import BadFileError, parse_json, read_plain

    try:
        if root is None:
            raw = read_plain(path)
        else:
            from engram.core.store.files import read_bytes

            raw = read_bytes(root, path)
        data = parse_json(raw.decode("utf-8-sig"), path)
    except FileNotFoundError:
        return {}
    except ContainmentError:
        raise
    except BadFileError as exc:
        raise EngramError(f"configuration {exc.message}", code="config.invalid") from exc
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
        _refuse_linked_root(folder, must_exist=True)
        if candidate.is_dir():
            return folder
        if candidate.exists():
            raise UsageError(
                f"memory root {candidate} is a file; it must be a folder (move it away, then run `engram init`)"
            )
    return None


def _refuse_linked_root(project: Path, *, must_exist: bool) -> None:
    """A workspace root reached through a link (`.agents` or `.agents/.engram`) is refused."""
    for depth in (1, 2):
        path = project.joinpath(*WORKSPACE_SUBDIR.parts[:depth])
        if not path.is_symlink():
            continue
        if must_exist and depth == 1 and not (path / WORKSPACE_SUBDIR.parts[1]).exists():
            return  # a linked `.agents` without a memory root in it is not a workspace
        try:
            target = f" (to {os.readlink(path)})"
        except OSError:
            target = ""
        raise ContainmentError(
            f"workspace memory root {project / WORKSPACE_SUBDIR}: {path} is a symbolic link{target}; "
            "a project's memory root must be a real folder, so Engram does not follow it "
            "(remove the link, then run `engram init`; a shared memory belongs in the global root)",
            code="root.symlink",
        )


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
        if gpath.is_dir():  # a link the user made is used where it points
            global_root = Root(gpath.resolve(), "global")
    return Roots(project, workspace, global_root)


def require_roots(start: Path | None = None) -> Roots:
    """Like resolve_roots, but fails clearly when no root at all is visible."""
    roots = resolve_roots(start)
    roots.primary  # noqa: B018 - raises the clear "run engram init" error
    return roots


def create_layout(root_path: Path) -> list[str]:
    """Create the fixed layout under `root_path`; never overwrites a file. Returns what was made.

    Nothing is created through a link: a linked workspace root, layout folder or
    `.gitignore` is refused (a global root may itself be a link the user made).
    """
    from engram.core.store.files import append_text, make_folders

    if root_path.exists() and not root_path.is_dir():
        raise UsageError(f"memory root {root_path} is a file; it must be a folder")
    workspace = root_path.parts[-2:] == WORKSPACE_SUBDIR.parts
    if workspace:
        _refuse_linked_root(root_path.parent.parent, must_exist=False)
        root_path.parent.parent.mkdir(parents=True, exist_ok=True)  # the project folder
    made: list[str] = []
    try:
        if not workspace:
            root_path.mkdir(parents=True, exist_ok=True)
        made = make_folders(root_path, (*TYPE_DIRS.values(), ARCHIVE_DIR, WORKING_DIR))
        gitignore = root_path / ".gitignore"
        if not os.path.lexists(gitignore) or gitignore.is_symlink():
            append_text(root_path, gitignore, GITIGNORE_TEXT)  # a link is refused here
            made.append(".gitignore")
    except PermissionError as exc:
        raise EngramError(
            f"cannot write to memory root {root_path}: permission denied", code="root.read_only"
        ) from exc
    return made
