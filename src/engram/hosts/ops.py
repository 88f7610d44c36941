"""link, unlink, upgrade and list: apply hosts' targets to their files, or preview them.

Every change is computed in memory first (one text per file, each target transforming it
in turn), so `--plan` shows exactly the diff that a real run writes, and a run applies all
of its edits or none: a file that cannot be parsed, or an `engram` entry that Engram did
not write (replaced only with `--force`, R-INS-4), stops the whole run before anything is
written; a file the host changed meanwhile stops it too; a write that fails midway puts
back the files already written. What Engram created (files, folders, containers) is
recorded in the link state so that unlink gives back the user's bytes exactly (R-REG-5).
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from engram.core.api import (
    CACHE_DIR,
    WORKSPACE_SUBDIR,
    Root,
    atomic_write,
    find_project_dir,
    parse_json,
    read_plain,
    root_lock,
    user_config_dir,
)
from engram.core.errors import EngramError, UsageError
from engram.core.results import Diagnostic, Result
from engram.hosts import HOSTS, get_host
from engram.hosts.base import (
    GLOBAL,
    WORKSPACE,
    Conflict,
    Scope,
    home_dir,
    make_scope,
    pinned_version,
)
from engram.hosts.files import ConfigParseError, first_link_below, read_host_file, unified_diff
from engram.hosts.targets import HOOKS, Inspection, Notice, Printed, Skipped, Target

STATE_FILE = "links.json"


# ---------------------------------------------------------------- scopes and state


def resolve_scope(start: Path | None, *, global_: bool, hooks: bool = True) -> Scope:
    """The scope of a command: $HOME for --global, else the workspace's project folder."""
    if global_:
        return make_scope(GLOBAL, home_dir(), hooks=hooks)

    start = start or Path(os.environ.get("ENGRAM_WORKSPACE") or Path.cwd())
    project = find_project_dir(start)
    if project is None:
        raise EngramError(
            f"no Engram workspace in {start} or above; run `engram init` first "
            "(or use --global for your user-level host files)",
            code="root.missing",
        )
    return make_scope(WORKSPACE, project, hooks=hooks)


def state_path(scope: Scope) -> Path:
    if scope.is_global:
        return user_config_dir() / STATE_FILE

    return scope.base / WORKSPACE_SUBDIR / CACHE_DIR / STATE_FILE


def load_state(scope: Scope) -> dict[str, Any]:
    try:
        data = parse_json(read_plain(state_path(scope)), state_path(scope))
    except (OSError, ValueError):
        data = {}
    if not isinstance(data, dict) or not isinstance(data.get("files"), dict):
        data = {"version": 1, "files": {}}
    return data


def rel(scope: Scope, path: Path) -> str:
    try:
        return path.relative_to(scope.base).as_posix()
    except ValueError:
        return str(path)


def shown(scope: Scope, path: Path) -> str:
    """The path as a person reads it: relative in a project, `~/…` for the user's own files."""
    r = rel(scope, path)
    if scope.kind != WORKSPACE and not Path(r).is_absolute() and scope.base == Path.home():
        return f"~/{r}"
    return r


def read_text(path: Path) -> str | None:
    """The file's text with its line endings untouched (None when it does not exist)."""
    try:
        return read_host_file(path)
    except FileNotFoundError:
        return None


@contextlib.contextmanager
def _lock(scope: Scope) -> Iterator[None]:
    if scope.is_global:
        from filelock import FileLock

        path = state_path(scope)
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path) + ".lock", timeout=30):
            yield
        return

    with root_lock(Root(scope.base / WORKSPACE_SUBDIR, "workspace")):
        yield


# ---------------------------------------------------------------- running targets


@dataclass
class Change:
    host: str
    scope: str
    role: str
    label: str
    path: str | None
    action: str  # create | update | unchanged | delete | absent | print | skip | conflict | error
    message: str = ""


def host_names(names: list[str]) -> list[str]:
    if not names:
        raise UsageError(f"name a host: {', '.join(HOSTS)} or all")
    out: list[str] = []
    for name in names:
        for n in HOSTS if name == "all" else [name]:
            get_host(n)
            if n not in out:
                out.append(n)
    return out


def _action(before: str | None, after: str | None) -> str:
    if before == after:
        return "unchanged" if before is not None else "absent"
    if before is None:
        return "create"
    return "delete" if after is None else "update"


def run(
    op: str, names: list[str], scope: Scope, *, plan: bool = False, force: bool = False
) -> Result:
    """Apply `op` (link | unlink | upgrade) for the named hosts in one scope."""
    state = load_state(scope)
    files: dict[str, dict] = state["files"]
    texts: dict[Path, str | None] = {}
    originals: dict[Path, str | None] = {}
    broken: dict[Path, str] = {}
    changes: list[Change] = []
    for name in names:
        host = get_host(name)
        targets: list[Target] = host.targets(scope)
        if op == "upgrade" and not any(_inspect(t).present for t in targets):
            continue
        for target in targets:
            if isinstance(target, Notice):
                message = target.message() if op == "link" else ""
                if message:
                    changes.append(
                        Change(name, scope.kind, target.role, target.label, None, "note", message)
                    )
                continue
            changes.append(_apply(op, name, scope, target, texts, originals, broken, files, force))
    diffs: list[str] = []
    written: list[Path] = []
    for path, text in texts.items():
        if text != originals[path]:
            diffs.append(unified_diff(shown(scope, path), originals[path], text))
            written.append(path)
    failed = any(c.action in ("conflict", "error") for c in changes)
    if not plan and written and not failed:
        with _lock(scope):
            _unchanged_since_read(scope, written, originals)
            _write(scope, written, texts, originals, files)
            _save_state(scope, state)
    return _result(op, scope, changes, diffs, plan, held_back=failed and bool(written))


def _linked_part(scope: Scope, path: Path) -> Path | None:
    """The first folder or file of a project's host file that is a symbolic link, if any.

    Only the project scope is checked: the project may come from anyone, while links in the
    person's own home (dotfiles kept in a repository) are theirs to make.
    """
    if scope.kind != WORKSPACE or not path.is_relative_to(scope.base):
        return None
    return first_link_below(scope.base, path)


def _inspect(target: Target) -> Inspection:
    try:
        text = read_text(target.path) if target.path else None
        return target.inspect(text)
    except (ConfigParseError, OSError):
        return Inspection()


def _apply(
    op: str,
    name: str,
    scope: Scope,
    target: Target,
    texts: dict[Path, str | None],
    originals: dict[Path, str | None],
    broken: dict[Path, str],
    files: dict[str, dict],
    force: bool,
) -> Change:
    def change(action: str, message: str = "") -> Change:
        path = rel(scope, target.path) if target.path else None
        return Change(name, scope.kind, target.role, target.label, path, action, message)

    if isinstance(target, Skipped):
        return change("skip", target.message())
    if isinstance(target, Printed):
        if op == "unlink":
            return change("print", f"run: {target.remove_command}")
        return change("print", f"run: {target.message()}")
    assert target.path is not None
    path = target.path
    if op == "link" and target.role == HOOKS and not scope.hooks:
        return change("skip", "hooks not installed (--no-hooks)")
    if path in broken:
        return change("error", broken[path])
    linked = _linked_part(scope, path)
    if linked is not None:
        broken[path] = (
            f"{shown(scope, linked)} is a symbolic link; Engram does not write host files through "
            "links in a project (a cloned repository may point them anywhere); left unchanged"
        )
        return change("error", broken[path])
    if path not in texts:
        try:
            texts[path] = originals[path] = read_text(path)
        except (ConfigParseError, OSError) as exc:
            broken[path] = f"{shown(scope, path)} cannot be read ({exc}); left unchanged"
            return change("error", broken[path])
    before = texts[path]
    rec = files.setdefault(rel(scope, path), {})
    try:
        if op == "unlink":
            after = target.unlink(before, rec)
        elif (
            op == "upgrade" and not target.restore_on_upgrade and not target.inspect(before).present
        ):
            return change("unchanged", "not linked")
        else:
            after = target.link(before, rec, force)
    except ConfigParseError as exc:
        broken[path] = f"{shown(scope, path)} is not valid ({exc}); left unchanged"
        texts[path] = originals[path]
        return change("error", broken[path])
    except Conflict as exc:
        return change("conflict", str(exc))
    texts[path] = after
    return change(_action(before, after))


def _write(
    scope: Scope,
    written: list[Path],
    texts: dict[Path, str | None],
    originals: dict[Path, str | None],
    files: dict[str, dict],
) -> None:
    emptied: list[Path] = []
    done: list[Path] = []
    try:
        for path in written:
            rec = files.setdefault(rel(scope, path), {})
            text = texts[path]
            if text is None:
                with contextlib.suppress(FileNotFoundError):
                    path.unlink()
                done.append(path)
                emptied += [
                    Path(d) if Path(d).is_absolute() else scope.base / d
                    for d in rec.get("dirs", [])
                ]
                files.pop(rel(scope, path), None)
                continue
            if originals[path] is None:
                made = [p for p in reversed(path.parents) if not p.exists()]
                if made:
                    rec["dirs"] = [rel(scope, p) for p in made]
            inside = scope.kind == WORKSPACE and path.is_relative_to(scope.base)
            atomic_write(path, text, root=scope.base if inside else None)
            done.append(path)
    except OSError as exc:
        put_back(done, originals)
        raise EngramError(
            f"could not write {shown(scope, path)} ({exc.strerror or exc}); "
            "the files already written were put back, nothing changed",
            code="host.write_failed",
        ) from exc
    for folder in sorted(set(emptied), key=lambda p: -len(p.parts)):
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty


def _unchanged_since_read(
    scope: Scope, written: list[Path], originals: dict[Path, str | None]
) -> None:
    """A host may write its file while Engram plans: never overwrite what it wrote."""
    for path in written:
        try:
            now = read_text(path)
        except (ConfigParseError, OSError):
            now = ""
        if now != originals[path]:
            raise EngramError(
                f"{shown(scope, path)} changed while Engram was planning its edit (the host "
                "wrote it?); nothing was written; run the command again",
                code="host.file_changed",
            )


def put_back(done: list[Path], originals: dict[Path, str | None]) -> None:
    """Undo a partly applied run: every file already written gets its old bytes back."""

    for path in reversed(done):
        with contextlib.suppress(OSError):
            old = originals[path]
            if old is None:
                path.unlink(missing_ok=True)
            else:
                atomic_write(path, old)


def _save_state(scope: Scope, state: dict) -> None:
    state["files"] = {k: v for k, v in state["files"].items() if v}
    path = state_path(scope)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(state, indent=2, sort_keys=True) + "\n")


VERB = {"link": "Linked", "unlink": "Unlinked", "upgrade": "Upgraded"}


def _result(
    op: str,
    scope: Scope,
    changes: list[Change],
    diffs: list[str],
    plan: bool,
    *,
    held_back: bool = False,
) -> Result:
    lines: list[str] = []
    current = None
    for c in changes:
        if c.host != current:
            current = c.host
            lines.append(f"{get_host(c.host).TITLE} ({c.host}, {c.scope}):")
        where = c.path or ""
        if where and c.scope != WORKSPACE and scope.base == Path.home():
            where = f"~/{where}"  # the user's own file, not one of the project
        detail = f"  {c.message}" if c.message else ""
        lines.append(f"  {c.action:<9} {c.label:<28} {where}{detail}".rstrip())
    if not changes:
        lines.append(f"nothing is linked in the {scope.kind} scope; nothing to do")
    if held_back and not plan:
        lines.append(
            "Nothing was written: every file is left as it was. Fix the problem above "
            "(or rerun with --force to replace a foreign entry), then run again."
        )
    if plan:
        lines.append("")
        lines.append("Plan only: nothing was written." if diffs else "Plan only: no change.")
        lines.extend(d.rstrip("\n") for d in diffs)
    result = Result(
        "\n".join(lines),
        data={
            "operation": op,
            "scope": scope.kind,
            "base": str(scope.base),
            "plan": plan,
            "command": list(scope.server),
            "changes": [asdict(c) for c in changes],
            "written": not plan and not held_back and bool(diffs),
            "diff": "".join(diffs),
        },
    )
    for c in changes:
        if c.action == "error":
            result.ok = False
            result.diagnostics.append(_diag("error", "host.config_invalid", c))
        elif c.action == "conflict":
            result.ok = False
            result.diagnostics.append(_diag("error", "host.entry_conflict", c))
    return result


def _diag(level: str, code: str, c: Change):
    return Diagnostic(level, code, c.message, c.path)


# ---------------------------------------------------------------- list


def scopes_in_view(start: Path | None) -> list[Scope]:
    """The workspace scope (when a workspace is found) and the global scope."""
    out = []
    with contextlib.suppress(EngramError):
        out.append(resolve_scope(start, global_=False))
    out.append(resolve_scope(None, global_=True))
    return out


def inspect_host(name: str, scope: Scope) -> list[tuple[Target, Inspection | str]]:
    """Each target of a host with what is there now (or the reason it cannot be read)."""
    out: list[tuple[Target, Inspection | str]] = []
    for target in get_host(name).targets(scope):
        try:
            text = read_text(target.path) if target.path else None
            out.append((target, target.inspect(text)))
        except (ConfigParseError, OSError) as exc:
            out.append((target, f"{target.path} cannot be parsed: {exc}"))
    return out


def list_links(start: Path | None) -> Result:
    rows: list[dict[str, Any]] = []
    for scope in scopes_in_view(start):
        for name in HOSTS:
            items = []
            for target, seen in inspect_host(name, scope):
                if isinstance(seen, str) or not seen.present:
                    continue
                items.append(
                    {
                        "role": target.role,
                        "label": target.label,
                        "path": str(target.path) if target.path else None,
                        "command": seen.command,
                        "version": pinned_version(seen.command or []),
                    }
                )
            if items:
                rows.append({"host": name, "scope": scope.kind, "items": items})
    lines = []
    for row in rows:
        lines.append(f"{get_host(row['host']).TITLE} ({row['host']}, {row['scope']}):")
        for it in row["items"]:
            cmd = " ".join(it["command"]) if it["command"] and it["role"] != "instructions" else ""
            ver = f" [pinned {it['version']}]" if it["version"] else ""
            lines.append(f"  {it['label']:<28} {it['path'] or ''}  {cmd}{ver}".rstrip())
    if not rows:
        lines.append(
            "No host is linked. Run `engram link <host>` (hosts: " + ", ".join(HOSTS) + ")."
        )
    return Result("\n".join(lines), data={"links": rows})
