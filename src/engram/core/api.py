"""The public operations of Engram's core, one function per CLI command / MCP tool.

Adapters (the CLI, the MCP server, host hooks) resolve `Roots` and call these; every
function returns a `Result` (human text + the {contract_version, ok, data, diagnostics}
envelope) or raises an `EngramError` whose message names what was wrong and what is
allowed. Imports are lazy so that a hook or a server start pays only for what it uses.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.core.read.request import LoadRequest
from engram.core.results import Result
from engram.core.store.layout import Roots

# ---------------------------------------------------------------- roots


def init(start: Path, *, global_path: Path | None = None, example: bool = False) -> Result:
    """Create (or adopt) the workspace root; optionally set the global root; idempotent."""
    from engram.core.store.setup import init_workspace

    return init_workspace(start, global_path=global_path, example=example)


# ---------------------------------------------------------------- read path


def load(roots: Roots, request: LoadRequest) -> Result:
    """Route a task to memories and render them in confidence tiers within the token budget.

    data: selected_keys, body_keys, card_ids, omitted_ids, tokens, task_type, signature.
    Confident memories are bodies, plausible ones cards, unsure ones are left out; a
    request with `ids` loads those memories' bodies (budget ignored). See `LoadRequest`.
    """
    from engram.core.read.load import load_memories

    return load_memories(roots, request)


def coverage_map(roots: Roots, *, refresh: bool = True, max_chars: int | None = None) -> str:
    """What memory covers in one short paragraph (types, most used tags): for the host model
    to write its searches in the team's words. '' when memory is empty. `refresh=False`:
    from the index as it stands ('' when there is none yet), for an MCP handshake;
    `max_chars`: one compact clause."""
    from engram.core.read.coverage import coverage_map as covered

    return covered(roots, refresh=refresh, max_chars=max_chars)


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
    return load(roots, LoadRequest(ids=(mid,)))


def index_cards(roots: Roots) -> Result:
    """One-line cards of every visible memory. data: cards[{id,type,scope,title}]."""
    from engram.core.read.load import list_cards

    return list_cards(roots)


def most_used(roots: Roots, limit: int) -> list[dict[str, Any]]:
    """The `limit` most-retrieved visible memories: [{id, type, scope, title, uses}]."""
    from engram.core.read.load import most_used_memories

    return most_used_memories(roots, limit)


def enrichment(roots: Roots, limit: int = 30) -> Result:
    """What the host's model is asked to propose triggers for (the `enrich` prompt).

    data: memories[{id, type, scope, title}], total (all the memories without triggers).
    """
    from engram.core.read.load import memories_without_triggers
    from engram.core.write.enrich import enrichment_text

    memories, total = memories_without_triggers(roots, limit)
    return Result(enrichment_text(memories, total), data={"memories": memories, "total": total})


def propose_enrichment(roots: Roots, text: str, *, scope: str | None = None) -> Result:
    """Propose triggers-only updates (`engram enrich --propose`); nothing is written yet."""
    from engram.core.write.enrich import propose_enrichment as propose_triggers

    return propose_triggers(roots, text, scope=scope)


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
    roots: Roots,
    mtype: str | None,
    text: str,
    *,
    scope: str | None = None,
    role: str | None = None,
    triggers: list[str] | None = None,
) -> Result:
    """One memory proposed from plain text (`engram save [TYPE] "TEXT"`), with the phrases
    a teammate would type when it applies (`triggers`)."""
    from engram.core.write.approvals import create_single_proposal

    return create_single_proposal(roots, mtype, text, scope=scope, role=role, triggers=triggers)


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


# ---------------------------------------------------------------- health (`engram doctor`)

# Findings that mean a memory is not loaded, or a path in a root is refused.
DOCTOR_ERROR_CODES = ("memory.parse_error", "root.symlink", "folder.symlink", "file.symlink")


def health(start: Path | None) -> Result:
    """The memory side of `engram doctor`: roots, hashes, index, configuration and the hook
    log, as diagnostics with stable codes (host checks are added by `hosts.doctor`).
    data: roots, verify, status (whatever could be computed)."""
    findings: list[Any] = []
    data: dict[str, Any] = {}
    roots = _memory_checks(start, findings, data)
    if roots is not None:
        findings += _hook_log(roots)
    return Result("", data=data, diagnostics=findings)


def _memory_checks(start: Path | None, out: list[Any], data: dict[str, Any]) -> Roots | None:
    from engram.core.errors import EngramError
    from engram.core.results import Diagnostic
    from engram.core.store.config import load_config
    from engram.core.store.roots import resolve_roots

    try:
        roots = resolve_roots(start)
    except EngramError as exc:
        out.append(
            Diagnostic("error", exc.code if "." in exc.code else "root.invalid", exc.message)
        )
        return None
    data["roots"] = {r.scope: str(r.path) for r in roots.all}
    env_global = os.environ.get("ENGRAM_GLOBAL_DIR")
    if env_global and roots.global_ is None:
        out.append(
            Diagnostic(
                "warning",
                "root.global_missing",
                f"ENGRAM_GLOBAL_DIR={env_global} is not a folder; create it or unset the variable",
            )
        )
    if not roots.all:
        out.append(
            Diagnostic(
                "error",
                "root.missing",
                "no Engram memory root here; run `engram init` in your project",
            )
        )
        return None
    for name, call in (("verify", verify), ("status", status)):
        try:
            res = call(roots)
        except EngramError as exc:
            code = "manifest.invalid" if name == "verify" else "index.unavailable"
            out.append(Diagnostic("error", exc.code if "." in exc.code else code, exc.message))
            continue
        except Exception as exc:  # a broken derived file must not stop the other checks
            out.append(Diagnostic("error", f"{name}.failed", f"{name} failed: {exc}"))
            continue
        for d in res.diagnostics:
            level = "error" if d.code in DOCTOR_ERROR_CODES else d.level
            out.append(Diagnostic(level, d.code, d.message, d.path))
        data[name] = res.data
    try:
        for problem in load_config(roots).invalid_entries():
            out.append(Diagnostic("warning", "config.invalid", problem))
    except EngramError as exc:
        out.append(Diagnostic("error", "config.invalid", exc.message))
    return roots


def _hook_log(roots: Roots) -> list[Any]:
    import time

    from engram.core.results import Diagnostic
    from engram.core.store.files import file_stat, read_bytes

    path = roots.primary.cache_dir / "hook.log"
    try:  # never through a link: verify names a linked log, its target is not shown
        if time.time() - file_stat(roots.primary, path).st_mtime > 86400:
            return []
        last = read_bytes(roots.primary, path).decode("utf-8", "replace").strip().splitlines()[-1]
    except (OSError, ValueError, IndexError):  # absent, a link, too large, empty
        return []
    return [
        Diagnostic(
            "warning",
            "hook.errors",
            f"a hook failed in the last day (hosts were not affected): {last}",
            str(path),
        )
    ]


# ---------------------------------------------------------------- building blocks
#
# What an adapter needs besides the operations above: the types it passes around, the checks
# it applies to its own input, and the contained file primitives a host module uses for its
# own files. Adapters take them from here and from nowhere else in the core (a contract in
# tests/test_architecture.py). Each is imported on first use, so that a hook pays only for
# the names it touches.

PUBLIC: dict[str, str] = {
    # memory
    "MemoryParseError": "engram.core.memory",
    "TYPES": "engram.core.memory",
    "TYPE_ALIASES": "engram.core.memory",
    "front_matter_dict": "engram.core.memory",
    "normalise_type": "engram.core.memory",
    "Memory": "engram.core.memory",
    # read.signals
    "checked_signals": "engram.core.read.signals",
    "work_signals": "engram.core.read.signals",
    # safety.scan
    "check_id": "engram.core.safety.scan",
    "clean_names": "engram.core.safety.scan",
    "find_injection": "engram.core.safety.scan",
    "public_text": "engram.core.safety.scan",
    "redact": "engram.core.safety.scan",
    "screen_fields": "engram.core.safety.scan",
    # store.bounded
    "BadFileError": "engram.core.store.bounded",
    "MAX_JSON_DEPTH": "engram.core.store.bounded",
    "parse_json": "engram.core.store.bounded",
    "read_plain": "engram.core.store.bounded",
    "read_plain_text": "engram.core.store.bounded",
    # store.config
    "load_config": "engram.core.store.config",
    # store.files
    "append_text": "engram.core.store.files",
    "atomic_write": "engram.core.store.files",
    "file_stat": "engram.core.store.files",
    "read_bytes": "engram.core.store.files",
    "read_json": "engram.core.store.files",
    "root_lock": "engram.core.store.files",
    # store.index
    "forget_open_indexes": "engram.core.store.index",
    # store.layout
    "CACHE_DIR": "engram.core.store.layout",
    "Root": "engram.core.store.layout",
    "Roots": "engram.core.store.layout",
    "WORKSPACE_SUBDIR": "engram.core.store.layout",
    "user_config_dir": "engram.core.store.layout",
    # store.memoryfiles
    "find_memory_file": "engram.core.store.memoryfiles",
    "load_memories": "engram.core.store.memoryfiles",
    "read_memory_file": "engram.core.store.memoryfiles",
    # store.pending
    "iso_time": "engram.core.store.pending",
    "now": "engram.core.store.pending",
    "read_pending": "engram.core.store.pending",
    # store.roots
    "find_project_dir": "engram.core.store.roots",
    "require_roots": "engram.core.store.roots",
    "resolve_roots": "engram.core.store.roots",
    # store.userkey
    "user_signing_key": "engram.core.store.userkey",
    # text
    "check_cli_args": "engram.core.text",
    "check_strings": "engram.core.text",
    "decode_input": "engram.core.text",
    "printable": "engram.core.text",
    # write.approvals
    "DECLINED_DEFAULT": "engram.core.write.approvals",
    "decline_waiting": "engram.core.write.approvals",
    "durable_memories": "engram.core.write.approvals",
    "for_person": "engram.core.write.approvals",
    "guess_type": "engram.core.write.approvals",
    "revoke_proposal": "engram.core.write.approvals",
    "waiting_keys": "engram.core.write.approvals",
    "waiting_proposals": "engram.core.write.approvals",
    "WaitingProposal": "engram.core.write.approvals",
    "prepare_candidates": "engram.core.write.approvals",
    "preview_text": "engram.core.write.approvals",
    "proposal_result": "engram.core.write.approvals",
    "redaction_notes": "engram.core.write.approvals",
    "resolve_scopes": "engram.core.write.approvals",
    "scan_candidates": "engram.core.write.approvals",
    "store_proposal": "engram.core.write.approvals",
    # write.candidates
    "content_of": "engram.core.write.candidates",
    "make_candidate": "engram.core.write.candidates",
    "parse_candidates": "engram.core.write.candidates",
    "slugify": "engram.core.write.candidates",
    # write.commit
    "commit_choosing": "engram.core.write.commit",
    # write.proposal
    "ImportedPassage": "engram.core.write.proposal",
    "Proposal": "engram.core.write.proposal",
    "ProposalFormatError": "engram.core.write.proposal",
    "ProposedCandidate": "engram.core.write.proposal",
    "Screening": "engram.core.write.proposal",
}

if TYPE_CHECKING:  # the same names, for type checkers (`X as X` marks a re-export)
    from engram.core.memory import (
        TYPE_ALIASES as TYPE_ALIASES,
    )
    from engram.core.memory import (
        TYPES as TYPES,
    )
    from engram.core.memory import (
        Memory as Memory,
    )
    from engram.core.memory import (
        MemoryParseError as MemoryParseError,
    )
    from engram.core.memory import (
        front_matter_dict as front_matter_dict,
    )
    from engram.core.memory import (
        normalise_type as normalise_type,
    )
    from engram.core.read.signals import (
        checked_signals as checked_signals,
    )
    from engram.core.read.signals import (
        work_signals as work_signals,
    )
    from engram.core.safety.scan import (
        check_id as check_id,
    )
    from engram.core.safety.scan import (
        clean_names as clean_names,
    )
    from engram.core.safety.scan import (
        find_injection as find_injection,
    )
    from engram.core.safety.scan import (
        public_text as public_text,
    )
    from engram.core.safety.scan import (
        redact as redact,
    )
    from engram.core.safety.scan import (
        screen_fields as screen_fields,
    )
    from engram.core.store.bounded import (
        MAX_JSON_DEPTH as MAX_JSON_DEPTH,
    )
    from engram.core.store.bounded import (
        BadFileError as BadFileError,
    )
    from engram.core.store.bounded import (
        parse_json as parse_json,
    )
    from engram.core.store.bounded import (
        read_plain as read_plain,
    )
    from engram.core.store.bounded import (
        read_plain_text as read_plain_text,
    )
    from engram.core.store.config import (
        load_config as load_config,
    )
    from engram.core.store.files import (
        append_text as append_text,
    )
    from engram.core.store.files import (
        atomic_write as atomic_write,
    )
    from engram.core.store.files import (
        file_stat as file_stat,
    )
    from engram.core.store.files import (
        read_bytes as read_bytes,
    )
    from engram.core.store.files import (
        read_json as read_json,
    )
    from engram.core.store.files import (
        root_lock as root_lock,
    )
    from engram.core.store.index import (
        forget_open_indexes as forget_open_indexes,
    )
    from engram.core.store.layout import (
        CACHE_DIR as CACHE_DIR,
    )
    from engram.core.store.layout import (
        WORKSPACE_SUBDIR as WORKSPACE_SUBDIR,
    )
    from engram.core.store.layout import (
        Root as Root,
    )
    from engram.core.store.layout import (
        Roots as Roots,
    )
    from engram.core.store.layout import (
        user_config_dir as user_config_dir,
    )
    from engram.core.store.memoryfiles import (
        find_memory_file as find_memory_file,
    )
    from engram.core.store.memoryfiles import (
        load_memories as load_memories,
    )
    from engram.core.store.memoryfiles import (
        read_memory_file as read_memory_file,
    )
    from engram.core.store.pending import (
        iso_time as iso_time,
    )
    from engram.core.store.pending import (
        now as now,
    )
    from engram.core.store.pending import (
        read_pending as read_pending,
    )
    from engram.core.store.roots import (
        find_project_dir as find_project_dir,
    )
    from engram.core.store.roots import (
        require_roots as require_roots,
    )
    from engram.core.store.roots import (
        resolve_roots as resolve_roots,
    )
    from engram.core.store.userkey import (
        user_signing_key as user_signing_key,
    )
    from engram.core.text import (
        check_cli_args as check_cli_args,
    )
    from engram.core.text import (
        check_strings as check_strings,
    )
    from engram.core.text import (
        decode_input as decode_input,
    )
    from engram.core.text import (
        printable as printable,
    )
    from engram.core.write.approvals import (
        DECLINED_DEFAULT as DECLINED_DEFAULT,
    )
    from engram.core.write.approvals import (
        WaitingProposal as WaitingProposal,
    )
    from engram.core.write.approvals import (
        decline_waiting as decline_waiting,
    )
    from engram.core.write.approvals import (
        durable_memories as durable_memories,
    )
    from engram.core.write.approvals import (
        for_person as for_person,
    )
    from engram.core.write.approvals import (
        guess_type as guess_type,
    )
    from engram.core.write.approvals import (
        prepare_candidates as prepare_candidates,
    )
    from engram.core.write.approvals import (
        preview_text as preview_text,
    )
    from engram.core.write.approvals import (
        proposal_result as proposal_result,
    )
    from engram.core.write.approvals import (
        redaction_notes as redaction_notes,
    )
    from engram.core.write.approvals import (
        resolve_scopes as resolve_scopes,
    )
    from engram.core.write.approvals import (
        revoke_proposal as revoke_proposal,
    )
    from engram.core.write.approvals import (
        scan_candidates as scan_candidates,
    )
    from engram.core.write.approvals import (
        store_proposal as store_proposal,
    )
    from engram.core.write.approvals import (
        waiting_keys as waiting_keys,
    )
    from engram.core.write.approvals import (
        waiting_proposals as waiting_proposals,
    )
    from engram.core.write.candidates import (
        content_of as content_of,
    )
    from engram.core.write.candidates import (
        make_candidate as make_candidate,
    )
    from engram.core.write.candidates import (
        parse_candidates as parse_candidates,
    )
    from engram.core.write.candidates import (
        slugify as slugify,
    )
    from engram.core.write.commit import (
        commit_choosing as commit_choosing,
    )
    from engram.core.write.proposal import (
        ImportedPassage as ImportedPassage,
    )
    from engram.core.write.proposal import (
        Proposal as Proposal,
    )
    from engram.core.write.proposal import (
        ProposalFormatError as ProposalFormatError,
    )
    from engram.core.write.proposal import (
        ProposedCandidate as ProposedCandidate,
    )
    from engram.core.write.proposal import (
        Screening as Screening,
    )


def __getattr__(name: str) -> Any:
    module = PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
