"""Proposals and approval tokens (R-APP-1…5, R-APP-9).

A proposal freezes the scanned candidates, their ids and verdicts, and the target
scopes. It is stored in `pending-approvals.json` (git-ignored, in the primary root)
under the SHA-256 of its token, never the token itself, with an HMAC keyed by the
token over the canonical proposal: without the token nobody can edit a pending
candidate so that it still verifies. Tokens look like
``eng1_<workspace fingerprint>_<expiry, hex seconds>_<32 random bytes>`` so that a
token from another workspace, or an expired one, is refused with a precise message
even after its entry was pruned. A token commits once; a declined one keeps its
reason until it would have expired.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass, replace
from typing import Any

from engram.core.errors import ApprovalError, SafetyError, UsageError
from engram.core.memory import Memory, MemoryParseError, normalise_type
from engram.core.results import Result
from engram.core.safety.scan import find_injection, redact, scan_text, substance_problem
from engram.core.safety.screen import memory_findings
from engram.core.store.config import SLUG_RE, load_config, screen_roles
from engram.core.store.files import file_hash, root_lock
from engram.core.store.layout import TYPE_DIRS, Root, Roots
from engram.core.store.memoryfiles import find_memory_file, load_memories, read_memory_file
from engram.core.store.pending import (
    MAX_WAITING,
    ended_tokens,
    expiry,
    iso_time,
    now,
    proposal_mac,
    prune,
    read_pending,
    record_ended,
    signed_by_you,
    token_hash,
    user_mac,
    write_pending,
)
from engram.core.store.roots import global_root_path
from engram.core.write.candidates import (
    MAX_TEXT_CHARS,
    Candidate,
    content_of,
    make_candidate,
    parse_candidates,
    parse_triggers,
    slugify,
    title_of,
    triggers_diff,
    unique_id,
)
from engram.core.write.proposal import (
    DuplicateOf,
    Proposal,
    ProposalFormatError,
    ProposedCandidate,
    Related,
    ReplacedFile,
    Screening,
)
from engram.core.write.verdicts import (
    content_text,
    find_cycle,
    judge,
    other_scope_related,
    sort_existing,
)

TOKEN_TTL_S = 30 * 60
TOKEN_PREFIX = "eng1"
_TOKEN_RE = re.compile(r"^eng1_([0-9a-f]{12})_([0-9a-f]{1,12})_([A-Za-z0-9_-]{43})$")
SCOPES = ("workspace", "global", "both")
SOURCES = {"save": "manual", "save_session": "session", "note": "note", "promote": "note",
           "import": "import"}  # fmt: skip
DECLINED_DEFAULT = "approval was declined in the approval dialog"
DIFF_LINES = 14  # lines of unified diff shown for a replaced memory


# ---------------------------------------------------------------- locks and scopes


def resolve_scopes(roots: Roots, scope: str | None) -> list[str]:
    """Target scopes: the per-call `scope`, else config `save_target`; each root must exist."""
    if scope is None:
        target = str(load_config(roots).get("save_target"))
    else:
        target = str(scope).strip().lower()
    if target not in SCOPES:
        raise UsageError(f"scope {scope!r} is not allowed; use workspace, global or both")
    scopes = ["workspace", "global"] if target == "both" else [target]
    for s in scopes:
        if roots.by_scope(s) is None:
            if s == "global":
                _missing_global_root()
                raise UsageError(
                    "scope global needs a global memory root, and none is configured: set "
                    "ENGRAM_GLOBAL_DIR or run `engram config set --user global_path PATH` "
                    "(or save with --scope workspace)"
                )
            raise UsageError(
                "scope workspace needs a workspace: run `engram init` in the project "
                "(or save with --scope global)"
            )
    return scopes


def _missing_global_root() -> None:
    """A global root that is configured but absent gets its own message (not 'none')."""
    import os

    path = global_root_path()
    if path is None:
        return
    origin = "ENGRAM_GLOBAL_DIR" if os.environ.get("ENGRAM_GLOBAL_DIR") else "global_path"
    raise UsageError(
        f"scope global: the global memory root {path} (from {origin}) does not exist; "
        f"create it with `engram init --global-path {path}` (or save with --scope workspace)"
    )


def parse_roles(role: str | list[str] | None) -> list[str]:
    if role is None:
        return []
    items = role.split(",") if isinstance(role, str) else list(role)
    out = [str(r).strip().lower() for r in items if str(r).strip()]
    bad = [r for r in out if not SLUG_RE.match(r)]
    if bad:
        raise UsageError(f"role {bad[0]!r} is not a role slug (lowercase letters, digits, '-')")
    return screen_roles(sorted(dict.fromkeys(out)))


# ---------------------------------------------------------------- memory state


def durable_memories(root: Root) -> list[Memory]:
    mems, _errors = load_memories(root, tuple(TYPE_DIRS.values()))
    return mems


def taken_ids(root: Root) -> set[str]:
    """Every id that names a file in the root (durable, working or archived)."""
    out: set[str] = set()
    for sub in (*TYPE_DIRS.values(), "working", "archive"):
        d = root.path / sub
        if d.is_dir():
            out.update(p.stem for p in d.glob("*.md"))
    return out


# ---------------------------------------------------------------- building a proposal


class Screened(list[tuple[int, list[str]]]):
    """(number, kinds) of every redacted candidate, and `refused`: the candidates left out.

    A refused candidate is (its line or number, why); the rest of the session goes on.
    """

    def __init__(self) -> None:
        super().__init__()
        self.refused: list[tuple[str, str]] = []


def scan_candidates(cands: list[Candidate]) -> Screened:
    """Refuse injections, redact secrets in every field; refused candidates leave `cands`.

    A candidate is refused when a field reads like an instruction to the agent, or when
    nothing but a secret or markup is left of its TEXT. The others are renumbered from 1
    and go forward; if none is left, the refusals are raised together (nothing is written).
    """

    out = Screened()
    kept: list[Candidate] = []
    codes: set[str] = set()
    for c in cands:
        where = f"line {c.line}: candidate {c.number}" if c.line else f"candidate {c.number}"
        kinds: list[str] = []
        try:
            red = scan_text(c.text, f"{where} TEXT")
            text, kinds = red.text, kinds + red.kinds
            context = c.context
            if context:
                red = scan_text(context, f"{where} CONTEXT")
                context, kinds = red.text, kinds + red.kinds
            triggers: list[str] = []
            for phrase in c.triggers:  # routed on and shown to the agent like the text
                if scan_text(phrase, f"{where} TRIGGERS").changed:
                    kinds = [*kinds, "trigger"]  # a phrase holding a secret is left out
                else:
                    triggers.append(phrase)
            level = c.level
            if level:
                scan_text(c.level_raw or level, f"{where} LEVEL")
                if redact(c.level_raw or level).changed:
                    level, kinds = "", [*kinds, "level"]
            problem = substance_problem(text)
            if problem:
                raise SafetyError(
                    f"{where} TEXT refused: {problem}; nothing is written for it "
                    "(state the fact, rule or workflow in words)",
                    code="safety.empty",
                )
        except SafetyError as err:
            out.refused.append((where, err.message))
            codes.add(err.code)
            continue
        c.text, c.context, c.level, c.triggers = text, context, level, triggers
        kept.append(c)
        if kinds:
            out.append((c.number, kinds))
    if not kept and out.refused:
        raise SafetyError(
            "; ".join(msg for _, msg in out.refused),
            code="safety.injection" if "safety.injection" in codes else sorted(codes)[0],
        )
    renumber = {c.number: i for i, c in enumerate(kept, start=1)}
    for c in kept:
        c.number = renumber[c.number]
    out[:] = [(renumber[n], kinds) for n, kinds in out]
    cands[:] = kept
    return out


def judge_all(
    roots: Roots,
    cands: list[Candidate],
    scopes: list[str],
    *,
    preferred_ids: dict[int, str] | None = None,
    free_ids: set[str] | None = None,
    strict: bool = True,
) -> list[ProposedCandidate]:
    """Ids, titles, verdicts and related hints for every candidate (deterministic).

    `strict` turns an UPDATE of a missing id, a type mismatch or a DEPENDS_ON cycle
    into errors (proposal time); the commit passes False and defers instead.
    """

    target_roots = [r for r in (roots.by_scope(s) for s in scopes) if r is not None]
    existing = sort_existing([m for r in target_roots for m in durable_memories(r)])
    others = sort_existing(
        [m for r in roots.all if r not in target_roots for m in durable_memories(r)]
    )
    visible_ids = {m.id for r in roots.all for m in durable_memories(r)}
    taken: set[str] = set()
    for r in target_roots:
        taken |= taken_ids(r)
    taken -= free_ids or set()
    by_id = {m.id: m for m in reversed(existing)}  # workspace wins
    edges: dict[str, list[str]] = {m.id: list(m.depends_on) for m in existing}
    profiles: dict[tuple[str, str], Any] = {}
    earlier: list[tuple[str, Candidate]] = []
    out: list[ProposedCandidate] = []
    missing_of: dict[int, list[str]] = {}
    problems: list[str] = []
    for c in cands:
        j = judge(c, existing, earlier, profiles=profiles)
        if others:
            j.related.extend(other_scope_related(c, others, profiles=profiles))
        v = j.verdict
        if c.update and c.update not in by_id:
            problems.append(
                f"candidate {c.number}: UPDATE names {c.update!r}, which is not a memory in "
                f"the {'/'.join(scopes)} scope (check the id with `engram search`)"
            )
        elif c.update and by_id[c.update].type != c.type:
            problems.append(
                f"candidate {c.number}: UPDATE {c.update} is a {by_id[c.update].type}, the "
                f"candidate is a {c.type}; types must match"
            )
        if v.kind in ("UPDATE",):
            mid = v.target
        else:
            base = (preferred_ids or {}).get(c.number) or slugify(c.text)
            mid = unique_id(base, taken)
        taken.add(mid)
        if mid in c.depends_on:
            problems.append(f"candidate {c.number}: DEPENDS_ON names the candidate itself ({mid})")
        edges[mid] = list(c.depends_on)
        missing = [d for d in c.depends_on if d not in visible_ids]
        deferred = ""
        if v.kind == "NOOP":
            deferred = f"duplicate of {v.target}"
        elif j.possible_duplicate:
            dup = j.possible_duplicate
            deferred = (
                f"possible duplicate of {dup}; review it, then propose again with UPDATE: "
                f"{dup} to change it, or reword the candidate to say what differs"
            )
        explicit = bool(c.update) and v.kind == "UPDATE" and v.target == c.update
        duplicate = None
        if deferred.startswith("possible duplicate of ") and j.possible_duplicate in by_id:
            dup = j.possible_duplicate  # what "update <id>" would replace, frozen for the commit
            duplicate = DuplicateOf(
                id=dup,
                type=by_id[dup].type,
                title=by_id[dup].title,
                replaces=replaced_files(target_roots, dup, c.text),
            )
        replaces = (
            replaced_files(
                target_roots, v.target, c.text, triggers=c.triggers if c.triggers_only else None
            )
            if v.kind in ("UPDATE", "SUPERSEDE") and v.target
            else ()
        )
        out.append(
            ProposedCandidate(
                number=c.number,
                type=c.type,
                id=mid,
                title=title_of(c.text),
                text=c.text,
                verdict=v,
                context=c.context,
                depends_on=tuple(c.depends_on),
                level=c.level,
                update=c.update,
                triggers=tuple(c.triggers),
                triggers_only=c.triggers_only,
                related=tuple(Related.from_json(r) for r in j.related),
                deferred_reason=deferred,
                certain=bool(getattr(j, "certain", False)) or explicit,
                replaces=replaces,
                duplicate_of=duplicate,
            )
        )
        missing_of[c.number] = missing
        earlier.append((mid, c))
    all_ids = {e.id for e in out}
    for i, e in enumerate(out):
        missing = [d for d in missing_of[e.number] if d not in all_ids]
        if missing and not e.deferred_reason:
            out[i] = replace(e, deferred_reason="depends on missing id(s): " + ", ".join(missing))
    for e in out:
        cycle = find_cycle(edges, e.id)
        if cycle:
            problems.append(
                f"candidate {e.number}: DEPENDS_ON cycle {' -> '.join(cycle)}; "
                "a prerequisite cannot depend on its dependent"
            )
    if problems and strict:
        raise UsageError("; ".join(dict.fromkeys(problems)))
    return out


def replaced_files(
    roots: list[Root], mid: str, new_text: str, *, triggers: list[str] | None = None
) -> tuple[ReplacedFile, ...]:
    """The files an UPDATE/SUPERSEDE of `mid` replaces: where, which revision, its hash, a diff.

    The hash is frozen in the proposal (and covered by its MAC), so the commit can refuse
    to replace a file that a person or a `git pull` changed after the human approved.
    `triggers`: a triggers-only update, whose diff is the phrases it adds.
    """

    out: list[ReplacedFile] = []
    for root in roots:
        path = find_memory_file(root, mid, tuple(TYPE_DIRS.values()))
        if path is None:
            continue
        rel = f"{path.parent.name}/{path.name}"
        try:
            mem, raw = read_memory_file(root, rel)
        except (MemoryParseError, OSError):
            continue
        diff = (
            triggers_diff(mem.triggers, triggers)
            if triggers is not None
            else _shown_diff(mem, new_text, f"{root.scope}:{rel}")
        )
        out.append(ReplacedFile(root.scope, rel, mem.revision, file_hash(raw), tuple(diff)))
    return tuple(out)


def _shown_diff(mem: Memory, new_text: str, label: str) -> list[str]:
    """The diff as the agent may see it: the replaced file is hand-written, so the read
    path's checks apply (a withheld memory's text is not shown, secrets are redacted)."""

    found = memory_findings(mem)
    if found.unsafe:
        return [
            f"(the current text of {label} is withheld: its {found.unsafe}; "
            "read the file itself before approving)"
        ]
    lines = memory_diff(mem.content, new_text, label)
    return [redact(line).text for line in lines] if found.secrets else lines


def memory_diff(old_content: str, new_text: str, label: str) -> list[str]:
    """A short unified diff of a memory's content bullets and the text replacing them."""
    import difflib

    lines = list(
        difflib.unified_diff(
            old_content.strip().splitlines(),
            content_of(new_text).splitlines(),
            fromfile=f"{label} (now)",
            tofile="approved text",
            lineterm="",
            n=1,
        )
    )
    if len(lines) > DIFF_LINES:
        lines = [*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more diff lines)"]
    return lines


def build_proposal(
    roots: Roots,
    cands: list[Candidate],
    *,
    kind: str,
    scopes: list[str],
    roles: list[str],
    preferred_ids: dict[int, str] | None = None,
    free_ids: set[str] | None = None,
    extra: dict[int, dict[str, Any]] | None = None,
) -> Proposal:
    """Judge the candidates into a proposal; `extra` sets fields of candidate n
    (a note's objective, the note a promotion removes, an import's passage)."""
    entries = judge_all(roots, cands, scopes, preferred_ids=preferred_ids, free_ids=free_ids)
    return Proposal(
        proposal_id="p-" + secrets.token_hex(4),
        kind=kind,
        source=SOURCES.get(kind, "manual"),
        workspace=fingerprint(roots.primary),
        scopes=tuple(scopes),
        roles=tuple(roles),
        candidates=tuple(replace(e, **(extra or {}).get(e.number, {})) for e in entries),
    )


# ---------------------------------------------------------------- tokens and the pending file


def fingerprint(root: Root) -> str:
    return hashlib.sha256(str(root.path.resolve()).encode("utf-8")).hexdigest()[:12]


def new_token(root: Root, expires_at: int) -> str:
    return f"{TOKEN_PREFIX}_{fingerprint(root)}_{expires_at:x}_{secrets.token_urlsafe(32)}"


def store_proposal(roots: Roots, proposal: Proposal) -> tuple[str, int]:
    """Save a proposal under a new token's hash; returns (token, expires_at)."""
    root = roots.primary
    expires_at = int(now()) + TOKEN_TTL_S
    token = new_token(root, expires_at)
    payload = replace(proposal, expires_at=expires_at).to_json()

    with root_lock(root):
        entries = read_pending(root)
        order = [v.get("seq") for v in entries.values() if isinstance(v, dict)]
        seq = 1 + max((n for n in order if isinstance(n, int)), default=0)
        entry = {
            "status": "pending",
            "expires_at": expires_at,
            "created_at": iso_time(now()),
            "seq": seq,  # proposals made in the same second keep the order they were made in
            "proposal": payload,
            "mac": proposal_mac(token, payload),
        }
        signature = user_mac(token_hash(token), entry)
        if signature is not None:
            entry["user_mac"] = signature
        entries[token_hash(token)] = entry
        prune(entries, now())  # after adding: the newest proposal is never the one dropped
        write_pending(root, entries)
    return token, expires_at


def check_token_shape(roots: Roots, token: str) -> int:
    """Refuse malformed, foreign and expired tokens before touching the pending file."""
    if not isinstance(token, str) or not token.strip():
        raise UsageError("approval token is empty; pass the token the proposal printed")
    m = _TOKEN_RE.match(token.strip())
    if not m:
        raise ApprovalError(
            "this is not a valid Engram approval token (expected eng1_<workspace>_<expiry>_<random>, "
            "exactly as printed); copy the whole "
            "token from the proposal",
            code="approval.malformed",
        )
    if m.group(1) != fingerprint(roots.primary):
        raise ApprovalError(
            "this approval token belongs to another workspace; tokens are bound to the "
            f"workspace that proposed them ({roots.primary.path} did not). Propose again here",
            code="approval.foreign",
        )
    expires_at = int(m.group(2), 16)
    if expires_at <= now():
        raise ApprovalError(
            f"approval token expired at {iso_time(expires_at)} (tokens last 30 minutes); "
            "nothing was written, propose again",
            code="approval.expired",
        )
    return expires_at


def take_proposal(
    roots: Roots, token: str, *, consume_check: Any = None, spend: bool = True
) -> Proposal:
    """Validate the token and return its frozen proposal; marks it used. Call under lock.

    `consume_check(payload)` runs before the token is marked used, so that bad
    arguments (`--approve 7` of 3) fail without spending the token. With
    `spend=False` the caller spends it later with `spend_token`, once its write is
    durable.
    """
    token = token.strip()
    check_token_shape(roots, token)
    root = roots.primary
    entries = read_pending(root)
    pruned = prune(entries, now())
    key = token_hash(token)
    entry = entries.get(key)
    if entry is None:
        if pruned:
            write_pending(root, entries)
        raise ApprovalError(
            "approval token is unknown here: it was never issued for this workspace, "
            f"more than {MAX_WAITING} newer proposals were made after it, or "
            "pending-approvals.json was cleared; propose again",
            code="approval.unknown",
        )
    status = entry.get("status")
    ended = ended_tokens().get(key)  # a pending file put back from a copy does not revive it
    if ended is not None and status == "pending":
        status = ended.get("status")
        entry = {**entry, "reason": ended.get("reason") or entry.get("reason")}
    if status == "used":
        raise ApprovalError(
            "approval token was already used; each token commits once (propose again for "
            "more changes)",
            code="approval.reused",
        )
    if status == "declined":
        raise ApprovalError(str(entry.get("reason") or DECLINED_DEFAULT), code="approval.declined")
    payload = entry.get("proposal")
    mac = entry.get("mac")
    if (
        status != "pending"
        or not isinstance(payload, dict)
        or not isinstance(mac, str)
        or not hmac.compare_digest(mac, proposal_mac(token, payload))
        or payload.get("expires_at") != entry.get("expires_at")
    ):
        raise ApprovalError(
            "approval token failed its integrity check: the pending proposal was edited "
            "after it was made. Nothing was written; propose again",
            code="approval.tampered",
        )
    expected = user_mac(key, entry)
    given = entry.get("user_mac")
    if expected is not None and not (
        isinstance(given, str) and hmac.compare_digest(given, expected)
    ):
        raise ApprovalError(
            "this proposal carries no valid signature of yours: it was not made by Engram "
            "for this user (a cloned or hand-edited pending-approvals.json can hold such an "
            "entry). Nothing was written; propose again",
            code="approval.unsigned",
        )
    try:
        proposal = Proposal.from_json(payload)
    except ProposalFormatError as exc:
        raise ApprovalError(
            f"this pending proposal cannot be read ({exc}); it was not made by this version "
            "of Engram or was edited. Nothing was written; propose again",
            code="approval.tampered",
        ) from exc
    if consume_check is not None:
        consume_check(proposal)
    if spend:
        entries[key] = {"status": "used", "expires_at": entry["expires_at"]}
        write_pending(root, entries)
    elif pruned:
        write_pending(root, entries)
    return proposal


def revoke_proposal(roots: Roots, token: str, reason: str = DECLINED_DEFAULT) -> Result:
    """Decline a pending proposal: its token then fails with `reason` until it expires."""

    token = (token or "").strip()
    check_token_shape(roots, token)
    root = roots.primary
    with root_lock(root):
        entries = read_pending(root)
        prune(entries, now())
        key = token_hash(token)
        entry = entries.get(key)
        if entry is None:
            write_pending(root, entries)
            raise ApprovalError(
                "approval token is unknown here (expired, cleared or never issued)",
                code="approval.unknown",
            )
        if entry.get("status") == "used":
            raise ApprovalError("approval token was already used; nothing to decline",
                                code="approval.reused")  # fmt: skip
        return _revoke(root, entries, key, reason)


def _revoke(root: Root, entries: dict[str, Any], key: str, reason: str) -> Result:
    """Mark the pending entry `key` declined with `reason` and save. Call under lock."""
    entry = entries[key]
    pid = str((entry.get("proposal") or {}).get("proposal_id", ""))
    entries[key] = {
        "status": "declined",
        "reason": (reason or DECLINED_DEFAULT).strip()[:300],
        "expires_at": entry.get("expires_at", int(now()) + TOKEN_TTL_S),
    }
    until = int(expiry(entries[key])) or int(now()) + TOKEN_TTL_S
    record_ended(key, "declined", until, entries[key]["reason"])
    write_pending(root, entries)
    return Result(
        text=f"Proposal {pid} declined; nothing was saved.",
        data={"proposal_id": pid, "declined": True, "reason": entries[key]["reason"]},
    )


def waiting_keys(entries: dict[str, Any], at: float) -> list[str]:
    """Keys of the proposals still waiting for approval, oldest first (as `engram pending`
    numbers them from 1)."""
    live = [
        k
        for k, v in entries.items()
        if isinstance(v, dict) and v.get("status") == "pending" and expiry(v) > at
    ]

    def order(k: str) -> tuple[str, int, float]:
        seq = entries[k].get("seq")
        return (str(entries[k].get("created_at", "")), seq if isinstance(seq, int) else 0,
                expiry(entries[k]))  # fmt: skip

    return sorted(live, key=order)


@dataclass(frozen=True)
class WaitingProposal:
    """A proposal still waiting for a person, as `engram pending` and the review page list it."""

    number: int  # from 1, oldest first: `engram pending --decline N`
    key: str  # the token's hash (the pending file never holds the token)
    created_at: str
    expires_at: float
    proposal: Proposal | None  # None: the entry cannot be read (`problem` says why)
    problem: str = ""


NOT_YOURS = (
    "this entry carries no valid signature of yours (shipped with the repository, edited by "
    "hand or proposed by another user): it can never be approved and its text is not shown"
)


def waiting_proposals(roots: Roots) -> list[WaitingProposal]:
    """The waiting proposals, each read with the one proposal schema."""
    at = now()
    entries = read_pending(roots.primary)
    out = []
    ended = ended_tokens()
    live = [k for k in waiting_keys(entries, at) if k not in ended]
    for n, key in enumerate(live, start=1):
        entry = entries[key]
        try:
            proposal, problem = Proposal.from_json(entry.get("proposal")), ""
        except ProposalFormatError as exc:
            proposal, problem = None, f"this entry cannot be read ({exc})"
        if proposal is not None and not signed_by_you(key, entry):
            # what it says is not shown: anyone with a shell in the project can write it
            proposal, problem = None, NOT_YOURS
        created = entry.get("created_at")
        out.append(
            WaitingProposal(
                n, key, created if isinstance(created, str) else "", expiry(entry), proposal,
                problem,
            )
        )  # fmt: skip
    return out


def decline_waiting(roots: Roots, which: str, reason: str) -> Result:
    """Decline a waiting proposal by its number in `engram pending` or its proposal id.

    A person may not have the token any more (the prompt was closed, --propose output
    scrolled away); the pending file knows the proposal by its token's hash, and the
    decline is the one `revoke_proposal` makes: a later commit with that token fails
    with `reason`.
    """

    if reason and find_injection(reason) is not None:  # it is shown to the agent later
        raise UsageError(
            "the decline reason reads like an instruction to the agent; say why in plain words"
        )
    reason = redact(reason).text if reason else reason

    root = roots.primary
    which = (which or "").strip()
    with root_lock(root):
        entries = read_pending(root)
        prune(entries, now())
        ended = ended_tokens()
        keys = [k for k in waiting_keys(entries, now()) if k not in ended]
        if re.fullmatch(r"\d+", which) and 1 <= int(which) <= len(keys):
            key = keys[int(which) - 1]
        else:
            key = next(
                (k for k in keys if (entries[k].get("proposal") or {}).get("proposal_id") == which),
                "",
            )
        if not key:
            span = "1" if len(keys) == 1 else f"1 to {len(keys)}"
            have = f"{span}, or the proposal's id (p-…)" if keys else "none"
            raise UsageError(
                f"no waiting proposal {which!r} (waiting: {have}); see `engram pending`"
            )
        return _revoke(root, entries, key, reason)


# ---------------------------------------------------------------- preview


def _some(count: int) -> str:
    return "1,3" if count >= 3 else ("1" if count == 1 else "1,2")


def shell_approval(token: str, count: int) -> str:
    """The shell form of an approval: only for a person at a terminal, never in an agent's result.

    An agent with a shell that read it could commit without the host ever asking the human.
    """
    return f"  Shell:    engram commit {token} --approve all   (or --approve {_some(count)})"


def for_person(result: Result) -> Result:
    """A proposal as printed to a person (`--propose`): the preview with the shell form of
    the approval in place of the prompt's answers and the agent's instruction (no prompt
    is waiting, and no agent is asked)."""
    token = result.data.get("approval_token")
    if token:
        lines = result.text.split("\n")
        at = next((i for i, ln in enumerate(lines) if ln.startswith("  Agent:")), len(lines))
        lines.insert(at, shell_approval(token, len(result.data.get("candidates") or [])))
        lines = [ln for ln in lines if not ln.startswith(("  Terminal:", "  Agent:"))]
        result.text = "\n".join(lines)
    return result


def preview_text(proposal: Proposal, token: str | None, expires_at: int | None) -> str:
    """The proposal preview an agent (and any caller) gets: how to approve, never by shell."""
    cands = proposal.candidates
    head = (
        f"Engram proposal {proposal.proposal_id}: {len(cands)} candidate"
        f"{'s' if len(cands) != 1 else ''} for {' + '.join(proposal.scopes)} memory"
    )
    if expires_at:
        head += f" (expires {iso_time(expires_at)})"
    lines = [head, ""]
    for c in cands:
        where = "working note" if c.note else TYPE_DIRS[c.type] + "/"
        lines.append(f"{c.number}. [{c.type}] {c.id} ({where})")
        if c.triggers_only:
            lines.append("   (adds triggers only; the memory's text stays as it is)")
        else:  # an import keeps its passage as written
            lines.extend(f"   {ln}".rstrip() for ln in c.shown_text.split("\n"))
        if c.triggers:
            lines.append("   Triggers: " + "; ".join(c.triggers))
        if c.imported and c.imported.tags:  # front matter the person approves too
            lines.append("   Tags: " + ", ".join(c.imported.tags))
        if c.context:
            lines.append(f"   Context: {c.context}")
        if c.depends_on:
            lines.append(f"   Depends on: {', '.join(c.depends_on)}")
        if c.note:
            lines.append(f"   Objective: {c.note.objective}")
        lines.append(f"   Verdict: {c.verdict_line}")
        for t in c.replaces or ():
            kept = "archived" if c.verdict.kind == "SUPERSEDE" else "kept in archive/"
            lines.append(f"   Replaces: {t.scope}:{t.file} (revision {t.revision}, {kept})")
            lines.extend(f"     {d}" for d in t.diff)
        for r in c.related:
            lines.append(f"   Related: {r.id} ({r.type}, {r.hint}, score {r.score})")
        if c.deferred_reason:
            lines.append(f"   Will be deferred: {c.deferred_reason}")
    if token:
        some = _some(len(cands))
        lines += [
            "",
            "Nothing is saved until a human approves these candidates.",
            f"  Terminal: A (approve all) · A {some} (approve some) · B <note> (revise) · C (cancel)",
            "  Agent:    only after the human approved, call engram_commit with this "
            f'approval_token and approve "all" or [{some}]',
            f"Approval token: {token}",
        ]
    return "\n".join(lines)


def proposal_result(proposal: Proposal, token: str, expires_at: int) -> Result:
    data = {
        "approval_token": token,
        "proposal_id": proposal.proposal_id,
        "expires_at": iso_time(expires_at),
        "scopes": list(proposal.scopes),
        "candidates": proposal.public(),
    }
    return Result(text=preview_text(proposal, token, expires_at), data=data)


def redaction_notes(result: Result, redacted: list[tuple[int, list[str]]]) -> None:
    """Warnings for what safety did: redactions per candidate, and refused candidates."""
    for number, kinds in redacted:
        what = ", ".join(sorted(set(kinds)))
        result.warn(
            "safety.redacted",
            f"candidate {number}: redacted {len(kinds)} item(s) ({what})"
            + ("; its LEVEL held a secret and was left out" if "level" in kinds else "")
            + ("; a trigger that held one was left out" if "trigger" in kinds else ""),
        )
    for where, message in getattr(redacted, "refused", []):
        result.warn("safety.refused", f"{message} ({where} was left out; the others go on)")


def screening_record(redacted: list[tuple[int, list[str]]]) -> Screening:
    """What the safety scan did, kept with the proposal for a reviewer (`engram ui`).

    `refused`: each candidate left out, with its input line (when it came from one) and why;
    `redacted`: the kinds of secret or personal data replaced in each kept candidate.
    """
    refused = []
    for where, message in getattr(redacted, "refused", []):
        m = re.match(r"line (\d+):", where)
        refused.append({"where": where, "line": int(m.group(1)) if m else None, "reason": message})
    return Screening(
        refused=tuple(refused),
        redacted=tuple((n, tuple(sorted(set(k)))) for n, k in redacted),
    )


# ---------------------------------------------------------------- public entry points


def prepare_candidates(
    roots: Roots,
    cands: list[Candidate],
    *,
    kind: str,
    scope: str | None,
    role: str | list[str] | None = None,
    scopes: list[str] | None = None,
    preferred_ids: dict[int, str] | None = None,
    free_ids: set[str] | None = None,
    extra: dict[int, dict[str, Any]] | None = None,
) -> tuple[Proposal, list[tuple[int, list[str]]]]:
    """Scan and judge parsed candidates into an unsaved proposal."""
    if kind not in SOURCES:
        raise UsageError(f"proposal kind {kind!r} is not one of {', '.join(SOURCES)}")
    scopes = scopes or resolve_scopes(roots, scope)
    roles = parse_roles(role)
    with_text_of_target(roots, cands, scopes)
    redacted = scan_candidates(cands)
    proposal = build_proposal(
        roots, cands, kind=kind, scopes=scopes, roles=roles,
        preferred_ids=preferred_ids, free_ids=free_ids, extra=extra,
    )  # fmt: skip
    return proposal, redacted


def with_text_of_target(roots: Roots, cands: list[Candidate], scopes: list[str]) -> None:
    """A triggers-only UPDATE is judged and shown with the text of the memory it names
    (its content is not rewritten; only its triggers change)."""
    wanted = {c.update for c in cands if c.triggers_only}
    if not wanted:
        return
    found: dict[str, Memory] = {}
    for r in (roots.by_scope(s) for s in scopes):
        if r is not None:
            for m in durable_memories(r):
                found.setdefault(m.id, m)
    for c in cands:
        if not c.triggers_only:
            continue
        mem = found.get(c.update)
        if mem is None:
            raise UsageError(
                f"candidate {c.number}: UPDATE names {c.update!r}, which is not a memory in "
                f"the {'/'.join(scopes)} scope (check the id with `engram search`)"
            )
        c.type = mem.type
        c.text = " ".join(content_text(mem).split())[:MAX_TEXT_CHARS] or mem.title


def propose_candidates(
    roots: Roots, cands: list[Candidate], *, kind: str, scope: str | None, **kw: Any
) -> Result:
    """Scan, judge and store a proposal; the Result carries the preview and the token."""
    proposal, redacted = prepare_candidates(roots, cands, kind=kind, scope=scope, **kw)
    # what a reviewer sees before approving
    proposal = replace(proposal, screening=screening_record(redacted))
    token, expires_at = store_proposal(roots, proposal)
    result = proposal_result(proposal, token, expires_at)
    redaction_notes(result, redacted)
    return result


def create_proposal(
    roots: Roots,
    text: str,
    *,
    kind: str = "save_session",
    scope: str | None = None,
    role: str | None = None,
    query_level: int | None = None,
) -> Result:
    """Propose candidate lines: preview + approval token. Writes only the pending file."""
    cands = parse_candidates(text, query_level=query_level)
    return propose_candidates(roots, cands, kind=kind, scope=scope, role=role)


_RULE_START = re.compile(
    r"^\s*(?:always|never|do\s+not|don't|must|should|prefer|avoid|use|run|keep|make\s+sure|"
    r"ensure|only)\b",
    re.IGNORECASE,
)
_SKILL_START = re.compile(
    r"^\s*(?:to\s+\w+[^:]{0,60}:|how\s+to\b|steps?\s*:|workflow\s*:)", re.IGNORECASE
)


_FIELD_MARK = re.compile(
    r"\|\s*(?:context|depends[ _-]?on|level|update|triggers)\s*:", re.IGNORECASE
)


def guess_type(text: str) -> str:
    """`engram save "TEXT"` without a type: "To x: …" → skill, imperative → rule, else knowledge."""
    if _SKILL_START.match(text):
        return "skill"
    if _RULE_START.match(text):
        return "rule"
    return "knowledge"


def create_single_proposal(
    roots: Roots,
    mtype: str | None,
    text: str,
    *,
    scope: str | None = None,
    role: str | None = None,
    triggers: list[str] | None = None,
) -> Result:
    """`engram save [TYPE] "TEXT"`: one candidate from plain text (or one candidate line)."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("nothing to save: the text is empty")
    if triggers:
        phrases, err = parse_triggers(triggers)
        if err:
            raise UsageError(err)
        if re.search(r"\|\s*triggers\s*:", text, re.IGNORECASE):
            raise UsageError("the triggers are given twice (as triggers and as TRIGGERS:)")
        text = f"{text.rstrip()} | TRIGGERS: {'; '.join(phrases)}"
    if mtype is None and re.match(r"^\s*type\s*:", text, re.IGNORECASE):
        return create_proposal(roots, text, kind="save", scope=scope, role=role)
    if "\n" in text.strip():
        raise UsageError("save takes one memory on one line; use `engram save-session` for several")
    if mtype is not None and normalise_type(mtype) is None:
        raise UsageError(
            f"unknown type {mtype!r}; allowed: rule, skill (alias workflow), knowledge"
        )
    if mtype is not None and re.match(r"^\s*type\s*:", text, re.IGNORECASE):
        raise UsageError(f"the type is given twice ({mtype} and TYPE: in the text); give it once")
    fields = _FIELD_MARK.search(text)
    if fields:
        # `engram save rule "TEXT | UPDATE: id"`: the fields mean what they mean in a line.
        body = text.strip()
        head = body[: fields.start()] if not re.match(r"^\s*text\s*:", body, re.I) else ""
        if head:
            body = f"TEXT: {body}"
        line = f"TYPE: {mtype or guess_type(head or body)} | {body}"
        return create_proposal(roots, line, kind="save", scope=scope, role=role)
    cand = make_candidate(1, type=mtype or guess_type(text), text=text)
    return propose_candidates(roots, [cand], kind="save", scope=scope, role=role)
