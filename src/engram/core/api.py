"""The public operations of Engram's core, one function per CLI command / MCP tool.

Adapters (the CLI, the MCP server, host hooks) resolve `Roots` and call these; every
function returns a `Result` (human text + the {contract_version, ok, data, diagnostics}
envelope) or raises an `EngramError` whose message names what was wrong and what is
allowed. Imports are lazy so that a hook or a server start pays only for what it uses.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engram.core.results import Result
from engram.core.store.layout import Roots

# ---------------------------------------------------------------- roots


def init(start: Path, *, global_path: Path | None = None, example: bool = False) -> Result:
    """Create (or adopt) the workspace root; optionally set the global root; idempotent."""
    from engram.core.store.setup import init_workspace

    return init_workspace(start, global_path=global_path, example=example)


# ---------------------------------------------------------------- read path


def load(
    roots: Roots,
    query: str | None = None,
    *,
    ids: list[str] | None = None,
    budget_tokens: int | None = None,
    disclosure: str = "auto",
    full: bool = False,
    explain: bool = False,
    all_: bool = False,
    dry_run: bool = False,
    roles: list[str] | None = None,
    limit: int | None = None,
    objective: str | None = None,
    count_usage: bool = True,
    paths: list[str] | None = None,
    branch: str = "",
    max_bodies: int | None = None,
    thin_cards: bool = True,
) -> Result:
    """Route a task to memories and render them in confidence tiers within the token budget.

    data: selected_keys, body_keys, card_ids, omitted_ids, tokens, task_type, signature.
    Confident memories are bodies, plausible ones cards, unsure ones are left out.
    `ids` loads those memories' bodies (budget ignored). `objective` lets working notes
    with that objective render as bodies (others are cards). `paths` (files the work
    touches) and `branch` are task signals besides the query. `max_bodies` caps the
    bodies (a hook's noise budget); `thin_cards=False` drops the cards of a one-word task.
    """
    from engram.core.read.load import load_memories_for_task

    return load_memories_for_task(
        roots, query, ids=ids, budget_tokens=budget_tokens, disclosure=disclosure, full=full,
        explain=explain, all_=all_, dry_run=dry_run, roles=roles, limit=limit,
        objective=objective, count_usage=count_usage, paths=paths, branch=branch,
        max_bodies=max_bodies, thin_cards=thin_cards,
    )  # fmt: skip


def route(roots: Roots, query: str, *, roles: list[str] | None = None) -> Result:
    """Task type and routed memories in load order. data: task_type, entries[{id,type,scope,score,...}]."""
    from engram.core.read.load import route_task

    return route_task(roots, query, roles=roles)


def search(roots: Roots, query: str, *, limit: int = 10, roles: list[str] | None = None) -> Result:
    """Plain ranked search over visible memories. data: entries[{id,type,scope,score,title}]."""
    from engram.core.read.load import search_memories

    return search_memories(roots, query, limit=limit, roles=roles)


def read_memory(roots: Roots, mid: str) -> Result:
    """One memory's body as `load --id` renders it; counts as a retrieval."""
    return load(roots, ids=[mid])


def index_cards(roots: Roots) -> Result:
    """One-line cards of every visible memory. data: cards[{id,type,scope,title}]."""
    from engram.core.read.load import list_cards

    return list_cards(roots)


def most_used(roots: Roots, limit: int) -> list[dict[str, Any]]:
    """The `limit` most-retrieved visible memories: [{id, type, scope, title, uses}]."""
    from engram.core.read.load import most_used_memories

    return most_used_memories(roots, limit)


def record_retrievals(roots: Roots, ids: list[str]) -> None:
    """Count these bodies as retrieved (after a load made with `count_usage=False`)."""
    from engram.core.read.load import record_retrievals as record

    record(roots, ids)


def rebuild_index(roots: Roots) -> Result:
    from engram.core.read.load import rebuild

    return rebuild(roots)


# ---------------------------------------------------------------- integrity and status


def verify(roots: Roots, *, accept: list[str] | None = None, accept_all: bool = False) -> Result:
    """Compare files with hashes.json. data: ok, roots[{scope, modified, missing, unmanaged, invalid}]."""
    from engram.core.store.integrity import verify_roots

    return verify_roots(roots, accept=accept, accept_all=accept_all)


def status(roots: Roots) -> Result:
    from engram.core.store.status import status_report

    return status_report(roots)


# ---------------------------------------------------------------- configuration


def config_get(roots: Roots, key: str | None = None) -> Result:
    from engram.core.store.settings import get_setting

    return get_setting(roots, key)


def config_set(roots: Roots, key: str, value: Any, *, user: bool = False) -> Result:
    from engram.core.store.settings import set_setting

    return set_setting(roots, key, value, user=user)


def set_role(roots: Roots, roles: list[str] | None) -> Result:
    """Set the active roles (None or [] clears them)."""
    from engram.core.store.settings import set_roles

    return set_roles(roots, roles)


def set_rule_variant(roots: Roots, mode: str) -> Result:
    """light|balanced|strict|off, or `status` to report the current mode."""
    from engram.core.store.settings import set_variant

    return set_variant(roots, mode)


# ---------------------------------------------------------------- write path (propose → approve → commit)


def propose(
    roots: Roots,
    text: str,
    *,
    kind: str = "save_session",
    scope: str | None = None,
    role: str | None = None,
    query_level: int | None = None,
) -> Result:
    """Parse candidate lines, scan them, compute verdicts, freeze a proposal with a token.

    data: approval_token, proposal_id, expires_at, scopes, candidates[{number, type, id,
    title, verdict, target, related, deferred_reason}]. Writes only pending-approvals.json.
    """
    from engram.core.write.approvals import create_proposal

    return create_proposal(roots, text, kind=kind, scope=scope, role=role, query_level=query_level)


def save(
    roots: Roots, mtype: str | None, text: str, *, scope: str | None = None, role: str | None = None
) -> Result:
    """One memory proposed from plain text (`engram save [TYPE] "TEXT"`)."""
    from engram.core.write.approvals import create_single_proposal

    return create_single_proposal(roots, mtype, text, scope=scope, role=role)


def commit(
    roots: Roots, token: str, approve: str | list[int] = "all", *, scope: str | None = None
) -> Result:
    """Write the approved candidates of a pending proposal (single use). `scope` may narrow only."""
    from engram.core.write.commit import commit_proposal

    return commit_proposal(roots, token, approve, scope=scope)


def decline(
    roots: Roots, token: str, reason: str = "approval was declined in the approval dialog"
) -> Result:
    """Revoke a pending proposal; a later commit fails with `reason`."""
    from engram.core.write.approvals import revoke_proposal

    return revoke_proposal(roots, token, reason)


def save_session_force(
    roots: Roots, text: str, *, scope: str | None = None, query_level: int | None = None
) -> Result:
    """Propose and commit in one step (the human asked for force); same path as commit."""
    from engram.core.write.commit import force_save

    return force_save(roots, text, scope=scope, query_level=query_level)


def propose_note(
    roots: Roots, text: str, objective: str, *, mtype: str = "knowledge", scope: str | None = None
) -> Result:
    """A working-tier note proposal (one yes/cancel approval). Commit returns {id, file, valid_until}."""
    from engram.core.write.notes import create_note_proposal

    return create_note_proposal(roots, text, objective, mtype=mtype, scope=scope)


def archive(roots: Roots, mid: str, reason: str) -> Result:
    from engram.core.write.commit import archive_memory

    return archive_memory(roots, mid, reason)


def promote(roots: Roots, mid: str) -> Result:
    """Propose a working note as a durable memory (through the normal approval path)."""
    from engram.core.write.notes import create_promote_proposal

    return create_promote_proposal(roots, mid)
