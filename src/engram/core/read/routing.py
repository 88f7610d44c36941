"""Anchor → rank → select → prerequisites: which memories a task needs, in load order."""

from __future__ import annotations

import datetime as dt
import math
import sqlite3
from collections.abc import Iterable
from functools import lru_cache

from engram.core.store.files import IgnoreRules
from engram.core.store.index import Index, split_list
from engram.core.words import (
    GENERIC_WORDS,
    RELATED_PHRASES,
    RELATED_WORDS,
    STOPWORDS,
    match_phrase,
    stem,
    tokenize,
    word_stems,
)


@lru_cache(maxsize=1)
def _phrase_stems() -> dict[tuple[str, ...], tuple[str, ...]]:
    return {tuple(stem(w) for w in k): v for k, v in RELATED_PHRASES.items()}


TASK_TYPES: tuple[tuple[str, frozenset[str]], ...] = (
    ("release", frozenset(["release", "releases", "releasing", "ship", "publish", "version", "versions", "tag", "changelog", "bump"])),
    ("bugfix", frozenset(["fix", "fixes", "fixing", "bug", "bugs", "broken", "crash", "crashes", "error", "errors", "fail", "failing", "fails", "failure", "regression", "exception", "issue"])),
    ("test", frozenset(["test", "tests", "testing", "coverage", "flaky", "unit", "e2e", "integration", "pytest", "spec", "specs"])),
    ("review", frozenset(["review", "reviews", "reviewing", "pr", "prs", "feedback", "approve", "approval"])),
    ("refactor", frozenset(["refactor", "refactoring", "cleanup", "clean", "rename", "restructure", "simplify", "extract", "reorganize", "dedupe"])),
    ("docs", frozenset(["doc", "docs", "documentation", "readme", "guide", "tutorial", "docstring", "docstrings"])),
    ("ops", frozenset(["deploy", "deployment", "deploying", "infra", "infrastructure", "incident", "outage", "monitoring", "alert", "alerts", "kubernetes", "k8s", "docker", "server", "servers", "oncall", "rollback", "terraform"])),
    ("feature", frozenset(["add", "implement", "implementing", "build", "create", "support", "feature", "introduce", "new", "endpoint"])),
)  # fmt: skip
FTS_WEIGHTS = (5.0, 4.0, 4.0, 1.0)  # title, tags, triggers, body
WEAK_DF = 0.30  # a term in more than this share of memories does not admit candidates alone
RELATIVE_CUTOFF = 0.26
DOMINATED_SHARE = (
    0.4  # drop a match whose terms are a strict subset of a stronger one's, below this share
)
MIN_IDF_SHARE = 0.15  # a memory must match at least this share of the task's idf weight
PREREQ_MIN_SHARE = 0.25  # a dependent scoring below this share of the top brings no prerequisites
COVERAGE_BASE, COVERAGE_GAIN = 0.6, 0.8  # lexical score × (base + gain × share of terms matched)
COMMON_DF = 0.08  # above this share of memories a term is scored by presence, not bm25
COMMON_MIN_DOCS = 500
MIN_ADMITTED = 40  # below this many candidates from specific words, common words admit too
MAX_PER_TERM = 300  # best matches read per term; a memory below that for every term cannot win
MAX_SCORED = 150  # candidates scored in full; the rest cannot reach a pack of at most 32
RARE_DF = 0.05  # a term in at most this share of memories is specific enough to name a memory
SIGNAL_WEIGHT = 0.5  # a word of a touched path or the branch counts half a word of the task
UNKNOWN_WEIGHT = 0.5  # a task word no memory has weighs half the rarest word (typos happen)


def query_terms(query: str) -> list[str]:
    """Meaningful terms of a task: no stopwords, no generic memory/work words, no 1-letter words."""
    out: list[str] = []
    stems: set[str] = set()
    for tok in tokenize(query):
        if len(tok) < 2 or tok in STOPWORDS or tok in GENERIC_WORDS or stem(tok) in stems:
            continue
        if tok.isdigit() and len(tok) < 3:  # "25.10", "3 retries": small numbers are not topics
            continue
        stems.add(stem(tok))
        out.append(tok)
    return out


TRIGGERED = "\x00trigger"  # marks a candidate whose trigger phrase is in the task
DECLARED = "\x00paths"  # marks a candidate whose `paths:` globs match a touched file


PHRASE_SHARE = 2 / 3  # of a trigger's topic words the task must name for a near match
PHRASE_MIN_WORDS = 2  # … and at least this many of them


def phrase_match(phrase: str, task_stems: set[str]) -> float:
    """How closely a task asks what one trigger phrase asks, 0..1 (phrase-level, not bag).

    1.0: every word of the phrase is in the task. Otherwise the share of the phrase's topic
    words (neither stopwords nor generic) that the task names, when that is at least two of
    them and two thirds: "the OIDC callback is broken" is near "OIDC callback fails", "fix a
    bug" is near no phrase through its generic words alone.
    """
    words, topic = _trigger_stems(phrase)
    if not words:
        return 0.0
    if all(w in task_stems for w in words):
        return 1.0
    hit = sum(1 for t in topic if t in task_stems)
    if hit >= PHRASE_MIN_WORDS and hit / len(topic) >= PHRASE_SHARE:
        return hit / len(topic)
    return 0.0


@lru_cache(maxsize=8192)
def _trigger_stems(phrase: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stems of every word but stopwords, stems of the topic words) of a trigger phrase;
    a phrase is read once per process, not once per task."""
    ptoks = [t for t in tokenize(phrase) if t not in STOPWORDS]
    topic = [t for t in dict.fromkeys(ptoks) if t not in GENERIC_WORDS and len(t) > 1]
    return tuple(stem(t) for t in ptoks), tuple(dict.fromkeys(stem(t) for t in topic))


def trigger_matches(index: Index, query: str) -> tuple[frozenset[int], frozenset[int]]:
    """Memories whose `triggers` phrases the task asks: (every word in the task, near).

    Triggers are phrases a person approved to route to a memory, so a whole phrase admits
    it even when its words are generic ("fix a bug" routes to the regression-test skill)
    and counts as naming it; a near phrase only admits it, to be ranked with the rest.
    """
    return index.memo(("triggers", query), lambda: _trigger_matches(index, query))


def _trigger_matches(index: Index, query: str) -> tuple[frozenset[int], frozenset[int]]:
    words = [w for w in dict.fromkeys(tokenize(query)) if w not in STOPWORDS and len(w) > 1]
    if not words:
        return frozenset(), frozenset()
    stems = {stem(w) for w in tokenize(query)}
    match = "triggers : (" + " OR ".join(match_phrase(w) for w in words[:40]) + ")"
    whole: set[int] = set()
    near: set[int] = set()
    try:
        rows = index.conn.execute(
            "SELECT m.rowid, m.triggers FROM fts JOIN memories m ON m.rowid = fts.rowid WHERE fts MATCH ? LIMIT 500",
            (match,),
        ).fetchall()
    except sqlite3.OperationalError:
        return frozenset(), frozenset()
    for rowid, triggers in rows:
        best = max((phrase_match(p, stems) for p in split_list(triggers)), default=0.0)
        if best >= 1.0:
            whole.add(rowid)
        elif best > 0.0:
            near.add(rowid)
    return frozenset(whole), frozenset(near)


def synonym_expansions(query: str, terms: list[str]) -> list[tuple[str, str]]:
    """(synonym, the query term it stands in for): single words, then two-word phrases."""
    out: list[tuple[str, str]] = []
    for t in terms:
        for syn in RELATED_WORDS.get(t, ()):
            if syn not in terms and syn not in GENERIC_WORDS:
                out.append((syn, t))
    words = tokenize(query)
    stems = [stem(w) for w in words]
    for i in range(len(stems) - 1):
        for syn in _phrase_stems().get((stems[i], stems[i + 1]), ()):
            base = next((w for w in (words[i + 1], words[i]) if w in terms), None)
            if base and syn not in terms and (syn, base) not in out:
                out.append((syn, base))
    return out


def classify_task(query: str) -> str:
    toks = set(tokenize(query))
    best, best_hits = "general", 0
    for name, words in TASK_TYPES:
        hits = len(toks & words)
        if hits > best_hits:
            best, best_hits = name, hits
    return best


class Candidate:
    """A memory row being considered for a pack, with its score and the evidence for it."""

    __slots__ = (
        "confidence",
        "idf_share",
        "matched",
        "named",
        "parts",
        "pulled_by",
        "reason",
        "row",
        "score",
        "tier",
    )

    def __init__(
        self,
        row: sqlite3.Row,
        score: float = 0.0,
        parts: dict[str, float] | None = None,
        matched: list[str] | None = None,
        reason: str = "",
    ) -> None:
        self.row = row
        self.score = score
        self.parts = parts or {}
        self.matched = matched or []
        self.reason = reason  # why it was dropped or added ("prerequisite of x", ...)
        # Rare query terms its title or tags name: such a memory is never cut for a low score.
        self.named: frozenset[str] = frozenset()
        self.idf_share = 1.0  # share of the query's informative weight (idf) that it matches
        self.confidence = 1.0  # how sure the router is that the memory applies (see `grade`)
        self.tier = "body"  # what the confidence earns: "body", "card" or "unsure"
        self.pulled_by = ""  # for a prerequisite: the id of the memory that needs it

    @property
    def key(self) -> tuple[str, str]:
        return (self.row["scope"], self.row["id"])


class Visibility:
    """Which indexed rows a caller may see: roles, expiry, workspace-over-global, ignores."""

    def __init__(self, roles: list[str], today: str, ignore: dict[str, IgnoreRules]) -> None:
        self.roles = roles
        self.today = today
        self.ignore = ignore

    def visible(self, row: sqlite3.Row) -> tuple[bool, str]:
        rules = self.ignore.get(row["scope"])
        if rules is not None and rules.patterns and rules.ignores(row["rel"]):
            return False, "ignored by .engramignore"
        roles = split_list(row["roles"])
        if roles and not set(roles) & set(self.roles):
            return False, f"needs role {', '.join(roles)}"
        until = row["valid_until"] or ""
        if until and until[:10] < self.today:
            return False, f"expired on {until[:10]}"
        return True, ""


class VisibleLookup:
    """Visible memory rows by id (workspace copy wins over global), memoised per call."""

    def __init__(self, index: Index, vis: Visibility) -> None:
        self.index, self.vis = index, vis
        self._memo: dict[str, sqlite3.Row | None] = {}

    def seed(self, rows: Iterable[sqlite3.Row]) -> None:
        """Rows `rank` returned: visible, and the workspace copy of any id both roots hold
        (it leaves out a shadowed global one), so no query per id is needed for them."""
        for row in rows:
            self._memo.setdefault(row["id"], row)

    def get(self, mid: str) -> sqlite3.Row | None:
        if mid not in self._memo:
            rows = self.index.rows_by_id(mid)  # workspace first
            row = rows[0] if rows else None
            self._memo[mid] = row if row is not None and self.vis.visible(row)[0] else None
        return self._memo[mid]

    def __contains__(self, mid: str) -> bool:
        return self.get(mid) is not None

    def __getitem__(self, mid: str) -> sqlite3.Row:
        row = self.get(mid)
        if row is None:
            raise KeyError(mid)
        return row


def rank(
    index: Index,
    query: str,
    vis: Visibility,
    *,
    usage: dict | None = None,
    weak_admits: bool = False,
    signals: list[str] | None = None,
    pathed: set[int] | None = None,
    declared: set[int] | None = None,
    max_scored: int = MAX_SCORED,
) -> list[Candidate]:
    """Score every visible memory that shares a meaningful term with the query.

    `signals`: words of the files the work touches and of the branch, weaker than the
    task's own words; `pathed`: memories that name a touched file (as strong as a trigger);
    `declared`: those of them whose `paths:` globs match it (a person bound them to it);
    `max_scored`: candidates scored in full, the best by their term scores (a search that
    keeps only its best few needs fewer).
    """
    terms = query_terms(query)
    term_stems = {stem(t) for t in terms}
    term_set = set(terms)
    extra = [w for w in query_terms(" ".join(signals or [])) if stem(w) not in term_stems]
    declared = declared or set()
    pathed = (pathed or set()) | declared
    triggered, near_triggered = (
        trigger_matches(index, query) if query.strip() else (frozenset(), frozenset())
    )
    if not terms and not triggered and not near_triggered and not extra and not pathed:
        return []
    total = max(index.doc_count(), 1)
    per_doc: dict[int, dict[str, float]] = {}
    admitted: set[int] = set()
    field_hits: set[int] = set()
    expansions = synonym_expansions(query, terms)
    strong_terms = 0
    scored_terms: list[tuple[str, str, float]] = (
        [(t, t, 1.0) for t in terms]
        + [(s, base, 0.6) for s, base in expansions]
        + [(w, w, SIGNAL_WEIGHT) for w in extra]
    )
    term_df: dict[str, int] = {t: index.term_df(t) for t, _b, _w in scored_terms}
    common: list[tuple[str, str, float]] = []  # scored by presence once the rarer terms ran
    for term, base, w in scored_terms:
        df = term_df[term]
        if not df:
            continue
        weak = df / total > WEAK_DF and total >= 20
        if not weak and w == 1.0:
            strong_terms += 1
        weight = w * (0.4 if weak else 1.0)
        if df / total > COMMON_DF and total >= COMMON_MIN_DOCS:
            common.append((term, base, weight))
            continue
        scored = index.term_scores(term, FTS_WEIGHTS, MAX_PER_TERM)
        for rowid, score in scored:
            bucket = per_doc.get(rowid)
            if bucket is None:
                per_doc[rowid] = {base: score * weight}
            elif score * weight > bucket.get(base, 0.0):
                bucket[base] = score * weight
        if not weak:
            admitted.update(rowid for rowid, _score in scored)
    for term, base, weight in common:
        # A common word: presence counts with its idf (bm25 over thousands of rows costs more
        # than it tells), and it admits memories only when the rarer words found few.
        df = term_df[term]
        idf = math.log((total - df + 0.5) / (df + 0.5) + 1.0) * weight
        rowids = index.term_rowid_set(term)
        if len(admitted) < MIN_ADMITTED and weight >= 1.0:
            admitted |= rowids
        for rowid in rowids & (admitted | per_doc.keys()):
            bucket = per_doc.setdefault(rowid, {})
            if idf > bucket.get(base, 0.0):
                bucket[base] = idf
    if not admitted and (weak_admits or strong_terms == 0):
        # Only common words: admit memories that name them in title, tags or triggers.
        for term in terms:
            q = "{title tags triggers} : " + match_phrase(term)
            try:
                for (rowid,) in index.conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (q,)):
                    field_hits.add(rowid)
            except sqlite3.OperationalError:
                continue
        admitted = field_hits
    admitted |= triggered | near_triggered | pathed
    if not admitted:
        return []
    if len(admitted) > max_scored:
        n_terms = max(len(terms), 1)
        empty: dict[str, float] = {}
        prelim = {
            r: sum(b.values()) * (0.6 + 0.8 * len(b) / n_terms)
            for r in admitted
            for b in (per_doc.get(r, empty),)
        }
        best = sorted(admitted, key=prelim.__getitem__, reverse=True)[:max_scored]
        admitted = set(best) | triggered | pathed
    rows = index.rows_by_rowid(sorted(admitted))
    shadowed = index.workspace_ids([r["id"] for r in rows.values() if r["scope"] == "global"])
    usage = usage or {}
    qstems = {stem(t) for t in terms}
    idf = {
        t: math.log((total - term_df[t] + 0.5) / (term_df[t] + 0.5) + 1.0)
        for t in terms
        if term_df.get(t)
    }
    max_idf = math.log((total - 0.5) / 1.5 + 1.0) if total > 1 else 1.0
    # A task word no memory has is the most informative word of all, and nothing matches it:
    # "who takes over the pager on Monday" is not mostly matched by a memory naming Monday.
    unknown = sum(1 for t in set(terms) if not term_df.get(t) and len(t) > 2)
    idf_total = sum(idf.values()) + UNKNOWN_WEIGHT * max_idf * unknown
    # Signal words weigh less; a memory's share counts them only when that raises it.
    signal_idf = {
        w: SIGNAL_WEIGHT * math.log((total - term_df[w] + 0.5) / (term_df[w] + 0.5) + 1.0)
        for w in extra
        if term_df.get(w)
    }
    all_total = idf_total + sum(signal_idf.values())
    rare_stems = {
        stem(t) for t in (*terms, *extra) if 0 < term_df.get(t, 0) <= max(3, RARE_DF * total)
    }
    qnorm = " " + " ".join(tokenize(query)) + " "
    all_stems = {stem(w) for w in tokenize(query)}
    today = dt.date.fromisoformat(vis.today)
    out: list[Candidate] = []
    for rowid, row in rows.items():
        ok, _ = vis.visible(row)
        if not ok or (row["scope"] == "global" and row["id"] in shadowed):
            continue
        matched = per_doc.get(rowid, {})
        lexical = sum(matched.values())
        own = [t for t in matched if t in term_set]
        coverage = len(own) / len(terms) if terms else 0.0
        own_idf = sum(idf.get(t, 0.0) for t in own)
        idf_share = own_idf / idf_total if idf_total else 0.0
        if signal_idf:
            both = own_idf + sum(signal_idf.get(t, 0.0) for t in matched)
            idf_share = max(idf_share, both / all_total if all_total else 0.0)
        tags = split_list(row["tags"])
        tag_hits = sum(1 for tag in tags if word_stems(tag) & qstems)
        trig = 0.0
        for phrase in split_list(row["triggers"]):
            ptoks = tokenize(phrase)
            if ptoks and f" {' '.join(ptoks)} " in qnorm:
                trig += 3.0
            elif ptoks:
                trig += 2.0 * phrase_match(phrase, all_stems)
        recency = 0.0
        try:
            age = (today - dt.date.fromisoformat((row["updated"] or "")[:10])).days
            recency = 0.3 * max(0.0, 1 - age / 365)
        except ValueError:
            pass
        use = 0.15 * math.log1p(usage.get((row["scope"], row["id"]), 0))
        parts = {
            "lexical": round(lexical * (COVERAGE_BASE + COVERAGE_GAIN * coverage), 4),
            "tags": 1.2 * tag_hits,
            "triggers": trig,
            "recency": round(recency, 4),
            "usage": round(use, 4),
        }
        if rowid in pathed:
            parts["paths"] = 3.0
        cand = Candidate(row, round(sum(parts.values()), 4), parts, sorted(matched))
        cand.idf_share = idf_share
        if rowid in triggered or rowid in pathed:  # a trigger phrase or a touched file names it
            cand.named = cand.named | {TRIGGERED}
        if rowid in declared:
            cand.named = cand.named | {DECLARED}
        if rare_stems:
            named = word_stems(row["title"] or "").union(*(word_stems(tag) for tag in tags))
            cand.named = cand.named | (named & rare_stems)
        out.append(cand)
    out.sort(key=lambda c: (-c.score, c.row["id"]))
    return out


def select_with_prerequisites(
    ranked: list[Candidate],
    visible: VisibleLookup,
    limit: int | None,
    *,
    max_own: int | None = None,
) -> tuple[list[Candidate], list[Candidate], list[str]]:
    """Pick the pack: ranked memories plus their depends_on closure, prerequisites first.

    Returns (selected in load order, dropped candidates with reasons, missing dependency ids).
    `max_own`: stop once that many ranked memories are chosen (a search keeps only its best
    few; candidates run in score order, so the first chosen are the best).
    """
    chosen: dict[str, Candidate] = {}
    order_rank: dict[str, float] = {}
    dropped: list[Candidate] = []
    missing: list[str] = []
    own: list[tuple[Candidate, frozenset[str]]] = []  # chosen ranked memories, with their terms
    top = ranked[0].score if ranked else 0.0
    visible.seed(c.row for c in ranked)
    for pos, cand in enumerate(ranked):
        mid = cand.row["id"]
        if mid in chosen:
            continue
        if max_own is not None and len(own) >= max_own:
            break
        if limit is not None and len(chosen) >= limit:
            cand.reason = f"over the load limit of {limit}"
            dropped.append(cand)
            continue
        if pos > 0 and cand.idf_share < MIN_IDF_SHARE and TRIGGERED not in cand.named:
            cand.reason = (
                f"matches too little of the task ({cand.idf_share:.0%} of its informative words)"
            )
            dropped.append(cand)
            continue
        if top > 0 and cand.score < RELATIVE_CUTOFF * top and pos > 0 and not cand.named:
            cand.reason = (
                f"below the relevance cutoff ({cand.score:.2f} < {RELATIVE_CUTOFF:.2f} × {top:.2f})"
            )
            dropped.append(cand)
            continue
        terms = frozenset(cand.matched)
        dominated_by = next(
            (
                c.row["id"]
                for c, c_terms in own
                if c_terms
                and terms < c_terms
                and cand.score < DOMINATED_SHARE * c.score
                and not cand.named - c.named  # it names no rare term the stronger one does not
            ),
            None,
        )
        if dominated_by and TRIGGERED not in cand.named:
            cand.reason = f"matches only terms that {dominated_by} matches, and far more weakly"
            dropped.append(cand)
            continue
        closure = _prerequisites(mid, visible, missing)
        new = [p for p in closure if p not in chosen]
        if new and top > 0 and cand.score < PREREQ_MIN_SHARE * top:
            cand.reason = "a weak match whose prerequisites would crowd out stronger ones"
            dropped.append(cand)
            continue
        if limit is not None and len(chosen) + len(new) + 1 > limit:
            cand.reason = f"over the load limit of {limit}"
            dropped.append(cand)
            continue
        for p in new:
            chosen[p] = Candidate(visible[p], 0.0, {}, [], f"prerequisite of {mid}")
            chosen[p].pulled_by = mid
            order_rank[p] = pos - 0.5
        chosen[mid] = cand
        own.append((cand, terms))
        order_rank[mid] = pos
    return _topological(chosen, order_rank), dropped, sorted(set(missing))


# Confidence (see `grade`): absolute evidence that a memory applies, from 0 to 1. The
# weights say what counts as evidence; the two tier thresholds are chosen by
# `engram benchmark` leave-one-suite-out on the labelled suites (the defaults below are
# the choice on all of them) and are the only constants tuned on data.
CONF_IDF, CONF_REL, CONF_NAMED, CONF_TRIGGER = 0.5, 0.3, 0.1, 0.2
BODY_CONFIDENCE = 0.6  # at or above: the body is shown
CARD_CONFIDENCE = 0.2  # at or above: a one-line card; below: nothing
# When the host's model wrote the searches (`queries`), a body needs more: the model reads
# the cards and opens the ones it judges relevant by id, while a body it did not ask for
# (the other twin: US915 for AU915, rev C for rev D) reads as the answer. Chosen like the
# two above, on the first three suites with their query files; cards are unchanged.
SEARCH_BODY_CONFIDENCE = 0.8
THIN_FACTOR = 0.5  # a task of one meaningful word: only a clear match keeps its confidence


def confidence(cand: Candidate, top: float) -> float:
    """How sure the router is that `cand` applies, from evidence that does not depend on rank:

    0.5 × the share of the task's informative (idf) weight the memory matches (coverage,
    weighted so rare words count more) + 0.3 × its score relative to the best match
    (agreement of the field, tag and trigger signals) + 0.1 per rare task word its title or
    tags name (at most two) + 0.2 when a trigger phrase a person wrote for it is in the task.
    """
    named = len(cand.named - {TRIGGERED, DECLARED})
    value = (
        CONF_IDF * cand.idf_share
        + CONF_REL * (cand.score / top if top > 0 else 0.0)
        + CONF_NAMED * min(named, 2)
        + CONF_TRIGGER * (TRIGGERED in cand.named)
    )
    return round(min(value, 1.0), 4)


def grade(
    selected: list[Candidate],
    terms: list[str],
    *,
    body_at: float = BODY_CONFIDENCE,
    card_at: float = CARD_CONFIDENCE,
    dropped: list[Candidate] | None = None,
) -> None:
    """Set each candidate's confidence and tier (body, card or unsure), in place.

    A prerequisite is as sure as the memory that needs it. A task with at most one
    meaningful word ("commit this", "thanks", "continue") says too little to be sure of
    several memories: only the best match keeps its confidence, and only when its title,
    tags or a trigger name the word; every other one counts for half.
    """
    own = [c for c in selected if not c.pulled_by]
    top = max((c.score for c in own), default=0.0)
    for c in own:
        c.confidence = confidence(c, top)
        if DECLARED in c.named:  # a person bound it to a file the work touches: it applies
            c.confidence = max(c.confidence, body_at)
    if len(terms) <= 1 and own:
        leader = max(own, key=lambda c: (c.confidence, c.score))
        for c in own:
            if c is not leader or not c.named:
                c.confidence = round(c.confidence * THIN_FACTOR, 4)
    by_id = {c.row["id"]: c for c in own}
    for c in selected:
        if c.pulled_by:
            c.confidence = by_id[c.pulled_by].confidence if c.pulled_by in by_id else 0.0
    for c in selected:
        c.tier = tier_for(c.confidence, body_at, card_at)
    for c in dropped or []:  # for --explain: what the dropped ones would have scored
        c.confidence = confidence(c, top)
        c.tier = "unsure"


def tier_for(
    conf: float, body_at: float = BODY_CONFIDENCE, card_at: float = CARD_CONFIDENCE
) -> str:
    """The tier a confidence earns: "body", "card" or "unsure" (not shown)."""
    return "body" if conf >= body_at else "card" if conf >= card_at else "unsure"


def _prerequisites(mid: str, visible: VisibleLookup, missing: list[str]) -> list[str]:
    seen: list[str] = []
    stack = [mid]
    visiting: set[str] = set()
    while stack:
        cur = stack.pop()
        if cur in visiting:
            continue
        visiting.add(cur)
        row = visible.get(cur)
        if row is None:
            continue
        for dep in split_list(row["depends_on"]):
            if dep == mid or dep in seen:
                continue
            if dep not in visible:
                missing.append(dep)
                continue
            seen.append(dep)
            stack.append(dep)
    return seen


def _topological(chosen: dict[str, Candidate], order_rank: dict[str, float]) -> list[Candidate]:
    """Prerequisites before dependents; otherwise ranking order. Cycles fall back to rank."""
    deps = {
        mid: [d for d in split_list(c.row["depends_on"]) if d in chosen and d != mid]
        for mid, c in chosen.items()
    }
    out: list[str] = []
    placed: set[str] = set()
    visiting: set[str] = set()

    def place(mid: str) -> None:
        if mid in placed or mid in visiting:
            return
        visiting.add(mid)
        for d in sorted(deps[mid], key=lambda x: order_rank[x]):
            place(d)
        visiting.discard(mid)
        placed.add(mid)
        out.append(mid)

    for mid in sorted(chosen, key=lambda x: order_rank[x]):
        place(mid)
    return [chosen[m] for m in out]
