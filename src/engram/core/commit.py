"""The one write path: token commits, `save-session --force`, notes, promote, archive.

Every write happens under the write lock of each root it touches (always taken in the
same order). A commit first decides everything (which candidates are written, which
are deferred and why), then records the complete set of file changes in a journal
(`cache/commit-journal.json`, written atomically), then applies them one atomic
rename at a time and updates `hashes.json`, then removes the journal. A process
killed in the middle leaves every file old or new; the next write to that root (or
`recover_interrupted`) replays the journal, so the files and the manifest agree again.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from engram.core.approvals import judge_all, locked, prepare_candidates, take_proposal
from engram.core.candidates import Candidate, parse_candidates
from engram.core.errors import EngramError, NotFoundError, UsageError
from engram.core.memory import Memory, render_memory, today_iso
from engram.core.results import Result
from engram.core.roots import ARCHIVE_DIR, TYPE_DIRS, WORKING_DIR, Root, Roots

JOURNAL_FILE = "commit-journal.json"
MANAGED_PREFIXES = tuple(f"{d}/" for d in (*TYPE_DIRS.values(), ARCHIVE_DIR))


# ---------------------------------------------------------------- journal (crash safety)


def _journal_path(root: Root) -> Path:
    return root.cache_dir / JOURNAL_FILE


def _write_journal(root: Root, changes: dict[str, str | None]) -> None:
    from engram.core.store import atomic_write

    root.cache_dir.mkdir(parents=True, exist_ok=True)
    atomic_write(root.cache_dir / JOURNAL_FILE, json.dumps({"changes": changes}, sort_keys=True))


def _apply_changes(root: Root, changes: dict[str, str | None]) -> None:
    """Write or remove each file (atomically), then record managed files in hashes.json."""
    from engram.core.safety import inside
    from engram.core.store import atomic_write, file_hash, update_manifest

    manifest: dict[str, str | None] = {}
    for rel, content in sorted(changes.items(), key=lambda kv: kv[1] is None):
        path = inside(root.path, _rel_path(rel))
        if content is None:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
            digest = None
        else:
            raw = content.encode("utf-8")
            atomic_write(path, raw)
            digest = file_hash(raw)
        if rel.startswith(MANAGED_PREFIXES):
            manifest[rel] = digest
    if manifest:
        update_manifest(root, manifest)


def _rel_path(rel: str) -> Path:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or len(p.parts) != 2:
        raise EngramError(f"refusing to write outside the memory layout: {rel}", code="safety.path")
    return Path(*p.parts)


def apply_journaled(root: Root, changes: dict[str, str | None]) -> None:
    """Journal, apply, clear: the crash-safe unit of writing to one root. Call under lock."""
    if not changes:
        return
    _write_journal(root, changes)
    _apply_changes(root, changes)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(_journal_path(root))


def recover_root(root: Root) -> bool:
    """Replay an interrupted commit's journal, if any. Call under the root's lock."""
    path = root.cache_dir / JOURNAL_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        # The journal is written atomically, so a broken one was never complete.
        with contextlib.suppress(OSError):
            path.unlink()
        return False
    changes = data.get("changes") if isinstance(data, dict) else None
    if isinstance(changes, dict):
        _apply_changes(root, {str(k): (None if v is None else str(v)) for k, v in changes.items()})
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    return True


def recover_interrupted(roots: Roots) -> list[str]:
    """Finish any commit a killed process left half-applied; returns the scopes repaired."""
    repaired = []
    for root in roots.all:
        if (root.cache_dir / JOURNAL_FILE).exists():
            with locked([root]):
                if recover_root(root):
                    repaired.append(root.scope)
    return repaired


# ---------------------------------------------------------------- building memories


def _bullets(text: str) -> str:
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'])", text) if s.strip()]
    return "\n".join(f"- {s}" for s in sentences)


def rule_variants(text: str) -> dict[str, str]:
    """Light / Balanced / Strict wordings of a rule; deterministic, Balanced is the text."""
    balanced = text.strip()
    if not balanced.endswith((".", "!", "?")):
        balanced += "."
    lowered = balanced[:1].lower() + balanced[1:] if not balanced[:2].isupper() else balanced
    light = re.sub(r"^(?:always|you must|must)\s+", "", lowered, flags=re.IGNORECASE)
    light = f"Where practical, {light}"
    strict = f"{balanced} No exceptions unless the human explicitly approves one."
    return {"light": light, "balanced": balanced, "strict": strict}


def _tags(text: str) -> list[str]:
    from engram.core.candidates import STOPWORDS, words

    text = re.sub(r"\[REDACTED:[^\]]*\]", " ", text)  # a redaction is not a topic
    out: list[str] = []
    for w in words(text):
        w = w.replace("'", "")
        if len(w) >= 3 and w not in STOPWORDS and not w.isdigit() and w not in out:
            out.append(w)
        if len(out) == 4:
            break
    return out


def new_memory(entry: dict[str, Any], root: Root, payload: dict[str, Any]) -> Memory:
    today = today_iso()
    m = Memory(
        id=entry["id"],
        type=entry["type"],
        title=entry["title"],
        scope=root.scope,
        tags=_tags(entry["text"]),
        role=list(payload.get("roles", [])),
        depends_on=list(entry.get("depends_on", [])),
        level=entry.get("level", ""),
        source=payload.get("source", "manual"),
        revision=1,
        created=today,
        updated=today,
        valid_from=today,
        last_confirmed=today,
        content=_bullets(entry["text"]),
        origin=entry.get("context", ""),
    )
    if entry["type"] == "rule":
        m.variants = rule_variants(entry["text"])
    return m


def updated_memory(old: Memory, entry: dict[str, Any], payload: dict[str, Any]) -> Memory:
    today = today_iso()
    before = " ".join(re.sub(r"^\s*[-*]\s+", "", ln) for ln in old.content.splitlines())
    if old.tags == _tags(before):  # tags Engram made from the old text follow the new text
        old.tags = _tags(entry["text"])
    old.title = entry["title"]
    old.content = _bullets(entry["text"])
    if entry.get("context"):
        old.origin = entry["context"]
    if entry.get("depends_on"):
        old.depends_on = list(entry["depends_on"])
    if entry.get("level"):
        old.level = entry["level"]
    if payload.get("roles"):
        old.role = list(payload["roles"])
    if old.type == "rule":
        old.variants = rule_variants(entry["text"])
    old.revision += 1
    old.updated = today
    old.last_confirmed = today
    old.created = old.created or today
    return old


# ---------------------------------------------------------------- the commit


@dataclass
class Outcome:
    written: list[dict[str, Any]] = field(default_factory=list)
    deferred: list[dict[str, Any]] = field(default_factory=list)
    archived: list[dict[str, Any]] = field(default_factory=list)
    removed: list[dict[str, Any]] = field(default_factory=list)
    changes: dict[str, dict[str, str | None]] = field(
        default_factory=dict
    )  # root path -> rel -> text


def _defer(out: Outcome, e: dict[str, Any], reason: str, guidance_id: str | None = None) -> None:
    gid = guidance_id or e["id"]
    guidance = f"engram load --id {gid}"
    out.deferred.append(
        {"number": e["number"], "id": e["id"], "reason": reason, "guidance": guidance}
    )


def _read(root: Root, rel: str) -> Memory | None:
    from engram.core.memory import MemoryParseError
    from engram.core.store import read_memory_file

    try:
        mem, _ = read_memory_file(root, rel)
    except (MemoryParseError, OSError):
        return None
    return mem


def _durable_rel(root: Root, mid: str) -> str | None:
    for sub in TYPE_DIRS.values():
        if (root.path / sub / f"{mid}.md").is_file():
            return f"{sub}/{mid}.md"
    return None


def _archive_rel(root: Root, mid: str, pending: dict[str, str | None]) -> str:
    rel = f"{ARCHIVE_DIR}/{mid}.md"
    n = 2
    while (root.path / rel).exists() or rel in pending:
        rel = f"{ARCHIVE_DIR}/{mid}-{n}.md"
        n += 1
    return rel


def _plan(roots: Roots, payload: dict[str, Any], numbers: list[int], scopes: list[str]) -> Outcome:
    """Decide every change of a commit against the current state. Call under lock."""
    out = Outcome()
    entries = [e for e in payload["candidates"] if e["number"] in numbers]
    target_roots = [r for r in (roots.by_scope(s) for s in scopes) if r is not None]

    # Recompute verdicts on the memory as it is now (the proposal froze the old ones).
    cands = [Candidate.from_dict(e) for e in entries]
    fresh = {e["number"]: e for e in judge_all(roots, cands, scopes, strict=False) if cands}
    visible = {m.id for r in roots.all for m in _durables(r)}

    writable: list[dict[str, Any]] = []
    for e in entries:
        frozen = e["verdict"]
        now = fresh.get(e["number"], {}).get("verdict", {})
        own = (e.get("promote_from") or {}).get("id")
        taken = any(
            (r.path / sub / f"{e['id']}.md").exists()
            for r in target_roots
            for sub in (*TYPE_DIRS.values(), WORKING_DIR)
            if not (sub == WORKING_DIR and e["id"] == own)
        )
        if e.get("note"):
            if taken:
                _defer(out, e, f"id {e['id']} was taken since the proposal; propose again")
            else:
                writable.append(e)
        elif frozen["kind"] == "NOOP":
            _defer(out, e, f"duplicate of {frozen['target']}", frozen["target"])
        elif e.get("deferred_reason", "").startswith("possible duplicate of "):
            target = e["deferred_reason"].split()[3].rstrip(";")
            _defer(out, e, e["deferred_reason"], target)
        elif now.get("kind") == "NOOP" and frozen["kind"] != "UPDATE":
            _defer(
                out, e, f"duplicate of {now['target']} (written since the proposal)", now["target"]
            )
        elif frozen["kind"] == "SUPERSEDE" and (
            now.get("kind") != "SUPERSEDE" or now.get("target") != frozen["target"]
        ):
            _defer(
                out, e,
                f"SUPERSEDE {frozen['target']} no longer matches the memory (recomputed: "
                f"{fresh.get(e['number'], {}).get('verdict_line', 'ADD')}); propose again",
                frozen["target"],
            )  # fmt: skip
        elif frozen["kind"] == "UPDATE" and not any(
            _durable_rel(r, frozen["target"]) for r in target_roots
        ):
            _defer(out, e, f"UPDATE target {frozen['target']} no longer exists", frozen["target"])
        elif frozen["kind"] in ("ADD", "SUPERSEDE") and taken:
            _defer(out, e, f"id {e['id']} was taken since the proposal; propose again")
        else:
            writable.append(e)

    # Dependencies: every DEPENDS_ON id must exist or be written by this commit.
    changed = True
    while changed:
        changed = False
        ids = {e["id"] for e in writable}
        for e in list(writable):
            missing = [d for d in e.get("depends_on", []) if d not in visible and d not in ids]
            if missing:
                writable.remove(e)
                _defer(
                    out, e,
                    "depends on missing id(s): " + ", ".join(missing)
                    + " (save those first, or drop them from DEPENDS_ON)",
                    missing[0],
                )  # fmt: skip
                changed = True

    # Cycles through existing memories (which may have changed since the proposal).
    from engram.core.verdicts import find_cycle

    edges: dict[str, list[str]] = {}
    for r in reversed(roots.all):
        for m in _durables(r):
            edges[m.id] = list(m.depends_on)
    for e in writable:
        edges[e["id"]] = list(e.get("depends_on", []))
    for e in list(writable):
        cycle = find_cycle(edges, e["id"])
        if cycle:
            writable.remove(e)
            _defer(out, e, "depends_on cycle: " + " -> ".join(cycle))

    # Build the file changes per root.
    for e in writable:
        for root in target_roots:
            _plan_one(out, root, e, payload)
        if e.get("promote_from"):
            src = e["promote_from"]
            root = roots.by_scope(src["scope"])
            if root is not None:
                rel = f"{WORKING_DIR}/{src['id']}.md"
                out.changes.setdefault(str(root.path), {})[rel] = None
                out.removed.append({"id": src["id"], "scope": root.scope, "file": rel})
    out.deferred.sort(key=lambda d: d["number"])
    return out


def _durables(root: Root) -> list[Memory]:
    from engram.core.approvals import durable_memories

    return durable_memories(root)


def _plan_one(out: Outcome, root: Root, e: dict[str, Any], payload: dict[str, Any]) -> None:
    changes = out.changes.setdefault(str(root.path), {})
    v = e["verdict"]
    note = e.get("note")
    if note:
        today = dt.date.today()
        mem = new_memory(e, root, payload)
        mem.tier = "working"
        mem.objective = note["objective"]
        mem.valid_until = (today + dt.timedelta(days=int(note["ttl_days"]))).isoformat()
        mem.variants = {}
        rel = f"{WORKING_DIR}/{mem.id}.md"
        changes[rel] = render_memory(mem)
        out.written.append(
            {"id": mem.id, "scope": root.scope, "file": rel, "verdict": "ADD",
             "valid_until": mem.valid_until, "path": str(root.path / rel)}
        )  # fmt: skip
        return
    rel_old = _durable_rel(root, v["target"]) if v["target"] else None
    if v["kind"] == "UPDATE" and rel_old:
        old = _read(root, rel_old)
        if old is None:
            raise EngramError(
                f"{root.scope}:{rel_old} cannot be parsed, so it cannot be updated; "
                "fix it (see `engram verify`) and commit again",
                code="memory.parse_error",
            )
        mem = updated_memory(old, e, payload)
        rel = f"{TYPE_DIRS[mem.type]}/{mem.id}.md"
        changes[rel] = render_memory(mem)
        out.written.append({"id": mem.id, "scope": root.scope, "file": rel, "verdict": "UPDATE"})
        return
    mem = new_memory(e, root, payload)
    verdict = "ADD"
    if v["kind"] == "SUPERSEDE" and rel_old:
        old = _read(root, rel_old)
        if old is not None:
            old.superseded_by = mem.id
            old.archived_reason = f"superseded by {mem.id}"
            old.updated = today_iso()
            arel = _archive_rel(root, old.id, changes)
            changes[arel] = render_memory(old)
            changes[rel_old] = None
            mem.supersedes = old.id
            verdict = "SUPERSEDE"
            out.archived.append(
                {"id": old.id, "scope": root.scope, "file": arel, "superseded_by": mem.id}
            )
    rel = f"{TYPE_DIRS[mem.type]}/{mem.id}.md"
    changes[rel] = render_memory(mem)
    out.written.append({"id": mem.id, "scope": root.scope, "file": rel, "verdict": verdict})


def _apply(roots: Roots, out: Outcome) -> None:
    for root in roots.all:
        changes = out.changes.get(str(root.path))
        if changes:
            apply_journaled(root, changes)


def _outcome_result(payload: dict[str, Any], out: Outcome) -> Result:
    lines: list[str] = []
    if out.written:
        lines.append(f"Saved {len(out.written)} memor{'y' if len(out.written) == 1 else 'ies'}:")
        for w in out.written:
            note = f" (working note, valid until {w['valid_until']})" if "valid_until" in w else ""
            lines.append(f"  {w['verdict']:<9} {w['scope']}:{w['file']}{note}")
    else:
        lines.append("Nothing was written.")
    roles = payload.get("roles") or []
    if out.written and roles:
        lines.append(
            f"  role {', '.join(roles)}: loads only while one of these roles is active "
            f"(engram set-role {roles[0]}, or engram load --role {','.join(roles)})"
        )
    for a in out.archived:
        lines.append(f"  archived  {a['scope']}:{a['file']} (superseded by {a['superseded_by']})")
    for r in out.removed:
        lines.append(f"  removed   {r['scope']}:{r['file']} (promoted)")
    if out.deferred:
        lines.append(f"Deferred {len(out.deferred)} (review, then propose again):")
        for d in out.deferred:
            lines.append(f"  #{d['number']} {d['id']}: {d['reason']} (see `{d['guidance']}`)")
    result = Result(
        text="\n".join(lines),
        data={
            "proposal_id": payload.get("proposal_id", ""),
            "written": [{k: w[k] for k in ("id", "scope", "file", "verdict")} for w in out.written],
            "deferred": out.deferred,
            "archived": out.archived,
            "removed": out.removed,
        },
    )
    if payload.get("kind") == "note" and out.written:
        w = out.written[0]
        result.data.update({"id": w["id"], "file": w["path"], "valid_until": w["valid_until"]})
    for d in out.deferred:
        result.info("commit.deferred", f"#{d['number']} {d['id']}: {d['reason']}")
    return result


def parse_approve(approve: str | list[int] | int, count: int) -> list[int]:
    """`all`, `1,3`, [1, 3]: candidate numbers counted from 1; anything else is an error."""
    allowed = f"use all, or candidate numbers from 1 to {count} (for example 1,3)"
    if isinstance(approve, str):
        raw = approve.strip().lower()
        if raw == "all":
            return list(range(1, count + 1))
        parts = [p.strip() for p in raw.split(",")]
        if not raw or not all(re.fullmatch(r"\d+", p) for p in parts):
            raise UsageError(f"--approve {approve!r} is not valid; {allowed}")
        numbers = [int(p) for p in parts]
    elif isinstance(approve, bool):
        raise UsageError(f"approve {approve!r} is not valid; {allowed}")
    elif isinstance(approve, int):
        numbers = [approve]
    elif isinstance(approve, list | tuple) and approve:
        if not all(isinstance(n, int) and not isinstance(n, bool) for n in approve):
            raise UsageError(f"approve {approve!r} is not valid; {allowed}")
        numbers = list(approve)
    else:
        raise UsageError(f"approve {approve!r} is not valid; {allowed}")
    bad = [n for n in numbers if not 1 <= n <= count]
    if bad:
        raise UsageError(
            f"candidate {bad[0]} does not exist: the proposal has {count} candidate"
            f"{'s' if count != 1 else ''} (1 to {count})"
        )
    return sorted(dict.fromkeys(numbers))


def _narrow(scopes: list[str], scope: str | None) -> list[str]:
    if scope is None:
        return scopes
    want = ["workspace", "global"] if scope == "both" else [str(scope).strip().lower()]
    if any(s not in ("workspace", "global") for s in want):
        raise UsageError(f"scope {scope!r} is not allowed; use workspace, global or both")
    if not set(want) <= set(scopes):
        raise UsageError(
            f"scope {scope} is wider than the proposal ({' + '.join(scopes)}); a commit may "
            "only narrow the scope"
        )
    return [s for s in scopes if s in want]


def _target_roots(roots: Roots, scopes: list[str]) -> list[Root]:
    out = [roots.primary]
    for s in scopes:
        r = roots.by_scope(s)
        if r is None:
            raise UsageError(f"scope {s} has no memory root any more; run `engram init`")
        out.append(r)
    return out


def commit_proposal(
    roots: Roots, token: str, approve: str | list[int] = "all", *, scope: str | None = None
) -> Result:
    """Write the approved candidates of a pending proposal (single use)."""
    state: dict[str, Any] = {}

    def check(payload: dict[str, Any]) -> None:
        state["numbers"] = parse_approve(approve, len(payload["candidates"]))
        state["scopes"] = _narrow(payload["scopes"], scope)

    all_roots = roots.all
    with locked(all_roots):
        for r in all_roots:
            recover_root(r)
        payload = take_proposal(roots, token, consume_check=check)
        _target_roots(roots, state["scopes"])
        out = _plan(roots, payload, state["numbers"], state["scopes"])
        _apply(roots, out)
    return _outcome_result(payload, out)


def commit_payload(
    roots: Roots, payload: dict[str, Any], numbers: list[int] | None = None
) -> Result:
    """Write an unsaved proposal directly (force, the approval dialog); same path as commit."""
    numbers = numbers or [e["number"] for e in payload["candidates"]]
    targets = _target_roots(roots, payload["scopes"])
    with locked(targets):
        for r in targets:
            recover_root(r)
        out = _plan(roots, payload, numbers, payload["scopes"])
        _apply(roots, out)
    return _outcome_result(payload, out)


def force_save(
    roots: Roots, text: str, *, scope: str | None = None, query_level: int | None = None
) -> Result:
    """`save-session --force`: propose and commit in one step (the human asked for force)."""
    cands = parse_candidates(text, query_level=query_level)
    payload, redacted = prepare_candidates(roots, cands, kind="save_session", scope=scope)
    payload["expires_at"] = 0
    result = commit_payload(roots, payload)
    for number, kinds in redacted:
        result.warn(
            "safety.redacted",
            f"candidate {number}: redacted {len(kinds)} item(s) ({', '.join(sorted(set(kinds)))})",
        )
    return result


# ---------------------------------------------------------------- archive


def archive_memory(roots: Roots, mid: str, reason: str) -> Result:
    """Move a durable memory to archive/ with its reason; never deletes anything."""
    from engram.core.safety import check_id, scan_text

    check_id(mid, "memory id")
    if not isinstance(reason, str) or not reason.strip():
        raise UsageError('archive needs a reason: engram archive ID --reason "why"')
    if len(reason) > 500:
        raise UsageError(f"the reason is {len(reason)} characters; at most 500")
    red = scan_text(" ".join(reason.split()), "archive reason")
    for root in roots.all:
        if _durable_rel(root, mid):
            break
    else:
        where = [r.scope for r in roots.all]
        working = any((r.path / WORKING_DIR / f"{mid}.md").is_file() for r in roots.all)
        archived = [
            f"{r.scope}:{ARCHIVE_DIR}/{mid}.md"
            for r in roots.all
            if (r.path / ARCHIVE_DIR / f"{mid}.md").is_file()
        ]
        if working:
            hint = " (it is a working note: notes expire on their own, or `engram promote` it)"
        elif archived:
            hint = f" (it is already archived: {', '.join(archived)})"
        else:
            hint = ""
        raise NotFoundError(f"no memory {mid!r} in the {'/'.join(where)} root(s){hint}")
    with locked([root]):
        recover_root(root)
        rel = _durable_rel(root, mid)
        if rel is None:
            raise NotFoundError(f"memory {mid!r} disappeared while archiving; nothing changed")
        old = _read(root, rel)
        if old is None:
            raise EngramError(
                f"{root.scope}:{rel} cannot be parsed; fix it before archiving",
                code="memory.parse_error",
            )
        old.archived_reason = red.text
        old.updated = today_iso()
        arel = _archive_rel(root, mid, {})
        apply_journaled(root, {arel: render_memory(old), rel: None})
    result = Result(
        text=f"Archived {root.scope}:{rel} -> {arel} ({red.text})",
        data={"id": mid, "scope": root.scope, "from": rel, "file": arel, "reason": red.text},
    )
    if red.changed:
        result.warn("safety.redacted", "the reason contained secrets; they were redacted")
    dependents = sorted(
        {m.id for r in roots.all for m in _durables(r) if mid in m.depends_on and m.id != mid}
    )
    result.data["dependents"] = dependents
    if dependents:
        result.warn(
            "archive.dependents",
            f"{', '.join(dependents)} still list {mid} in depends_on; edit their "
            "depends_on, then record the change with `engram verify --accept`",
        )
    return result
