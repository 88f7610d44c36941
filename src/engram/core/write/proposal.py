"""The proposal: one typed schema for what a person is asked to approve.

A proposal is made once (`approvals.build_proposal`), frozen in the pending file as
its JSON form (covered by the token's MAC), and read back with `Proposal.from_json`
by everything that shows or writes it: the commit, the preview and the approval
dialog (`public()`), the review page and `engram pending`. A field means the same
thing everywhere because it is read in one place; a pending entry of the wrong
shape is refused here, with what was wrong, instead of surfacing as a KeyError in
one reader and a blank line in another.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from engram.core.write.candidates import Candidate, content_of
from engram.core.write.verdicts import Verdict

__all__ = [
    "DuplicateOf",
    "ImportedPassage",
    "NoteFields",
    "PromoteFrom",
    "Proposal",
    "ProposalFormatError",
    "ProposedCandidate",
    "Related",
    "ReplacedFile",
    "Screening",
]


class ProposalFormatError(ValueError):
    """A stored proposal that does not have the proposal's shape (edited, or foreign)."""


# ---------------------------------------------------------------- reading JSON


def _get(d: dict[str, Any], key: str, kind: type | tuple[type, ...], default: Any) -> Any:
    value = d.get(key, default)
    if value is None and default is None:
        return None
    if kind is int and isinstance(value, bool):
        raise ProposalFormatError(f"{key} is not a number")
    if not isinstance(value, kind):
        raise ProposalFormatError(f"{key} is {type(value).__name__}, not {_name(kind)}")
    return value


def _name(kind: type | tuple[type, ...]) -> str:
    kinds = kind if isinstance(kind, tuple) else (kind,)
    return " or ".join(k.__name__ for k in kinds)


def _texts(d: dict[str, Any], key: str) -> tuple[str, ...]:
    value = _get(d, key, list, [])
    if not all(isinstance(v, str) for v in value):
        raise ProposalFormatError(f"{key} holds something other than text")
    return tuple(value)


def _dicts(d: dict[str, Any], key: str) -> list[dict[str, Any]]:
    value = _get(d, key, list, [])
    if not all(isinstance(v, dict) for v in value):
        raise ProposalFormatError(f"{key} holds something other than objects")
    return value


def _dict(d: dict[str, Any], key: str) -> dict[str, Any] | None:
    return _get(d, key, dict, None)


# ---------------------------------------------------------------- parts


_PLAIN: dict[str, type] = {"str": str, "int": int, "float": float}


class _Flat:
    """A part made of text, numbers and lists of text: its JSON is its fields."""

    # field -> str, int, float or tuple (of text)

    def to_json(self) -> dict[str, Any]:
        return {
            f.name: list(v) if isinstance(v := getattr(self, f.name), tuple) else v
            for f in fields(self)  # type: ignore[arg-type]
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Any:
        values: dict[str, Any] = {}
        for f in fields(cls):  # type: ignore[arg-type]
            kind = _PLAIN.get(str(f.type))  # annotations are text here (postponed)
            if kind is None:
                values[f.name] = _texts(d, f.name)  # tuple[str, ...]
            elif kind is float:
                values[f.name] = float(_get(d, f.name, (int, float), 0.0))
            else:
                values[f.name] = _get(d, f.name, kind, kind())
        return cls(**values)


@dataclass(frozen=True)
class ReplacedFile(_Flat):
    """A file an UPDATE/SUPERSEDE replaces, as it was when the person was asked.

    The hash lets the commit refuse to replace a file changed since (a hand edit, a pull).
    """

    scope: str
    file: str
    revision: int
    hash: str
    diff: tuple[str, ...] = ()

    def shown(self) -> dict[str, Any]:
        """As the agent and the person see it (the hash is for the commit's check)."""
        return {k: v for k, v in self.to_json().items() if k != "hash"}


@dataclass(frozen=True)
class Related(_Flat):
    """An existing memory near a candidate (shown to help the person decide)."""

    id: str
    type: str
    scope: str
    score: float
    hint: str


@dataclass(frozen=True)
class DuplicateOf:
    """The memory a possible duplicate may repeat; `replaces` is what "update" would replace."""

    id: str
    type: str
    title: str
    replaces: tuple[ReplacedFile, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "type": self.type, "title": self.title,
                "replaces": [t.to_json() for t in self.replaces]}  # fmt: skip

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> DuplicateOf:
        return cls(
            id=_get(d, "id", str, ""),
            type=_get(d, "type", str, ""),
            title=_get(d, "title", str, ""),
            replaces=tuple(ReplacedFile.from_json(t) for t in _dicts(d, "replaces")),
        )


@dataclass(frozen=True)
class NoteFields(_Flat):
    """A working note's objective and time to live (`engram note`)."""

    objective: str
    ttl_days: int
    valid_until: str


@dataclass(frozen=True)
class PromoteFrom(_Flat):
    """The working note a promotion removes once the durable memory is written."""

    id: str
    scope: str


@dataclass(frozen=True)
class ImportedPassage:
    """What `engram import` brings besides the text: the passage as written, its source."""

    imported_from: str = ""
    content: str = ""  # the passage as the file has it ("" when bullets of the text say it)
    tags: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tags": list(self.tags), "imported_from": self.imported_from}
        if self.paths:
            out["paths"] = list(self.paths)
        if self.content:
            out["content"] = self.content
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ImportedPassage:
        return cls(
            imported_from=_get(d, "imported_from", str, ""),
            content=_get(d, "content", str, ""),
            tags=_texts(d, "tags"),
            paths=_texts(d, "paths"),
        )


# ---------------------------------------------------------------- a candidate


@dataclass(frozen=True)
class ProposedCandidate:
    """One candidate as the person is asked about it: what it says, where it goes, why."""

    number: int
    type: str
    id: str
    title: str
    text: str
    verdict: Verdict
    context: str = ""
    depends_on: tuple[str, ...] = ()
    level: str = ""
    update: str = ""
    triggers: tuple[str, ...] = ()
    triggers_only: bool = False  # adds triggers; the memory's text stays as it is
    related: tuple[Related, ...] = ()
    deferred_reason: str = ""
    certain: bool = False  # the target is certainly the same fact (a forced save may replace it)
    # None: proposed before targets were frozen (the commit then skips the changed-file check)
    replaces: tuple[ReplacedFile, ...] | None = ()
    duplicate_of: DuplicateOf | None = None
    note: NoteFields | None = None
    promote_from: PromoteFrom | None = None
    imported: ImportedPassage | None = None

    @property
    def verdict_line(self) -> str:
        return self.verdict.line()

    @property
    def possible_duplicate(self) -> bool:
        """Deferred as a possible duplicate: a person decides (keep, update or skip)."""
        return self.deferred_reason.startswith("possible duplicate of ")

    @property
    def duplicate_id(self) -> str:
        """The id of the memory a possible duplicate may repeat."""
        if self.duplicate_of is not None and self.duplicate_of.id:
            return self.duplicate_of.id
        words = self.deferred_reason.split()
        return words[3].rstrip(";") if len(words) > 3 else ""

    @property
    def shown_text(self) -> str:
        """What the person reads: an import's passage as written, else the text."""
        return (self.imported.content if self.imported else "") or self.text

    @property
    def written_content(self) -> str:
        """The `## Content` it is written with: an import's passage as the file has it,
        else bullets of its text."""
        return (self.imported.content if self.imported else "") or content_of(self.text)

    def as_candidate(self) -> Candidate:
        """The candidate as parsed, to be judged again at commit time."""
        return Candidate(
            number=self.number, type=self.type, text=self.text, context=self.context,
            depends_on=list(self.depends_on), level=self.level, update=self.update,
            triggers=list(self.triggers), triggers_only=self.triggers_only,
        )  # fmt: skip

    def to_json(self) -> dict[str, Any]:
        out = self.as_candidate().as_dict()  # the candidate's own fields, as it was parsed
        if self.duplicate_of is not None:
            out["duplicate_of"] = self.duplicate_of.to_json()
        out.update(
            id=self.id,
            title=self.title,
            verdict=self.verdict.as_dict(),
            verdict_line=self.verdict_line,
            related=[r.to_json() for r in self.related],
            deferred_reason=self.deferred_reason,
            certain=self.certain,
        )
        if self.replaces is not None:
            out["replaces"] = [t.to_json() for t in self.replaces]
        if self.note is not None:
            out["note"] = self.note.to_json()
        if self.promote_from is not None:
            out["promote_from"] = self.promote_from.to_json()
        if self.imported is not None:
            out["import"] = self.imported.to_json()
        return out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> ProposedCandidate:
        if not isinstance(d, dict):
            raise ProposalFormatError("a candidate is not an object")
        verdict = _get(d, "verdict", dict, {"kind": "ADD"})
        kind = _get(verdict, "kind", str, "")
        if kind not in ("ADD", "UPDATE", "SUPERSEDE", "NOOP"):
            raise ProposalFormatError(f"verdict {kind!r} is not ADD, UPDATE, SUPERSEDE or NOOP")
        dup, note, src, imp = (_dict(d, k) for k in ("duplicate_of", "note", "promote_from",
                                                       "import"))  # fmt: skip
        replaces = None if "replaces" not in d else _dicts(d, "replaces")
        return cls(
            number=_get(d, "number", int, 0),
            type=_get(d, "type", str, ""),
            id=_get(d, "id", str, ""),
            title=_get(d, "title", str, ""),
            text=_get(d, "text", str, ""),
            verdict=Verdict(
                kind, _get(verdict, "target", str, ""), _get(verdict, "target_scope", str, "")
            ),
            context=_get(d, "context", str, ""),
            depends_on=_texts(d, "depends_on"),
            level=_get(d, "level", str, ""),
            update=_get(d, "update", str, ""),
            triggers=_texts(d, "triggers"),
            triggers_only=bool(d.get("triggers_only")),
            related=tuple(Related.from_json(r) for r in _dicts(d, "related")),
            deferred_reason=_get(d, "deferred_reason", str, ""),
            certain=bool(d.get("certain")),
            replaces=None if replaces is None else tuple(map(ReplacedFile.from_json, replaces)),
            duplicate_of=DuplicateOf.from_json(dup) if dup else None,
            note=NoteFields.from_json(note) if note else None,
            promote_from=PromoteFrom.from_json(src) if src else None,
            imported=ImportedPassage.from_json(imp) if imp is not None else None,
        )


# ---------------------------------------------------------------- the proposal


@dataclass(frozen=True)
class Screening:
    """What the safety scan did before the person was asked: refused lines, redactions."""

    refused: tuple[dict[str, Any], ...] = ()  # {where, line, reason}
    redacted: tuple[tuple[int, tuple[str, ...]], ...] = ()  # (candidate number, kinds)

    def to_json(self) -> dict[str, Any]:
        return {
            "refused": [dict(r) for r in self.refused],
            "redacted": [{"number": n, "kinds": list(k)} for n, k in self.redacted],
        }

    def kinds_of(self, number: int) -> list[str]:
        return [k for n, kinds in self.redacted if n == number for k in kinds]

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Screening:
        refused = tuple(
            {
                "where": _get(r, "where", str, ""),
                "line": _get(r, "line", int, None),
                "reason": _get(r, "reason", str, ""),
            }
            for r in _dicts(d, "refused")
        )
        redacted = tuple(
            (_get(r, "number", int, 0), _texts(r, "kinds")) for r in _dicts(d, "redacted")
        )
        return cls(refused=refused, redacted=redacted)


@dataclass(frozen=True)
class Proposal:
    """Candidates, their target scopes and roles, frozen when the person was asked."""

    proposal_id: str
    kind: str  # save, save_session, import, note, promote
    source: str  # the `source:` of the memories written
    workspace: str  # fingerprint of the primary root
    scopes: tuple[str, ...]
    roles: tuple[str, ...] = ()
    candidates: tuple[ProposedCandidate, ...] = ()
    screening: Screening | None = None
    expires_at: int = 0  # 0: never stored (`save-session --force` commits it at once)

    def numbered(self) -> dict[int, ProposedCandidate]:
        return {c.number: c for c in self.candidates}

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "proposal_id": self.proposal_id,
            "kind": self.kind,
            "source": self.source,
            "workspace": self.workspace,
            "scopes": list(self.scopes),
            "roles": list(self.roles),
            "candidates": [c.to_json() for c in self.candidates],
        }
        if self.screening is not None:
            out["screening"] = self.screening.to_json()
        if self.expires_at:
            out["expires_at"] = self.expires_at
        return out

    @classmethod
    def from_json(cls, d: Any) -> Proposal:
        """Read a stored proposal; ProposalFormatError says what is wrong with its shape."""
        if not isinstance(d, dict):
            raise ProposalFormatError("the proposal is not an object")
        screening = _dict(d, "screening")
        try:
            return cls(
                proposal_id=_get(d, "proposal_id", str, ""),
                kind=_get(d, "kind", str, "save_session"),
                source=_get(d, "source", str, "manual"),
                workspace=_get(d, "workspace", str, ""),
                scopes=_texts(d, "scopes"),
                roles=_texts(d, "roles"),
                candidates=tuple(map(ProposedCandidate.from_json, _dicts(d, "candidates"))),
                screening=Screening.from_json(screening) if screening is not None else None,
                expires_at=_get(d, "expires_at", int, 0),
            )
        except (TypeError, ValueError) as exc:
            if isinstance(exc, ProposalFormatError):
                raise
            raise ProposalFormatError(str(exc)) from exc

    def public(self) -> list[dict[str, Any]]:
        """The candidates as an agent (and the approval dialog) receives them."""
        out = []
        for c in self.candidates:
            item: dict[str, Any] = {
                "number": c.number,
                "type": c.type,
                "id": c.id,
                "title": c.title,
                "text": c.text,
                "triggers": list(c.triggers),
                "verdict": c.verdict_line,
                "target": c.verdict.target,
                "related": [r.to_json() for r in c.related],
                "deferred_reason": c.deferred_reason,
                "replaces": [t.shown() for t in c.replaces or ()],
            }
            if c.duplicate_of is not None:
                d = c.duplicate_of
                item["duplicate_of"] = {"id": d.id, "type": d.type, "title": d.title}
            out.append(item)
        return out
