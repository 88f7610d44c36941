"""What memory covers, in a few lines: the map a host model reads before it writes its own
searches, so they use the team's words (`engram_load` with `queries`)."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator

from engram.core.read.render import estimate_tokens
from engram.core.safety.injection import find_injection
from engram.core.store.index import index_path, open_index, split_list
from engram.core.store.layout import Roots

MAP_TOKENS = 300  # read on every session start: it stays small at any size of memory
_TAG = re.compile(r"[a-z0-9][a-z0-9+#._-]{0,30}")
_PLURAL = {"rule": "rules", "skill": "skills", "knowledge": "knowledge", "workflow": "workflows"}


def coverage_counts(roots: Roots, *, refresh: bool = True) -> tuple[Counter[str], Counter[str]]:
    """(memories per type, memories per tag) of the durable memories the screen passed.

    A tag is shown to the model before anyone asked for its memory: a memory the screen
    flagged lends none (`render_map` leaves out a tag that reads as an instruction).
    `refresh=False`: the index as it is, and nothing when there is none yet (an MCP
    handshake must not build an index).
    """
    types: Counter[str] = Counter()
    tags: Counter[str] = Counter()
    if not refresh and not index_path(roots).is_file():
        return types, tags
    index = open_index(roots, refresh=refresh)
    rows = index.conn.execute(
        "SELECT type, tags FROM memories WHERE tier IS NOT 'working' AND (flag IS NULL OR flag = '')"
    )
    for mtype, joined in rows:
        types[str(mtype)] += 1
        tags.update(t for t in dict.fromkeys(split_list(joined)) if _TAG.fullmatch(t))
    return types, tags


def _reads_as_instruction(tag: str) -> bool:
    """`ignore-previous-instructions` as a tag: words the map must not repeat."""
    return find_injection(re.sub(r"[-_.]+", " ", tag), strict=False) is not None


def _shown_tags(tags: Counter[str]) -> Iterator[tuple[str, int]]:
    """Tags by use, most used first, without type names and those that read as instructions;
    lazily, so only the tags a map can still fit are screened."""
    for tag, n in sorted(tags.items(), key=lambda kv: (-kv[1], kv[0])):
        if tag in _PLURAL or tag in _PLURAL.values() or _reads_as_instruction(tag):
            continue
        yield tag, n


def render_map(types: Counter[str], tags: Counter[str], *, max_tokens: int = MAP_TOKENS) -> str:
    """One paragraph within `max_tokens`: counts per type, then the most used tags.

    Only the tags that can still fit are screened, so the cost stays that of the map, not
    of every distinct tag.
    """
    total = sum(types.values())
    if not total:
        return ""
    kinds = ", ".join(f"{n:,} {_PLURAL.get(t, t) if n != 1 else t}" for t, n in types.most_common())
    head = f"Project memory holds {total:,} memor{'y' if total == 1 else 'ies'} ({kinds})."
    tail = (
        "Before project work, call engram_load with the task and 2-4 `queries` in these words; "
        "skip it for general questions."
    )
    areas: list[str] = []
    for tag, n in _shown_tags(tags):
        trial = _text(head, [*areas, f"{tag} {n}"], tail)
        if estimate_tokens(trial) > max_tokens:
            break
        areas.append(f"{tag} {n}")
    text = _text(head, areas, tail)
    if find_injection(text, strict=False) is not None:  # tags that read as an instruction
        text = _text(head, [], tail)
    return text


def render_compact_map(types: Counter[str], tags: Counter[str], *, max_chars: int) -> str:
    """The map in one clause of at most `max_chars` (the MCP instructions' room is 512
    characters in all): how many memories, then the most used tags with their counts."""
    total = sum(types.values())
    text = f"Memories: {total:,}."
    if not total or len(text) > max_chars:
        return ""
    areas: list[str] = []
    for tag, n in _shown_tags(tags):
        trial = f"Memories: {total:,}; tags: {', '.join([*areas, f'{tag} {n}'])}."
        if len(trial) > max_chars:
            break
        areas.append(f"{tag} {n}")
    if areas:
        text = f"Memories: {total:,}; tags: {', '.join(areas)}."
    return "" if find_injection(text, strict=False) is not None else text


def _text(head: str, areas: list[str], tail: str) -> str:
    middle = f" Areas (memories per tag): {', '.join(areas)}." if areas else ""
    return f"{head}{middle} {tail}"


def coverage_map(
    roots: Roots,
    *,
    max_tokens: int = MAP_TOKENS,
    max_chars: int | None = None,
    refresh: bool = True,
) -> str:
    """The map of these roots' memory ('' when there is none); `max_chars`: the compact
    one-clause form.

    Kept in the index until the memories change: a handshake or a session start then reads
    one row instead of counting every memory and screening the tags it shows."""
    if not refresh and not index_path(roots).is_file():
        return ""
    index = open_index(roots, refresh=refresh)
    key = f"map:{max_tokens}" if max_chars is None else f"compact:{max_chars}"
    kept = index.derived(key)
    if kept is not None:
        return kept
    generation = index.generation()
    types, tags = coverage_counts(roots, refresh=False)
    if max_chars is not None:
        text = render_compact_map(types, tags, max_chars=max_chars)
    else:
        text = render_map(types, tags, max_tokens=max_tokens)
    index.keep_derived(key, text, generation)
    return text
