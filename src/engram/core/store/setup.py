"""`engram init`: create or adopt a workspace root, optionally set the global root."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engram.core.errors import EngramError, UsageError
from engram.core.memory import Memory, render_memory, today_iso
from engram.core.results import Result
from engram.core.store.bounded import parse_json, read_plain
from engram.core.store.examples import EXAMPLES
from engram.core.store.files import atomic_write, read_bytes, root_lock
from engram.core.store.index import open_index
from engram.core.store.layout import (
    CACHE_DIR,
    PENDING_FILE,
    WORKING_DIR,
    WORKSPACE_SUBDIR,
    Root,
    user_config_path,
)
from engram.core.store.manifest import current_hashes, read_manifest, write_manifest
from engram.core.store.roots import create_layout, find_init_dir, resolve_roots


def _set_global_path(path: Path) -> Path:
    path = path.expanduser().resolve()
    if path.exists() and not path.is_dir():
        raise UsageError(f"--global-path {path}: is a file; give a folder")
    create_layout(path)
    cfg_path = user_config_path()
    try:
        data = parse_json(read_plain(cfg_path), cfg_path)
        if not isinstance(data, dict):
            data = {}
    except FileNotFoundError:
        data = {}
    except (OSError, ValueError) as exc:
        raise EngramError(
            f"user configuration {cfg_path} is not valid JSON ({exc}); fix it first",
            code="config.invalid",
        ) from exc
    data["global_path"] = str(path)
    atomic_write(cfg_path, json.dumps(data, indent=2, sort_keys=True) + "\n")
    return path


def _write_examples(root: Root) -> list[str]:
    written = []
    today = today_iso()
    for mtype, mid, title, tags, triggers, deps, bullets, variants in EXAMPLES:
        path = root.type_dir(mtype) / f"{mid}.md"
        if path.exists():
            continue
        mem = Memory(
            id=mid, type=mtype, title=title, tags=tags, triggers=triggers, depends_on=deps,
            content="\n".join(f"- {b}" if not b[0].isdigit() else b for b in bullets),
            variants=dict(zip(("light", "balanced", "strict"), variants, strict=True)) if variants else {},
            confidence="high", source="manual", created=today, updated=today,
        )  # fmt: skip
        atomic_write(path, render_memory(mem), root=root)
        written.append(f"{root.type_dir(mtype).name}/{mid}.md")
    return written


def init_workspace(
    start: Path, *, global_path: Path | None = None, example: bool = False
) -> Result:
    start = Path(start)
    if start.exists() and not start.is_dir():
        raise UsageError(f"{start}: is a file; run `engram init` in a folder")
    lines: list[str] = []
    data: dict = {}
    if global_path is not None:
        g = _set_global_path(global_path)
        lines.append(f"Global root: {g} (recorded in {user_config_path()})")
        data["global_root"] = str(g)
    project = find_init_dir(start)
    root = Root(project / WORKSPACE_SUBDIR, "workspace")
    existed = root.path.is_dir()
    made = create_layout(root.path)
    if not os.path.lexists(root.config_path):
        atomic_write(root.config_path, "{}\n", root=root)
        made.append("config.json")
    with root_lock(root):
        examples = _write_examples(root) if example else []
        manifest = read_manifest(root)
        current = current_hashes(root)
        adopted = sorted(r for r in current if r not in manifest)
        if not os.path.lexists(root.manifest_path):
            made.append("hashes.json")
        if adopted or "hashes.json" in made:
            manifest.update({r: current[r] for r in adopted})
            write_manifest(root, manifest)
    roots = resolve_roots(project)

    idx = open_index(roots)
    if not existed:
        head = f"Created workspace memory root {root.path}"
    elif made or adopted:
        head = f"Adopted workspace memory root {root.path}"
    else:
        head = f"Workspace memory root {root.path} is already set up; nothing changed"
    lines.insert(0, head)
    if made:
        lines.append("made: " + ", ".join(made))
    new_adopted = [a for a in adopted if a not in examples]
    if new_adopted:
        lines.append(
            f"adopted {len(new_adopted)} existing memory file(s) (never overwritten): "
            + ", ".join(new_adopted[:10])
            + (" …" if len(new_adopted) > 10 else "")
        )
    if examples:
        lines.append(f"wrote {len(examples)} example memories")
    n = idx.doc_count()
    if examples:
        lines.append(f'{n} memories indexed. Try: engram load "prepare a release"')
    elif n:
        lines.append(f'{n} memories indexed. Try: engram route "<your task>" to see what it loads')
    else:
        lines.append(
            '0 memories yet. Try: engram save rule "Run the tests before every commit", '
            "then engram link <host> for your agent"
        )
    data.update(
        {
            "root": str(root.path),
            "created": not existed,
            "made": made,
            "adopted": new_adopted,
            "examples": examples,
            "indexed": idx.doc_count(),
        }
    )
    result = Result(text="\n".join(lines), data=data)
    unignored = _not_ignored(root)
    if unignored:
        result.warn(
            "root.gitignore",
            f"{root.path / '.gitignore'} does not ignore {', '.join(unignored)}: these hold "
            "private notes, pending proposals and derived data; add those lines to it "
            "(Engram does not rewrite a .gitignore it did not write)",
        )
    return result


def _not_ignored(root: Root) -> list[str]:
    """The private and derived entries that a hand-written .gitignore lacks."""
    try:
        text = read_bytes(root, root.path / ".gitignore").decode("utf-8-sig")
    except (OSError, ValueError):
        return []
    have = {ln.strip().lstrip("/") for ln in text.splitlines()}
    want = [f"{WORKING_DIR}/", PENDING_FILE, f"{CACHE_DIR}/"]
    return [w for w in want if w not in have and w.rstrip("/") not in have]
