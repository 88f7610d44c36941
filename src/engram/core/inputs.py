"""Untrusted input: text from people, agents and repositories, checked before Engram uses it.

Three kinds of input reach Engram from outside: command-line arguments and stdin, MCP tool
arguments (JSON strings may hold lone surrogates such as "\\ud800"), and memory files on
disk, which may come from a cloned repository nobody reviewed. This module gives each one
clear, bounded checks: printable UTF-8 text with the field named on error, files read only
up to a configured size, and every field of a parsed memory checked for text aimed at the
agent (withheld) and for secrets (redacted) before it is shown.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from itertools import pairwise
from typing import TYPE_CHECKING, Any, BinaryIO, NamedTuple

from engram.core.errors import UsageError
from engram.core.memory import FRONT_MATTER_BYTES, MEMORY_FILE_BYTES, Memory, MemoryParseError

if TYPE_CHECKING:
    from engram.core.store.layout import Root

# C0 and C1 control characters other than tab, line feed and carriage return.
_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"
_BAD_FILE_CHAR = re.compile(f"[{_CONTROL}]")
_BAD_ARG_CHAR = f"[{_CONTROL}\ud800-\udfff]"  # compiled on first use (`re` keeps it)
_CHAR_NAMES = {0x00: "a NUL character", 0x1B: "an ESC character", 0x7F: "a DEL character"}
PRINTABLE_HINT = "printable UTF-8 text (tabs and line breaks are allowed)"


def _describe(ch: str) -> str:
    cp = ord(ch)
    if 0xDC80 <= cp <= 0xDCFF:  # how Python carries an undecodable byte of argv or a file name
        return f"a byte that is not UTF-8 (0x{cp - 0xDC00:02X})"
    if 0xD800 <= cp <= 0xDFFF:
        return f"a lone surrogate U+{cp:04X} (half of a UTF-16 pair, not a character)"
    return _CHAR_NAMES.get(cp, f"a control character U+{cp:04X}")


def text_problem(text: str) -> str | None:
    """What makes `text` unusable as memory text ('contains a NUL character at position 3')."""
    if text.isprintable():  # the common case, decided without the pattern
        return None
    m = re.search(_BAD_ARG_CHAR, text)
    if m is None:
        return None
    return f"contains {_describe(m.group())} at position {m.start()}"


def printable(text: str) -> str:
    """`text` with every character `check_text` refuses replaced by U+FFFD (for routing a prompt)."""
    return text if text.isprintable() else re.sub(_BAD_ARG_CHAR, "\ufffd", text)


def check_text(value: str, field: str, what: str = "memory text") -> str:
    """`value` unchanged when it is printable text; a UsageError naming `field` otherwise."""
    problem = text_problem(value)
    if problem:
        raise UsageError(f"{field}: {problem}; {what} must be {PRINTABLE_HINT}")
    return value


def check_strings(value: Any, field: str, what: str = "Engram input") -> None:
    """Check every string inside a JSON-like value (MCP arguments), naming where it sits."""
    if isinstance(value, str):
        check_text(value, field, what)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(str(key), f"{field} (a key)", what)
            check_strings(item, f"{field}.{key}", what)
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            check_strings(item, f"{field}[{n}]", what)


# Command-line arguments that name files or folders: a path may hold any byte but NUL, and
# Python carries its undecodable bytes as surrogates that the OS turns back into the bytes.
PATH_ARGUMENTS = frozenset({"workspace", "file", "global_path", "cases", "accept", "value"})


def check_cli_args(args: object) -> None:
    """Refuse command-line text that is not printable UTF-8, naming the argument."""
    for name, value in vars(args).items():
        if name in PATH_ARGUMENTS or name == "func":
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                check_text(item, name.replace("_", "-"), "command-line text")


def decode_input(raw: bytes, field: str, what: str = "memory text") -> str:
    """Bytes from stdin or a file as text; a clear error for non-UTF-8 or control bytes."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{field}: is not valid UTF-8 (byte 0x{raw[exc.start]:02X} at position {exc.start}); "
            f"{what} must be {PRINTABLE_HINT}"
        ) from exc
    return check_text(text, field, what)


# ---------------------------------------------------------------- memory files on disk


class FileLimits(NamedTuple):
    """What one memory file may cost: its size and the size of its front matter, in bytes."""

    file_bytes: int
    front_matter_bytes: int


_LIMITS_TTL_S = 1.0
_limits_cache: dict[str, tuple[float, FileLimits]] = {}


def file_limits(root: Root) -> FileLimits:
    """The limits for files of `root`: its config.json, then the user's, then the defaults.

    Cached for a second: a full index build reads thousands of files, and a long-lived
    server still sees an edited limit almost at once.
    """
    key = str(root.path)
    now = time.monotonic()
    hit = _limits_cache.get(key)
    if hit is not None and now - hit[0] < _LIMITS_TTL_S:
        return hit[1]
    from engram.core.store.config import Config
    from engram.core.store.roots import read_json_object, read_user_config

    try:
        cfg = Config([read_json_object(root.config_path, root), read_user_config()])
        limits = FileLimits(
            cfg.get("limits.memory_file_bytes"), cfg.get("limits.front_matter_bytes")
        )
    except Exception:  # an unreadable config never lifts the limits
        limits = FileLimits(MEMORY_FILE_BYTES, FRONT_MATTER_BYTES)
    _limits_cache[key] = (now, limits)
    return limits


def too_large(size: int, limit: int) -> MemoryParseError:
    return MemoryParseError(
        f"file is {size:,} bytes, over the {limit:,}-byte limit for a memory file; it was not "
        "read (split it into smaller memories, or raise limits.memory_file_bytes in config.json "
        "and run `engram rebuild-index`)",
        code="memory.too_large",
    )


def read_bounded(fh: BinaryIO, limit: int) -> bytes:
    """The bytes of an open file, refusing (without reading it whole) one over `limit` bytes."""
    size = os.fstat(fh.fileno()).st_size
    if size > limit:
        raise too_large(size, limit)
    raw = fh.read(limit + 1)
    if len(raw) > limit:  # it grew since the stat
        raise too_large(len(raw), limit)
    return raw


def decode_memory_file(raw: bytes) -> str:
    """A memory file's text: UTF-8 without control characters, else a per-file error."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise MemoryParseError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02X} at offset {exc.start}, line {line}); "
            "memory files must be printable UTF-8",
            code="memory.not_text",
        ) from exc
    m = _BAD_FILE_CHAR.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
        raise MemoryParseError(
            f"contains {_describe(m.group())} at line {line}, column {col}; memory files must "
            "be printable UTF-8",
            code="memory.not_text",
        )
    return text


def bad_names(root: Root, dirs: tuple[str, ...]) -> list[tuple[str, str]]:
    """(shown path, problem) for `*.md` files whose names are not text: skipped, so named here."""
    out: list[tuple[str, str]] = []
    for sub in dirs:
        try:
            names = os.listdir(os.path.join(root.path, sub))
        except OSError:
            continue
        for name in names:
            problem = text_problem(name) if name.endswith(".md") else None
            if problem:
                shown = _BAD_FILE_CHAR.sub(
                    lambda m: f"\\x{ord(m.group()):02x}",
                    name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"),
                )
                out.append((f"{sub}/{shown}", f"file name {problem}"))
    return out


# ---------------------------------------------------------------- what a memory shows the agent

# Fields that are Engram's own bookkeeping or the author's attribution (from git config):
# checked for injection like every field, but never "redacted" as personal data.
_NOT_REDACTED = frozenset(
    {"id", "type", "author_name", "author_email", "created", "updated", "valid_from",
     "valid_until", "last_confirmed", "schema_version", "revision"}
)  # fmt: skip
# Patterns for the safety checks are compiled on first use: a load never needs them.
# A run of four or more words apart by single spaces (a comma or colon may end one): prose,
# whether it stands in a comment or a string literal. `--flags`, paths and `a-b` names
# break a run, so a command line is not read as a sentence.
_WORD = r"[^\W\d_]+(?:['’][^\W\d_]+)?"
_PROSE_RUN = rf"(?<![\w/.-])(?<!\w['’]){_WORD}(?:[,;:]?[ \t]{_WORD}){{3,}}"
_FILLERS = frozenset("\u115f\u1160\u3164\uffa0")  # blank letters: invisible, not format


def _hidden_char(text: str) -> str:
    """An invisible or direction-changing character in `text` (format characters), or ''."""
    if text.isascii():
        return ""
    import unicodedata

    for ch in text:
        if ord(ch) > 127 and (ch in _FILLERS or unicodedata.category(ch) == "Cf"):
            return f"hidden character U+{ord(ch):04X}"
    return ""


def shown_fields(mem: Memory) -> Iterator[tuple[str, str]]:
    """(field, text) for every string a rendering of `mem` may show, front matter included."""
    for name, value in vars(mem).items():
        yield from _leaves(name, value)


def _leaves(name: str, value: Any, depth: int = 0) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        if value:
            yield name, value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(name, item, depth + 1)
    elif isinstance(value, dict) and depth < 16:
        for key, item in value.items():
            label = f"front matter {key}" if name == "extra" else name
            yield from _leaves(label, str(key), depth + 1)
            yield from _leaves(label, item, depth + 1)
    elif value is not None and not isinstance(value, bool | int | float):
        yield name, str(value)


def code_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every fenced block and inline code span, in one linear pass.

    A fence is a line opening with three or more backticks or tildes, closed by a line with
    at least as many of the same; an inline span is a run of n backticks closed by the next
    run of exactly n. (Regular expressions for these backtrack badly on long runs of
    backticks: a hostile file of 8,000 of them took a minute.)"""
    spans: list[tuple[int, int]] = []
    n = len(text)
    fence_char, fence_len, fence_start = "", 0, 0
    line_start = 0
    inline_from = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        indent = len(line) - len(stripped)
        run = len(stripped) - len(stripped.lstrip(stripped[:1])) if stripped[:1] in "`~" else 0
        if fence_char:
            closing = run >= fence_len and stripped[:1] == fence_char and indent <= 3
            if closing and not stripped[run:].strip():
                spans.append((fence_start, line_start + len(line.rstrip("\r\n"))))
                fence_char = ""
                inline_from = line_start + len(line)
        elif run >= 3 and indent <= 3:
            if line_start > inline_from:
                spans += _inline_spans(text, inline_from, line_start)
            fence_char, fence_len, fence_start = stripped[0], run, line_start
        line_start += len(line)
    if fence_char:  # an unclosed fence runs to the end
        spans.append((fence_start, n))
    elif inline_from < n:
        spans += _inline_spans(text, inline_from, n)
    return sorted(spans)


def _inline_spans(text: str, start: int, end: int) -> list[tuple[int, int]]:
    runs = [(m.start(), m.end() - m.start()) for m in re.finditer(r"`+", text[start:end])]
    spans: list[tuple[int, int]] = []
    by_length: dict[int, list[int]] = {}
    for i, (_, length) in enumerate(runs):
        by_length.setdefault(length, []).append(i)
    next_of: dict[int, int] = {}  # run index -> index of the next run of the same length
    for indexes in by_length.values():
        for a, b in pairwise(indexes):
            next_of[a] = b
    i = 0
    while i < len(runs):
        j = next_of.get(i)
        if j is None:
            i += 1
            continue
        s0, length = runs[i]
        e0, _ = runs[j]
        spans.append((start + s0, start + e0 + length))
        i = j + 1
    return spans


def split_code(text: str) -> tuple[str, str]:
    """(prose, code): the text with code spans blanked out, and the code spans themselves."""
    if "`" not in text and "~~~" not in text:
        return text, ""
    code: list[str] = []
    prose: list[str] = []
    last = 0
    for s0, e0 in code_spans(text):
        if s0 < last:
            continue
        prose.append(text[last:s0])
        prose.append(" ")
        code.append(text[s0:e0])
        last = e0
    prose.append(text[last:])
    return "".join(prose), "\n".join(code)


def _field_injection(text: str) -> str:
    """Why `text` reads like an instruction to the agent, or ''; code counts where it is prose."""
    from engram.core.safety import find_injection

    prose, code = split_code(text)
    hit = find_injection(prose)
    if hit is not None:
        return hit.kind
    if not code:
        return ""
    # Code is quoted data (`<style>` as a placeholder, `curl … | sh` in a runbook) and is not
    # read as instructions, but a comment or string in it can still be addressed to the
    # agent: its runs of words are checked, and so are characters that hide text.
    hidden = _hidden_char(code)
    if hidden:
        return f"{hidden} in a code span"
    runs = "\n".join(m.group(0) for m in re.finditer(_PROSE_RUN, code))
    hit = find_injection(runs) if runs else None
    return f"{hit.kind}, in a code span" if hit is not None else ""


def find_unsafe_field(mem: Memory) -> str:
    """'<field>: <reason>' for the first field that reads like an instruction to the agent."""
    for name, text in shown_fields(mem):
        if name == "type":
            continue
        if name == "id":  # a slug; its words are read as a sentence
            from engram.core.safety import find_injection

            hit = find_injection(text.replace("-", " "))
            if hit is not None:
                return f"id: {hit.kind}"
            continue
        reason = _field_injection(text)
        if reason:
            return f"{name}: {reason}"
    return ""


def find_secret_kinds(mem: Memory) -> list[str]:
    """The kinds of secret or personal data `redact` finds in the fields shown to the agent."""
    from engram.core.safety import redact

    text = "\n".join(t for name, t in shown_fields(mem) if name not in _NOT_REDACTED)
    return sorted(set(redact(text).kinds)) if text else []


class Findings(NamedTuple):
    """What the read path must do with one memory: withhold it, or redact it first."""

    unsafe: str  # '<field>: <reason>' when the memory is withheld
    secrets: list[str]  # kinds of secret found (redacted before the agent sees them)

    def encode(self) -> str:
        import json

        if not self.unsafe and not self.secrets:
            return ""
        return json.dumps({"unsafe": self.unsafe, "secrets": self.secrets})


def memory_findings(mem: Memory) -> Findings:
    return Findings(find_unsafe_field(mem), find_secret_kinds(mem))


def title_findings(title: str) -> Findings:
    """Findings of a title alone: what a listing of every card can afford to check."""
    from engram.core.safety import redact

    reason = _field_injection(title) if title else ""
    secrets = sorted(set(redact(title).kinds)) if title else []
    return Findings(f"title: {reason}" if reason else "", secrets)


def decode_findings(flag: str | None) -> Findings:
    """Findings from the index's stored flag ('' when the memory is clean)."""
    if not flag:
        return Findings("", [])
    import json

    try:
        data = json.loads(flag)
        return Findings(str(data.get("unsafe") or ""), [str(k) for k in data.get("secrets", [])])
    except (ValueError, AttributeError, TypeError):
        return Findings(flag, [])  # a plain reason


def redacted_memory(mem: Memory) -> Memory:
    """A copy of `mem` with secrets in every shown field replaced by `[REDACTED:<kind>]`."""
    from engram.core.safety import redact

    def clean(name: str, value: Any, depth: int = 0) -> Any:
        if name in _NOT_REDACTED:
            return value
        if isinstance(value, str):
            return redact(value).text if value else value
        if isinstance(value, list):
            return [clean(name, v, depth + 1) for v in value]
        if isinstance(value, dict) and depth < 16:
            return {k: clean(name, v, depth + 1) for k, v in value.items()}
        return value

    fields = {k: clean(k, v) for k, v in vars(mem).items()}
    return Memory(**fields)
