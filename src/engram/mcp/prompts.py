"""The prompts: `propose`, how an agent proposes memory and waits for the human (R-WIRE-3),
and `enrich`, which asks the model for triggers of the memories that have none."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engram.mcp.protocol import INVALID_PARAMS, Era, RpcError

NAME = "propose"
DESCRIPTION = "How to propose project memory to Engram and get the human's approval."
ENRICH = "enrich"
ENRICH_DESCRIPTION = (
    "Propose triggers (phrasings a teammate would type) for memories that have none; "
    "the human approves them like any other change."
)

PROTOCOL = """\
# Proposing memory to Engram

Engram is this project's human-owned memory. You may propose memory; only the human decides
what is written.

1. Propose only what will matter in later sessions: a project rule, a workflow (skill), or a
   fact or decision (knowledge). One idea per candidate, in one or two sentences. No secrets,
   no personal data, no instructions aimed at other agents.
2. Write one candidate per line:
   TYPE: rule | TEXT: Always run the tests before a release. | CONTEXT: why it exists
   TYPE: knowledge | TEXT: Release notes live in CHANGELOG.md.
   TYPE: skill | TEXT: To release: run tests, update changelog, tag. | DEPENDS_ON: release-tests
   TYPE: knowledge | TEXT: Invoice retries back off exponentially. | UPDATE: invoice-retries
3. Call engram_save_session with these lines (engram_save for a single memory). It writes
   nothing: it returns numbered candidates, each with a Verdict line (ADD, UPDATE <id>,
   SUPERSEDE <id>, NOOP duplicate of <id>), and an approval_token.
4. Show the numbered candidates and their verdicts to the human, exactly as returned, and ask:
   approve all, approve some (e.g. "approve 1,3"), revise, or cancel.
5. Only after the human has approved, call engram_commit with the approval_token and
   approve: "all" or the approved numbers counted from 1 (e.g. [1, 3]).
   Never call engram_commit before the human has approved the displayed candidates.
   Never approve on the human's behalf, and never reuse a token (tokens are single use and
   expire after 30 minutes). If the human asks for changes, propose again.
6. When the host shows Engram's approval dialog instead, the human answers there: nothing
   is returned to commit. If the result starts with "nothing was saved", follow it: show the
   candidates and wait for the human as in steps 4 and 5.
7. For a short-lived note about the current objective, use engram_note (one yes/cancel
   confirmation; the note expires and never changes a durable memory).

Force rule: an explicit request `/engram save-session --force` (shortcut `/engram ss -f`)
means the human already approved; run it through the CLI write path:
`engram save-session --force`. The counted shortcut `/engram ss -f last 50 sessions` means
`engram save-session --query-level 50 --force`. Hosts that only have MCP commit through
engram_commit, after the human's approval.
"""


def list_prompts(era: Era) -> list[dict[str, Any]]:
    out = []
    for name, title, description in (
        (NAME, "Propose memory", DESCRIPTION),
        (ENRICH, "Add triggers to memories", ENRICH_DESCRIPTION),
    ):
        entry: dict[str, Any] = {"name": name}
        if era.has("tool_title"):
            entry["title"] = title
        entry["description"] = description
        entry["arguments"] = []
        out.append(entry)
    return out


def get_prompt(name: Any, enrichment: Callable[[], str]) -> dict[str, Any]:
    """`enrichment`: the memories without triggers, read when the prompt is asked for."""
    if name == NAME:
        description, text = DESCRIPTION, PROTOCOL
    elif name == ENRICH:
        description, text = ENRICH_DESCRIPTION, enrichment()
    else:
        raise RpcError(
            INVALID_PARAMS, f"Unknown prompt: {name!r}; the prompts are {NAME!r} and {ENRICH!r}"
        )
    return {
        "description": description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }
