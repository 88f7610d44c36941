"""`engram import --replace-with-pointer` and `--restore`: hand imported sections to Engram.

Import never changes a source file. This separate, explicit step replaces the sections
whose memories were approved (their text is in memory now) with a short managed block that
points the host at Engram, and keeps the file's original bytes in a backup record next to
`engram link`'s (`cache/pointers.json` in the workspace root, or the user configuration
folder for `--global`). `--restore` puts those bytes back exactly. It runs through the
same primitives as `engram link`: the edit is computed in memory (so `--plan` shows the
exact diff), written atomically under the root's lock, refused through links, and stopped
when the file changed while it was planned.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engram.core.api import (
    CACHE_DIR,
    WORKSPACE_SUBDIR,
    Root,
    atomic_write,
    parse_json,
    read_json,
    read_plain,
    root_lock,
    user_config_dir,
    user_signing_key,
)
from engram.core.errors import EngramError, UsageError
from engram.hosts.files import (
    BlockStyle,
    find_block,
    first_link_below,
    render_block,
    unified_diff,
)
from engram.hosts.ops import put_back, read_text
from engram.importers import READERS, reader, user_files
from engram.importers.split import FENCE_RE, SETEXT_RE, without_block_tags

POINTER = BlockStyle("<!-- engram:pointer", " -->", "<!-- engram:pointer-end -->")
STATE_FILE = "pointers.json"
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+\S")
_ITEM = re.compile(r"^ *(?:[-*+]|\d{1,3}[.)])[ \t]")
_COMMENT = re.compile(r"<!--.*?-->")
_THEMATIC = re.compile(r"^([-*_])(?:[ \t]*\1){2,}$")


def pointer_body(count: int) -> str:
    """What the host reads instead of the sections: where they went and how to get them."""
    return (
        f"{count} section(s) of this file are kept in Engram memory (`.agents/.engram/`),\n"
        "reviewed and approved there. Before working on a task, load what it needs with the\n"
        '`engram_load` tool (or `engram load "<task>"`) and follow those memories as you\n'
        "followed this file. `engram import --restore` puts the original text back."
    )


def sha(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def replace_sections(text: str, ranges: list[tuple[int, int]]) -> tuple[str, int]:
    """`text` with the lines in `ranges` (1-based, inclusive) replaced by one pointer block.

    A heading whose section is left with nothing but blank lines and headings goes too; an
    earlier pointer block is refreshed where it stands. Returns (new text, sections the
    block now counts).
    """
    nl = "\r\n" if "\r\n" in text else "\n"
    lines = text.splitlines(keepends=True)
    drop: set[int] = {i - 1 for a, b in ranges for i in range(a, b + 1) if 0 < i <= len(lines)}
    old = find_block(text, POINTER)
    heads = _headings(lines)
    count = _sections(heads, drop)
    anchor = min(drop) if drop else None
    if old is not None:
        first = text.count("\n", 0, old.start)
        last = text.count("\n", 0, max(old.start, old.end - 1))
        drop |= set(range(first, last + 1))
        anchor = first if anchor is None else min(anchor, first)
        m = re.search(r'sections="(\d+)"', text[old.start : old.end])
        count += int(m.group(1)) if m else 0
    if anchor is None:
        return text, 0
    drop |= _emptied_headings(lines, drop, heads)
    out: list[str] = []
    block = render_block(POINTER, pointer_body(count), {"sections": str(count)}, nl)
    for i, line in enumerate(lines):
        if i == anchor:
            if out and out[-1].strip():
                out.append(nl)
            out.append(block)
        if i in drop:
            continue
        if not line.strip() and (not out or not out[-1].strip()):
            continue  # no blank runs where sections went
        out.append(line)
    if anchor >= len(lines):
        out.append(block)
    new = "".join(out)
    if not text.endswith(("\n", "\r")):
        new = new.rstrip("\r\n")
    return new, count


def _headings(lines: list[str]) -> list[tuple[int, int, int]]:
    """(first line index, level, lines it takes) of every heading outside fenced code:
    `## Title` lines and setext headings (`Title` over `===` or `---`)."""
    heads: list[tuple[int, int, int]] = []
    fence: str | None = None
    for i, line in enumerate(lines):
        f = FENCE_RE.match(line)
        if fence is None and f:
            fence = f.group(1)
        elif fence is not None and line.strip().startswith(fence):
            fence = None
        elif fence is None:
            m = _HEADING.match(line)
            if m:
                heads.append((i, len(m.group(1)), 1))
            elif (
                i + 1 < len(lines)
                and SETEXT_RE.match(lines[i + 1])
                and line.strip()
                and not _ITEM.match(line)
                and not line.startswith(("    ", "\t", "|"))
                and (i == 0 or not lines[i - 1].strip())
                and not (heads and heads[-1][0] + heads[-1][2] > i)
            ):
                heads.append((i, 1 if lines[i + 1].strip()[:1] == "=" else 2, 2))
    return heads


def _sections(heads: list[tuple[int, int, int]], drop: set[int]) -> int:
    """How many sections (the text under one heading, or before the first) lose lines."""
    starts = [i for i, _, _ in heads]
    owners = set()
    for j in drop:
        owners.add(max((i for i in starts if i <= j), default=-1))
    return len(owners)


def _blank(line: str) -> bool:
    """A line that says nothing once its section is gone: blank, a comment, a rule (`---`),
    block-level HTML (`<details>`, whose words the import read)."""

    bare = without_block_tags(_COMMENT.sub("", line)).strip()
    return not bare or bool(_THEMATIC.match(bare))


def _emptied_headings(
    lines: list[str], drop: set[int], heads: list[tuple[int, int, int]]
) -> set[int]:
    """Headings whose whole section (up to the next heading of the same or a higher level)
    would hold only dropped lines, blanks, comments, rules and headings; at least one line
    of it dropped."""
    out: set[int] = set()
    head_lines = {i + k for i, _, n in heads for k in range(n)}
    for k, (i, level, n) in enumerate(heads):
        end = next((j for j, lv, _ in heads[k + 1 :] if lv <= level), len(lines))
        body = [j for j in range(i + n, end) if not _blank(lines[j]) and j not in head_lines]
        if body and all(j in drop for j in body):  # comments and rules stay where they are
            out |= {j for j in range(i, end) if j in head_lines}
    return out


@dataclass
class Edit:
    """One source file's planned change."""

    rel: str  # as the person knows it (`CLAUDE.md`, `~/.claude/CLAUDE.md`)
    path: Path
    before: str
    after: str
    sections: int = 0
    problem: str = ""


@dataclass
class Place:
    """Where the files and the backup record live: a project, or the person's home."""

    base: Path
    state: Path
    lock_root: Path | None  # the workspace root to lock, None for the user configuration
    label: str = ""  # prefix of the names shown for files under `base` ("~/")
    records: dict[str, Any] = field(default_factory=dict)

    def name_of(self, shown: str) -> str:
        return shown[len(self.label) :] if self.label and shown.startswith(self.label) else shown


def instruction_file(rel: str) -> bool:
    """Whether `rel` names a file the importers read (never anything under a `.git` folder):
    the only files a pointer may replace or a backup restore."""
    from fnmatch import fnmatch

    parts = Path(rel).parts
    if not parts or ".git" in parts or ".." in parts or Path(rel).is_absolute():
        return False
    mods = [reader(n) for n in READERS]
    return any(m.matches(rel) for m in mods) or any(
        fnmatch(rel, pattern) for m in mods for pattern in user_files(m)
    )


def _record_mac(rel: str, rec: dict[str, Any]) -> str | None:
    """The record's signature with the per-user key that also signs commit journals.

    The backup lives under the workspace's cache/, which a cloned repository can ship; only
    a record this user's Engram wrote is ever restored."""

    key = user_signing_key()
    if key is None:
        return None
    body = json.dumps(
        {"rel": rel, "original": rec.get("original"), "written": rec.get("written")},
        sort_keys=True,
        ensure_ascii=True,
    )
    return hmac.new(key, body.encode("ascii"), hashlib.sha256).hexdigest()


def _signed(rel: str, rec: dict[str, Any]) -> bool:
    mac, given = _record_mac(rel, rec), rec.get("mac")
    return mac is not None and isinstance(given, str) and hmac.compare_digest(given, mac)


def place_for(project: Path | None, *, user_level: bool) -> Place:
    """The workspace's place (its cache folder) or, with --global, the home folder's."""

    if user_level:
        return Place(Path.home(), user_config_dir() / STATE_FILE, None, "~/")
    if project is None:
        raise UsageError("--replace-with-pointer needs a workspace: run `engram init` first")
    root = project / WORKSPACE_SUBDIR
    return Place(project, root / CACHE_DIR / STATE_FILE, root)


def load_records(place: Place) -> dict[str, Any]:
    try:
        if place.lock_root is not None:  # the workspace's cache: never through a link
            data = read_json(place.lock_root, place.state)
        else:
            data = parse_json(read_plain(place.state), place.state)
    except (OSError, ValueError):  # absent, broken, not a regular file, too large
        data = {}
    files = data.get("files") if isinstance(data, dict) else None
    place.records = files if isinstance(files, dict) else {}
    return place.records


def _linked(place: Place, path: Path) -> Path | None:
    """The first part of `path` below `place.base` that is a symbolic link, if any."""
    return first_link_below(place.base, path)


def _read(place: Place, rel: str) -> tuple[Path, str | None, str]:
    """(path, text or None, problem) for a file named relative to the place."""

    path = place.base / rel
    if ".." in Path(rel).parts or Path(rel).is_absolute():
        return path, None, f"{rel} is outside {place.base}"
    linked = _linked(place, path)
    if linked is not None:
        return (
            path,
            None,
            (
                f"{linked.relative_to(place.base).as_posix()} is a symbolic link; Engram does not "
                "write through links; left unchanged"
            ),
        )
    try:
        text = read_text(path)
    except (OSError, ValueError) as exc:
        return path, None, f"{rel} cannot be read ({exc}); left unchanged"
    if text is None:
        return path, None, f"{rel} does not exist"
    return path, text, ""


def plan_pointers(place: Place, ranges_by_file: dict[str, list[tuple[int, int]]]) -> list[Edit]:
    """The edit of every file that has approved sections (`ranges_by_file`, shown names)."""
    edits: list[Edit] = []
    for shown, ranges in ranges_by_file.items():
        rel = place.name_of(shown)
        if not instruction_file(rel):
            problem = f"{shown} is not an instruction file; left unchanged"
            edits.append(Edit(shown, place.base / rel, "", "", problem=problem))
            continue
        path, text, problem = _read(place, rel)
        if text is None:
            edits.append(Edit(shown, path, "", "", problem=problem))
            continue
        rec = load_records(place).get(rel)
        if isinstance(rec, dict) and rec.get("written") != sha(text):
            # Its backup holds the bytes from before the first pointer; a second pointer now
            # would either lose those bytes or, on restore, the edits made since.
            problem = (
                f"{shown} changed after Engram wrote its pointer, so no second pointer is "
                "written (it would lose the bytes kept from before the first one, or a restore "
                f"would lose the edits made since); the original stays in {place.state} under "
                f"files.{json.dumps(rel)}.original"
            )
            edits.append(Edit(shown, path, text, text, problem=problem))
            continue
        after, count = replace_sections(text, sorted(set(ranges)))
        edits.append(Edit(shown, path, text, after, count))
    return edits


def plan_restore(place: Place, names: list[str]) -> list[Edit]:
    """The original bytes back for each named file (every recorded file when none is named)."""
    records = load_records(place)
    wanted = [place.name_of(n) for n in names] or sorted(records)
    edits: list[Edit] = []
    for rel in wanted:
        shown = place.label + rel
        rec = records.get(rel)
        if not isinstance(rec, dict) or not isinstance(rec.get("original"), str):
            edits.append(Edit(shown, place.base / rel, "", "", problem=f"{shown} has no pointer"))
            continue
        if not instruction_file(rel):
            problem = f"{shown} is not an instruction file; a backup naming it is not followed"
            edits.append(Edit(shown, place.base / rel, "", "", problem=problem))
            continue
        if not _signed(rel, rec):
            problem = (
                f"the backup of {shown} was not written by Engram for this user (it is not "
                "signed with your key: a cloned repository can ship one); nothing is restored"
            )
            edits.append(Edit(shown, place.base / rel, "", "", problem=problem))
            continue
        path, text, problem = _read(place, rel)
        if text is None:
            edits.append(Edit(shown, path, "", "", problem=problem or f"{shown} does not exist"))
            continue
        if find_block(text, POINTER) is None:
            problem = f"{shown} holds no Engram pointer any more; left as it is"
            edits.append(Edit(shown, path, text, text, problem=problem))
            continue
        if text is not None and sha(text) != rec.get("written"):
            edits.append(
                Edit(
                    shown,
                    path,
                    text,
                    text,
                    problem=f"{shown} changed after Engram wrote its pointer; restoring would lose "
                    "those edits, so it is left as it is (the original stays in "
                    f"{place.state}, under files.{json.dumps(rel)}.original)",
                )
            )
            continue
        edits.append(Edit(shown, path, text or "", rec["original"]))
    return edits


def apply(place: Place, edits: list[Edit], *, restoring: bool) -> None:
    """Write every changed file atomically under the lock, or none; then the backup record."""

    todo = [e for e in edits if not e.problem and e.after != e.before]
    if not todo:
        return
    with _locked(place):
        records = load_records(place)
        for e in todo:  # what the host wrote meanwhile is never overwritten
            try:
                now = read_text(e.path)
            except (OSError, ValueError):
                now = None
            if (now or "") != e.before:
                raise EngramError(
                    f"{e.rel} changed while Engram was planning its edit; nothing was written; "
                    "run the command again",
                    code="import.file_changed",
                )
        done: list[Path] = []
        originals: dict[Path, str | None] = {e.path: e.before for e in todo}
        try:
            for e in todo:
                atomic_write(e.path, e.after, root=place.base if place.lock_root else None)
                done.append(e.path)
                rel = place.name_of(e.rel)
                if restoring:
                    records.pop(rel, None)
                    continue
                rec = records.get(rel)
                keep = isinstance(rec, dict) and rec.get("written") == sha(e.before)
                original = rec["original"] if keep else e.before  # type: ignore[index]
                records[rel] = {"original": original, "written": sha(e.after)}
                records[rel]["mac"] = _record_mac(rel, records[rel])
            _save(place, records)
        except OSError as exc:
            put_back(done, originals)
            raise EngramError(
                f"could not write {e.rel} ({exc.strerror or exc}); the files already written "
                "were put back, nothing changed",
                code="import.write_failed",
            ) from exc


def _save(place: Place, records: dict[str, Any]) -> None:
    place.state.parent.mkdir(parents=True, exist_ok=True)
    data = {"version": 1, "files": records}
    atomic_write(place.state, json.dumps(data, indent=2, sort_keys=True) + "\n")


def _locked(place: Place) -> Any:
    """The workspace root's lock, or the user configuration's (as `engram link` takes them)."""
    if place.lock_root is None:
        from filelock import FileLock

        place.state.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(str(place.state) + ".lock", timeout=30)

    return root_lock(Root(place.lock_root, "workspace"))


def diffs(edits: list[Edit]) -> str:
    return "".join(
        unified_diff(e.rel, e.before, e.after)
        for e in edits
        if not e.problem and e.after != e.before
    )
