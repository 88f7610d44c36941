"""Candidate lines (`TYPE: … | TEXT: … [| CONTEXT: …] …`): parsing, session blocks, ids.

Agents propose memory as one candidate per line. Parsing is strict on purpose: a
malformed line is an error naming its line number, never silently dropped, because a
dropped candidate is a memory the human believes was proposed and was not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from engram.core.errors import UsageError
from engram.core.memory import ID_RE, normalise_type

FIELDS = ("type", "text", "context", "depends_on", "level", "update", "triggers")
MAX_INPUT_CHARS = 200_000
MAX_TEXT_CHARS = 2_000
MAX_CONTEXT_CHARS = 2_000
MAX_CANDIDATES = 50
MAX_ID_CHARS = 60
MAX_TRIGGERS = 8  # phrasings a teammate would type when the memory applies
MAX_TRIGGER_CHARS = 120
LEVEL_RE = re.compile(r"^[a-z0-9][a-z0-9 _-]{0,39}$")

# A block separator: `## Session …` or a `---` line (several sessions pasted together).
_SEPARATOR = re.compile(r"^\s*(?:#{1,6}\s*session\b.*|-{3,}\s*)$", re.IGNORECASE)
# `| KEY:` where a new field starts; the key decides whether it is a field or plain text.
_FIELD_SPLIT = re.compile(r"\|\s*([A-Za-z][A-Za-z_ -]*?)\s*:")
_LEAD = re.compile(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# Words an id can do without (an id keeps verbs and polarity: always-run-tests-before-release).
SLUG_STOPWORDS = frozenset(
    """a an the and or of to in on at by for with from into onto is are was were be been
    it its this that these those we you they our your their i my me should will can
    please so then""".split()
)
MAX_SLUG_WORDS = 6


@dataclass
class Candidate:
    """One proposed memory, as the agent wrote it (after safety, `text` is redacted)."""

    number: int
    type: str
    text: str
    context: str = ""
    depends_on: list[str] = field(default_factory=list)
    level: str = ""
    update: str = ""
    line: int = 0
    level_raw: str = field(default="", repr=False)  # as written: the safety scan reads its case
    triggers: list[str] = field(default_factory=list)
    # `UPDATE: id | TRIGGERS: …` with no TEXT: only the triggers change (`engram enrich`)
    triggers_only: bool = False

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "number": self.number,
            "type": self.type,
            "text": self.text,
            "context": self.context,
            "depends_on": list(self.depends_on),
            "level": self.level,
            "update": self.update,
        }
        if self.triggers:  # absent when none: proposals made before triggers read the same
            out["triggers"] = list(self.triggers)
        if self.triggers_only:
            out["triggers_only"] = True
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Candidate:
        return cls(
            number=int(d["number"]),
            type=str(d["type"]),
            text=str(d["text"]),
            context=str(d.get("context", "")),
            depends_on=[str(x) for x in d.get("depends_on", [])],
            level=str(d.get("level", "")),
            update=str(d.get("update", "")),
            triggers=[str(x) for x in d.get("triggers", [])],
            triggers_only=bool(d.get("triggers_only")),
        )

    def to_line(self) -> str:
        """The candidate as a line again (used when a human revises one candidate)."""
        parts = [f"TYPE: {self.type}"]
        if not self.triggers_only:
            parts.append(f"TEXT: {self.text}")
        if self.context:
            parts.append(f"CONTEXT: {self.context}")
        if self.depends_on:
            parts.append("DEPENDS_ON: " + ",".join(self.depends_on))
        if self.level:
            parts.append(f"LEVEL: {self.level}")
        if self.update:
            parts.append(f"UPDATE: {self.update}")
        if self.triggers:
            parts.append("TRIGGERS: " + "; ".join(self.triggers))
        return " | ".join(parts)


def check_input(text: str, what: str = "candidate input") -> str:
    """Refuse binary data and oversized input before anything else looks at it."""
    if not isinstance(text, str):
        raise UsageError(f"{what} must be text")
    if len(text) > MAX_INPUT_CHARS:
        raise UsageError(
            f"{what} is {len(text):,} characters; at most {MAX_INPUT_CHARS:,} are accepted "
            "(memory entries are short: one fact, rule or workflow per line)"
        )
    m = _CONTROL.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        raise UsageError(
            f"{what} line {line} contains a binary/control character (U+{ord(m.group()):04X}); "
            "only plain text is accepted"
        )
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _split_fields(body: str) -> tuple[list[tuple[str, str]], str | None]:
    """Split `KEY: value | KEY: value`; a `| word:` that is not a field stays in the text."""
    # The first segment must itself start with a key.
    first = re.match(r"^\s*([A-Za-z][A-Za-z_ -]*?)\s*:", body)
    if not first:
        return [], "expected `TYPE: … | TEXT: …` (a line must start with a field such as TYPE:)"
    pieces: list[tuple[str, int, int]] = [(first.group(1), first.end(), 0)]
    for m in _FIELD_SPLIT.finditer(body, first.end()):
        key = m.group(1).strip()
        norm = key.lower().replace(" ", "_").replace("-", "_")
        if norm in FIELDS:
            pieces.append((key, m.end(), m.start()))
        elif key.isupper() and len(key) > 1:
            return [], f"unknown field {key!r}; allowed fields: " + ", ".join(
                f.upper() for f in FIELDS
            )
    out: list[tuple[str, str]] = []
    for i, (key, start, _) in enumerate(pieces):
        end = pieces[i + 1][2] if i + 1 < len(pieces) else len(body)
        out.append((key, body[start:end].strip()))
    return out, None


def _parse_ids(raw: str, what: str) -> tuple[list[str], str | None]:
    ids = [p.strip().lower() for p in re.split(r"[,\s]+", raw) if p.strip()]
    bad = [i for i in ids if not ID_RE.match(i)]
    if bad:
        return [], (
            f"{what} {bad[0]!r} is not a memory id (lowercase letters, digits and '-', "
            "starting and ending with a letter or digit)"
        )
    return list(dict.fromkeys(ids)), None


def parse_line(body: str, number: int, line_no: int) -> tuple[Candidate | None, str | None]:
    """Parse one candidate line; returns (candidate, None) or (None, what is wrong)."""
    pairs, err = _split_fields(body)
    if err:
        return None, err
    values: dict[str, str] = {}
    for key, value in pairs:
        norm = key.lower().replace(" ", "_").replace("-", "_")
        if norm not in FIELDS:
            return None, f"unknown field {key!r}; allowed fields: " + ", ".join(
                f.upper() for f in FIELDS
            )
        if norm in values:
            return None, f"field {norm.upper()} appears twice"
        values[norm] = value
    return validate_fields(values, number, line_no)


def validate_fields(
    values: dict[str, str], number: int, line_no: int = 0
) -> tuple[Candidate | None, str | None]:
    """Check one candidate's fields (type, text, …); returns (candidate, None) or (None, why)."""
    if not values.get("type", "").strip():
        return None, "missing TYPE (rule, skill, workflow or knowledge)"
    mtype = normalise_type(values["type"])
    if mtype is None:
        return None, (
            f"unknown type {values['type']!r}; allowed: rule, skill (alias workflow), knowledge"
        )
    text = " ".join(values.get("text", "").split())
    triggers, err = parse_triggers(values.get("triggers", ""))
    if err:
        return None, err
    update = values.get("update", "").strip().lower()
    triggers_only = not text and bool(update) and bool(triggers)
    if not text and not triggers_only:
        return None, "missing or empty TEXT (only `UPDATE: id | TRIGGERS: …` may leave it out)"
    if len(text) > MAX_TEXT_CHARS:
        return None, (
            f"TEXT is {len(text):,} characters; at most {MAX_TEXT_CHARS:,} "
            "(split it into several candidates)"
        )
    context = " ".join(values.get("context", "").split())
    if len(context) > MAX_CONTEXT_CHARS:
        return None, f"CONTEXT is {len(context):,} characters; at most {MAX_CONTEXT_CHARS:,}"
    depends_on, err = _parse_ids(values.get("depends_on", ""), "DEPENDS_ON id")
    if err:
        return None, err
    if update and not ID_RE.match(update):
        return None, f"UPDATE id {update!r} is not a memory id (lowercase letters, digits and '-')"
    level_raw = values.get("level", "").strip()
    level = level_raw.lower()
    if level and not LEVEL_RE.match(level):
        return None, (
            f"LEVEL {level!r} is not allowed: use a short word such as basic, "
            "intermediate or advanced (letters, digits, spaces, '-' or '_', ≤ 40 characters)"
        )
    return (
        Candidate(
            number=number,
            type=mtype,
            text=text,
            context=context,
            depends_on=depends_on,
            level=level,
            update=update,
            line=line_no,
            level_raw=level_raw,
            triggers=triggers,
            triggers_only=triggers_only,
        ),
        None,
    )


def parse_triggers(raw: str | list[str]) -> tuple[list[str], str | None]:
    """`TRIGGERS: a; b; c` (or a list): the phrasings that route a task to the memory.

    Each is a short query a teammate would type, so it is one line of plain words: at most
    MAX_TRIGGERS of them, each at most MAX_TRIGGER_CHARS; repeats are dropped.
    """
    items = raw.split(";") if isinstance(raw, str) else list(raw)
    out: list[str] = []
    for item in items:
        if not isinstance(item, str):
            return [], "each trigger must be a string"
        phrase = " ".join(item.split())
        if not phrase:
            if isinstance(raw, str):
                continue
            return [], "a trigger is empty; give a few words a teammate would type"
        if len(phrase) > MAX_TRIGGER_CHARS:
            return [], (
                f"trigger {phrase[:40]!r}… is {len(phrase)} characters; at most "
                f"{MAX_TRIGGER_CHARS} (a short query, not a sentence of the memory)"
            )
        if _CONTROL.search(phrase) or "|" in phrase:
            return [], f"trigger {phrase[:40]!r} holds a control character or '|'"
        if ";" in phrase:  # only a list can hold one: in a line, ';' separates the phrases
            return [], "a trigger may not hold ';' (it separates the phrases)"
        if phrase.lower() not in (p.lower() for p in out):
            out.append(phrase)
    if len(out) > MAX_TRIGGERS:
        return (
            [],
            f"{len(out)} triggers; at most {MAX_TRIGGERS} (pick the phrasings that differ most)",
        )
    return out, None


def with_triggers(old: list[str], new: list[str]) -> list[str]:
    """A memory's trigger phrases and the approved new ones, each once (case aside)."""
    out = list(old)
    seen = {t.lower() for t in out}
    for t in new:
        if t.lower() not in seen:
            out.append(t)
            seen.add(t.lower())
    return out


def triggers_diff(old: list[str], new: list[str]) -> list[str]:
    """The diff lines of the phrases an update adds to a memory's triggers."""
    return [f"+triggers: {t}" for t in with_triggers(old, new)[len(old) :]]


def make_candidate(number: int = 1, **values: str) -> Candidate:
    """One candidate from field values (plain-text `save`, notes, promote); UsageError if bad."""
    for key, value in values.items():
        check_input(value, key.upper())
    cand, err = validate_fields(values, number)
    if err or cand is None:
        raise UsageError(err or "invalid candidate")
    return cand


def parse_candidates(text: str, *, query_level: int | None = None) -> list[Candidate]:
    """Every candidate of the input, numbered from 1; `query_level` keeps the last N sessions.

    Blank lines are skipped; `## Session …` and `---` lines separate session blocks.
    All malformed lines are reported at once, each with its line number.
    """
    if query_level is not None and (
        isinstance(query_level, bool) or not isinstance(query_level, int) or query_level < 1
    ):
        raise UsageError(f"query level must be a positive integer (1, 2, …), not {query_level!r}")
    text = check_input(text)
    blocks: list[list[tuple[int, str]]] = [[]]
    for line_no, raw in enumerate(text.split("\n"), start=1):
        if _SEPARATOR.match(raw):
            blocks.append([])
            continue
        if raw.strip():
            blocks[-1].append((line_no, raw))
    blocks = [b for b in blocks if b]
    if query_level is not None:
        blocks = blocks[-query_level:]
    lines = [item for block in blocks for item in block]
    if not lines:
        raise UsageError(
            "no candidates found; give one per line: "
            "`TYPE: rule|skill|knowledge | TEXT: … [| CONTEXT: …]`"
        )
    if len(lines) > MAX_CANDIDATES:
        raise UsageError(
            f"{len(lines)} candidate lines; at most {MAX_CANDIDATES} per proposal "
            "(use --query-level N to keep the last N sessions)"
        )
    out: list[Candidate] = []
    errors: list[str] = []
    for line_no, raw in lines:
        body = raw[_LEAD.match(raw).end() :]  # type: ignore[union-attr]
        cand, err = parse_line(body, len(out) + 1, line_no)
        if err:
            errors.append(f"line {line_no}: {err}")
        elif cand is not None:
            out.append(cand)
    if errors:
        more = f" (and {len(errors) - 5} more)" if len(errors) > 5 else ""
        raise UsageError("malformed candidate input: " + "; ".join(errors[:5]) + more)
    return out


# ---------------------------------------------------------------- words, titles, ids

_WORD = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _ascii_letters(text: str) -> str:
    """Accented Latin letters as their base letter ("für" → "fur", "ß" → "ss"), so an id
    keeps the word instead of splitting it at the accent."""
    if text.isascii():
        return text
    import unicodedata

    folded = unicodedata.normalize("NFKD", text.replace("ß", "ss"))
    return "".join(ch for ch in folded if not unicodedata.combining(ch))


def slugify(text: str, max_len: int = MAX_ID_CHARS) -> str:
    """An id from the first meaningful words of a text (≤ max_len, a valid slug)."""
    text = re.sub(r"\[REDACTED:[^\]]*\]", " ", text)  # a redaction is not what the memory is about
    ws = [w.replace("'", "") for w in words(_ascii_letters(text))]
    meaningful = [w for w in ws if w not in SLUG_STOPWORDS] or ws or ["memory"]
    slug = ""
    for w in meaningful:
        nxt = f"{slug}-{w}" if slug else w
        if len(nxt) > max_len:
            break
        slug = nxt
        if slug.count("-") >= MAX_SLUG_WORDS - 1:
            break
    if not slug:
        slug = meaningful[0][:max_len]
    slug = slug.strip("-")
    return slug if ID_RE.match(slug) else "memory"


def unique_id(base: str, taken: set[str]) -> str:
    """`base`, or `base-2`, `base-3`, … so that it is not in `taken`."""
    if base not in taken:
        return base
    n = 2
    while True:
        suffix = f"-{n}"
        cand = base[: MAX_ID_CHARS - len(suffix)].rstrip("-") + suffix
        if cand not in taken:
            return cand
        n += 1


def title_of(text: str, max_len: int = 80) -> str:
    """The first sentence, shortened on a word boundary."""
    first = re.split(r"(?<=[.!?])\s+", text.strip(), maxsplit=1)[0].strip()
    first = first.rstrip(".!?;:") or text.strip()
    if len(first) > max_len:
        cut = first[:max_len].rsplit(" ", 1)[0]
        first = (cut or first[:max_len]).rstrip(",;:") + "…"
    return first[:1].upper() + first[1:]


def content_of(text: str) -> str:
    """The `## Content` bullets a memory made from `text` gets (previews diff against it)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9`\"'])", text) if s.strip()]
    return "\n".join(f"- {s}" for s in sentences)
