"""Verdicts: what a candidate would do to the memory as it is now (R-APP-9).

The rules are lexical and deterministic, so the same candidate against the same
memory state always gets the same verdict (the proposal freezes it and the commit
recomputes it). Texts are compared on their *core words*: lowercase words minus
stopwords, negations and replacement markers, with a plural `s` dropped.

- ``NOOP duplicate of X``: X says the same thing: same normalised text (any type), or
  same type, same polarity and core-word overlap (Jaccard) ≥ 0.9.
- ``UPDATE X``: an explicit ``UPDATE: X``, or X has the same type, the same polarity and
  overlap ≥ 0.6.
- ``SUPERSEDE X``: the candidate contradicts X (same type): overlap ≥ 0.5 and opposite
  polarity (one is negated: not/never/avoid/no longer …, the other not, or an
  always/never-style antonym pair), or overlap ≥ 0.35 and the candidate says it
  replaces something ("instead of", "no longer", "rather than", "replaces",
  "deprecated", "anymore").
- ``ADD`` otherwise. An ADD that still overlaps ≥ 0.5 with a memory of the same type
  (≥ 0.8 with one of another type) is a *possible duplicate*: it is shown, and a
  commit defers it for review. Other memories sharing ≥ 0.2 of the words (or named by
  id in the text) are listed as related; for a skill they are suggested `depends_on`.

Ties go to the memory that sorts first (workspace before global, then by id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engram.core.candidates import STOPWORDS, Candidate, words
from engram.core.memory import Memory

NOOP_AT = 0.9
UPDATE_AT = 0.6
SUPERSEDE_AT = 0.5
REPLACE_AT = 0.35
POSSIBLE_DUPLICATE_AT = 0.5
CROSS_TYPE_DUPLICATE_AT = 0.8
RELATED_AT = 0.2
MAX_RELATED = 3

NEGATIONS = frozenset(
    """not no never don't dont doesn't doesnt isn't isnt aren't arent shouldn't shouldnt
    mustn't mustnt cannot can't cant won't wont avoid avoids stop without disable disabled
    forbid forbidden forbids disallow disallowed nor none neither""".split()
)
ANTONYMS = (
    ("always", "never"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("allow", "forbid"),
    ("allow", "deny"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("true", "false"),
    ("sync", "async"),
)
_REPLACE_MARKERS = re.compile(
    r"\b(?:instead\s+of|no\s+longer|rather\s+than|replaces?|replaced\s+by|deprecated|anymore|"
    r"not\s+any\s+more|from\s+now\s+on)\b",
    re.IGNORECASE,
)
_MARKER_WORDS = frozenset({"instead", "longer", "rather", "replace", "replaced", "deprecated"})


@dataclass(frozen=True)
class Verdict:
    kind: str  # ADD | UPDATE | SUPERSEDE | NOOP
    target: str = ""
    target_scope: str = ""

    def line(self) -> str:
        if self.kind == "ADD":
            return "ADD"
        if self.kind == "NOOP":
            return f"NOOP duplicate of {self.target}"
        return f"{self.kind} {self.target}"

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "target": self.target, "target_scope": self.target_scope}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(str(d["kind"]), str(d.get("target", "")), str(d.get("target_scope", "")))


@dataclass
class Judgement:
    verdict: Verdict
    related: list[dict[str, Any]] = field(default_factory=list)
    possible_duplicate: str = ""  # id of a memory an ADD may duplicate
    # True only when an UPDATE/SUPERSEDE/NOOP is clearly about the same fact (an explicit
    # ``UPDATE: id`` or the same subject with high confidence); a forced save replaces a
    # memory only then.
    certain: bool = False


@dataclass(frozen=True)
class Profile:
    """What comparison needs from a text: core words, polarity, normalised form."""

    core: frozenset[str]
    negated: bool
    flags: frozenset[str]
    normal: str
    replaces: bool


def _stem(w: str) -> str:
    if len(w) > 3 and w.endswith("s") and not w.endswith("ss"):
        return w[:-1]
    return w


def profile(text: str) -> Profile:
    ws = words(text)
    neg = sum(1 for w in ws if w in NEGATIONS) % 2 == 1
    antonym_words = {a for pair in ANTONYMS for a in pair}
    flags = frozenset(w for w in ws if w in antonym_words)
    core = frozenset(
        _stem(w.replace("'", ""))
        for w in ws
        if w not in STOPWORDS and w not in NEGATIONS and w not in _MARKER_WORDS
        and w not in antonym_words and len(w) > 1
    )  # fmt: skip
    return Profile(core, neg, flags, " ".join(ws), bool(_REPLACE_MARKERS.search(text)))


def _profile_of(m: Memory, profiles: dict | None) -> Profile:
    """A memory's word profile, computed once per memory when a cache is given."""
    key = (m.scope, m.id)
    mp = profiles.get(key) if profiles is not None else None
    if mp is None:
        mp = profile(memory_text(m))
        if profiles is not None:
            profiles[key] = mp
    return mp


def memory_text(m: Memory) -> str:
    """What a memory says, for comparison: title, content and the balanced wording."""
    parts = [m.title, re.sub(r"^\s*[-*]\s+", "", m.content, flags=re.MULTILINE)]
    if m.variants.get("balanced"):
        parts.append(m.variants["balanced"])
    return " ".join(p for p in parts if p)


def overlap(a: Profile, b: Profile) -> float:
    if not a.core or not b.core:
        return 0.0
    return len(a.core & b.core) / len(a.core | b.core)


def _opposite(a: Profile, b: Profile) -> bool:
    if a.negated != b.negated:
        return True
    return any(
        (x in a.flags and y in b.flags and x not in b.flags)
        or (y in a.flags and x in b.flags and y not in b.flags)
        for x, y in ANTONYMS
    )


def _same_text(a: Profile, b: Profile) -> bool:
    return a.normal == b.normal or (bool(a.core) and a.core == b.core and a.flags == b.flags
                                    and a.negated == b.negated)  # fmt: skip


def judge(
    cand: Candidate,
    existing: list[Memory],
    earlier: list[tuple[str, Candidate]] | None = None,
    *,
    profiles: dict[tuple[str, str], Profile] | None = None,
) -> Judgement:
    """The verdict for one candidate against `existing` (sorted: workspace first, then id).

    `earlier` holds (id, candidate) for the candidates before this one in the same
    proposal, so that a repeated line is a NOOP duplicate of the first.
    """
    cp = profile(cand.text)
    for eid, other in earlier or []:
        if _same_text(cp, profile(other.text)):
            return Judgement(Verdict("NOOP", eid, "proposal"))

    scored: list[tuple[float, int, Memory, Profile]] = []
    for i, m in enumerate(existing):
        mp = _profile_of(m, profiles)
        scored.append((overlap(cp, mp), i, m, mp))
    ranked = sorted(scored, key=lambda t: (-t[0], t[1]))

    verdict = Verdict("ADD")
    certain = False
    if cand.update:
        target = next((m for m in existing if m.id == cand.update), None)
        verdict = Verdict("UPDATE", cand.update, target.scope if target else "")
        certain = True
    else:
        for _score, _, m, mp in ranked:
            if _same_text(cp, mp):
                verdict = Verdict("NOOP", m.id, m.scope)
                certain = True
                break
        else:
            for score, _, m, mp in ranked:
                if m.type != cand.type or score < REPLACE_AT:
                    continue
                contradicts = score >= SUPERSEDE_AT and _opposite(cp, mp)
                if contradicts or (cp.replaces and not mp.replaces):
                    verdict = Verdict("SUPERSEDE", m.id, m.scope)
                elif score >= NOOP_AT:
                    verdict = Verdict("NOOP", m.id, m.scope)
                elif score >= UPDATE_AT:
                    verdict = Verdict("UPDATE", m.id, m.scope)
                else:
                    continue
                break

    mentioned = set(re.findall(r"[a-z0-9][a-z0-9-]*[a-z0-9]", cand.text.lower()))
    related: list[dict[str, Any]] = []
    possible_duplicate = ""
    for score, _, m, _mp in ranked:
        if m.id == verdict.target:
            continue
        is_mentioned = m.id in mentioned and "-" in m.id
        if score < RELATED_AT and not is_mentioned:
            continue
        dup_at = POSSIBLE_DUPLICATE_AT if m.type == cand.type else CROSS_TYPE_DUPLICATE_AT
        if score >= dup_at:
            hint = "possible duplicate"
            if verdict.kind == "ADD" and not possible_duplicate:
                possible_duplicate = m.id
        elif is_mentioned or (cand.type == "skill" and m.id not in cand.depends_on):
            hint = "suggested depends_on"
        else:
            hint = "related"
        related.append(
            {"id": m.id, "type": m.type, "scope": m.scope, "score": round(score, 2), "hint": hint}
        )
        if len(related) >= MAX_RELATED:
            break
    return Judgement(verdict, related, possible_duplicate, certain)


def other_scope_related(
    cand: Candidate,
    others: list[Memory],
    *,
    profiles: dict[tuple[str, str], Profile] | None = None,
) -> list[dict[str, Any]]:
    """Memories of a scope the candidate is not saved to that say the same or the opposite.

    They never change the verdict (the candidate does not touch them), but both will
    load side by side, so the human should see them in the preview.
    """
    cp = profile(cand.text)
    out: list[tuple[float, dict[str, Any]]] = []
    for m in others:
        if m.type != cand.type:
            continue
        mp = _profile_of(m, profiles)
        score = overlap(cp, mp)
        if score >= SUPERSEDE_AT and _opposite(cp, mp):
            hint = f"contradicts ({m.scope})"
        elif score >= POSSIBLE_DUPLICATE_AT or _same_text(cp, mp):
            hint = f"same subject ({m.scope})"
        else:
            continue
        out.append(
            (score, {"id": m.id, "type": m.type, "scope": m.scope, "score": round(score, 2),
                     "hint": hint})
        )  # fmt: skip
    out.sort(key=lambda t: -t[0])
    return [d for _, d in out[:MAX_RELATED]]


def sort_existing(memories: list[Memory]) -> list[Memory]:
    """The deterministic comparison order: workspace before global, then id."""
    order = {"workspace": 0, "global": 1}
    return sorted(memories, key=lambda m: (order.get(m.scope, 2), m.id))


def find_cycle(edges: dict[str, list[str]], start: str) -> list[str] | None:
    """A depends_on path from `start` back to itself, or None."""
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    seen: set[str] = set()
    while stack:
        node, path = stack.pop()
        for nxt in sorted(edges.get(node, [])):
            if nxt == start:
                return [*path, start]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*path, nxt]))
    return None
