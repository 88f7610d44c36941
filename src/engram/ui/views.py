"""What the review page shows: plain data read live from the memory roots on every call.

Each function returns a JSON-ready dict and goes through the same core functions the
CLI commands call, so the page never has a read or write path of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from engram.core import api
from engram.core.api import (
    DECLINED_DEFAULT,
    MemoryParseError,
    Roots,
    check_id,
    find_memory_file,
    front_matter_dict,
    load_memories,
    read_bytes,
    read_memory_file,
    revoke_proposal,
)
from engram.core.errors import NotFoundError, UsageError
from engram.hosts.doctor import doctor
from engram.ui.fixes import fix_for

# `archive/<id>.r<N>.md`, or `<id>.r<N>-<k>.md` when revision N was archived more than once
_REVISION = re.compile(
    r"^(?P<id>[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?)\.r(?P<n>\d{1,6})(?:-(?P<k>\d{1,4}))?\.md$"
)


def _card(mem: Any, uses: int) -> dict[str, Any]:
    return {
        "id": mem.id,
        "type": mem.type,
        "scope": mem.scope,
        "title": mem.title,
        "tags": list(mem.tags),
        "role": list(mem.role),
        "tier": mem.tier,
        "depends_on": list(mem.depends_on),
        "valid_until": mem.valid_until,
        "objective": mem.objective,
        "expired": bool(mem.is_working and mem.expired()),
        "uses": uses,
    }


def _usage(roots: Roots) -> dict[tuple[str, str], int]:
    try:
        rows = api.most_used(roots, 100_000)
    except Exception:  # a broken derived index must not hide the memory files
        return {}
    return {(r["scope"], r["id"]): int(r["uses"]) for r in rows}


def list_memories(roots: Roots) -> dict[str, Any]:
    """Every memory of every root (durable and working), plus files that failed to parse."""

    usage = _usage(roots)
    memories: list[dict[str, Any]] = []
    broken: list[dict[str, str]] = []
    for root in roots.all:
        mems, errors = load_memories(root)
        memories += [_card(m, usage.get((m.scope, m.id), 0)) for m in mems]
        broken += [{"scope": root.scope, "file": rel, "reason": why} for rel, why in errors]
    memories.sort(key=lambda m: (m["scope"], m["type"], m["id"]))
    return {"memories": memories, "broken": broken}


def _root(roots: Roots, scope: str) -> Any:
    if scope not in ("workspace", "global"):
        raise UsageError(f"scope {scope!r} is not allowed; use workspace or global")
    root = roots.by_scope(scope)
    if root is None:
        raise NotFoundError(f"there is no {scope} memory root here", code="root.missing")
    return root


def _revisions(root: Any, mid: str) -> list[dict[str, Any]]:
    """Archived revisions `archive/<id>.r<N>.md` (and `archive/<id>.md`), oldest first."""

    try:
        names = os.listdir(root.archive_dir)
    except OSError:
        return []
    found: list[tuple[int, int, str]] = []
    for name in names:
        m = _REVISION.match(name)
        if m and m.group("id") == mid:
            found.append((int(m.group("n")), int(m.group("k") or 1), name))
        elif name == f"{mid}.md":  # the memory itself, archived by `engram archive`
            found.append((1_000_000, 0, name))
    out = []
    for n, _, name in sorted(found):
        try:  # never through a link: the core's reader refuses one
            text = read_bytes(root, root.archive_dir / name).decode("utf-8", "replace")
        except OSError as exc:
            text = f"(could not be read: {exc.strerror or exc})"
        revision = n if n < 1_000_000 else None
        out.append({"file": f"archive/{name}", "revision": revision, "text": text[:262_144]})
    return out


def memory_detail(roots: Roots, scope: str, mid: str) -> dict[str, Any]:
    """One memory's raw file, parsed front matter, archived revisions and dependants."""

    check_id(mid)
    root = _root(roots, scope)
    path = find_memory_file(root, mid)
    if path is None:
        raise NotFoundError(f"no memory {mid!r} in the {scope} root", code="memory.not_found")
    rel = f"{path.parent.name}/{path.name}"
    try:
        mem, raw = read_memory_file(root, rel)
    except MemoryParseError as exc:  # shown as it is, with the reason it is not loaded
        raw = read_bytes(root, path)[:262_144]
        return {"id": mid, "scope": scope, "file": rel, "raw": raw.decode("utf-8", "replace"),
                "parse_error": str(exc), "front_matter": {}, "card": None, "revisions":
                _revisions(root, mid), "dependants": []}  # fmt: skip
    dependants = []
    for r in roots.all:
        mems, _ = load_memories(r)
        dependants += [
            {"id": m.id, "scope": m.scope, "type": m.type, "title": m.title}
            for m in mems
            if mid in m.depends_on
        ]
    usage = _usage(roots)
    return {
        "id": mid,
        "scope": scope,
        "file": rel,
        "raw": raw.decode("utf-8", "replace"),
        "front_matter": {k: v for k, v in front_matter_dict(mem).items()},
        "card": _card(mem, usage.get((scope, mid), 0)),
        "revisions": _revisions(root, mid),
        "dependants": dependants,
    }


def _roles(value: str | None) -> list[str] | None:
    if value is None or not value.strip():
        return None
    return [r.strip() for r in value.split(",") if r.strip()]


def try_task(roots: Roots, task: str, roles: str | None) -> dict[str, Any]:
    """What `engram load` would give for this task (counting nothing), and why."""

    if not task.strip():
        raise UsageError('empty task: describe the task in words ("fix the login bug")')
    role_list = _roles(roles)
    # the pack itself, as the agent would get it (and its real token count); nothing counted
    shown = api.load(roots, api.LoadRequest(query=task, roles=role_list, count_usage=False))
    why = api.load(roots, api.LoadRequest(query=task, roles=role_list, explain=True, dry_run=True))
    return {"load": shown.envelope(), "text": shown.text, "explain": why.envelope()}


def proposals(roots: Roots) -> dict[str, Any]:
    """Pending proposals as frozen in pending-approvals.json (shown; approving needs the token)."""

    out = []
    for w in api.waiting_proposals(roots):
        p = w.proposal
        if p is None:
            continue  # it cannot be approved either; `engram pending` names it
        screening = p.screening or api.Screening()
        out.append(
            {
                "key": w.key,
                "proposal_id": p.proposal_id,
                "created_at": w.created_at,
                "expires_at": api.iso_time(w.expires_at),
                "scopes": list(p.scopes),
                "candidates": [_candidate(c, screening) for c in p.candidates],
                "refused": [dict(r) for r in screening.refused],
            }
        )
    return {"proposals": out}


def _candidate(c: api.ProposedCandidate, screening: api.Screening) -> dict[str, Any]:
    dup = c.duplicate_of
    return {
        "number": c.number,
        "type": c.type,
        "id": c.id,
        "title": c.title,
        "text": c.shown_text,
        "context": c.context,
        "triggers": list(c.triggers),
        "triggers_only": c.triggers_only,
        "depends_on": list(c.depends_on),
        "verdict": c.verdict_line,
        "kind": c.verdict.kind,
        "replaces": [t.shown() for t in c.replaces or ()],
        "related": [r.to_json() for r in c.related],
        "deferred_reason": c.deferred_reason,
        # the memory a possible duplicate may repeat, and whether an update can replace it
        "duplicate_of": None
        if dup is None or not dup.id
        else {
            "id": dup.id,
            "title": dup.title,
            "type": dup.type,
            "can_update": dup.type == c.type,
            "diff": [d for t in dup.replaces for d in t.diff],
        },
        "redacted": screening.kinds_of(c.number),
    }


def approve(roots: Roots, token: str, approve_: Any, choices: Any = None) -> dict[str, Any]:
    """Commit through the one commit path the CLI and MCP use (single-use token, recheck).

    `choices` ({"2": "new" | "update" | "skip"}): the person's answer for each possible
    duplicate, so approving on the page never ends in "deferred" without a choice.
    """
    approved = approve_ if approve_ is not None else "all"
    if choices in (None, {}):
        result = api.commit(roots, _token(token), approved)
    else:
        result = api.commit_choosing(roots, _token(token), approved, _choices(choices))
    return {"result": result.envelope(), "text": result.text}


def _choices(value: Any) -> dict[int, str]:
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and k.isdigit() and isinstance(v, str) for k, v in value.items()
    ):
        raise UsageError(
            'choices must map candidate numbers to new, update or skip, e.g. {"2": "new"}'
        )
    return {int(k): v for k, v in value.items()}


def decline(roots: Roots, token: str, reason: str | None) -> dict[str, Any]:
    """Revoke a pending proposal through the core's approvals module."""

    result = revoke_proposal(roots, _token(token), (reason or "").strip() or DECLINED_DEFAULT)
    return {"result": result.envelope(), "text": result.text}


def _token(token: Any) -> str:
    if not isinstance(token, str) or not token.strip():
        raise UsageError("approval token is empty; paste the token the proposal printed")
    return token


REVIEWABLE = ("memory.unsafe", "memory.secret")


def accept_review(roots: Roots, scope: Any, path: Any) -> dict[str, Any]:
    """The review page's "Keep as written": `engram verify --accept FILE` for one file."""
    if scope not in ("workspace", "global"):
        raise UsageError("scope must be workspace or global")
    root = _root(roots, scope)
    if not isinstance(path, str) or not re.fullmatch(r"[a-z]+/[^/\x00-\x1f]+\.md", path):
        raise UsageError(f"{path!r} is not a memory file path like rules/x.md")
    if ".." in path:
        raise UsageError("'..' is not allowed in a memory file path")
    result = api.verify(roots, accept=[str(root.path / path)])
    return {"result": result.envelope(), "text": result.text}


def health(start: Path | None, roots: Roots) -> dict[str, Any]:
    """`engram verify` and `engram doctor` findings, as those commands compute them."""

    verify = api.verify(roots)
    doc = doctor(start)
    envelope = verify.envelope()
    for d in envelope.get("diagnostics") or []:
        scope = str(d.get("message", "")).split(":", 1)[0]
        if d.get("code") in REVIEWABLE and d.get("path") and scope in ("workspace", "global"):
            d["accept"] = {"scope": scope, "path": d["path"]}  # the Keep as written button
    return {
        "verify": _with_fixes(envelope),
        "verify_text": verify.text,
        "doctor": _with_fixes(doc.envelope()),
        "doctor_text": doc.text,
    }


def _with_fixes(envelope: dict[str, Any]) -> dict[str, Any]:
    """Each finding with the fix a person would apply, beside its stable code."""

    for d in envelope.get("diagnostics") or []:
        d["fix"] = fix_for(str(d.get("code", "")), str(d.get("message", "")), d.get("path"))
    return envelope
