"""Splitting existing agent instruction files (Markdown) into memory candidates.

Teams already keep rules for agents in host-specific Markdown files. `engram import`
turns each self-contained piece (a bullet group under a heading, a numbered procedure,
a paragraph) into one candidate that then goes through the normal write path. The
splitter works on Markdown structure (headings, lists, fences), never on phrasings, and
records where every candidate came from so that the person can check it against the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_TEXT_CHARS = 1_900  # below engram.core.candidates.MAX_TEXT_CHARS, room for the title
MAX_TAGS = 4
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.*?)[ \t#]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BULLET = re.compile(r"^( *)[-*+][ \t]+(.*)$")
_NUMBERED = re.compile(r"^( *)\d{1,3}[.)][ \t]+(.*)$")
_RULE_LINE = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_MANAGED = re.compile(  # `engram link`'s block and the pointer `--replace-with-pointer` writes
    r"^<!-- engram:begin\b.*?^<!-- engram:end -->[ \t]*$"
    r"|^<!-- engram:pointer\b.*?^<!-- engram:pointer-end -->[ \t]*$",
    re.S | re.M,
)
_KNOWLEDGE = re.compile(
    r"^(?:we|the\s+\w+|this\s+(?:project|repo|repository|service|app|package))\s+"
    r"(?:use|uses|are|is|run|runs|has|have|keep|keeps|store|stores|deploy|deploys)\b",
    re.IGNORECASE,
)
_IMPERATIVE = re.compile(
    r"^(?:always|never|do\s+not|don't|must|should|prefer|avoid|use|run|keep|make\s+sure|"
    r"ensure|only|write|add|put|name|follow|call|check|test|return|place|import|document|"
    r"include|mark|handle|log|wrap|limit|validate|commit|push|open|update|remove|delete)\b",
    re.IGNORECASE,
)
_TAG_WORD = re.compile(r"[a-z0-9][a-z0-9+#.-]*")
_GENERIC_HEADINGS = frozenset(
    "agents agents.md claude claude.md gemini gemini.md rules guidelines instructions notes "
    "general overview readme misc other project conventions copilot cursor windsurf cline "
    "memory the and for of a an to in".split()
)


@dataclass
class Piece:
    """One candidate cut from a file: what it says, what it is, where it came from."""

    type: str
    title: str
    text: str
    source: str  # the file, workspace-relative
    start: int  # first line (1-based) in the source file
    end: int  # last line
    tags: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    @property
    def imported_from(self) -> str:
        return f"{self.source}:{self.start}" + (f"-{self.end}" if self.end != self.start else "")


def strip_managed(text: str) -> str:
    """Blank out Engram's own managed blocks (kept as empty lines so line numbers hold)."""
    return _MANAGED.sub(lambda m: "\n" * m.group().count("\n"), text)


def _clean(line: str) -> str:
    """Inline Markdown made plain: emphasis markers and link targets go, words stay."""
    line = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", line)
    line = re.sub(r"(\*\*|__)(.+?)\1", r"\2", line)
    return " ".join(line.split())


def _sentence(text: str) -> str:
    text = text.strip()
    if text and not text.endswith((".", "!", "?", ":", ";")):
        text += "."
    return text


def heading_tags(headings: list[str]) -> list[str]:
    """Tags from the heading path: its distinctive words, most specific heading first."""
    out: list[str] = []
    for h in reversed(headings):
        for w in _TAG_WORD.findall(h.lower()):
            w = w.strip(".-")
            if len(w) >= 3 and w not in _GENERIC_HEADINGS and w not in out:
                out.append(w)
    return out[:MAX_TAGS]


def classify(kind: str, items: list[str]) -> str:
    """A numbered list is a procedure (skill); statements of fact are knowledge; else rule."""
    if kind == "numbered" and len(items) >= 2:
        return "skill"
    facts = sum(1 for i in items if _KNOWLEDGE.match(i))
    orders = sum(1 for i in items if _IMPERATIVE.match(i))
    if facts and facts >= orders:
        return "knowledge"
    if orders:
        return "rule"
    return "knowledge" if kind == "paragraph" else "rule"


@dataclass
class _Block:
    kind: str  # bullets | numbered | paragraph
    start: int
    end: int
    items: list[str] = field(default_factory=list)


def _blocks(lines: list[str], first: int) -> list[_Block]:
    """Lists and paragraphs of one section; fenced code and tables stay with their block."""
    out: list[_Block] = []
    cur: _Block | None = None
    fence: str | None = None
    for n, raw in enumerate(lines, start=first):
        line = raw.rstrip()
        if fence is not None:
            if line.strip().startswith(fence):
                fence = None
            if cur is not None:
                cur.end = n
            continue
        m = _FENCE.match(line)
        if m:
            fence = m.group(1)
            if cur is None:
                cur = _Block("paragraph", n, n)
                out.append(cur)
            cur.end = n
            continue
        if not line.strip() or _RULE_LINE.match(line):
            if cur is not None and cur.kind == "paragraph":
                cur = None
            continue
        b, num = _BULLET.match(line), _NUMBERED.match(line)
        item = b or num
        if item and not item.group(1):
            kind = "bullets" if b else "numbered"
            if cur is None or cur.kind != kind:
                cur = _Block(kind, n, n)
                out.append(cur)
            cur.items.append(_clean(item.group(2)))
            cur.end = n
            continue
        if cur is not None and cur.kind in ("bullets", "numbered") and (raw[:1] in " \t"):
            sub = item.group(2) if item else line  # a nested item or a continuation line
            cur.items[-1] = f"{cur.items[-1]} {_clean(sub)}".strip()
            cur.end = n
            continue
        if cur is None or cur.kind != "paragraph":
            cur = _Block("paragraph", n, n)
            out.append(cur)
        if line.lstrip().startswith("|") and re.fullmatch(r"[\s|:-]+", line):
            cur.end = n  # a table's delimiter row
            continue
        cur.items.append(_clean(line.strip().strip("|").replace("|", ";")))
        cur.end = n
    return [b for b in out if any(i.strip() for i in b.items)]


def _text_of(block: _Block) -> str:
    if block.kind == "paragraph":
        return _sentence(" ".join(i for i in block.items if i))
    if block.kind == "numbered":
        return " ".join(f"{k}) {_sentence(i)}" for k, i in enumerate(block.items, start=1) if i)
    return " ".join(_sentence(i) for i in block.items if i)


def _chunks(block: _Block) -> list[_Block]:
    """A block too long for one memory, cut between items (a procedure is never cut)."""
    if len(_text_of(block)) <= MAX_TEXT_CHARS or block.kind == "paragraph":
        return [block]
    out: list[_Block] = []
    cur = _Block(block.kind, block.start, block.end)
    for item in block.items:
        trial = _Block(block.kind, cur.start, cur.end, [*cur.items, item])
        if cur.items and len(_text_of(trial)) > MAX_TEXT_CHARS:
            out.append(cur)
            cur = _Block(block.kind, block.start, block.end)
        cur.items.append(item)
    out.append(cur)
    return out


def split_markdown(
    text: str,
    source: str,
    *,
    first_line: int = 1,
    paths: list[str] | None = None,
    extra_tags: list[str] | None = None,
    default_title: str = "",
) -> list[Piece]:
    """Cut Markdown into pieces: one per list or paragraph under a heading.

    `first_line` is the line of `text`'s first line in the source file (after front
    matter). Engram's managed blocks and HTML comments are left out.
    """
    text = strip_managed(text.replace("\r\n", "\n").replace("\r", "\n"))
    text = _HTML_COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    lines = text.split("\n")
    sections: list[tuple[list[str], int, list[str]]] = []  # (heading path, first line, lines)
    stack: list[tuple[int, str]] = []
    body: list[str] = []
    body_at = first_line
    fence: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        n = first_line + i
        if fence is None and _FENCE.match(line):
            fence = _FENCE.match(line).group(1)  # type: ignore[union-attr]
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            m = _HEADING.match(line)
            setext = (
                i + 1 < len(lines)
                and line.strip()
                and not _BULLET.match(line)
                and _SETEXT.match(lines[i + 1])
                and (not body or not body[-1].strip())
                and lines[i + 1].strip()[:1] == "="
            )
            if m or setext:
                sections.append(([h for _, h in stack], body_at, body))
                level, title = (len(m.group(1)), m.group(2)) if m else (1, line.strip())
                stack = [(lv, h) for lv, h in stack if lv < level] + [(level, _clean(title))]
                skip = 1 if m else 2
                body, body_at = [], n + skip
                i += skip
                continue
        body.append(line)
        i += 1
    sections.append(([h for _, h in stack], body_at, body))

    out: list[Piece] = []
    for headings, at, sec in sections:
        for block in _blocks(sec, at):
            for chunk in _chunks(block):
                body_text = _text_of(chunk)
                if len(body_text) < 12:
                    continue
                title = headings[-1] if headings else default_title
                if len(body_text) > MAX_TEXT_CHARS:
                    body_text = body_text[: MAX_TEXT_CHARS - 1].rstrip() + "…"
                tags = heading_tags(headings)
                for t in extra_tags or []:
                    if t not in tags and len(tags) < MAX_TAGS:
                        tags.append(t)
                out.append(
                    Piece(
                        type=classify(chunk.kind, chunk.items),
                        title=title or body_text[:60],
                        text=body_text,
                        source=source,
                        start=chunk.start,
                        end=chunk.end,
                        tags=tags,
                        paths=list(paths or []),
                    )
                )
    return out
