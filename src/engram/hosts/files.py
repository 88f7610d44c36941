"""Byte-preserving edits of host configuration files: JSON / JSONC, TOML blocks, Markdown blocks.

A person's configuration file is theirs: Engram edits only the bytes of its own entry and
leaves every other byte (indentation, key order, comments, trailing commas, line endings)
as it was, so that `link` followed by `unlink` gives back the identical file. JSON and JSONC
are edited through a small span-keeping parser (no library round-trips them byte for byte);
TOML files get a delimited managed block and are validated with tomlkit.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.core.api import MAX_JSON_DEPTH, BadFileError, read_plain_text

BOM = "\ufeff"


class ConfigParseError(ValueError):
    """A configuration file that cannot be parsed; Engram reports it and leaves it alone."""


# ---------------------------------------------------------------- JSON / JSONC with spans


@dataclass
class Node:
    """A parsed JSON value and where its text lies in the document."""

    kind: str  # "object" | "array" | "scalar"
    start: int
    end: int
    value: Any = None
    members: list[Member] = field(default_factory=list)  # objects
    items: list[Node] = field(default_factory=list)  # arrays


@dataclass
class Member:
    key: str
    key_start: int
    node: Node


_NUM_RE = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_STR_RE = re.compile(r'"(?:[^"\\\x00-\x1f]|\\.)*"', re.S)


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.depth = 0

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_JSON_DEPTH:
            raise self.fail(f"nested deeper than {MAX_JSON_DEPTH} levels")

    def fail(self, msg: str) -> ConfigParseError:
        line = self.text.count("\n", 0, self.pos) + 1
        col = self.pos - (self.text.rfind("\n", 0, self.pos) + 1) + 1
        return ConfigParseError(f"{msg} at line {line}, column {col}")

    def skip(self) -> None:
        """Skip whitespace and // or /* */ comments (JSONC)."""
        t, n = self.text, len(self.text)
        while self.pos < n:
            c = t[self.pos]
            if c in " \t\r\n":
                self.pos += 1
            elif t.startswith("//", self.pos):
                nl = t.find("\n", self.pos)
                self.pos = n if nl < 0 else nl
            elif t.startswith("/*", self.pos):
                close = t.find("*/", self.pos + 2)
                if close < 0:
                    raise self.fail("unterminated comment")
                self.pos = close + 2
            else:
                return

    def parse_document(self) -> Node:
        self.skip()
        node = self.value()
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("unexpected text after the JSON value")
        return node

    def value(self) -> Node:
        t = self.text
        if self.pos >= len(t):
            raise self.fail("unexpected end of file")
        c = t[self.pos]
        if c == "{":
            return self.obj()
        if c == "[":
            return self.arr()
        if c == '"':
            start = self.pos
            text = self.string()
            return Node("scalar", start, self.pos, text)
        for lit, val in (("true", True), ("false", False), ("null", None)):
            if t.startswith(lit, self.pos):
                start = self.pos
                self.pos += len(lit)
                return Node("scalar", start, self.pos, val)
        m = _NUM_RE.match(t, self.pos)
        if m:
            self.pos = m.end()
            return Node("scalar", m.start(), m.end(), json.loads(m.group()))
        raise self.fail(f"unexpected character {c!r}")

    def string(self) -> str:
        m = _STR_RE.match(self.text, self.pos)
        if not m:
            raise self.fail("invalid string")
        self.pos = m.end()
        try:
            return json.loads(m.group())
        except ValueError as exc:
            raise self.fail("invalid string escape") from exc

    def obj(self) -> Node:
        node = Node("object", self.pos, -1, {})
        self.pos += 1
        self.enter()
        while True:
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == "}":
                self.pos += 1
                node.end = self.pos
                self.depth -= 1
                return node
            if self.pos >= len(self.text) or self.text[self.pos] != '"':
                raise self.fail("expected a quoted key or '}'")
            key_start = self.pos
            key = self.string()
            self.skip()
            if self.pos >= len(self.text) or self.text[self.pos] != ":":
                raise self.fail("expected ':'")
            self.pos += 1
            self.skip()
            child = self.value()
            node.members.append(Member(key, key_start, child))
            node.value[key] = child.value
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
                continue
            if self.pos < len(self.text) and self.text[self.pos] == "}":
                continue
            raise self.fail("expected ',' or '}'")

    def arr(self) -> Node:
        node = Node("array", self.pos, -1, [])
        self.pos += 1
        self.enter()
        while True:
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == "]":
                self.pos += 1
                node.end = self.pos
                self.depth -= 1
                return node
            child = self.value()
            node.items.append(child)
            node.value.append(child.value)
            self.skip()
            if self.pos < len(self.text) and self.text[self.pos] == ",":
                self.pos += 1
                continue
            if self.pos < len(self.text) and self.text[self.pos] == "]":
                continue
            raise self.fail("expected ',' or ']'")


def read_host_file(path: Path) -> str:
    """A host's file as text, line endings kept: a regular file of bounded size, opened
    without blocking (a FIFO at `AGENTS.md` must not hang `doctor`); FileNotFoundError when
    absent, ConfigParseError when it cannot be read as text."""
    try:
        return read_plain_text(path)
    except BadFileError as exc:
        raise ConfigParseError(exc.message) from None


def parse_jsonc(text: str) -> Node:
    """Parse JSON with comments and trailing commas, keeping every value's span."""
    return _Parser(text).parse_document()


Path_ = tuple[str | int, ...]


class JsonDoc:
    """A JSON/JSONC document edited in place: each edit splices only the affected bytes."""

    def __init__(self, text: str) -> None:
        self.bom = text.startswith(BOM)
        self.text = text[1:] if self.bom else text
        self.nl = "\r\n" if "\r\n" in self.text else "\n"
        if self.text.strip():
            self.root = parse_jsonc(self.text)
            if self.root.kind != "object":
                raise ConfigParseError("the file must hold a JSON object")
        else:
            self.text = "{}"
            self.root = parse_jsonc(self.text)

    # -- reading

    @property
    def value(self) -> dict:
        return self.root.value

    def node(self, path: Path_) -> Node | None:
        node: Node | None = self.root
        for part in path:
            if node is None:
                return None
            if isinstance(part, int):
                node = node.items[part] if node.kind == "array" and part < len(node.items) else None
            else:
                node = next((m.node for m in node.members if m.key == part), None)
        return node

    def get(self, path: Path_) -> Any:
        node = self.node(path)
        return None if node is None else node.value

    def dumps(self) -> str:
        return (BOM if self.bom else "") + self.text

    # -- layout helpers

    def _indent_unit(self) -> str:
        for m in re.finditer(r"\n([ \t]+)\S", self.text):
            ws = m.group(1)
            return "\t" if ws.startswith("\t") else " " * min(len(ws), 8)
        return "  "

    def _line_indent(self, pos: int) -> str:
        line_start = self.text.rfind("\n", 0, pos) + 1
        m = re.match(r"[ \t]*", self.text[line_start:])
        return m.group() if m else ""

    def _is_multiline(self, node: Node) -> bool:
        return "\n" in self.text[node.start : node.end]

    def _render(self, value: Any, base_indent: str, multiline: bool) -> str:
        if not multiline:
            return json.dumps(value, ensure_ascii=False)
        raw = json.dumps(value, indent=self._indent_unit(), ensure_ascii=False)
        return raw.replace("\n", self.nl + base_indent)

    def _reparse(self, new_text: str) -> None:
        self.text = new_text
        self.root = parse_jsonc(new_text)

    def _splice(self, start: int, end: int, insert: str) -> None:
        self._reparse(self.text[:start] + insert + self.text[end:])

    def _skip_ws_comments(self, pos: int) -> int:
        p = _Parser(self.text)
        p.pos = pos
        p.skip()
        return p.pos

    def _ws_start_before(self, pos: int) -> int:
        """Start of the plain whitespace run that ends at `pos`."""
        while pos > 0 and self.text[pos - 1] in " \t\r\n":
            pos -= 1
        return pos

    def _comma_after(self, end: int) -> int | None:
        p = self._skip_ws_comments(end)
        return p if p < len(self.text) and self.text[p] == "," else None

    # -- editing

    def _child_starts(self, container: Node) -> list[tuple[int, Node]]:
        if container.kind == "object":
            return [(m.key_start, m.node) for m in container.members]
        return [(n.start, n) for n in container.items]

    def _insert_child(self, container: Node, child_text_fn: Any) -> None:
        """Append a child (member text or item text) at the end of an object or array."""
        children = self._child_starts(container)
        multiline = self._is_multiline(container) or not children
        if children:
            first_start, _ = children[0]
            indent = self._line_indent(first_start) if multiline else ""
        else:
            indent = self._line_indent(container.start) + self._indent_unit()
        body = child_text_fn(indent, multiline)
        if children:
            _, last = children[-1]
            comma = self._comma_after(last.end)
            if not multiline:
                self._splice(last.end, last.end, ", " + body)
            elif comma is not None:  # keep the trailing-comma style
                self._splice(comma + 1, comma + 1, self.nl + indent + body + ",")
            else:
                self._splice(last.end, last.end, "," + self.nl + indent + body)
            return
        inner_start, inner_end = container.start + 1, container.end - 1
        outer = self._line_indent(container.start)
        self._splice(inner_start, inner_end, self.nl + indent + body + self.nl + outer)

    def _remove_child(self, container: Node, index: int, *, empty_inner: str = "") -> None:
        children = self._child_starts(container)
        start, node = children[index]
        if len(children) == 1:
            inner = self.text[container.start + 1 : container.end - 1]
            rest = inner.replace(self.text[start : node.end], "", 1)
            if not rest.replace(",", "").strip():
                self._splice(container.start + 1, container.end - 1, empty_inner)
                return
        comma = self._comma_after(node.end)
        ws = self._ws_start_before(start)
        if comma is not None:
            self._splice(ws, comma + 1, "")
            return
        _, prev = children[index - 1]
        prev_comma = self._comma_after(prev.end)
        assert prev_comma is not None
        # delete the member and the whitespace before it, then the comma that preceded it
        self._reparse(self.text[:ws] + self.text[node.end :])
        self._reparse(self.text[:prev_comma] + self.text[prev_comma + 1 :])

    def set(self, path: Path_, value: Any) -> list[Path_]:
        """Set `path` (object keys) to `value`, creating missing objects.

        Returns the container paths that did not exist before (for a later clean removal).
        """
        created: list[Path_] = []
        node = self.root
        for depth, key in enumerate(path[:-1]):
            child = self.node(path[: depth + 1])
            if child is None:
                nested: Any = value
                for k in reversed(path[depth + 1 :]):
                    nested = {k: nested}
                self._insert_member(node, str(key), nested)
                created.append(tuple(path[: depth + 1]))
                return created
            if child.kind not in ("object", "array"):
                raise ConfigParseError(f"{'.'.join(map(str, path[: depth + 1]))} is not an object")
            node = child
        last = path[-1]
        existing = next((m for m in node.members if m.key == last), None)
        if existing is None:
            self._insert_member(node, str(last), value)
        elif existing.node.value != value or type(existing.node.value) is not type(value):
            self.replace(path, value)
        return created

    def _insert_member(self, obj: Node, key: str, value: Any) -> None:
        def text(indent: str, multiline: bool) -> str:
            return (
                json.dumps(key, ensure_ascii=False) + ": " + self._render(value, indent, multiline)
            )

        self._insert_child(obj, text)

    def append(self, path: Path_, value: Any) -> None:
        """Append `value` to the array at `path` (which must exist)."""
        arr = self.node(path)
        if arr is None or arr.kind != "array":
            raise ConfigParseError(f"{'.'.join(map(str, path))} is not an array")

        def text(indent: str, multiline: bool) -> str:
            return self._render(value, indent, multiline)

        self._insert_child(arr, text)

    def replace(self, path: Path_, value: Any) -> None:
        node = self.node(path)
        if node is None:
            raise KeyError(path)
        if node.value == value and type(node.value) is type(value):
            return
        multiline = self._is_multiline(node) or (
            isinstance(value, dict | list) and self._is_multiline(self.root)
        )
        self._splice(
            node.start, node.end, self._render(value, self._line_indent(node.start), multiline)
        )

    def remove(self, path: Path_, *, empty_inner: str = "") -> bool:
        """Remove the member or item at `path`; False when absent."""
        parent = self.node(path[:-1])
        if parent is None:
            return False
        last = path[-1]
        if parent.kind == "object":
            idx = next((i for i, m in enumerate(parent.members) if m.key == last), None)
        elif isinstance(last, int) and last < len(parent.items):
            idx = last
        else:
            idx = None
        if idx is None:
            return False
        self._remove_child(parent, idx, empty_inner=empty_inner)
        return True

    def inner_text(self, path: Path_) -> str:
        node = self.node(path)
        return "" if node is None else self.text[node.start + 1 : node.end - 1]


# ---------------------------------------------------------------- delimited text blocks


@dataclass(frozen=True)
class BlockStyle:
    """Marker lines around a managed block; `{attrs}` carries e.g. the hosts using it."""

    begin: str  # a line prefix, e.g. "<!-- engram:begin"
    begin_suffix: str  # e.g. " -->"
    end: str  # the whole end line


MARKDOWN = BlockStyle("<!-- engram:begin", " -->", "<!-- engram:end -->")
TOML = BlockStyle("# >>> engram:begin", " >>>", "# <<< engram:end <<<")


@dataclass
class Block:
    start: int  # offset of the begin line
    end: int  # offset just after the end line (and its newline)
    attrs: dict[str, str]
    body: str


_ATTR_RE = re.compile(r'(\w+)="([^"]*)"')


def find_block(text: str, style: BlockStyle) -> Block | None:
    m = re.search("^" + re.escape(style.begin), text, re.M)
    if m is None:
        return None
    begin = m.start()
    line_end = text.find("\n", begin)
    if line_end < 0:
        return None
    end_at = text.find(style.end, line_end)
    if end_at < 0:
        return None
    after = end_at + len(style.end)
    if text.startswith("\r\n", after):
        after += 2
    elif text.startswith("\n", after):
        after += 1
    header = text[begin + len(style.begin) : line_end].rstrip("\r")
    attrs = dict(_ATTR_RE.findall(header))
    body = text[line_end + 1 : end_at]
    return Block(begin, after, attrs, body)


def render_block(style: BlockStyle, body: str, attrs: dict[str, str], nl: str = "\n") -> str:
    head = style.begin + "".join(f' {k}="{v}"' for k, v in attrs.items()) + style.begin_suffix
    body = body.rstrip("\n").replace("\n", nl)
    return head + nl + body + nl + style.end + nl


def upsert_block(
    text: str, style: BlockStyle, body: str, attrs: dict[str, str]
) -> tuple[str, bool]:
    """Insert or refresh the managed block. Returns (new text, added_final_newline)."""
    nl = "\r\n" if "\r\n" in text else "\n"
    block = render_block(style, body, attrs, nl)
    found = find_block(text, style)
    if found is not None:
        return text[: found.start] + block + text[found.end :], False
    if not text:
        return block, False
    added = not text.endswith("\n")
    sep = (nl if added else "") + nl
    return text + sep + block, added


def remove_block(text: str, style: BlockStyle, *, added_final_newline: bool = False) -> str:
    """Remove the managed block and the blank line Engram put before it."""
    found = find_block(text, style)
    if found is None:
        return text
    before, after = text[: found.start], text[found.end :]
    if not after:  # the block is last, as Engram wrote it: drop the separator it added
        for _ in range(2 if added_final_newline else 1):
            if before.endswith("\r\n"):
                before = before[:-2]
            elif before.endswith("\n"):
                before = before[:-1]
    return before + after


# ---------------------------------------------------------------- diffs


def unified_diff(path: str, old: str | None, new: str | None) -> str:
    """A unified diff of one file ('/dev/null' for a created or deleted file)."""
    a = [] if old is None else old.splitlines(keepends=True)
    b = [] if new is None else new.splitlines(keepends=True)
    if a and not a[-1].endswith("\n"):
        a[-1] += "\n\\ No newline at end of file\n"
    if b and not b[-1].endswith("\n"):
        b[-1] += "\n\\ No newline at end of file\n"
    return "".join(
        difflib.unified_diff(
            a,
            b,
            fromfile="/dev/null" if old is None else f"a/{path}",
            tofile="/dev/null" if new is None else f"b/{path}",
        )
    )


def first_link_below(base: Path, path: Path) -> Path | None:
    """The first folder or file of `path` below `base` that is a symbolic link, if any."""
    import os
    import stat

    here = base
    for name in path.relative_to(base).parts:
        here = here / name
        try:
            if stat.S_ISLNK(os.lstat(here).st_mode):
                return here
        except FileNotFoundError:
            return None
    return None
