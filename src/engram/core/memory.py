"""The Memory model: parse and render schema v3 (YAML front matter + Markdown body)."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 3
TYPES = ("rule", "skill", "knowledge")
TYPE_ALIASES = {"workflow": "skill", "rules": "rule", "skills": "skill", "workflows": "skill"}
ID_RE = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,78}[a-z0-9])?$")
VARIANTS = ("light", "balanced", "strict")
AUTHORITY_BY_TYPE = {"rule": "instruction", "skill": "instruction", "knowledge": "reference"}

# Front matter keys in the order they are written.
KEY_ORDER = (
    "schema_version", "id", "type", "scope", "tier", "title", "tags", "triggers", "role",
    "depends_on", "level", "authority", "confidence", "source", "revision", "created",
    "updated", "valid_from", "valid_until", "last_confirmed", "objective", "supersedes",
    "superseded_by", "archived_reason", "author_name", "author_email",
)  # fmt: skip
# Front matter keys read as plain strings, with no default of their own.
PLAIN_STRING_KEYS = (
    "level", "authority", "confidence", "created", "updated", "valid_from", "valid_until",
    "last_confirmed", "tier", "objective", "supersedes", "superseded_by", "archived_reason",
    "author_name", "author_email",
)  # fmt: skip


class MemoryParseError(ValueError):
    """A memory file that cannot be read; carries the reason and a stable code for verify/doctor."""

    def __init__(self, message: str, code: str = "memory.parse_error") -> None:
        super().__init__(message)
        self.code = code


# What one memory file may cost (defaults of the `limits.*` configuration keys). The largest
# load budget is 100,000 tokens (~400 KB for a whole pack) and a default pack is 1,500 tokens
# (~6 KB): a 256 KiB memory is far beyond anything a load shows, yet reading and parsing one
# costs about a millisecond. Engram writes a front matter of 20-30 short lines (under 2 KB);
# 16 KiB leaves room for long hand-written tag and trigger lists.
MEMORY_FILE_BYTES = 256 * 1024
FRONT_MATTER_BYTES = 16 * 1024
# Front matter is a flat mapping of short values: bounds on its shape (not configurable).
MAX_LIST_ITEMS = 256
MAX_DEPTH = 8
MAX_VALUES = 4096


# Every field after id and type, with its default (lists and dicts are copied per memory).
MEMORY_FIELDS: dict[str, Any] = {
    "title": "", "scope": "workspace", "tags": [], "triggers": [], "role": [], "depends_on": [],
    "level": "", "authority": "", "confidence": "", "source": "manual", "revision": 1,
    "created": "", "updated": "", "valid_from": "", "valid_until": "", "last_confirmed": "",
    "tier": "",  # "" durable, "working" for notes
    "objective": "", "supersedes": "", "superseded_by": "", "archived_reason": "",
    "author_name": "", "author_email": "",
    "content": "",  # the "## Content" section (bullets), or the whole body when unsectioned
    "variants": {},  # light/balanced/strict wordings
    "origin": "",
    "extra_sections": "",  # other "## " sections, kept verbatim
    "extra": {},  # unknown front matter keys, kept
    "schema_version": SCHEMA_VERSION,
}  # fmt: skip


class Memory:
    """One memory: front matter fields plus the parsed body.

    A plain class rather than a dataclass: hooks build it on every prompt, and the
    dataclass machinery (and its `inspect` import) would be most of their start-up time.
    """

    id: str
    type: str
    title: str
    scope: str
    tags: list[str]
    triggers: list[str]
    role: list[str]
    depends_on: list[str]
    level: str
    authority: str
    confidence: str
    source: str
    revision: int
    created: str
    updated: str
    valid_from: str
    valid_until: str
    last_confirmed: str
    tier: str
    objective: str
    supersedes: str
    superseded_by: str
    archived_reason: str
    author_name: str
    author_email: str
    content: str
    variants: dict[str, str]
    origin: str
    extra_sections: str
    extra: dict[str, Any]
    schema_version: int

    def __init__(self, id: str, type: str, **fields: Any) -> None:
        unknown = fields.keys() - MEMORY_FIELDS.keys()
        if unknown:
            raise TypeError(f"unknown memory field(s): {', '.join(sorted(unknown))}")
        self.id = id
        self.type = type
        for name, default in MEMORY_FIELDS.items():
            if name in fields:
                setattr(self, name, fields[name])
            else:
                setattr(self, name, default.copy() if isinstance(default, list | dict) else default)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Memory) and vars(self) == vars(other)

    __hash__ = None  # type: ignore[assignment] - mutable

    def __repr__(self) -> str:
        return f"Memory(id={self.id!r}, type={self.type!r}, scope={self.scope!r}, title={self.title!r})"

    @property
    def is_working(self) -> bool:
        return self.tier == "working"

    def effective_authority(self) -> str:
        return self.authority or AUTHORITY_BY_TYPE.get(self.type, "reference")

    def expired(self, today: dt.date | None = None) -> bool:
        if not self.valid_until:
            return False
        try:
            until = dt.date.fromisoformat(self.valid_until[:10])
        except ValueError:
            return False
        return until < (today or dt.date.today())

    def variant_text(self, mode: str) -> str:
        """The rule wording for a rule-variant mode (`off` renders balanced)."""
        if not self.variants:
            return ""
        key = "balanced" if mode in ("off", "", None) else mode
        return (
            self.variants.get(key)
            or self.variants.get("balanced")
            or next(iter(self.variants.values()))
        )


def normalise_type(value: str) -> str | None:
    v = (value or "").strip().lower()
    v = TYPE_ALIASES.get(v, v)
    return v if v in TYPES else None


def today_iso() -> str:
    return dt.date.today().isoformat()


# ---------------------------------------------------------------- front matter

_SIMPLE_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:\s+(.*))?$")
_PLAIN_SCALAR = re.compile(r"^[^\"'\[\]{}&*!|>%@`#,][^:#]*$")


def _fast_yaml(text: str) -> dict[str, Any] | None:
    """Parse the flat subset Engram writes; return None to defer to a full YAML parser."""
    out: dict[str, Any] = {}
    current_list: list | None = None
    for raw in text.split("\n"):
        line = raw.rstrip()
        if not line or line.lstrip().startswith("#"):
            continue
        if line.startswith(("  - ", "- ")) and current_list is not None:
            item = line.split("- ", 1)[1].strip()
            if not _PLAIN_SCALAR.match(item):
                return None
            current_list.append(item)
            continue
        m = _SIMPLE_KEY.match(line)
        if not m:
            return None
        key, value = m.group(1), (m.group(2) or "").strip()
        current_list = None
        if value == "":
            out[key] = current_list = []
        elif value.startswith("[") and value.endswith("]"):
            inner = value[1:-1].strip()
            items = [i.strip() for i in inner.split(",")] if inner else []
            if any(not i or not _PLAIN_SCALAR.match(i) for i in items):
                return None
            out[key] = items
        elif _PLAIN_SCALAR.match(value) and ": " not in value:
            out[key] = int(value) if value.isdigit() and len(value) < 10 else value
        else:
            return None
    return out


_PLAIN_RULE = (
    "front matter is plain data: YAML anchors (&), aliases (*), tags (!) and merge keys (<<) "
    "are not allowed; write each value out"
)


def _not_plain(what: str, line: int) -> MemoryParseError:
    return MemoryParseError(
        f"front matter uses {what} on line {line}; {_PLAIN_RULE}",
        code="memory.front_matter_not_plain",
    )


def _too_complex(what: str, line: int) -> MemoryParseError:
    return MemoryParseError(
        f"front matter {what} (line {line}); front matter is a flat list of keys with short values",
        code="memory.front_matter_too_complex",
    )


def _short_tag(tag: str) -> str:
    return "!!" + tag[len("tag:yaml.org,2002:") :] if tag.startswith("tag:yaml.org,2002:") else tag


def _check_plain_yaml(text: str, loader: Any) -> None:
    """Walk the YAML event stream and refuse anything but plain, bounded data.

    Aliases are what make a few hundred bytes expand to gigabytes (billion laughs); tags
    construct arbitrary types; merge keys pull aliased maps in. None of them has a place in
    a memory's front matter, so they are refused before any value is built.
    """
    import yaml

    depth = 0
    values = 0
    items: list[list[int]] = []  # [values seen, most allowed] of each open collection
    for ev in yaml.parse(text, Loader=loader):
        line = ev.start_mark.line + 2  # the file's line: front matter starts after '---'
        if isinstance(ev, yaml.AliasEvent):
            raise _not_plain(f"a YAML alias (*{ev.anchor})", line)
        if isinstance(ev, yaml.NodeEvent) and ev.anchor:
            raise _not_plain(f"a YAML anchor (&{ev.anchor})", line)
        if isinstance(ev, yaml.ScalarEvent | yaml.CollectionStartEvent):
            if ev.tag:
                raise _not_plain(f"a YAML tag ({_short_tag(ev.tag)})", line)
            values += 1
            if values > MAX_VALUES:
                raise _too_complex(f"has more than {MAX_VALUES} values", line)
            if items:
                items[-1][0] += 1
                if items[-1][0] > items[-1][1]:
                    raise _too_complex(
                        f"has a list or mapping of more than {MAX_LIST_ITEMS} items", line
                    )
        if isinstance(ev, yaml.ScalarEvent) and ev.value == "<<" and not ev.style:
            raise _not_plain("a YAML merge key (<<)", line)
        if isinstance(ev, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise _too_complex(f"nests deeper than {MAX_DEPTH} levels", line)
            # A mapping's events are its keys and values: twice as many as its items.
            mapping = isinstance(ev, yaml.MappingStartEvent)
            items.append([0, 2 * MAX_LIST_ITEMS if mapping else MAX_LIST_ITEMS])
        elif isinstance(ev, yaml.CollectionEndEvent):
            depth -= 1
            items.pop()


def _plain(value: Any) -> Any:
    """YAML values as JSON-ready data: dates become ISO strings, keys become strings."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    if isinstance(value, float) and (value != value or abs(value) == float("inf")):
        return str(value)  # JSON has no NaN or infinity
    return value


def _check_fast_lists(data: dict[str, Any]) -> dict[str, Any]:
    if len(data) > MAX_LIST_ITEMS:
        raise _too_complex(f"has more than {MAX_LIST_ITEMS} keys", 2)
    for key, value in data.items():
        if isinstance(value, list) and len(value) > MAX_LIST_ITEMS:
            raise _too_complex(f"list {key!r} has more than {MAX_LIST_ITEMS} items", 2)
    return data


def _load_front_matter(text: str) -> dict[str, Any]:
    data = _fast_yaml(text)
    if data is not None:  # the fast path never accepts '&', '*', '!' or '<<'
        return _check_fast_lists(data)
    import yaml  # lazy: only unusual hand-written front matter pays for it

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        _check_plain_yaml(text, loader)
        loaded = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        raise MemoryParseError(
            f"front matter is not valid YAML: {str(exc).splitlines()[0]}"
        ) from exc
    except RecursionError as exc:  # belt and braces: depth is bounded above
        raise _too_complex(f"nests deeper than {MAX_DEPTH} levels", 2) from exc
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise MemoryParseError("front matter must be a mapping of keys to values")
    return _plain(loaded)


def _as_list(value: Any) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    if isinstance(value, list | tuple):
        return [str(v).strip() for v in value if v is not None and str(v).strip()]
    return [str(value)]


def _as_str(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dt.datetime | dt.date):
        return value.isoformat()
    return str(value).strip()


def split_front_matter(text: str, max_bytes: int = FRONT_MATTER_BYTES) -> tuple[str, str]:
    """Split `---` front matter from the body; tolerant of BOM and CRLF; bounded in size."""
    text = text.lstrip("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    if not text.startswith("---"):
        raise MemoryParseError("missing YAML front matter (the file must start with a '---' line)")
    first_nl = text.find("\n")
    if first_nl < 0 or text[:first_nl].strip() != "---":
        raise MemoryParseError("missing YAML front matter (the file must start with a '---' line)")
    end = re.search(r"^(?:---|\.\.\.)\s*$", text[first_nl + 1 :], re.MULTILINE)
    if not end:
        raise MemoryParseError("front matter is not closed by a '---' line")
    fm = text[first_nl + 1 : first_nl + 1 + end.start()]
    if len(fm) > max_bytes // 4 and len(fm.encode("utf-8")) > max_bytes:
        raise MemoryParseError(
            f"front matter is {len(fm.encode('utf-8')):,} bytes, over the {max_bytes:,}-byte "
            "limit (move long text into the body, or raise limits.front_matter_bytes in "
            "config.json and run `engram rebuild-index`)",
            code="memory.front_matter_too_large",
        )
    body = text[first_nl + 1 + end.end() :].lstrip("\n")
    return fm, body


# compiled on first use (`re` keeps it): only parsing a memory file needs it
_VARIANT_LINE = r"(?i)^\s*[-*]?\s*\**(light|balanced|strict)\**\s*[:\-—]\s*(.+)$"


_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


def _parse_body(body: str) -> tuple[str, str, dict[str, str], str, str]:
    """Return (title, content, variants, origin, extra_sections)."""
    title = ""
    sections: list[tuple[str, list[str]]] = [("", [])]
    fence = ""  # inside fenced code a "# " line is code (a shell comment, a heredoc)
    for line in body.split("\n"):
        m = _FENCE.match(line)
        if m and not fence:
            fence = m.group(1)
        elif fence and m and set(line.strip()) == {fence[0]} and len(line.strip()) >= len(fence):
            fence = ""
        elif not fence and not title and line.startswith("# "):
            title = line[2:].strip()
            continue
        elif not fence and line.startswith("## "):
            sections.append((line[3:].strip(), []))
            continue
        sections[-1][1].append(line)
    content_parts: list[str] = []
    variants: dict[str, str] = {}
    origin = ""
    extra: list[str] = []
    for name, lines in sections:
        text = "\n".join(lines).strip()
        lname = name.lower()
        if lname in ("", "content"):
            if text:
                content_parts.append(text)
        elif lname in ("rule variants", "variants"):
            current = None
            for line in lines:
                m = re.match(_VARIANT_LINE, line)
                h = re.match(r"^###\s+(light|balanced|strict)\s*$", line.strip(), re.IGNORECASE)
                if m:
                    current = m.group(1).lower()
                    variants[current] = m.group(2).strip()
                elif h:
                    current = h.group(1).lower()
                    variants[current] = ""
                elif current and line.strip():
                    variants[current] = (variants[current] + " " + line.strip()).strip()
        elif lname == "origin":
            origin = text
        elif text or name:
            extra.append(f"## {name}\n\n{text}".rstrip())
    return title, "\n\n".join(content_parts), variants, origin, "\n\n".join(extra)


def parse_memory(
    text: str,
    path: Path | None = None,
    *,
    default_type: str | None = None,
    scope: str = "workspace",
    max_front_matter: int = FRONT_MATTER_BYTES,
) -> Memory:
    """Parse one memory file. Missing optional keys get defaults; bad required ones raise."""
    fm_text, body = split_front_matter(text, max_front_matter)
    fm = _load_front_matter(fm_text)
    mid = _as_str(fm.get("id")) or (path.stem if path else "")
    if not ID_RE.match(mid):
        raise MemoryParseError(
            f"id {mid!r} is not a slug (lowercase letters, digits and '-', at most 80 characters)"
        )
    raw_type = _as_str(fm.get("type")) or (default_type or "")
    mtype = normalise_type(raw_type)
    if mtype is None:
        raise MemoryParseError(
            f"type {raw_type!r} is not one of rule, skill (alias workflow), knowledge"
        )
    title, content, variants, origin, extra_sections = _parse_body(body)
    known = set(KEY_ORDER)
    try:
        revision = int(fm.get("revision") or 1)
    except (TypeError, ValueError):
        revision = 1
    try:
        schema_version = int(fm.get("schema_version") or SCHEMA_VERSION)
    except (TypeError, ValueError):
        schema_version = SCHEMA_VERSION
    return Memory(
        id=mid,
        type=mtype,
        title=title or _as_str(fm.get("title")) or mid.replace("-", " ").capitalize(),
        scope=_as_str(fm.get("scope")) or scope,
        tags=[t.lower() for t in _as_list(fm.get("tags"))],
        triggers=_as_list(fm.get("triggers")),
        role=[r.lower() for r in _as_list(fm.get("role") or fm.get("roles"))],
        depends_on=_as_list(fm.get("depends_on")),
        source=_as_str(fm.get("source")) or "manual",
        revision=max(revision, 1),
        **{key: _as_str(fm.get(key)) for key in PLAIN_STRING_KEYS},
        content=content,
        variants=variants,
        origin=origin,
        extra_sections=extra_sections,
        extra={k: v for k, v in fm.items() if k not in known and k != "roles"},
        schema_version=schema_version,
    )


# ---------------------------------------------------------------- rendering

_NEEDS_QUOTES = re.compile(
    r"^$|^[\s\-?:,\[\]{}#&*!|>'\"%@`]|[:#]\s|\s$|^(true|false|null|yes|no|~)$|^\d+$", re.IGNORECASE
)


def _yaml_scalar(value: str) -> str:
    if _NEEDS_QUOTES.search(value) or "\n" in value or ", " in value or "," in value:
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
    return value


def front_matter_dict(m: Memory) -> dict[str, Any]:
    d: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "id": m.id,
        "type": m.type,
        "scope": m.scope,
        "tier": m.tier,
        "tags": m.tags,
        "triggers": m.triggers,
        "role": m.role,
        "depends_on": m.depends_on,
        "level": m.level,
        "authority": m.effective_authority(),
        "confidence": m.confidence,
        "source": m.source,
        "revision": m.revision,
        "created": m.created,
        "updated": m.updated,
        "valid_from": m.valid_from,
        "valid_until": m.valid_until,
        "last_confirmed": m.last_confirmed,
        "objective": m.objective,
        "supersedes": m.supersedes,
        "superseded_by": m.superseded_by,
        "archived_reason": m.archived_reason,
        "author_name": m.author_name,
        "author_email": m.author_email,
    }
    return {
        k: v
        for k, v in d.items()
        if v not in ("", None) and not (k in ("triggers", "role", "depends_on") and v == [])
    }


def render_front_matter(d: dict[str, Any], extra: dict[str, Any] | None = None) -> str:
    lines = ["---"]
    for key, value in d.items():
        if isinstance(value, list):
            lines.append(f"{key}: [" + ", ".join(_yaml_scalar(str(v)) for v in value) + "]")
        elif isinstance(value, int):
            lines.append(f"{key}: {value}")
        else:
            lines.append(f"{key}: {_yaml_scalar(str(value))}")
    if extra:
        import yaml

        dumped = yaml.safe_dump(extra, sort_keys=True, allow_unicode=True).rstrip("\n")
        lines.extend(dumped.split("\n"))
    lines.append("---")
    return "\n".join(lines) + "\n"


def render_body(m: Memory) -> str:
    parts = [f"# {m.title}", "", "## Content", "", m.content.strip()]
    if m.variants:
        parts += ["", "## Rule variants", ""]
        for v in VARIANTS:
            if v in m.variants:
                parts.append(f"- {v.capitalize()}: {m.variants[v]}")
    if m.origin:
        parts += ["", "## Origin", "", m.origin.strip()]
    if m.extra_sections:
        parts += ["", m.extra_sections.strip()]
    return "\n".join(parts).rstrip() + "\n"


def render_memory(m: Memory) -> str:
    """The canonical file text for a memory (front matter + body)."""
    return render_front_matter(front_matter_dict(m), m.extra) + "\n" + render_body(m)
