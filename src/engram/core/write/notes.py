"""Working-tier notes (R-NOTE-1…4) and `promote`, the only way a note becomes durable.

A note is a short task note with an objective and a time to live. It goes through
the same scan and the same approval path as any memory, but it is written to
`working/` (git-ignored), never updates a durable memory, and always gets an id of
its own. Promoting proposes the note's text as a durable memory; the working file is
removed by the commit that writes the durable one, and only then.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from engram.core.errors import NotFoundError, UsageError
from engram.core.memory import MemoryParseError
from engram.core.results import Result
from engram.core.safety.scan import check_id, scan_text
from engram.core.store.config import load_config
from engram.core.store.layout import WORKING_DIR, Roots
from engram.core.store.memoryfiles import find_memory_file, read_memory_file
from engram.core.write.approvals import propose_candidates, resolve_scopes
from engram.core.write.candidates import make_candidate
from engram.core.write.proposal import NoteFields, PromoteFrom
from engram.core.write.verdicts import Verdict

MAX_OBJECTIVE_CHARS = 200


def _note_scopes(roots: Roots, scope: str | None) -> list[str]:
    if scope is None:
        scope = "workspace" if roots.workspace is not None else "global"
    return resolve_scopes(roots, scope)


def create_note_proposal(
    roots: Roots, text: str, objective: str, *, mtype: str = "knowledge", scope: str | None = None
) -> Result:
    """Propose one working note; its commit returns {id, file, valid_until}."""

    if not isinstance(objective, str) or not objective.strip():
        raise UsageError('a note needs an objective: --objective "what the task is"')
    objective = " ".join(objective.split())
    if len(objective) > MAX_OBJECTIVE_CHARS:
        raise UsageError(
            f"the objective is {len(objective)} characters; at most {MAX_OBJECTIVE_CHARS}"
        )
    if not isinstance(text, str) or not text.strip():
        raise UsageError("nothing to note: the text is empty")
    cand = make_candidate(1, type=mtype or "knowledge", text=text)
    red = scan_text(objective, "note objective")
    ttl = int(load_config(roots).get("load.working_ttl_days"))
    valid_until = (dt.date.today() + dt.timedelta(days=ttl)).isoformat()
    extra = {  # a note never updates a memory: it is always written as a note of its own
        1: {
            "note": NoteFields(objective=red.text, ttl_days=ttl, valid_until=valid_until),
            "verdict": Verdict("ADD"),
            "related": (),
            "deferred_reason": "",
            "replaces": (),
            "duplicate_of": None,
        }
    }
    result = propose_candidates(
        roots, [cand], kind="note", scope=None, scopes=_note_scopes(roots, scope), extra=extra
    )
    result.data["valid_until"] = valid_until
    result.data["objective"] = red.text
    if red.changed:
        result.warn("safety.redacted", "the objective contained secrets; they were redacted")
    return result


def find_note(roots: Roots, mid: str) -> tuple[Any, Any]:
    """(root, Memory) of the working note `mid`; workspace first."""

    check_id(mid, "note id")
    for root in roots.all:
        if find_memory_file(root, mid, (WORKING_DIR,)):  # never a link
            try:
                mem, _ = read_memory_file(root, f"{WORKING_DIR}/{mid}.md")
            except (MemoryParseError, OSError) as exc:
                raise UsageError(f"working note {mid} cannot be read: {exc}") from exc
            return root, mem
    durable = any(find_memory_file(r, mid, ("rules", "skills", "knowledge")) for r in roots.all)
    if durable:
        raise UsageError(f"{mid} is already a durable memory; only working notes are promoted")
    raise NotFoundError(f"no working note {mid!r} (list notes with `engram load --all`)")


def create_promote_proposal(roots: Roots, mid: str) -> Result:
    """Propose working note `mid` as a durable memory through the normal approval path."""
    root, note = find_note(roots, mid)
    text = " ".join(
        re.sub(r"^\s*[-*]\s+", "", line).strip() for line in note.content.splitlines()
    ).strip()
    if not text:
        raise UsageError(f"working note {mid} has no content to promote")
    context = note.origin or (
        f"Promoted from working note {mid}"
        + (f" (objective: {note.objective})" if note.objective else "")
    )
    cand = make_candidate(1, type=note.type, text=text, context=context[:2000])
    extra = {1: {"promote_from": PromoteFrom(id=mid, scope=root.scope)}}
    result = propose_candidates(
        roots, [cand], kind="promote", scope=None, scopes=[root.scope],
        preferred_ids={1: mid}, free_ids={mid}, extra=extra,
    )  # fmt: skip
    result.data["promote_from"] = {"id": mid, "scope": root.scope}
    return result
