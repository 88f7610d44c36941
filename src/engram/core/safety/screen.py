"""The read-time screen: every field of a memory that a rendering shows the agent, checked
for text aimed at that agent (the memory is withheld) and for secrets (redacted).

A memory file may come from a cloned repository nobody reviewed; this is what stands
between such a file and the agent that trusts what Engram shows it.
"""

from __future__ import annotations

import bisect
import os
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import pairwise
from typing import Any, NamedTuple, TypeVar

from engram.core.memory import Memory

T = TypeVar("T")
R = TypeVar("R")

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


# A field is a plain date, number, version or lowercase word: no sentence to read.
_INERT = re.compile(r"[0-9][0-9T:.+\-Z ]{0,40}|[a-z]{1,24}|v?\d+(?:\.\d+){0,3}")


def _field_injection(text: str, strict: bool = False) -> str:
    """Why `text` reads like an instruction to the agent, or ''; code counts where it is prose.

    Verdicts of short fields are kept per process: tags, types and dates repeat across
    thousands of memories, and a verify or a long-lived server screens each one once."""
    if _INERT.fullmatch(text):
        return ""
    if len(text) <= 200:
        return _short_field_injection(text, strict)
    return _text_injection(text, strict)


@lru_cache(maxsize=8192)
def _short_field_injection(text: str, strict: bool) -> str:
    return _text_injection(text, strict)


def _text_injection(text: str, strict: bool) -> str:
    from engram.core.safety.scan import find_injection

    prose, code = split_code(text)
    hit = find_injection(prose, strict=strict)
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
    hit = find_injection(runs, strict=strict) if runs else None
    return f"{hit.kind}, in a code span" if hit is not None else ""


def shown_file_name(rel: str, content_hash: str = "") -> str:
    """`rel` as a notice may show it: every notice about a file names it, so a file whose
    name itself reads like an instruction to the agent is named by its folder and hash."""
    folder, _, name = rel.rpartition("/")
    from engram.core.safety.scan import find_injection

    words = name.removesuffix(".md").replace("-", " ").replace("_", " ")
    if find_injection(words, strict=False) is None:
        return rel
    digest = content_hash.split(":")[-1][:12]
    return f"{folder}/<a file whose name reads like an instruction{f', hash {digest}' if digest else ''}>"


def find_unsafe_field(mem: Memory, *, strict: bool = False) -> str:
    """'<field>: <reason>' for the first field that reads like an instruction to the agent."""
    for name, text in shown_fields(mem):
        if name == "type":
            continue
        if name == "id":  # a slug; its words are read as a sentence
            from engram.core.safety.scan import find_injection

            hit = find_injection(text.replace("-", " "), strict=strict)
            if hit is not None:
                return f"id: {hit.kind}"
            continue
        reason = _field_injection(text, strict)
        if reason:
            return f"{name}: {reason}"
    return ""


def find_secret_kinds(mem: Memory, *, strict: bool = False) -> list[str]:
    """The kinds of secret or personal data `redact` finds in the fields shown to the agent.

    Field by field, as `redacted_memory` cleans them: a memory it returned has none left.
    Short fields (tags, dates, names) are read together, one per line, since no secret
    shape spans a line break without the text of a longer field around it.
    """
    from engram.core.safety.scan import redact

    kinds: set[str] = set()
    short: list[str] = []
    for name, text in shown_fields(mem):
        if name in _NOT_REDACTED:
            continue
        if len(text) < 80 and "\n" not in text:
            short.append(text)
        else:
            kinds.update(redact(text, strict=strict).kinds)
    if short:
        for line, found in zip(short, _per_line_kinds("\n".join(short), strict), strict=True):
            if found:
                kinds.update(redact(line, strict=strict).kinds)
    return sorted(kinds)


def _per_line_kinds(text: str, strict: bool) -> list[bool]:
    """For each line of `text`, whether a secret span touches it (one scan for all lines)."""
    from engram.core.safety.secrets import secret_spans

    lines = text.split("\n")
    starts = []
    pos = 0
    for line in lines:
        starts.append(pos)
        pos += len(line) + 1
    hit = [False] * len(lines)
    for s0, e0, _ in secret_spans(text, strict=strict):
        first = bisect.bisect_right(starts, s0) - 1
        last = bisect.bisect_right(starts, max(s0, e0 - 1)) - 1
        for i in range(first, last + 1):
            hit[i] = True
    return hit


class Findings(NamedTuple):
    """What the read path must do with one memory: withhold it, or redact it first."""

    unsafe: str  # '<field>: <reason>' when the memory is withheld
    secrets: list[str]  # kinds of secret found (redacted before the agent sees them)

    def encode(self) -> str:
        import json

        if not self.unsafe and not self.secrets:
            return ""
        return json.dumps({"unsafe": self.unsafe, "secrets": self.secrets})


def screen_memory(mem: Memory, *, strict: bool = False) -> Findings:
    """The one screen of a memory: what it holds that the agent must not see as written.

    The read path calls it on what it is about to show (`strict=False`: a hand-written
    file keeps all but the high-precision families); the commit calls it on exactly what
    it is about to write (`strict=True`: an agent proposed it). Whatever a commit writes
    therefore loads unchanged.
    """
    return Findings(find_unsafe_field(mem, strict=strict), find_secret_kinds(mem, strict=strict))


def memory_findings(mem: Memory) -> Findings:
    """The read-side findings of a memory file (`screen_memory`, lenient)."""
    return screen_memory(mem)


PARALLEL_FROM = 200  # memories to screen: below this a pool of workers costs more than it saves


def many_memory_findings(mems: list[Memory]) -> list[Findings]:
    """`memory_findings` of each memory, in order (see `map_screening`)."""
    return map_screening(memory_findings, mems)


def map_screening(fn: Callable[[T], R], items: Iterable[T], count: int | None = None) -> list[R]:
    """`fn` of each item, in order, where `fn` screens (and may first parse) a memory; in
    worker processes, one per CPU, when there are many (a first `verify` of a large
    memory): the screen is CPU-bound Python, so processes rather than threads. `items` may
    be an iterator (`count` says how many): the workers start on the first items while the
    rest are still being produced. Any trouble starting them: one process, same answers.
    `fn` and the items must pickle."""
    if count is None:
        items = list(items)
        count = len(items)
    cpus = _usable_cpus()
    if count < PARALLEL_FROM or cpus < 2:
        return [fn(item) for item in items]
    import multiprocessing
    import threading
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    from pickle import PicklingError

    methods = multiprocessing.get_all_start_methods()
    # fork is cheap (the compiled screen is inherited) but unsafe beside other threads
    method = "fork" if "fork" in methods and threading.active_count() == 1 else "spawn"
    source = iter(items)
    given: list[T] = []  # what the workers were given, kept for a run in this process

    def feed() -> Iterator[T]:
        for item in source:
            given.append(item)
            yield item

    first = next(feed(), None)
    if first is None:
        return []
    results = [fn(first)]  # compiles what the screen needs before the workers fork
    try:
        context = multiprocessing.get_context(method)
        with ProcessPoolExecutor(max_workers=min(cpus, 8), mp_context=context) as pool:
            results += pool.map(fn, feed(), chunksize=32)
    except (OSError, RuntimeError, BrokenProcessPool, PicklingError, ValueError):
        results = [fn(item) for item in given] + [fn(item) for item in source]
    return results


def _usable_cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def title_findings(title: str) -> Findings:
    """Findings of a title alone: what a listing of every card can afford to check."""
    from engram.core.safety.scan import redact

    reason = _field_injection(title) if title else ""
    secrets = sorted(set(redact(title, strict=False).kinds)) if title else []
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


def redacted_memory(mem: Memory, *, strict: bool = False) -> Memory:
    """A copy of `mem` with secrets in every shown field replaced by `[REDACTED:<kind>]`
    (the kinds `screen_memory` with the same `strict` finds)."""
    from engram.core.safety.scan import redact

    def clean(name: str, value: Any, depth: int = 0) -> Any:
        if name in _NOT_REDACTED:
            return value
        if isinstance(value, str):
            return redact(value, strict=strict).text if value else value
        if isinstance(value, list):
            return [clean(name, v, depth + 1) for v in value]
        if isinstance(value, dict) and depth < 16:
            return {k: clean(name, v, depth + 1) for k, v in value.items()}
        return value

    fields = {k: clean(k, v) for k, v in vars(mem).items()}
    return Memory(**fields)
