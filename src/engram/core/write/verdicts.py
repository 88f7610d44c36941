"""Verdicts: what a candidate would do to the memory as it is now (R-APP-9).

The rules are deterministic, so the same candidate against the same memory state
always gets the same verdict (the proposal freezes it and the commit recomputes it).
What a text is *about* decides (see `engram.core.write.subjects`): its named things
(identifiers, paths, URLs, hosts, code spans, quoted strings, capitalised names,
environments), its values (numbers, versions, addresses) and its stemmed words.

- ``NOOP duplicate of X``: X (of the same type) says the same up to formatting (case,
  punctuation, Markdown, list numbering, compatibility forms). Certain.
- ``UPDATE X``: an explicit ``UPDATE: X`` (certain), or X has the same type and the same
  subject with a changed value ("… port 8443" → "… now … port 9443"; a fact said to use
  Y "instead of" its X; a workflow with one more step under the same heading). Certain
  only when the one change is a value and the rest of the text is the same.
- ``SUPERSEDE X``: the candidate reverses X (same type, same subject, opposite polarity:
  not/never/avoid …, an always/never-style antonym, "X was dropped"), or is a rule that
  says it replaces what X says ("use uv instead of Poetry", "stop using …"). Certain only
  for the same words reversed.
- ``ADD`` otherwise. Texts that differ in what they name (svc-1 vs svc-2, staging vs
  production, Postgres vs Redis) are different facts: ADD, listed as related with the
  difference. An ADD that says the same as a memory in other words (synonyms, word
  forms, a few words more or fewer) is a *possible duplicate*: it is shown, and a commit
  defers it for review. Other memories sharing ≥ 0.2 of the units (or named by id in the
  text) are listed as related; for a skill they are suggested `depends_on`.

A fact is never replaced unless the candidate is about the same subject: when in doubt
the verdict is ADD, which loses nothing. `Judgement.certain` says when a replacement is
clear enough for a forced save to apply it without a person looking.

Ties go to the memory that sorts first (workspace before global, then by id).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engram.core.memory import Memory
from engram.core.write.candidates import Candidate
from engram.core.write.subjects import (
    NEGATIONS,
    Profile,
    Relation,
    analyse,
    opposite,
    relate,
    similarity,
)

__all__ = [
    "NEGATIONS",
    "Judgement",
    "Profile",
    "Verdict",
    "find_cycle",
    "judge",
    "memory_text",
    "other_scope_related",
    "overlap",
    "profile",
    "sort_existing",
]

POSSIBLE_DUPLICATE_AT = 0.5
CROSS_TYPE_DUPLICATE_AT = 0.9
RELATED_AT = 0.2
MAX_RELATED = 3
# A skill that says all a memory says and more (one more step) updates it; a rule or a
# fact that does ("… on Fridays", "… in staging") may narrow it: a possible duplicate.
_REPLACING = {
    "update": "UPDATE",
    "extends": "UPDATE",
    "contradiction": "SUPERSEDE",
    "replaces": "SUPERSEDE",
    "replaces_in_rule": "SUPERSEDE",
}


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
    # ``UPDATE: id``, the same text, or the same subject with one changed value); a
    # forced save replaces a memory only then.
    certain: bool = False
    reason: str = ""  # why the verdict names its target, for the preview


def profile(text: str) -> Profile:
    """The comparison profile of a text (units, polarity, markers); cached per text."""
    return analyse(text)


def content_text(m: Memory) -> str:
    """A memory's content as one line (list markers dropped)."""
    return " ".join(
        re.sub(r"^\s*[-*]\s+", "", ln).strip() for ln in m.content.splitlines() if ln.strip()
    )


def memory_text(m: Memory) -> str:
    """What a memory says, for comparison: its content, with the title if it adds words."""
    content = content_text(m)
    if not content:
        return m.title
    if m.title and not set(re.findall(r"\w+", m.title.lower())) <= set(
        re.findall(r"\w+", content.lower())
    ):
        return f"{m.title}. {content}"
    return content


def _profile_of(m: Memory, profiles: dict | None) -> Profile:
    """A memory's profile, computed once per memory when a cache is given."""
    key = (m.scope, m.id)
    mp = profiles.get(key) if profiles is not None else None
    if mp is None:
        mp = profile(memory_text(m))
        if profiles is not None:
            profiles[key] = mp
    return mp


def overlap(a: Profile, b: Profile) -> float:
    """Order-free overlap of two profiles (0..1)."""
    return similarity(a, b)


def _relation(cp: Profile, mp: Profile, *, steps: bool = False, facts: bool = False) -> Relation:
    if not (cp.keyset & mp.mentions or mp.keyset & cp.mentions) and cp.normal != mp.normal:
        return Relation("different", 0.0, False, "other subject")  # nothing in common
    return relate(cp, mp, steps=steps, facts=facts)


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
        if _relation(cp, profile(other.text)).kind == "same":
            return Judgement(Verdict("NOOP", eid, "proposal"), certain=True, reason="same text")

    rels: list[tuple[Relation, int, Memory]] = [
        (
            _relation(
                cp,
                _profile_of(m, profiles),
                steps=cand.type == m.type == "skill",
                facts=cand.type == m.type == "knowledge",
            ),
            i,
            m,
        )
        for i, m in enumerate(existing)
    ]
    ranked = sorted(rels, key=lambda t: (-t[0].score, t[1]))

    verdict = Verdict("ADD")
    certain = False
    reason = ""
    if cand.update:
        target = next((m for m in existing if m.id == cand.update), None)
        verdict = Verdict("UPDATE", cand.update, target.scope if target else "")
        certain, reason = True, "UPDATE named in the candidate"
    else:
        # A memory of another type is never replaced nor counted as this one: the same
        # text as a rule and as a fact is shown as a possible duplicate.
        same = next((t for t in rels if t[0].kind == "same" and t[2].type == cand.type), None)
        if same is None and cp.normal:
            # The same text as a memory's content (under a title that adds words, "Secrets")
            # or as one of its rule wordings: still the same memory.
            words = re.findall(r"\w+", cand.text.lower())
            same = next(
                (
                    (Relation("same", 1.0, True, "same text"), i, m)
                    for i, m in enumerate(existing)
                    if m.type == cand.type
                    for text in (content_text(m), *(m.variants or {}).values())
                    if re.findall(r"\w+", text.lower()) == words  # cheap first
                    and profile(text).normal == cp.normal
                ),
                None,
            )
        replacing = [
            t
            for t in ranked
            if t[2].type == cand.type
            and t[0].kind in _REPLACING
            and (t[0].kind != "extends" or cand.type == "skill")
            and (t[0].kind != "replaces_in_rule" or cand.type != "knowledge")
        ]
        if same is not None:
            verdict = Verdict("NOOP", same[2].id, same[2].scope)
            certain, reason = True, same[0].why
        elif replacing:
            rel, _, m = max(replacing, key=lambda t: (t[0].certain, t[0].score, -t[1]))
            kind = _REPLACING[rel.kind]
            if rel.kind == "replaces" and m.type == "knowledge":
                kind = "UPDATE"  # a fact gets a new value; a rule or skill is superseded
            verdict = Verdict(kind, m.id, m.scope)
            certain, reason = rel.certain, rel.why

    mentioned = set(re.findall(r"[a-z0-9][a-z0-9-]*[a-z0-9]", cand.text.lower()))
    related: list[dict[str, Any]] = []
    possible_duplicate = ""
    for rel, _, m in ranked:
        if m.id == verdict.target:
            continue
        is_mentioned = m.id in mentioned and "-" in m.id
        dup_at = POSSIBLE_DUPLICATE_AT if m.type == cand.type else CROSS_TYPE_DUPLICATE_AT
        is_dup = rel.kind in ("same", "paraphrase", "extends") and rel.score >= dup_at
        if rel.score < RELATED_AT and not is_mentioned and not is_dup:
            continue
        if is_dup:
            hint = "possible duplicate"
            if verdict.kind == "ADD" and not possible_duplicate:
                possible_duplicate = m.id
                reason = rel.why
        elif is_mentioned or (cand.type == "skill" and m.id not in cand.depends_on):
            hint = "suggested depends_on"
        elif rel.kind == "different" and rel.why != "other subject":
            hint = f"related: {rel.why}"
        else:
            hint = "related"
        related.append(
            {"id": m.id, "type": m.type, "scope": m.scope, "score": round(rel.score, 2),
             "hint": hint}
        )  # fmt: skip
        if len(related) >= MAX_RELATED:
            break
    return Judgement(verdict, related, possible_duplicate, certain, reason)


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
        rel = _relation(cp, mp)
        if rel.kind == "contradiction" or (rel.kind.startswith("replaces") and opposite(cp, mp)):
            hint = f"contradicts ({m.scope})"
        elif rel.kind in ("same", "paraphrase", "update", "replaces", "replaces_in_rule"):
            hint = f"same subject ({m.scope})"
        else:
            continue
        out.append(
            (rel.score, {"id": m.id, "type": m.type, "scope": m.scope,
                         "score": round(rel.score, 2), "hint": hint})
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
