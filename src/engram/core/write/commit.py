"""The one write path: token commits, `save-session --force`, notes, promote, archive.

Every write happens under the write lock of each root it touches (always taken in the
same order). A commit first decides everything (which candidates are written, which
are deferred and why), then makes its changes durable in this order:

1. Check every change before anything is written: each text encodes as UTF-8, no
   target or type folder is a symbolic link, the manifest parses. A commit refused
   here changed nothing, and its approval token still works.
2. Write the journal (`cache/commit-journal.json` of the primary root, atomically):
   for every root, each file's content before and after, `hashes.json` included, and
   the hash of the approval token being spent, signed with a key kept in the user's
   Engram folder (a journal shipped by a cloned repository is never applied). This
   rename is the commit point.
3. For every other root: write its own journal (so that root can finish alone), apply
   its files one atomic rename at a time, then remove its journal. Then the primary.
4. Spend the token in `pending-approvals.json`, then remove the journal.

A process killed before step 2 changed nothing and its token still works; killed
after, the next write or `verify` (`recover_interrupted`) rolls the journal forward
and then spends the token, so the memory is written exactly once; a re-run of
`engram commit` with that token reports the finished commit. Each step only moves a
file from its recorded "before" to its "after" content, so finishing twice is
harmless and nothing a person changed in the meantime is overwritten: a journal
that cannot be finished (a file changed by hand, a link, a read-only folder, a full
disk) is rolled back as far as it safely can, set aside in `cache/` with a message,
and never blocks the next write.
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from engram.core.errors import EngramError, NotFoundError, UsageError
from engram.core.memory import Memory, MemoryParseError, render_memory, today_iso
from engram.core.results import Result
from engram.core.safety.scan import check_id, find_injection, redact, scan_text
from engram.core.safety.screen import redacted_memory, screen_memory
from engram.core.store.files import file_hash, locked
from engram.core.store.journal import (
    Recovery,
    apply_journaled,
    current_bytes,
    recover_all,
    recovery_notes,
)
from engram.core.store.layout import (
    ARCHIVE_DIR,
    TYPE_DIRS,
    WORKING_DIR,
    Root,
    Roots,
)
from engram.core.store.memoryfiles import read_memory_file
from engram.core.store.pending import token_hash
from engram.core.words import ALL_FUNCTION_WORDS, tokenize
from engram.core.write.approvals import (
    durable_memories,
    judge_all,
    memory_diff,
    prepare_candidates,
    redaction_notes,
    take_proposal,
)
from engram.core.write.candidates import (
    parse_candidates,
    triggers_diff,
    with_triggers,
)
from engram.core.write.proposal import Proposal, ProposedCandidate
from engram.core.write.verdicts import Verdict, find_cycle

# ---------------------------------------------------------------- journal (crash safety)


# ---------------------------------------------------------------- building memories


def rule_variants(text: str) -> dict[str, str]:
    """Light / Balanced / Strict wordings of a rule; deterministic, Balanced is the text."""
    balanced = text.strip()
    if not balanced.endswith((".", "!", "?")):
        balanced += "."
    lowered = balanced[:1].lower() + balanced[1:] if not balanced[:2].isupper() else balanced
    prohibition = re.match(
        r"^(?:never|don'?t|do\s+not|you\s+must\s+not|must\s+not)\s+(?P<rest>.+)$", lowered, re.I
    )
    if prohibition:  # "Where practical, never commit …" contradicts itself
        light = f"Prefer not to {prohibition.group('rest')}"
    else:
        light = re.sub(r"^(?:always|you must|must)\s+", "", lowered, flags=re.IGNORECASE)
        light = f"Where practical, {light}"
    strict = f"{balanced} No exceptions unless the human explicitly approves one."
    return {"light": light, "balanced": balanced, "strict": strict}


def _tags(text: str) -> list[str]:
    text = re.sub(r"\[REDACTED:[^\]]*\]", " ", text)  # a redaction is not a topic
    out: list[str] = []
    for w in tokenize(text):
        if len(w) >= 3 and w not in ALL_FUNCTION_WORDS and not w.isdigit() and w not in out:
            out.append(w)
        if len(out) == 4:
            break
    return out


def new_memory(entry: ProposedCandidate, root: Root, proposal: Proposal) -> Memory:
    today = today_iso()
    imported = entry.imported  # `engram import`: heading tags, paths, source lines
    extra: dict[str, Any] = {}
    if imported is not None:
        if imported.paths:
            extra["paths"] = list(imported.paths)
        extra["imported_from"] = imported.imported_from
    m = Memory(
        id=entry.id,
        type=entry.type,
        title=entry.title,
        scope=root.scope,
        # an import brings tags from the file's headings and named tools: those alone
        tags=list(dict.fromkeys((imported.tags if imported else ()) or _tags(entry.text)))[:6],
        role=list(proposal.roles),
        depends_on=list(entry.depends_on),
        level=entry.level,
        source=proposal.source,
        revision=1,
        created=today,
        updated=today,
        valid_from=today,
        last_confirmed=today,
        content=entry.written_content,
        triggers=list(entry.triggers),
        origin=entry.context,
        extra=extra,
    )
    if entry.type == "rule" and not imported:  # an imported rule is as its source states it
        m.variants = rule_variants(entry.text)
    return m


def updated_memory(old: Memory, entry: ProposedCandidate, proposal: Proposal) -> Memory:
    today = today_iso()
    old.triggers = with_triggers(old.triggers, list(entry.triggers))
    if entry.triggers_only:  # `engram enrich`: what a person wrote stays as written
        old.revision += 1
        old.updated = today
        old.created = old.created or today
        return old
    before = " ".join(re.sub(r"^\s*[-*]\s+", "", ln) for ln in old.content.splitlines())
    if old.tags == _tags(before):  # tags Engram made from the old text follow the new text
        old.tags = _tags(entry.text)
    old.title = entry.title
    old.content = entry.written_content
    if entry.context:
        old.origin = entry.context
    if entry.depends_on:
        old.depends_on = list(entry.depends_on)
    if entry.level:
        old.level = entry.level
    if proposal.roles:
        old.role = list(proposal.roles)
    if old.type == "rule":
        old.variants = {} if entry.imported is not None else rule_variants(entry.text)
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
    redacted: list[tuple[int, list[str]]] = field(default_factory=list)
    skipped: list[dict[str, Any]] = field(default_factory=list)  # a person's "skip"
    changes: dict[str, dict[str, str | None]] = field(
        default_factory=dict
    )  # root path -> rel -> text


def _defer(out: Outcome, e: ProposedCandidate, reason: str, guidance_id: str | None = None) -> None:
    gid = guidance_id or e.id
    guidance = f"engram load --id {gid}"
    out.deferred.append({"number": e.number, "id": e.id, "reason": reason, "guidance": guidance})


def _read(root: Root, rel: str) -> Memory | None:
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
    while os.path.lexists(root.path / rel) or rel in pending:
        rel = f"{ARCHIVE_DIR}/{mid}-{n}.md"
        n += 1
    return rel


def _revision_rel(root: Root, mid: str, revision: int, pending: dict[str, str | None]) -> str:
    """`archive/<id>.r<N>.md`: where revision N of a memory is kept when an update replaces it.

    A dot cannot occur in an id, so these names never collide with a memory's own file.
    """
    rel = f"{ARCHIVE_DIR}/{mid}.r{revision}.md"
    n = 2
    while os.path.lexists(root.path / rel) or rel in pending:
        rel = f"{ARCHIVE_DIR}/{mid}.r{revision}-{n}.md"
        n += 1
    return rel


def _rescan(e: ProposedCandidate) -> tuple[ProposedCandidate, str, list[str]]:
    """Scan the frozen candidate again (a pending file can be written by anyone with a shell).

    Returns (the candidate with its secrets redacted, reason to refuse or "", kinds redacted).
    """

    if e.type not in TYPE_DIRS:
        return e, f"type {e.type!r} is not rule, skill or knowledge", []
    try:
        check_id(e.id, "memory id")
    except EngramError as exc:
        return e, str(exc), []
    fields = [("text", "TEXT"), ("context", "CONTEXT"), ("level", "LEVEL"), ("title", "TITLE")]
    values = {key: getattr(e, key) for key, _ in fields}
    if e.note is not None:
        fields.append(("objective", "OBJECTIVE"))
        values["objective"] = e.note.objective
    kinds: list[str] = []
    for key, label in fields:
        red = redact(values[key])
        for text in (values[key], red.text):
            hit = find_injection(text)
            if hit is not None:
                return e, f"{label} refused when scanned again: {hit.kind}", []
        if red.changed:
            values[key] = red.text
            kinds += red.kinds
    kept: list[str] = []
    for phrase in e.triggers:
        hit = find_injection(phrase)
        if hit is not None:
            return e, f"TRIGGERS refused when scanned again: {hit.kind}", []
        if redact(phrase).changed:
            kinds.append("trigger")  # a phrase holding a secret is left out
        else:
            kept.append(phrase)
    note = replace(e.note, objective=values.pop("objective")) if e.note is not None else None
    return replace(e, **values, note=note, triggers=tuple(kept)), "", kinds


def _changed_target(roots: list[Root], e: ProposedCandidate) -> str:
    """Why an UPDATE/SUPERSEDE target no longer is the file the human approved replacing."""

    if e.replaces is None:  # proposed before targets were frozen
        return ""
    frozen = {t.scope: t for t in e.replaces}
    target = e.verdict.target
    for root in roots:
        rel = _durable_rel(root, target)
        was = frozen.get(root.scope)
        if rel is None:
            continue
        if was is None:
            return (
                f"{root.scope}:{rel} appeared after the proposal; it was left exactly as it is. "
                "Review it, then propose again"
            )
        try:
            raw = current_bytes(root, rel)
        except EngramError as exc:
            return str(exc)
        if rel != was.file or raw is None or file_hash(raw) != was.hash:
            return (
                f"{root.scope}:{rel} changed after the proposal (edited by hand or by a git "
                "pull); it was left exactly as it is. Review it, then propose again"
            )
    return ""


def _plan(
    roots: Roots,
    proposal: Proposal,
    numbers: list[int],
    scopes: list[str],
    *,
    forced: bool = False,
    choices: Mapping[int, DuplicateChoice] | None = None,
) -> Outcome:
    """Decide every change of a commit against the current state. Call under lock.

    `forced` (save-session --force): an UPDATE or SUPERSEDE that is not certainly
    about the same fact is deferred, never applied without a person's review.
    `choices`: what a person answered for possible duplicates (see `commit_choosing`);
    every other check still applies to them.
    """
    out = Outcome()
    choices = choices or {}
    entries: list[ProposedCandidate] = []
    for e in proposal.candidates:
        if choices.get(e.number) == "skip":
            out.skipped.append({"number": e.number, "id": e.id, "duplicate_of": e.duplicate_id})
        elif e.number in numbers:
            entries.append(e)
    target_roots = [r for r in (roots.by_scope(s) for s in scopes) if r is not None]
    scanned: list[ProposedCandidate] = []
    for e in entries:
        e, reason, kinds = _rescan(e)
        if reason:
            _defer(out, e, reason)
            continue
        if kinds:
            out.redacted.append((e.number, kinds))
        if choices.get(e.number) == "update":
            updating, why = _as_update(e)
            if why:
                _defer(out, e, why, e.duplicate_id)
                continue
            e = updating
        scanned.append(e)
    entries = scanned

    # Recompute verdicts on the memory as it is now (the proposal froze the old ones).
    cands = [e.as_candidate() for e in entries]
    fresh = {e.number: e for e in judge_all(roots, cands, scopes, strict=False)} if cands else {}
    visible = {m.id for r in roots.all for m in _durables(r)}

    writable: list[ProposedCandidate] = []
    for e in entries:
        frozen = e.verdict
        recomputed = fresh.get(e.number)
        now = recomputed.verdict if recomputed is not None else Verdict("")
        own = e.promote_from.id if e.promote_from is not None else None
        taken = any(
            (r.path / sub / f"{e.id}.md").exists()
            for r in target_roots
            for sub in (*TYPE_DIRS.values(), WORKING_DIR)
            if not (sub == WORKING_DIR and e.id == own)
        )
        if e.note is not None:
            if taken:
                _defer(out, e, f"id {e.id} was taken since the proposal; propose again")
            else:
                writable.append(e)
        elif frozen.kind == "NOOP":
            _defer(out, e, f"duplicate of {frozen.target}", frozen.target)
        elif e.possible_duplicate and e.number not in choices:
            _defer(out, e, e.deferred_reason, e.duplicate_id)
        elif now.kind == "NOOP" and frozen.kind != "UPDATE":
            _defer(out, e, f"duplicate of {now.target} (written since the proposal)", now.target)
        elif forced and frozen.kind in ("UPDATE", "SUPERSEDE") and not e.certain:
            t = frozen.target
            _defer(
                out, e,
                f"--force does not replace {t}: the candidate may be a different fact. Propose "
                f"it without --force and approve it, or name the target with `UPDATE: {t}`",
                t,
            )  # fmt: skip
        elif frozen.kind in ("UPDATE", "SUPERSEDE") and _changed_target(target_roots, e):
            _defer(out, e, _changed_target(target_roots, e), frozen.target)
        elif frozen.kind == "SUPERSEDE" and (
            now.kind != "SUPERSEDE" or now.target != frozen.target
        ):
            _defer(
                out, e,
                f"SUPERSEDE {frozen.target} no longer matches the memory (recomputed: "
                f"{recomputed.verdict_line if recomputed else 'ADD'}); propose again",
                frozen.target,
            )  # fmt: skip
        elif frozen.kind == "UPDATE" and not any(
            _durable_rel(r, frozen.target) for r in target_roots
        ):
            _defer(out, e, f"UPDATE target {frozen.target} no longer exists", frozen.target)
        elif frozen.kind in ("ADD", "SUPERSEDE") and taken:
            _defer(out, e, f"id {e.id} was taken since the proposal; propose again")
        else:
            writable.append(e)

    # Dependencies: every DEPENDS_ON id must exist or be written by this commit.
    changed = True
    while changed:
        changed = False
        ids = {e.id for e in writable}
        for e in list(writable):
            missing = [d for d in e.depends_on if d not in visible and d not in ids]
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

    edges: dict[str, list[str]] = {}
    for r in reversed(roots.all):
        for m in _durables(r):
            edges[m.id] = list(m.depends_on)
    for e in writable:
        edges[e.id] = list(e.depends_on)
    for e in list(writable):
        cycle = find_cycle(edges, e.id)
        if cycle:
            writable.remove(e)
            _defer(out, e, "depends_on cycle: " + " -> ".join(cycle))

    # Build the file changes per root.
    for e in writable:
        if not all(_plan_one(out, root, e, proposal) for root in target_roots):
            continue  # refused by the screen: deferred once, and a promoted note stays
        if e.promote_from is not None:
            src = e.promote_from
            root = roots.by_scope(src.scope)
            if root is not None:
                rel = f"{WORKING_DIR}/{src.id}.md"
                out.changes.setdefault(str(root.path), {})[rel] = None
                out.removed.append({"id": src.id, "scope": root.scope, "file": rel})
    out.deferred.sort(key=lambda d: d["number"])
    return out


def _as_update(e: ProposedCandidate) -> tuple[ProposedCandidate, str]:
    """A possible duplicate as an UPDATE of the memory it may repeat, or why it cannot be.

    The target's file as it was at proposal time is frozen in `duplicate_of.replaces`, so
    a hand edit of it since is caught by the same check as any UPDATE.
    """
    dup = e.duplicate_of
    if dup is None or not dup.id:
        return e, "this proposal was made before updates were offered; propose it again"
    if dup.type != e.type:
        return e, (
            f"{dup.id} is a {dup.type}, the candidate is a {e.type}; an update "
            "keeps the type, so keep it as new or skip it"
        )
    return replace(
        e,
        verdict=Verdict("UPDATE", dup.id),
        id=dup.id,
        replaces=dup.replaces,
        deferred_reason="",
        certain=True,  # a person named the target
    ), ""


def _durables(root: Root) -> list[Memory]:
    return durable_memories(root)


def as_written(mem: Memory) -> tuple[Memory | None, str, list[str]]:
    """The memory a commit may write: (memory, '', kinds redacted) or (None, why, []).

    The same screen the read path runs, on exactly what is written (every field the
    agent will see, generated variants and tags included), strictly: an agent proposed
    it. Secrets are redacted until none is left, so what is written loads unchanged.
    """
    kinds: list[str] = []
    for _ in range(3):
        found = screen_memory(mem, strict=True)
        if found.unsafe:
            field_name, _, why = found.unsafe.partition(": ")
            return None, f"{field_name} refused when the memory was screened: {why}", []
        if not found.secrets:
            return mem, "", kinds
        kinds += found.secrets
        mem = redacted_memory(mem, strict=True)
    return None, "it still holds a secret after redaction; rephrase it without the secret", []


def _plan_one(out: Outcome, root: Root, e: ProposedCandidate, proposal: Proposal) -> bool:
    """Stage the change of one candidate in one root; False when the screen refused it."""
    changes = out.changes.setdefault(str(root.path), {})
    v = e.verdict
    note = e.note

    def screened(mem: Memory) -> Memory | None:
        clean, why, kinds = as_written(mem)
        if clean is None:
            _defer(out, e, why)
        elif kinds:
            out.redacted.append((e.number, sorted(set(kinds))))
        return clean

    if note is not None:
        today = dt.date.today()
        mem = new_memory(e, root, proposal)
        mem.tier = "working"
        mem.objective = note.objective
        mem.valid_until = (today + dt.timedelta(days=note.ttl_days)).isoformat()
        mem.variants = {}
        mem = screened(mem)
        if mem is None:
            return False
        rel = f"{WORKING_DIR}/{mem.id}.md"
        changes[rel] = render_memory(mem)
        out.written.append(
            {"id": mem.id, "scope": root.scope, "file": rel, "verdict": "ADD",
             "valid_until": mem.valid_until, "path": str(root.path / rel)}
        )  # fmt: skip
        return True
    rel_old = _durable_rel(root, v.target) if v.target else None
    if v.kind == "UPDATE" and rel_old:
        old = _read(root, rel_old)
        raw = current_bytes(root, rel_old)
        if old is None or raw is None:
            raise EngramError(
                f"{root.scope}:{rel_old} cannot be parsed, so it cannot be updated; "
                "fix it (see `engram verify`) and commit again",
                code="memory.parse_error",
            )
        diff = (
            triggers_diff(old.triggers, list(e.triggers))
            if e.triggers_only
            else memory_diff(old.content, e.text, f"{root.scope}:{rel_old}")
        )
        was = old.revision
        mem = screened(updated_memory(old, e, proposal))
        if mem is None:
            return False
        kept = _revision_rel(root, old.id, was, changes)
        changes[kept] = raw.decode("utf-8")  # the old file exactly as it was
        rel = f"{TYPE_DIRS[mem.type]}/{mem.id}.md"
        changes[rel] = render_memory(mem)
        if rel != rel_old:
            changes[rel_old] = None
        out.written.append(
            {"id": mem.id, "scope": root.scope, "file": rel, "verdict": "UPDATE",
             "previous": {"revision": was, "file": kept}, "diff": diff}
        )  # fmt: skip
        return True
    mem = screened(new_memory(e, root, proposal))
    if mem is None:
        return False
    verdict = "ADD"
    extra: dict[str, Any] = {}
    if v.kind == "SUPERSEDE" and rel_old:
        old = _read(root, rel_old)
        if old is not None:
            extra["diff"] = memory_diff(old.content, e.text, f"{root.scope}:{rel_old}")
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
            extra["previous"] = {"revision": old.revision, "file": arel}
    rel = f"{TYPE_DIRS[mem.type]}/{mem.id}.md"
    changes[rel] = render_memory(mem)
    out.written.append(
        {"id": mem.id, "scope": root.scope, "file": rel, "verdict": verdict, **extra}
    )
    return True


def _apply(
    roots: Roots,
    out: Outcome,
    *,
    token: tuple[str, int] | None = None,
    result: Result | None = None,
) -> None:
    """One journaled unit for every root of the commit (and the token it spends)."""
    by_root = {r: out.changes[str(r.path)] for r in roots.all if out.changes.get(str(r.path))}
    outcome = {"text": result.text, "data": result.data} if result is not None else None
    apply_journaled(roots.primary, by_root, token=token, outcome=outcome)


def _outcome_result(proposal: Proposal, out: Outcome) -> Result:
    lines: list[str] = []
    if out.written:
        lines.append(f"Saved {len(out.written)} memor{'y' if len(out.written) == 1 else 'ies'}:")
        for w in out.written:
            note = f" (working note, valid until {w['valid_until']})" if "valid_until" in w else ""
            prev = w.get("previous")
            if prev and w["verdict"] == "UPDATE":
                note = (
                    f" (revision {prev['revision']} -> {prev['revision'] + 1}; revision "
                    f"{prev['revision']} kept in {w['scope']}:{prev['file']})"
                )
            elif prev:
                note = f" (replaces {w['scope']}:{prev['file']})"
            lines.append(f"  {w['verdict']:<9} {w['scope']}:{w['file']}{note}")
            lines.extend(f"      {d}" for d in w.get("diff") or [])
        if any(w.get("previous") for w in out.written):
            lines.append(
                "  (to restore an earlier revision, copy its archive file over the memory "
                "file, then run `engram verify --accept FILE`)"
            )
    else:
        lines.append("Nothing was written.")
    for k in out.skipped:
        lines.append(
            f"  skipped   #{k['number']} {k['id']} (the person's choice; {k['duplicate_of']} "
            "stays as it is)"
        )
    roles = proposal.roles
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
        if any(d["reason"].startswith("possible duplicate") for d in out.deferred):
            lines.append(
                "  (a person decides a possible duplicate: keep it as new, update the memory "
                "it may repeat, or skip it, in the approval dialog, on the review page "
                "(`engram ui`) or at the terminal prompt (`K n`, `U n`))"
            )
    result = Result(
        text="\n".join(lines),
        data={
            "proposal_id": proposal.proposal_id,
            "written": [
                {k: w[k] for k in ("id", "scope", "file", "verdict", "previous", "diff") if k in w}
                for w in out.written
            ],
            "deferred": out.deferred,
            "archived": out.archived,
            "removed": out.removed,
            "skipped": out.skipped,
        },
    )
    if proposal.kind == "note" and out.written:
        w = out.written[0]
        result.data.update({"id": w["id"], "file": w["path"], "valid_until": w["valid_until"]})
    for d in out.deferred:
        result.info("commit.deferred", f"#{d['number']} {d['id']}: {d['reason']}")
    for number, kinds in out.redacted:
        result.warn(
            "safety.redacted",
            f"candidate {number}: redacted {len(kinds)} item(s) when scanned again at commit "
            f"({', '.join(sorted(set(kinds)))})",
        )
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
    roots: Roots,
    token: str,
    approve: str | list[int] = "all",
    *,
    scope: str | None = None,
    _choices: Mapping[int, DuplicateChoice] | None = None,
) -> Result:
    """Write the approved candidates of a pending proposal (single use).

    The token is spent only together with the write (see the module docstring): a
    commit killed at any moment either wrote the memory, or leaves the token working;
    when a killed commit of this very token is finished here, its outcome is returned.
    Possible duplicates are deferred; only `commit_choosing` (a person) passes `_choices`.
    """

    state: dict[str, Any] = {"choices": {}}

    def check(proposal: Proposal) -> None:
        numbers = parse_approve(approve, len(proposal.candidates))
        if _choices:
            state["choices"] = _checked_choices(proposal, _choices)
            numbers = [n for n in numbers if state["choices"].get(n) != "skip"]
        state["numbers"] = numbers
        state["scopes"] = _narrow(list(proposal.scopes), scope)

    all_roots = roots.all
    with locked(all_roots):
        recoveries = recover_all(roots)
        key = token_hash(token.strip()) if isinstance(token, str) else ""
        done = next((r for r in recoveries if r.finished and r.token_key == key), None)
        if done is not None:
            result = _finished_result(done)
        else:
            try:
                proposal = take_proposal(roots, token, consume_check=check, spend=False)
            except EngramError as exc:
                notes = [rec.message for rec in recoveries if not rec.finished]
                if notes:  # the person must hear about a set-aside journal even now
                    exc.message = f"{exc.message} (also: {'; '.join(notes)})"
                    exc.args = (exc.message,)
                raise
            _target_roots(roots, state["scopes"])
            out = _plan(
                roots, proposal, state["numbers"], state["scopes"], choices=state["choices"]
            )
            result = _outcome_result(proposal, out)
            _apply(roots, out, token=(key, proposal.expires_at), result=result)
    recovery_notes(result, recoveries)
    return result


DuplicateChoice = Literal["new", "update", "skip"]
DUPLICATE_CHOICES: tuple[DuplicateChoice, ...] = ("new", "update", "skip")


def _checked_choices(proposal: Proposal, choices: Mapping[int, str]) -> dict[int, DuplicateChoice]:
    """The person's choices, each for a candidate deferred as a possible duplicate."""
    cands = proposal.numbered()
    numbers = parse_approve(list(choices), len(cands))
    wrong = [n for n in numbers if not cands[n].possible_duplicate]
    if wrong:
        raise UsageError(
            f"candidate {wrong[0]} is not deferred as a possible duplicate; keep, update and "
            "skip apply only to a candidate whose preview says 'Will be deferred: possible "
            "duplicate of …'"
        )
    out: dict[int, DuplicateChoice] = {}
    for n, choice in choices.items():
        if choice not in DUPLICATE_CHOICES:
            raise UsageError(
                f"candidate {n}: {choice!r} is not a choice for a possible duplicate; use "
                "new (keep it as a new memory), update (replace the memory it may repeat, "
                "history kept) or skip"
            )
        out[n] = choice
    return out


def commit_choosing(
    roots: Roots,
    token: str,
    approve: str | list[int],
    choices: Mapping[int, DuplicateChoice],
    *,
    scope: str | None = None,
) -> Result:
    """Commit with a person's answer for each possible duplicate: new, update or skip.

    `new` writes it beside the memory it may repeat, `update` replaces that memory (its
    revision kept in the archive), `skip` leaves it out. For a person only (the terminal
    prompt, `engram commit --keep/--update`, the approval dialog, the review page): never
    an argument of an MCP tool, so an agent cannot write past a duplicate review. A
    chosen candidate counts as approved; everything else is the one commit path.
    """
    if isinstance(approve, str) and approve.strip().lower() == "all":
        approved: str | list[int] = "all"
    else:
        approved = sorted({*_as_numbers(approve), *choices})
    return commit_proposal(roots, token, approved, scope=scope, _choices=choices)


def _as_numbers(approve: str | list[int]) -> list[int]:
    if isinstance(approve, str):
        if not approve.strip():
            return []
        return parse_approve(approve, 10**6)  # the shape only; the real count is checked later
    return list(approve)


def _finished_result(rec: Recovery) -> Result:
    outcome = rec.outcome or {}
    text = str(outcome.get("text") or "The approved memories were written.")
    data = outcome.get("data") if isinstance(outcome.get("data"), dict) else {}
    return Result(
        text="This approval's commit had been interrupted; it is finished now.\n" + text,
        data={**data, "recovered": True},
    )


def commit_unstored(
    roots: Roots,
    proposal: Proposal,
    numbers: list[int] | None = None,
    *,
    forced: bool = False,
) -> Result:
    """Write an unsaved proposal directly (`save-session --force`); same path as commit."""
    numbers = numbers or [e.number for e in proposal.candidates]
    scopes = list(proposal.scopes)
    _target_roots(roots, scopes)
    with locked(roots.all):  # recovery may finish a journal of any root
        recoveries = recover_all(roots)
        out = _plan(roots, proposal, numbers, scopes, forced=forced)
        result = _outcome_result(proposal, out)
        _apply(roots, out, result=result)
    recovery_notes(result, recoveries)
    return result


def force_save(
    roots: Roots, text: str, *, scope: str | None = None, query_level: int | None = None
) -> Result:
    """`save-session --force`: propose and commit in one step (the human asked for force).

    Force skips the approval question, not the review of a replacement: an UPDATE or
    SUPERSEDE is applied only when it is certainly about the same fact.
    """
    cands = parse_candidates(text, query_level=query_level)
    proposal, redacted = prepare_candidates(roots, cands, kind="save_session", scope=scope)
    result = commit_unstored(roots, proposal, forced=True)
    redaction_notes(result, redacted)  # redactions, and candidates refused by line
    return result


# ---------------------------------------------------------------- archive


def archive_memory(roots: Roots, mid: str, reason: str) -> Result:
    """Move a durable memory to archive/ with its reason; never deletes anything."""

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
    with locked(roots.all):
        recoveries = recover_all(roots)
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
        apply_journaled(roots.primary, {root: {arel: render_memory(old), rel: None}})
    result = Result(
        text=f"Archived {root.scope}:{rel} -> {arel} ({red.text})",
        data={"id": mid, "scope": root.scope, "from": rel, "file": arel, "reason": red.text},
    )
    recovery_notes(result, recoveries)
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
