"""The import proposal: instruction files read, split, judged and proposed in one go.

Shared by `engram import` and the `engram_import` MCP tool, so a proposal made either way
is reviewed and approved like a save (terminal prompt, `engram commit TOKEN`, the MCP
approval dialog or `engram_commit`). Files are only read. Candidates that duplicate memory
already there (a second import) are left out, so importing the same files again proposes
nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, replace
from typing import Any

from engram.core import api
from engram.core.api import (
    clean_names,
    content_of,
    durable_memories,
    find_injection,
    make_candidate,
    public_text,
    redact,
    screen_fields,
    slugify,
)
from engram.core.errors import EngramError, SafetyError, UsageError
from engram.core.results import Result
from engram.importers import Workspace, claude_md, host_names, read_all, read_one
from engram.importers.split import statement_title

# A whole repository's instruction files in one approval (the review page pages through
# them); beyond this the rest waits for the next import, so judging stays bounded.
MAX_PER_PROPOSAL = 300


@dataclass
class ImportRequest:
    """What to import: hosts (`--from`), workspace-relative paths, target scope, user level."""

    hosts: list[str] | None = None
    paths: list[str] | None = None
    scope: str | None = None
    user_level: bool = False
    dry_run: bool = False


def _hosts(req: ImportRequest) -> list[str]:
    hosts = [h.strip().lower() for arg in req.hosts or [] for h in arg.split(",") if h.strip()]
    bad = [h for h in hosts if h not in host_names()]
    if bad:
        raise UsageError(f"--from {bad[0]!r} is not a host; allowed: {', '.join(host_names())}")
    return hosts


def _user_pieces(req: ImportRequest) -> tuple[list[Any], list[Any]]:
    """The person's user-level files (home folder), named `~/…`."""
    from pathlib import Path

    if req.paths:
        raise UsageError("--global reads your user-level files; PATH names workspace files only")
    ws = Workspace(Path.home(), user_level=True, label="~/")
    results = read_all(ws, _hosts(req) or None)
    return results, [p for r in results for p in r.pieces]


def _auto_memory(project: Any) -> list[Any]:
    """Claude Code's auto memory for this project, when it keeps one."""
    from pathlib import Path

    found = claude_md.auto_memory(Path(project))
    if found is None:
        return []
    folder, name = found
    home = Path.home().resolve()
    label = str(folder.resolve())
    if Path(label).is_relative_to(home):
        label = "~/" + Path(label).relative_to(home).as_posix()
    ws = Workspace(folder, label=label + "/")
    return [read_one(ws, claude_md, name, host="claude auto memory")]


def read_pieces(req: ImportRequest, project: Any) -> tuple[list[Any], list[Any]]:
    if req.user_level:
        return _user_pieces(req)
    hosts = _hosts(req)
    ws = Workspace(project)
    results = read_all(ws, hosts or None)
    if not hosts or "claude" in hosts:
        results += _auto_memory(project)
    if req.paths is not None:
        wanted = req.paths
        results = [
            r
            for r in results
            if any(w == "." or r.source == w or r.source.startswith(w + "/") for w in wanted)
        ]
    return results, [p for r in results for p in r.pieces]


def _candidates(pieces: list[Any]) -> tuple[list[Any], dict[int, dict[str, Any]], list[str]]:
    cands, extra, bad = [], {}, []
    for piece in pieces:
        n = len(cands) + 1
        try:
            cands.append(make_candidate(n, type=piece.type, text=piece.text))
        except EngramError as exc:
            bad.append(f"{_fields(piece)['imported_from']}: {exc.message}")
            continue
        cands[-1].line = piece.start
        extra[n] = {"title": piece.title[:120], "import": _fields(piece)}
    return cands, extra, bad


def safe_title(piece: Any, redacted_text: str) -> str:
    """The piece's title with no secret in it: the first clause of the redacted text when
    the title was cut from the text, else the heading redacted."""

    if piece.titled_by_text:
        return statement_title(redacted_text)[:120]
    return redact(piece.title).text[:120]


def _preferred_id(title: str, cand: Any) -> str:
    """An id from the memory's title (it says what the memory says), without paths and file
    names (`tests/api/x.go` is where, not what: split into words they fill the id)."""

    words = re.sub(r"\[REDACTED:[^\]]*\]", " ", title or cand.text).split()
    named = [w for w in words if not re.search(r"[/\\]|\w\.\w", w)]
    return slugify(" ".join(named if len(named) >= 2 else words))


def _fields(piece: Any) -> dict[str, Any]:
    """What a piece brings besides its text, with nothing of a secret in it: tags cut from
    a secret are dropped, a file name holding one is redacted, a glob holding one dropped."""
    out: dict[str, Any] = {
        "tags": clean_names(piece.tags, f"{piece.headings}\n{piece.title}\n{piece.text}"),
        "imported_from": public_text(piece.imported_from),
    }
    paths = clean_names(piece.paths, "")
    if paths:
        out["paths"] = paths
    if piece.markdown and piece.markdown != content_of(piece.text).strip():
        out["content"] = piece.markdown  # kept as written (the commit screens it as it is)
    return out


def propose_import(roots: Any, req: ImportRequest) -> Result:
    """Read, split and judge; with `req.dry_run` only preview, else store one proposal.

    The result carries `approval_token` when a proposal was stored (approve it with the
    terminal prompt, `engram commit`, or the MCP approval tools); otherwise it says why
    nothing was proposed.
    """

    scope = req.scope
    if req.user_level:
        if scope not in (None, "global"):
            raise UsageError("--global imports your user-level files into the global root only")
        scope = "global"
    project = roots.project_dir or roots.primary.path.parent.parent
    results, pieces = read_pieces(req, project)
    cands, extra, bad = _candidates(pieces)
    ok_pieces = [
        p for p in pieces if not any(b.startswith(_fields(p)["imported_from"] + ":") for b in bad)
    ]
    by_source = {id(c): p.source for c, p in zip(cands, ok_pieces, strict=False)}
    by_extra = {id(c): extra[c.number] for c in cands}
    by_titled = {id(c): p for c, p in zip(cands, ok_pieces, strict=False)}
    # Already in memory (imported before) or twice in the files: left out before judging,
    # so the cost of a proposal stays bounded however long the files are.
    held = held_contents(roots, api.resolve_scopes(roots, scope))
    dup: Counter[str] = Counter()
    later: Counter[str] = Counter()
    kept: list[Any] = []
    screened_out: list[tuple[str, str]] = []
    for c in cands:
        body = committed_content(c.text, by_extra[id(c)]["import"].get("content", ""))
        problem = screen_fields(by_extra[id(c)]["import"], f"{by_source[id(c)]}:")
        if problem:  # a file name or glob that reads like an instruction
            screened_out.append((by_source[id(c)], problem))
            continue
        if body in held:
            dup[by_source[id(c)]] += 1
        elif len(kept) >= MAX_PER_PROPOSAL:
            later[by_source[id(c)]] += 1
        else:
            held.add(body)
            kept.append(c)
    for n, c in enumerate(kept, start=1):
        c.number = n
    cands = kept
    proposal = None
    refused: list[tuple[str, str]] = []
    redacted: Any = []
    if cands:
        number_src = {c.number: by_source[id(c)] for c in cands}
        try:
            redacted = api.scan_candidates(cands)  # refusals first: numbers settle
            for c in cands:  # the title and the id come from what is written: redacted
                title = safe_title(by_titled[id(c)], c.text)
                if find_injection(title) is not None:  # a heading aimed at the agent
                    title = statement_title(c.text)
                by_extra[id(c)]["title"] = title
            ids = {c.number: _preferred_id(by_extra[id(c)]["title"], c) for c in cands}
            extras = {
                c.number: {
                    "title": by_extra[id(c)]["title"],
                    "imported": api.ImportedPassage.from_json(by_extra[id(c)]["import"]),
                }
                for c in cands
            }
            proposal, _ = api.prepare_candidates(
                roots, cands, kind="import", scope=scope, preferred_ids=ids, extra=extras
            )
        except SafetyError as exc:  # every candidate refused
            refused = [("every candidate", exc.message)]
            cands = []
        for where, why in getattr(redacted, "refused", []):
            m = re.search(r"candidate (\d+)", where)
            src = number_src.get(int(m.group(1))) if m else None
            refused.append((src or where, why))
    refused += screened_out
    entries = list(proposal.candidates) if proposal is not None else []
    source_of = {c.number: by_source[id(c)] for c in cands}  # safety renumbered the kept ones
    for e in entries:
        if e.verdict.kind == "NOOP":
            dup[source_of[e.number]] += 1
    fresh = [e for e in entries if e.verdict.kind != "NOOP"]
    summary = _summary(results, fresh, source_of, dup, later, refused, bad)
    if proposal is None or req.dry_run or not fresh:
        text = summary
        if req.dry_run and fresh and proposal is not None:
            preview = api.preview_text(replace(proposal, candidates=tuple(fresh)), None, None)
            text += "\n\n" + _with_sources(preview, fresh)
        elif not pieces:
            text += "\nNo instructions found to import."
        else:
            text += "\nNothing new to propose."
        data = {
            "files": _files_data(results),
            "proposed": 0,
            "candidates": [
                {
                    "type": e.type,
                    "id": e.id,
                    "title": e.title,
                    "text": e.text,
                    "verdict_line": e.verdict_line,
                    "import": e.imported.to_json() if e.imported else {},
                }
                for e in fresh
            ],
        }
        return Result(text=text, data=data)
    fresh = [replace(e, number=i) for i, e in enumerate(fresh, start=1)]
    proposal = replace(proposal, candidates=tuple(fresh))
    token, expires_at = api.store_proposal(roots, proposal)
    result = api.proposal_result(proposal, token, expires_at)
    api.redaction_notes(result, redacted)
    result.text = summary + "\n\n" + _with_sources(result.text, fresh)
    result.data["files"] = _files_data(results)
    return result


def _with_sources(text: str, entries: list[api.ProposedCandidate]) -> str:
    """The preview with each candidate's source lines under its heading line."""
    where = {str(e.number): e.imported.imported_from if e.imported else "" for e in entries}
    out = []
    for line in text.split("\n"):
        out.append(line)
        m = re.match(r"^(\d+)\. \[", line)
        if m and where.get(m.group(1)):
            out.append(f"   From: {where[m.group(1)]}")
    return "\n".join(out)


def committed_content(text: str, as_written: str = "") -> str:
    """The `## Content` a candidate gets once approved: its passage as written when it has
    one, else bullets of its TEXT; redacted first, as the write path redacts it, so a line
    that held a secret matches the memory it became."""

    if as_written:
        return redact(as_written, strict=True).text.strip()
    return content_of(redact(text).text).strip()


def held_ranges(
    roots: Any, req: ImportRequest, base: Any, *, user_level: bool
) -> dict[str, list[tuple[int, int]]]:
    """(start, end) lines of every imported section that memory holds as written, per file:
    what `--replace-with-pointer` may hand over. A line memory holds only redacted (it
    carried a secret) is not held as written, so it stays in its file."""

    _, pieces = read_pieces(req, base)
    held = held_contents(roots, [r.scope for r in roots.all])
    ranges: dict[str, list[tuple[int, int]]] = {}
    for piece in pieces:
        if not user_level and piece.source.startswith(("~", "/")):
            continue  # another program's file (Claude's auto memory) is left alone
        try:
            body = make_candidate(1, type=piece.type, text=piece.text).text
        except EngramError:
            continue
        written = _fields(piece).get("content", "")
        if committed_content(body, written) not in held or redact(written or body).changed:
            continue
        ranges.setdefault(piece.source, []).append((piece.start, piece.end))
    return ranges


def held_contents(roots: Any, scopes: list[str]) -> set[str]:
    out: set[str] = set()
    for s in scopes:
        root = roots.by_scope(s)
        if root is not None:
            out |= {m.content.strip() for m in durable_memories(root)}
    return out


def _files_data(results: list[Any]) -> list[dict[str, Any]]:
    return [
        {
            "file": public_text(r.source),  # a file name holding a token is not repeated
            "host": r.host,
            "pieces": len(r.pieces),
            "problems": r.problems,
        }
        for r in results
    ]


def _summary(
    results: list[Any],
    fresh: list[api.ProposedCandidate],
    source_of: dict[int, str],
    dup: Counter[str],
    later: Counter[str],
    refused: list[tuple[str, str]],
    bad: list[str],
) -> str:
    """Per source file: candidates of each type (of which deferred), already in memory,
    refused; the files read through an `@import` count as read."""
    sources = [(r.source, r.host, r.problems) for r in results]
    known = {r.source for r in results}
    for src in dict.fromkeys([*source_of.values(), *dup, *later]):
        if src not in known:  # read through an @import
            sources.append((src, "imported", []))
    lines = [f"Read {len(sources)} instruction file(s):"]
    for source, host, problems in sources:
        mine = [e for e in fresh if source_of.get(e.number) == source]
        kinds = Counter(e.type for e in mine)
        parts = [f"{kinds[t]} {t}" for t in ("rule", "skill", "knowledge") if kinds[t]]
        deferred = sum(1 for e in mine if e.deferred_reason)
        if deferred:  # counted in the types above: the commit defers them for review
            parts[-1] += f" ({deferred} of these will be deferred)"
        gone = sum(1 for w, _ in refused if w == source)
        for count, what in (
            (dup[source], "already in memory"),
            (gone, "refused"),
            (later[source], f"left for the next import ({MAX_PER_PROPOSAL} per proposal)"),
        ):
            if count:
                parts.append(f"{count} {what}")
        shown = public_text(source)
        lines.append(f"  {shown} ({host}): " + (", ".join(parts) or "nothing to import"))
        lines += [f"    not read: {public_text(p)}" for p in problems]
        lines += [f"    refused: {public_text(why)}" for w, why in refused if w == source]
    lines += [
        f"  refused ({public_text(w)}): {public_text(why)}"
        for w, why in refused
        if w not in {s[0] for s in sources}
    ]
    lines += [f"  refused: {public_text(b)}" for b in bad]
    return "\n".join(lines)
