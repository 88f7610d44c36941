"""The read path shared by `engram load/route/search`, the MCP tools, resources and hooks."""

from __future__ import annotations

import datetime as dt
import re
import sqlite3
from typing import Any, NamedTuple

from engram.core.errors import NotFoundError, UsageError
from engram.core.memory import ID_RE, Memory
from engram.core.read.render import (
    TOKEN_RULE,
    estimate_tokens,
    fit_pack,
    render_card,
    render_compact,
    render_full,
)
from engram.core.read.request import LoadRequest
from engram.core.read.routing import (
    BODY_CONFIDENCE,
    CARD_CONFIDENCE,
    DECLARED,
    SEARCH_BODY_CONFIDENCE,
    TRIGGERED,
    Candidate,
    Visibility,
    VisibleLookup,
    classify_task,
    confidence,
    grade,
    query_terms,
    rank,
    select_with_prerequisites,
)
from engram.core.results import Diagnostic, Result
from engram.core.safety.screen import (
    Findings,
    decode_findings,
    shown_fields,
    shown_file_name,
    title_findings,
)
from engram.core.store.config import Config, load_config
from engram.core.store.files import load_ignore_rules
from engram.core.store.index import (
    ROW_COLUMNS,
    Index,
    open_index,
    rebuild_index,
    sha256,
    split_list,
)
from engram.core.store.layout import Roots
from engram.core.text import check_text


class ReadContext(NamedTuple):
    """What one read needs: roots, settings, the fresh index, visibility, the result so far."""

    roots: Roots
    config: Config
    index: Index
    vis: Visibility
    result: Result


def open_read_context(roots: Roots, roles: list[str] | None = None) -> ReadContext:
    config = load_config(roots)
    index = open_index(roots)
    result = Result(text="")
    for level, code, message in index.diagnostics:
        result.diagnostics.append(Diagnostic(level, code, message))
    index.diagnostics.clear()
    for (scope, rel), reason in sorted(index.parse_errors.items()):
        root = roots.by_scope(scope)
        result.warn(
            "memory.parse_error",
            f"skipped {rel} ({scope}): {reason}",
            str(root.path / rel) if root else rel,
        )
    active = config.get("roles") if roles is None else _valid_roles(roles)
    vis = Visibility(
        roles=active,
        today=dt.date.today().isoformat(),
        ignore={
            r.scope: load_ignore_rules(r, roots.project_dir if r.scope == "workspace" else None)
            for r in roots.all
        },
    )
    return ReadContext(roots, config, index, vis, result)


def _valid_roles(roles: list[str]) -> list[str]:
    from engram.core.store.config import coerce

    return coerce("roles", [r.strip().lower() for r in roles if r.strip()])


def validate_id(mid: str) -> str:
    if not isinstance(mid, str) or not ID_RE.match(mid):
        raise UsageError(
            f"memory id {mid!r} is not valid: ids are slugs of a-z, 0-9 and '-' (no '/', '..' or spaces)"
        )
    return mid


def _same_objective(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def _startup_candidates(ctx: ReadContext) -> list[Candidate]:
    usage = ctx.index.usage()
    rows = ctx.index.conn.execute(
        f"SELECT {ROW_COLUMNS} FROM memories WHERE type IN ('rule', 'skill') OR tier = 'working'"
        " ORDER BY scope DESC, id"
    ).fetchall()
    seen: set[str] = set()
    out: list[Candidate] = []
    for row in rows:
        if row["id"] in seen or not ctx.vis.visible(row)[0]:
            continue
        seen.add(row["id"])
        uses = usage.get((row["scope"], row["id"]), 0)
        type_bonus = {"rule": 2.0, "skill": 1.0}.get(row["type"], 0.0)
        out.append(
            Candidate(
                row,
                round(type_bonus + uses * 0.1, 4),
                {"type": type_bonus, "usage": uses * 0.1},
                [],
            )
        )
    out.sort(
        key=lambda c: (
            -c.score,
            -(int((c.row["updated"] or "0").replace("-", "")[:8] or 0)),
            c.row["id"],
        )
    )
    return out


class Signals(NamedTuple):
    """What the work touches besides the prompt: project-relative paths and the branch."""

    paths: list[str]
    branch: str

    @property
    def empty(self) -> bool:
        return not self.paths and not self.branch


NO_SIGNALS = Signals([], "")


def _signals(ctx: ReadContext, paths: list[str] | None, branch: str) -> Signals:
    if not paths and not branch:
        return NO_SIGNALS
    from engram.core.read.signals import normalise_paths

    if not isinstance(branch, str):
        raise UsageError("branch must be a string (the name of the branch the work is on)")
    if paths is not None and not isinstance(paths, list):
        raise UsageError("paths must be a list of file paths")
    return Signals(normalise_paths(paths or [], ctx.roots.project_dir), branch.strip()[:200])


def _matched_only_a_secret(ctx: ReadContext, c: Candidate) -> bool:
    """Whether a memory holding a secret matched the task only through words that redaction
    removes: the index keeps the file's own text, and a search that finds a guessed token
    would confirm it. Only memories whose stored verdict names a secret pay for the check."""
    suspicious = [t for t in c.matched if len(t) >= 10 and any(ch.isdigit() for ch in t)]
    if not suspicious:
        return False  # an ordinary word: its match says nothing about a secret
    flag = c.row["flag"]
    if flag is None:
        flag = ctx.index.unsafe(c.row["rowid"])
    if not flag:
        return False
    found = decode_findings(flag)
    if not found.secrets:
        return False
    mem = ctx.index.redacted_memory(c.row["hash"] or "", ctx.index.memory(c.row["rowid"]))
    shown = " ".join(t for _, t in shown_fields(mem)).lower()
    return not any(term in shown for term in c.matched if term not in suspicious) and not any(
        term in shown for term in suspicious
    )


def _route(
    ctx: ReadContext,
    query: str | None,
    limit: int | None,
    signals: Signals = NO_SIGNALS,
    *,
    max_own: int | None = None,
    usage: dict | None = None,
) -> tuple[list[Candidate], list[Candidate], list[str]]:
    lookup = VisibleLookup(ctx.index, ctx.vis)
    if query is None and not signals.empty:
        query = ""  # a session start with signals routes on them alone
    if query is None:
        ranked = _startup_candidates(ctx)
    else:
        declared: set[int] = set()
        mentioned: set[int] = set()
        words: list[str] = []
        if not signals.empty:  # the module is not imported for a load of words alone
            from engram.core.read.signals import path_matches, signal_words

            declared, mentioned = path_matches(ctx.index.conn, signals.paths)
            words = signal_words(signals.paths, signals.branch)
        ranked = rank(
            ctx.index,
            query,
            ctx.vis,
            usage=ctx.index.usage() if usage is None else usage,
            signals=words,
            pathed=mentioned,
            declared=declared,
            **({"max_scored": SEARCH_SCORED} if max_own is not None else {}),
        )
        ranked = [c for c in ranked if not _matched_only_a_secret(ctx, c)]
    if query is None:
        ranked = ranked[: limit or len(ranked)]
        return ranked, [], []
    return select_with_prerequisites(ranked, lookup, limit, max_own=max_own)


RRF_K = 60  # reciprocal rank fusion's damping: rank 1 and rank 5 differ, rank 40 and 45 barely
PER_SEARCH = 4  # a search names one aspect of the task: its best few matches, not its tail
# Candidates a search scores in full, the best by their term scores: its best four come
# from them (40 gives the same packs as 150 on every suite; 16 does not).
SEARCH_SCORED = 40


def _all_terms(searches: list[str]) -> list[str]:
    return list(dict.fromkeys(t for q in searches for t in query_terms(q)))


def _route_searches(
    ctx: ReadContext, searches: list[str], limit: int | None, signals: Signals
) -> tuple[list[Candidate], list[Candidate], list[str]]:
    """Route each search on its own and fuse the rankings (reciprocal rank fusion).

    A memory keeps the evidence of the search that found it best (the share of that
    search's words it matches, its score against the best match of every search); the order
    is the fused one.
    """
    fused: dict[str, float] = {}
    best: dict[str, tuple[float, Candidate]] = {}
    found: list[tuple[int, list[Candidate]]] = []
    usage = ctx.index.usage()  # read once for every search
    for n, search in enumerate(searches, 1):
        chosen, _dropped, _missing = _route(
            ctx, search, None, signals, max_own=PER_SEARCH, usage=usage
        )
        own = sorted((c for c in chosen if not c.pulled_by), key=lambda c: -c.score)
        found.append((n, own[:PER_SEARCH]))
    # Scores are relative to the best match of any search: a search that finds only weak
    # matches does not make its first one look certain.
    top = max((own[0].score for _n, own in found if own), default=0.0)
    for n, own in found:
        for pos, cand in enumerate(own):
            key = f"{cand.row['scope']}:{cand.row['id']}"
            fused[key] = fused.get(key, 0.0) + 1.0 / (RRF_K + pos + 1)
            sure = confidence(cand, top)
            if key not in best or sure > best[key][0]:
                cand.parts = {**cand.parts, f"search {n}": round(cand.score, 4)}
                best[key] = (sure, cand)
    order = sorted(best, key=lambda k: (-fused[k], -best[k][1].score))
    ranked = [best[k][1] for k in order]
    return select_with_prerequisites(ranked, VisibleLookup(ctx.index, ctx.vis), limit)


def _int_arg(name: str, value: object, lo: int, hi: int) -> int:
    """A per-call integer option, checked with a message naming it and its range."""
    if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
        raise UsageError(f"invalid {name} {value!r}: expected an integer from {lo} to {hi}")
    return value


def _check_limit(limit: int | None, config: Config) -> int:
    return config.get("load.limit") if limit is None else _int_arg("limit", limit, 1, 32)


def _check_budget(budget: int | None, config: Config) -> int:
    if budget is None:
        return config.get("load.budget_tokens")
    return _int_arg("budget_tokens", budget, 1, 1_000_000)


def _check_query(query: str | None) -> str | None:
    if query is None:
        return None
    if not isinstance(query, str) or not query.strip():
        raise UsageError("empty query: describe the task in a few words, or use --id ID")
    if len(query) > 20_000:
        raise UsageError(f"query of {len(query)} characters is too long: at most 20000")
    check_text(query, "query", "a query")
    return query.strip()


def _signature(
    mems: list[tuple[Memory, str, str]], variant: str, withheld: list[dict[str, str]] | None = None
) -> str:
    h = sha256(variant.encode())
    for mem, tier, digest in mems:
        h.update(f"|{mem.scope}:{mem.id}:{tier}:{digest}".encode())
    for w in withheld or []:  # a newly withheld memory is announced again
        h.update(f"|withheld:{w['scope']}:{w['id']}:{w['hash']}".encode())
    return h.hexdigest()[:16]


INSPECT_HINT = "a person can read the file and run `engram verify`"


def accept_hint(rel: str) -> str:
    """How the person keeps a flagged file as they wrote it, for themselves."""
    return f"a person who has read it can keep it as written with `engram verify --accept {rel}`"


def _withheld_line(w: dict[str, str]) -> str:
    """The one line that tells the agent and the person a memory was not shown, and why.

    When the id or the file's name is itself the instruction, neither is repeated: the
    folder and the file's hash let a person find it (`engram verify`)."""
    named = shown_file_name(w["file"]) != w["file"]
    if w["field"] == "id" or named:
        folder = w["file"].rsplit("/", 1)[0] if "/" in w["file"] else ""
        what = "its id" if w["field"] == "id" else f"its {w['field']} and its file name"
        return (
            f"Withheld a memory in {w['scope']}: {folder}/ (file hash {w['hash'].split(':')[-1][:12]}): {what} "
            f"read{'s' if w['field'] == 'id' else ''} like an instruction aimed at the agent "
            f"({w['reason']}), so neither its id nor the file name is shown; {INSPECT_HINT}."
        )
    return (
        f"Withheld `{w['id']}` ({w['scope']}: {w['file']}): its {w['field']} reads like an "
        f"instruction aimed at the agent ({w['reason']}), so it is not shown; "
        f"{accept_hint(w['file'])}."
    )


def _screen(ctx: ReadContext, row: sqlite3.Row, withheld: list[dict[str, str]]) -> Memory | None:
    """The memory as the agent may see it: None when withheld, secrets redacted otherwise.

    Files on disk may come from anywhere (a clone, a hand edit), so every shown field is
    checked; the verdict is stored with the indexed file, so each version is checked once.
    """
    mem = ctx.index.memory(row["rowid"])
    found = decode_findings(ctx.index.unsafe(row["rowid"], mem))
    where = f"{row['scope']}: {row['rel']}"
    if (found.unsafe or found.secrets) and _reviewed(ctx, row):
        return mem  # this person read this exact version and keeps it as written
    if found.unsafe:
        field, _, why = found.unsafe.partition(": ")
        entry = {
            "id": row["id"],
            "scope": row["scope"],
            "file": row["rel"],
            "hash": row["hash"] or "",
            "field": field if why else "text",
            "reason": why or found.unsafe,
        }
        withheld.append(entry)
        root = ctx.roots.by_scope(row["scope"])
        shown = shown_file_name(row["rel"], row["hash"] or "")
        ctx.result.warn(
            "memory.unsafe",
            _withheld_line(entry),
            str(root.path / shown) if root else shown,
        )
        return None
    if found.secrets:
        ctx.result.warn(
            "memory.secret_redacted",
            f"{row['id']} ({where}) holds what looks like a secret or personal data "
            f"({', '.join(found.secrets)}); "
            "it was redacted before the agent saw it; remove it from the file, or "
            f"{accept_hint(row['rel'])}",
        )
        return ctx.index.redacted_memory(row["hash"] or "", mem)
    return mem


def _reviewed(ctx: ReadContext, row: sqlite3.Row) -> bool:
    """Whether this user accepted this exact file version (`engram verify --accept FILE`)."""
    from engram.core.store.reviews import is_reviewed

    root = ctx.roots.by_scope(row["scope"])
    return root is not None and is_reviewed(root.path / row["rel"], row["hash"] or "")


WITHHELD_TITLE = "(withheld: reads like an instruction aimed at the agent; see `engram verify`)"
# Title-only verdicts per file hash, for listings of every card in a long-lived server.
_TITLE_VERDICTS: dict[str, Findings] = {}


def _shown_title(ctx: ReadContext, row: sqlite3.Row, *, cheap: bool = False) -> str:
    """A title as the agent may see it. `cheap`: check only the title unless the file's
    verdict is already stored (listing every card must not scan every body)."""
    if cheap and row["flag"] is None:
        key = f"{row['hash']}|{row['title']}"
        found = _TITLE_VERDICTS.get(key)
        if found is None:
            found = _TITLE_VERDICTS[key] = title_findings(row["title"])
    else:
        found = decode_findings(ctx.index.unsafe(row["rowid"]))
    if (found.unsafe or found.secrets) and _reviewed(ctx, row):
        return row["title"]
    if found.unsafe:
        return WITHHELD_TITLE
    if found.secrets:
        from engram.core.safety.scan import redact

        return redact(row["title"], strict=False).text
    return row["title"]


def load_memories(roots: Roots, request: LoadRequest) -> Result:
    """Load `request.ids`, or route the task and render the pack in confidence tiers."""
    if request.ids:
        return _load_by_ids(
            roots,
            [validate_id(i) for i in request.ids],
            full=request.full,
            dry_run=request.dry_run,
            count_usage=request.count_usage,
        )
    query = _check_query(request.query)
    ctx = open_read_context(roots, list(request.roles) if request.roles is not None else None)
    routed = _select(ctx, request, query)
    _grade(ctx, routed, request, query)
    pack = _screen_and_render(ctx, routed, request)
    _count(ctx, pack, request)
    ctx.result.text, ctx.result.data = _result_text_and_data(ctx, routed, pack, request)
    return ctx.result


# A card left out of a `cards=False` load is named (the hook's pointer) only from this
# confidence: a prompt that merely shares a word with memory gets nothing at all.
POINTER_AT = 0.65


class _Routed:
    """The select stage's answer: candidates in load order and what was left out, for one task."""

    def __init__(
        self,
        *,
        query: str | None,
        signals: Signals,
        routed: bool,  # a task (words, searches or signals) was routed, not the start-up pack
        selected: list[Candidate],
        dropped: list[Candidate],
        task_type: str,
        terms: list[str],
        budget: int,
        variant: str,
        searches: list[str],
    ) -> None:
        self.query, self.signals, self.routed = query, signals, routed
        self.selected, self.dropped = selected, dropped
        self.task_type, self.terms, self.searches = task_type, terms, searches
        self.budget, self.variant = budget, variant
        self.graded: list[dict[str, Any]] = []
        self.unshown: list[Candidate] = []  # cards left out of a `cards=False` load
        self.unshown_cards: list[str] = []  # ... those the pointer may name (screened)


class _Pack(NamedTuple):
    """The screened, rendered and fitted pack."""

    selected: list[Candidate]
    mems: list[Memory]
    tiers: list[str]
    text: str
    withheld: list[dict[str, str]]
    header_query: str


def _select(ctx: ReadContext, request: LoadRequest, query: str | None) -> _Routed:
    """Select: route the task (words, then signals) to candidates, prerequisites included."""
    limit = None if request.all_ else _check_limit(request.limit, ctx.config)
    budget = _check_budget(request.budget_tokens, ctx.config)
    signals = _signals(ctx, list(request.paths), request.branch)
    searches = [check_text(q, "queries", "a search") for q in request.queries]
    if searches:
        searches = list(dict.fromkeys([*([query] if query else []), *searches]))

    def route() -> tuple[list[Candidate], list[Candidate], list[str]]:
        if searches:
            return _route_searches(ctx, searches, limit, signals)
        return _route(ctx, query, limit, signals)

    selected, dropped, missing = route()
    if selected and not ctx.index.still_fresh([(c.row["scope"], c.row["rel"]) for c in selected]):
        ctx.index.refresh(force_full=True)
        selected, dropped, missing = route()
    if query is None and not signals.empty and not selected:
        signals = NO_SIGNALS  # nothing the work touches is named: the generic startup pack
        selected, dropped, missing = _route(ctx, query, limit)
    for dep in missing:
        ctx.result.warn(
            "memory.missing_dependency", f"a routed memory depends on {dep!r}, which is not visible"
        )
    texts = searches or ([query] if query else [])  # the searches begin with the task's words
    return _Routed(
        query=query,
        signals=signals,
        routed=query is not None or bool(searches) or not signals.empty,
        selected=selected,
        dropped=dropped,
        task_type=classify_task(" ".join(texts)) if texts else "startup",
        terms=_all_terms(texts),
        searches=searches,
        budget=budget,
        variant=ctx.config.get("rule_variant"),
    )


def _grade(ctx: ReadContext, routed: _Routed, request: LoadRequest, query: str | None) -> None:
    """Grade: confidence and tier per candidate; confident bodies first, then cards."""
    if not routed.routed:
        return
    selected = routed.selected
    grade(
        selected,
        routed.terms if query is not None else ["", ""],
        body_at=SEARCH_BODY_CONFIDENCE if routed.searches else BODY_CONFIDENCE,
        dropped=routed.dropped,
    )
    objective = request.objective
    for c in selected:  # a working note of this session's objective is what it is about
        mine = c.row["tier"] == "working" and c.row["objective"]
        if objective and mine and _same_objective(objective, c.row["objective"]):
            c.confidence, c.tier = 1.0, "body"
    if request.explain:
        routed.graded = [_graded_entry(ctx, c, routed.variant) for c in selected]
    if request.min_matched > 1 and query is not None and not routed.searches:
        _demote_thin_evidence(selected, routed.terms, request.min_matched)
    unsure = [c for c in selected if c.tier == "unsure"]
    for c in unsure:
        c.reason = f"unsure (confidence {c.confidence:.2f} < {CARD_CONFIDENCE:.2f})"
    routed.dropped = unsure + routed.dropped
    thin = query is not None and len(routed.terms) <= 1
    if (thin and not request.thin_cards) or not request.cards:
        if not thin:  # a one-word prompt ("continue") is not worth even a pointer
            routed.unshown = [c for c in selected if c.tier == "card"]
        selected = [c for c in selected if c.tier == "body"]
    # confident memories first (in load order, prerequisites before dependents), then cards
    selected = [c for c in selected if c.tier == "body"] + [c for c in selected if c.tier == "card"]
    if request.max_bodies is not None:
        for c in [c for c in selected if c.tier == "body"][request.max_bodies :]:
            c.tier = "card"
            c.reason = c.reason or f"over the {request.max_bodies} bodies a prompt may inject"
    routed.selected = selected


def _named_words(row: Any) -> set[str]:
    """The words a memory's title, tags and id name it by, as written (lower case)."""
    words = set(re.findall(r"[^\W_]+", str(row["title"] or "").lower()))
    for name in [*split_list(row["tags"]), str(row["id"])]:
        words.update(re.findall(r"[^\W_]+", name.lower()))
    return words


# ... and at least this share of the task's informative (idf) weight: two common words of
# a general question ("undo my last git commit") do not make a project memory apply.
PROMPT_EVIDENCE_SHARE = 0.5


def _demote_thin_evidence(selected: list[Candidate], terms: list[str], needed: int) -> None:
    """A body on fewer than `needed` distinct task words, or on less than half the task's
    informative weight, becomes a card (and so do the prerequisites it pulled in), unless a
    person's trigger matched or its names hold the task's only word exactly: a word or two
    a raw prompt shares with memory is not evidence that a memory applies."""
    demoted: set[str] = set()
    for c in selected:
        if c.tier != "body" or c.pulled_by or _named_by_person(c):
            continue
        matched = set(c.matched)
        if _shares_enough_words(c, needed) and c.idf_share >= PROMPT_EVIDENCE_SHARE:
            continue
        if len(terms) < needed and matched and matched <= _named_words(c.row):
            continue
        c.tier, c.reason = (
            "card",
            f"matched {len(matched)} word(s) of the prompt; a body needs {needed}",
        )
        demoted.add(c.row["id"])
    for c in selected:
        if c.pulled_by in demoted and c.tier == "body":
            c.tier, c.reason = "card", f"a prerequisite of {c.pulled_by}, which is not sure"


def _named_by_person(c: Candidate) -> bool:
    """Whether a person's trigger phrase or a declared path named the memory."""
    return TRIGGERED in c.named or DECLARED in c.named


def _shares_enough_words(c: Candidate, needed: int) -> bool:
    """Whether a card shares as many distinct words with a raw prompt as a body needs: one
    word shared with memory ("commit and push", "the difference between a mutex and a
    semaphore") is a general question, and even a one-line pointer is noise there."""
    return needed <= 1 or _named_by_person(c) or len(set(c.matched)) >= needed


def _screen_and_render(ctx: ReadContext, routed: _Routed, request: LoadRequest) -> _Pack:
    """Screen (withhold or redact what is unsafe), render bodies and cards, fit the budget."""
    withheld: list[dict[str, str]] = []
    screened = [(c, _screen(ctx, c.row, withheld)) for c in routed.selected]
    for c in routed.unshown:  # not shown, yet a withheld one is still told to the person
        pointer = c.confidence >= POINTER_AT and _shares_enough_words(c, request.min_matched)
        if _screen(ctx, c.row, withheld) is not None and pointer:
            routed.unshown_cards.append(c.row["id"])
    selected = [c for c, m in screened if m is not None]
    mems = [m for _c, m in screened if m is not None]
    objective = request.objective
    bodies: list[str | None] = []
    for cand, mem in zip(selected, mems, strict=True):
        other_objective = (
            objective is not None
            and mem.tier == "working"
            and not _same_objective(objective, mem.objective)
        )
        card_only = cand.tier == "card" and request.disclosure == "auto"
        bodies.append(
            None
            if other_objective or card_only
            else render_full(mem)
            if request.full
            else render_compact(mem, routed.variant)
        )
    confident = any(c.tier == "body" for c in selected)
    header_query = f'"{routed.query}"' if routed.query else "session start"
    signals = routed.signals
    if not signals.empty:
        touched = f"{len(signals.paths)} touched file{'s' if len(signals.paths) != 1 else ''}"
        header_query += " · " + (f"branch {signals.branch}, " if signals.branch else "") + touched
    title = f"Engram memory for {header_query} · task type: {routed.task_type}"
    if selected and not confident:
        title += " · no confident match: cards only, load one by its id if it applies"
    tiers, pack_text = fit_pack(
        title,
        [m.id for m in mems],
        bodies,
        [render_card(m) for m in mems],
        routed.budget,
        request.disclosure,
    )
    if not mems:
        terms = routed.terms
        pack_text = f"No memory is a confident or plausible match for {header_query}" + (
            f" (terms: {', '.join(terms)}); nothing loaded."
            if terms
            else " (no meaningful terms in the task); nothing loaded."
        )
    return _Pack(selected, mems, tiers, pack_text, withheld, header_query)


def _count(ctx: ReadContext, pack: _Pack, request: LoadRequest) -> None:
    """Flag hand-edited bodies and count the bodies shown as retrievals (unless told not to)."""
    shown = [c for c, t in zip(pack.selected, pack.tiers, strict=True) if t == "body"]
    _flag_modified(ctx, shown)
    if request.counts:
        ctx.index.count_usage([(c.row["scope"], c.row["id"]) for c in shown])


def _result_text_and_data(
    ctx: ReadContext, routed: _Routed, pack: _Pack, request: LoadRequest
) -> tuple[str, dict[str, Any]]:
    """The text an agent reads (the pack, or the explanation, or the dry-run list) and data."""
    mems, tiers = pack.mems, pack.tiers
    by_tier = {t: [m.id for m, x in zip(mems, tiers, strict=True) if x == t] for t in TIERS}
    text_parts: list[str] = []
    if request.explain:
        text_parts.append(
            _explain_text(routed.query, routed.task_type, pack.selected, tiers, routed.dropped)
        )
        if routed.searches:
            text_parts.append(
                "Searches (fused): "
                + " · ".join(f"search {n}: {q!r}" for n, q in enumerate(routed.searches, 1))
            )
    elif request.dry_run:
        text_parts.append(
            f"Dry run for {pack.header_query} · task type: {routed.task_type} (nothing counted)"
        )
        for m, t in zip(mems, tiers, strict=True):
            text_parts.append(f"- {t}: {m.type} `{m.id}` — {m.title}")
    else:
        text_parts.append(pack.text)
    if pack.withheld:
        text_parts.append("\n".join(_withheld_line(w) for w in pack.withheld))
    text = "\n\n".join(text_parts)
    digests = {c.row["id"]: c.row["hash"] for c in pack.selected}
    data: dict[str, Any] = {
        "query": routed.query,
        "task_type": routed.task_type,
        "signals": {"paths": routed.signals.paths, "branch": routed.signals.branch},
        "selected_keys": [m.id for m, t in zip(mems, tiers, strict=True) if t != "omitted"],
        "body_keys": by_tier["body"],
        "card_ids": by_tier["card"],
        "omitted_ids": by_tier["omitted"],
        "tokens": estimate_tokens(text),
        "budget_tokens": routed.budget,
        "token_estimate": TOKEN_RULE,
        "disclosure": request.disclosure,
        "rule_variant": routed.variant,
        "roles": ctx.vis.roles,
        "signature": _signature(
            [(m, t, digests.get(m.id, "")) for m, t in zip(mems, tiers, strict=True)],
            routed.variant,
            pack.withheld,
        ),
        "withheld": [{k: v for k, v in w.items() if k != "hash"} for w in pack.withheld],
    }
    if routed.unshown_cards:
        data["unshown_cards"] = [
            i for i in routed.unshown_cards[:3] if not _id_reads_as_instruction(i)
        ]
    if request.explain:
        data["explain"] = _explain_data(routed.query, pack.selected, tiers, routed.dropped)
        data["explain"]["graded"] = routed.graded
        data["explain"]["searches"] = routed.searches
        data["pack_tokens"] = estimate_tokens(pack.text)
    return text, data


TIERS = ("body", "card", "omitted")


def _flag_modified(ctx: ReadContext, cands: list[Candidate]) -> None:
    for c in cands:
        scope, rel = c.row["scope"], c.row["rel"]
        if rel.startswith("working/"):
            continue
        expected = ctx.index.manifest_hash(scope, rel)
        if expected is not None and expected != c.row["hash"]:
            ctx.result.warn(
                "memory.modified",
                f"{c.row['id']} ({scope}) changed since it was recorded in hashes.json; review it and run `engram verify --accept {rel}`",
            )


def _evidence(c: Candidate) -> dict[str, Any]:
    return {
        "id": c.row["id"],
        "scope": c.row["scope"],
        "score": c.score,
        "parts": c.parts,
        "matched_terms": c.matched,
        "reason": c.reason,
        "confidence": c.confidence,
        "tier": c.tier,
    }


def _graded_entry(ctx: ReadContext, c: Candidate, variant: str) -> dict[str, Any]:
    """One routed memory as the benchmark re-tiers it: confidence and what each tier costs."""
    mem = ctx.index.memory(c.row["rowid"])
    return {
        "id": c.row["id"],
        "confidence": c.confidence,
        "body_tokens": estimate_tokens(render_compact(mem, variant)),
        "card_tokens": estimate_tokens(render_card(mem)),
    }


def _explain_data(
    query: str | None, selected: list[Candidate], tiers: list[str], dropped: list[Candidate]
) -> dict[str, Any]:
    return {
        "terms": query_terms(query or ""),
        "selected": [{**_evidence(c), "tier": t} for c, t in zip(selected, tiers, strict=True)],
        "dropped": [_evidence(c) for c in dropped],
    }


def _explain_text(
    query: str | None,
    task_type: str,
    selected: list[Candidate],
    tiers: list[str],
    dropped: list[Candidate],
) -> str:
    lines = [
        f"Explain: {query!r} · task type: {task_type} · terms: {', '.join(query_terms(query or '')) or '(none)'}"
    ]
    for n, (c, t) in enumerate(zip(selected, tiers, strict=True), 1):
        parts = ", ".join(f"{k}={v:g}" for k, v in c.parts.items() if v)
        why = f" · {c.reason}" if c.reason else ""
        matched = ", ".join(c.matched) or "-"
        lines.append(
            f"{n}. {c.row['id']} ({c.row['type']}, {c.row['scope']}) → {t} · confidence {c.confidence:.2f}"
            f" · score {c.score:g} [{parts}] · matched: {matched}{why}"
        )
    for c in dropped:
        lines.append(
            f"- not loaded: {c.row['id']} · confidence {c.confidence:.2f} · score {c.score:g} · {c.reason}"
        )
    return "\n".join(lines)


def _load_by_ids(
    roots: Roots, ids: list[str], *, full: bool, dry_run: bool, count_usage: bool
) -> Result:
    ctx = open_read_context(roots)
    variant = ctx.config.get("rule_variant")
    texts: list[str] = []
    found: list[sqlite3.Row] = []
    withheld: list[dict[str, str]] = []
    for mid in dict.fromkeys(ids):
        rows = ctx.index.rows_by_id(mid)
        if rows and not ctx.index.still_fresh([(rows[0]["scope"], rows[0]["rel"])]):
            ctx.index.refresh(force_full=True)
            rows = ctx.index.rows_by_id(mid)
        if not rows:
            archived = next((r for r in roots.all if (r.archive_dir / f"{mid}.md").is_file()), None)
            if archived is not None:
                raise NotFoundError(
                    f"memory {mid!r} is archived ({archived.scope}: archive/{mid}.md); archived "
                    "memories are kept for audit and never loaded"
                )
            raise NotFoundError(f"no memory with id {mid!r}; search by topic to find the id")
        row = rows[0]
        ok, why = ctx.vis.visible(row)
        if not ok:
            ctx.result.info(
                "memory.not_routed",
                f"{mid} is not routed automatically ({why}); returned because it was asked for by id",
            )
        mem = _screen(ctx, row, withheld)
        if mem is None:
            texts.append(_withheld_line(withheld[-1]) + "\n")
            continue
        texts.append(render_full(mem) if full else render_compact(mem, variant))
        found.append(row)
    cands = [Candidate(r) for r in found]
    _flag_modified(ctx, cands)
    if count_usage and not dry_run:
        ctx.index.count_usage([(r["scope"], r["id"]) for r in found])
    text = "\n".join(texts)
    keys = [r["id"] for r in found]
    ctx.result.text = text
    ctx.result.data = {
        "query": None,
        "task_type": "lookup",
        "selected_keys": keys,
        "body_keys": keys,
        "card_ids": [],
        "omitted_ids": [],
        "tokens": estimate_tokens(text),
        "token_estimate": TOKEN_RULE,
        "rule_variant": variant,
        "signature": _signature(
            [(ctx.index.memory(r["rowid"]), "body", r["hash"]) for r in found], variant, withheld
        ),
        "withheld": [{k: v for k, v in w.items() if k != "hash"} for w in withheld],
    }
    return ctx.result


def _entry(ctx: ReadContext, c: Candidate) -> dict[str, Any]:
    return {
        "id": c.row["id"],
        "type": c.row["type"],
        "scope": c.row["scope"],
        "score": c.score,
        "title": _shown_title(ctx, c.row),
        "tier": c.row["tier"] or "durable",
        "reason": c.reason,
    }


def route_task(roots: Roots, query: str, *, roles: list[str] | None = None) -> Result:
    query = _check_query(query) or ""
    ctx = open_read_context(roots, roles)
    selected, _dropped, missing = _route(ctx, query, ctx.config.get("load.limit"))
    task_type = classify_task(query)
    entries = [_entry(ctx, c) for c in selected]
    lines = [f"Task type: {task_type}"]
    if not entries:
        lines.append("No memory routes to this task.")
    for n, e in enumerate(entries, 1):
        extra = f" · {e['reason']}" if e["reason"] else ""
        lines.append(
            f"{n}. {e['type']} `{e['id']}` ({e['scope']}) — {e['title']} · score {e['score']:g}{extra}"
        )
    for dep in missing:
        ctx.result.warn(
            "memory.missing_dependency", f"a routed memory depends on {dep!r}, which is not visible"
        )
    ctx.result.text = "\n".join(lines)
    ctx.result.data = {"query": query, "task_type": task_type, "entries": entries}
    return ctx.result


def search_memories(
    roots: Roots, query: str, *, limit: int = 10, roles: list[str] | None = None
) -> Result:
    query = _check_query(query) or ""
    _int_arg("limit", limit, 1, 200)
    ctx = open_read_context(roots, roles)
    ranked = rank(ctx.index, query, ctx.vis, usage=ctx.index.usage(), weak_admits=True)
    ranked = [c for c in ranked[: limit * 2] if not _matched_only_a_secret(ctx, c)][:limit]
    entries = [_entry(ctx, c) for c in ranked]
    lines = [f"{len(entries)} result(s) for {query!r}"]
    for e in entries:
        lines.append(
            f"- {e['type']} `{e['id']}` ({e['scope']}) — {e['title']} · score {e['score']:g}"
        )
    ctx.result.text = "\n".join(lines)
    ctx.result.data = {"query": query, "entries": entries}
    return ctx.result


def _visible_all(ctx: ReadContext) -> list[sqlite3.Row]:
    seen: set[str] = set()
    out = []
    for row in ctx.index.all_rows():
        if row["id"] in seen:
            continue
        seen.add(row["id"])
        if ctx.vis.visible(row)[0]:
            out.append(row)
    return out


_ID_VERDICTS: dict[str, bool] = {}


def _id_reads_as_instruction(mid: str) -> bool:
    verdict = _ID_VERDICTS.get(mid)
    if verdict is None:
        from engram.core.safety.scan import find_injection

        verdict = _ID_VERDICTS[mid] = (
            find_injection(mid.replace("-", " "), strict=False) is not None
        )
    return verdict


def _id_unsafe(row: sqlite3.Row) -> bool:
    """Whether a memory's id reads like an instruction (a listing never shows such an id)."""
    if row["flag"] is not None:
        return decode_findings(row["flag"]).unsafe.startswith("id:")
    return _id_reads_as_instruction(row["id"])


def list_cards(roots: Roots) -> Result:
    ctx = open_read_context(roots)
    rows = [r for r in _visible_all(ctx) if not _id_unsafe(r)]
    titles = [_shown_title(ctx, r, cheap=True) for r in rows]
    cards = [
        {"id": r["id"], "type": r["type"], "scope": r["scope"], "title": t}
        for r, t in zip(rows, titles, strict=True)
    ]
    text = []
    for r, t in zip(rows, titles, strict=True):
        mem = ctx.index.memory(r["rowid"])
        mem.title = t
        text.append(render_card(mem))
    ctx.result.text = "".join(text) or "No memories yet.\n"
    ctx.result.data = {"cards": cards}
    return ctx.result


def most_used_memories(roots: Roots, limit: int) -> list[dict[str, Any]]:
    ctx = open_read_context(roots)
    usage = ctx.index.usage()
    rows = [r for r in _visible_all(ctx) if usage.get((r["scope"], r["id"]), 0) > 0]
    rows.sort(key=lambda r: (-usage[(r["scope"], r["id"])], r["id"]))
    return [
        {
            "id": r["id"],
            "type": r["type"],
            "scope": r["scope"],
            "title": _shown_title(ctx, r),
            "uses": usage[(r["scope"], r["id"])],
        }
        for r in rows[:limit]
    ]


def rebuild(roots: Roots) -> Result:
    roots.primary  # noqa: B018 - clear error when no root exists
    idx = rebuild_index(roots)
    n = idx.doc_count()
    result = Result(
        text=f"Rebuilt the search index: {n} memories indexed ({len(idx.parse_errors)} unreadable files)."
    )
    for (scope, rel), reason in sorted(idx.parse_errors.items()):
        result.warn("memory.parse_error", f"skipped {rel} ({scope}): {reason}")
    result.data = {
        "indexed": n,
        "unreadable": len(idx.parse_errors),
        "path": str(idx.path) if idx.path else None,
    }
    return result


def record_retrievals(roots: Roots, ids: list[str]) -> None:
    """Count bodies a caller showed after a `count_usage=False` load (the hooks' compare-then-show)."""
    index = open_index(roots, refresh=False)
    keys = []
    for mid in ids:
        rows = index.rows_by_id(mid)
        if rows:
            keys.append((rows[0]["scope"], rows[0]["id"]))
    index.count_usage(keys)


def memories_without_triggers(roots: Roots, limit: int) -> tuple[list[dict[str, Any]], int]:
    """Durable memories that have no `triggers` yet, as the agent may see them (a withheld
    memory is left out, so nobody is asked to route to it); and how many there are in all."""
    ctx = open_read_context(roots)
    rows = [
        r
        for r in _visible_all(ctx)
        if not split_list(r["triggers"])
        and (r["tier"] or "durable") != "working"
        and not _id_unsafe(r)
        and not (decode_findings(ctx.index.unsafe(r["rowid"])).unsafe and not _reviewed(ctx, r))
    ]
    rows.sort(key=lambda r: (r["scope"] != "workspace", r["type"], r["id"]))
    return [
        {"id": r["id"], "type": r["type"], "scope": r["scope"], "title": _shown_title(ctx, r)}
        for r in rows[:limit]
    ], len(rows)
