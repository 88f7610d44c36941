"""Triggers for memories that have none: the host's model proposes them, a person approves.

Engram does not guess how a teammate would ask for a memory; the model that knows the
project writes the phrasings, and they reach the files only through the normal proposal,
approval and commit path, as an UPDATE that adds triggers and leaves the text as written.
"""

from __future__ import annotations

import re
from typing import Any

from engram.core.errors import UsageError
from engram.core.results import Result
from engram.core.store.layout import Roots
from engram.core.write.approvals import propose_candidates
from engram.core.write.candidates import Candidate, parse_candidates

INSTRUCTIONS = """\
# Adding triggers to Engram memories

Triggers are the phrasings a teammate would type when a memory applies; Engram routes a
task to a memory when the task reads like one of them. These memories have none yet.

1. Read each memory first (engram_load with `id`, several ids comma-separated, or
   `engram load --id ID`).
2. For each, write 4 to 8 short phrasings a teammate would type when it applies: the goal
   in product words, the symptom they would see, the code task, a terse version, synonyms.
   Only what the memory really covers; skip a memory you cannot phrase well.
3. Propose them with engram_save_session (or `engram enrich --propose`), one line per
   memory, with no TEXT (the memory's text stays exactly as written):
   TYPE: rule | UPDATE: <id> | TRIGGERS: phrase one; phrase two; phrase three; phrase four
4. Show the proposal to the human and wait: only after the human approved, commit it
   (engram_commit with the approval token). Never approve on the human's behalf.
"""

_SHORT_LINE = re.compile(r"^\s*(?:[-*+]\s+)?([a-z0-9][a-z0-9-]*[a-z0-9]|[a-z0-9])\s*:\s*(.+)$")


def enrichment_text(memories: list[dict[str, Any]], total: int) -> str:
    """What the model is asked: the instructions, then the memories to give triggers to."""
    if not memories:
        return "Every memory has triggers; nothing to enrich.\n"
    lines = [INSTRUCTIONS, f"Memories without triggers ({len(memories)} of {total}):"]
    lines += [f"- {m['id']} ({m['type']}, {m['scope']}): {m['title']}" for m in memories]
    if total > len(memories):
        lines.append(f"({total - len(memories)} more after these are done)")
    return "\n".join(lines) + "\n"


def enrichment_candidates(text: str) -> list[Candidate]:
    """Candidate lines that only add triggers; `id: phrase; phrase` is accepted as short form.

    Anything else (a TEXT, a new memory) is refused: enrichment never rewrites what a
    person wrote.
    """
    lines = []
    for raw in text.splitlines():
        m = _SHORT_LINE.match(raw)
        if m and not re.match(r"^\s*(?:[-*+]\s+)?type\s*:", raw, re.IGNORECASE):
            raw = f"TYPE: knowledge | UPDATE: {m.group(1)} | TRIGGERS: {m.group(2)}"
        lines.append(raw)
    cands = parse_candidates("\n".join(lines))  # at most MAX_CANDIDATES, as any proposal
    wrong = [c.number for c in cands if not c.triggers_only]
    if wrong:
        raise UsageError(
            f"candidate {wrong[0]} is not a triggers-only update; enrichment lines are "
            "`TYPE: rule | UPDATE: <id> | TRIGGERS: a; b; c` (or `<id>: a; b; c`), with no TEXT"
        )
    return cands


def propose_enrichment(roots: Roots, text: str, *, scope: str | None = None) -> Result:
    """Propose the triggers; the person approves them like any other change of memory."""
    cands = enrichment_candidates(text)
    return propose_candidates(roots, cands, kind="save_session", scope=scope)
