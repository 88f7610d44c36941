"""`engram import`: existing agent instruction files become one reviewed proposal.

The files are read (never changed), split into candidates, and proposed through the same
write path as `engram save`: redaction, injection checks, verdicts against existing
memory. Candidates that duplicate memory already there (a second import) are left out,
so importing the same files again proposes nothing.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import Counter
from typing import Any

from engram.cli.common import add_json_flag, emit, roots_from
from engram.core.errors import SafetyError, UsageError
from engram.core.results import Result

MAX_PER_PROPOSAL = 50  # engram.core.candidates.MAX_CANDIDATES


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "import", help="propose memories from existing AGENTS.md, CLAUDE.md, Cursor … rules"
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="only these files or folders")
    p.add_argument(
        "--from",
        dest="hosts",
        action="append",
        metavar="HOST",
        help="only this host's files: agents, claude, cursor, windsurf, copilot, gemini, cline",
    )
    p.add_argument("--dry-run", action="store_true", help="show what would be proposed")
    p.add_argument(
        "--propose", action="store_true", help="print the proposal and its approval token"
    )
    p.add_argument("--scope", choices=("workspace", "global", "both"), help="where to save")
    p.add_argument(
        "--global",
        dest="user_level",
        action="store_true",
        help="read your user-level files (~/.claude/CLAUDE.md, ~/.codex/AGENTS.md, …) into the "
        "global root",
    )
    p.add_argument(
        "--replace-with-pointer",
        action="store_true",
        help="replace the sections whose memories were approved with a short block pointing "
        "the host at Engram (the original is kept; --restore puts it back)",
    )
    p.add_argument(
        "--restore", action="store_true", help="put back the original text of replaced files"
    )
    p.add_argument(
        "--plan",
        action="store_true",
        help="with --replace-with-pointer or --restore: the diff only",
    )
    add_json_flag(p)
    p.set_defaults(func=run_import)


def _hosts(args: argparse.Namespace) -> list[str]:
    from engram.importers import host_names

    hosts = [h.strip().lower() for arg in args.hosts or [] for h in arg.split(",") if h.strip()]
    bad = [h for h in hosts if h not in host_names()]
    if bad:
        raise UsageError(f"--from {bad[0]!r} is not a host; allowed: {', '.join(host_names())}")
    return hosts


def _user_pieces(args: argparse.Namespace) -> tuple[list[Any], list[Any]]:
    """The person's user-level files (home folder), named `~/…`."""
    from pathlib import Path

    from engram.importers import Workspace, read_all

    if args.paths:
        raise UsageError("--global reads your user-level files; PATH names workspace files only")
    ws = Workspace(Path.home(), user_level=True, label="~/")
    results = read_all(ws, _hosts(args) or None)
    return results, [p for r in results for p in r.pieces]


def _auto_memory(project: Any) -> list[Any]:
    """Claude Code's auto memory for this project, when it keeps one."""
    from pathlib import Path

    from engram.importers import Workspace, claude_md, read_one

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


def _pieces(args: argparse.Namespace, project: Any) -> tuple[list[Any], list[Any]]:
    from engram.importers import Workspace, read_all

    if args.user_level:
        return _user_pieces(args)
    hosts = _hosts(args)
    ws = Workspace(project)
    results = read_all(ws, hosts or None)
    if not hosts or "claude" in hosts:
        results += _auto_memory(project)
    if args.paths:
        import os

        wanted = []
        for p in args.paths:
            rel = os.path.relpath(os.path.abspath(p), ws.root).replace(os.sep, "/")
            if rel.startswith(".."):
                raise UsageError(f"{p} is outside the workspace {ws.root}")
            wanted.append(rel)
        results = [
            r
            for r in results
            if any(w == "." or r.source == w or r.source.startswith(w + "/") for w in wanted)
        ]
    return results, [p for r in results for p in r.pieces]


def _candidates(pieces: list[Any]) -> tuple[list[Any], dict[int, dict[str, Any]], list[str]]:
    from engram.core.candidates import make_candidate
    from engram.core.errors import EngramError

    cands, extra, bad = [], {}, []
    for piece in pieces:
        n = len(cands) + 1
        try:
            cands.append(make_candidate(n, type=piece.type, text=piece.text))
        except EngramError as exc:
            bad.append(f"{piece.imported_from}: {exc.message}")
            continue
        cands[-1].line = piece.start
        extra[n] = {"title": piece.title[:120], "import": _fields(piece)}
    return cands, extra, bad


def _preferred_id(title: str, cand: Any) -> str:
    """A procedure is named by its heading (`release`), other memories by their words."""
    from engram.core.candidates import slugify

    return slugify(title) if cand.type == "skill" and title else slugify(cand.text)


def _fields(piece: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"tags": piece.tags, "imported_from": piece.imported_from}
    if piece.paths:
        out["paths"] = piece.paths
    return out


def run_import(args: argparse.Namespace) -> int:
    from engram.core import approvals
    from engram.core.commit import content_of

    if args.replace_with_pointer or args.restore:
        return run_pointer(args)
    if args.plan:
        raise UsageError("--plan goes with --replace-with-pointer or --restore; use --dry-run")
    if args.dry_run and args.propose:
        raise UsageError("--dry-run proposes nothing and --propose only proposes; pick one")
    if not (args.dry_run or args.propose):
        from engram.cli.write import _interactive

        if not _interactive():
            raise UsageError(
                "import asks for approval, but stdin is not a terminal; pass --propose to print "
                "the approval token for `engram commit`, or --dry-run to see the candidates"
            )
        if args.json:
            raise UsageError("--json needs --propose or --dry-run (the prompt is for a person)")
    if args.user_level:
        if args.scope not in (None, "global"):
            raise UsageError("--global imports your user-level files into the global root only")
        args.scope = "global"
    roots = roots_from(args)
    project = roots.project_dir or roots.primary.path.parent.parent
    results, pieces = _pieces(args, project)
    cands, extra, bad = _candidates(pieces)
    ok_pieces = [p for p in pieces if not any(b.startswith(p.imported_from + ":") for b in bad)]
    by_source = {id(c): p.source for c, p in zip(cands, ok_pieces, strict=False)}
    by_extra = {id(c): extra[c.number] for c in cands}
    # Already in memory (imported before) or twice in the files: left out before judging,
    # so the cost of a proposal stays bounded however long the files are.
    held = _held_contents(roots, approvals.resolve_scopes(roots, args.scope))
    dup: Counter[str] = Counter()
    later: Counter[str] = Counter()
    kept: list[Any] = []
    for c in cands:
        body = content_of(c.text).strip()
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
    payload: dict[str, Any] = {"candidates": []}
    refused: list[tuple[str, str]] = []
    redacted: Any = []
    if cands:
        number_src = {c.number: by_source[id(c)] for c in cands}
        try:
            redacted = approvals.scan_candidates(cands)  # refusals first: numbers settle
            ids = {c.number: _preferred_id(by_extra[id(c)]["title"], c) for c in cands}
            payload, _ = approvals.prepare_candidates(
                roots, cands, kind="import", scope=args.scope, preferred_ids=ids
            )
        except SafetyError as exc:  # every candidate refused
            refused = [("every candidate", exc.message)]
            cands = []
        for where, why in getattr(redacted, "refused", []):
            m = re.search(r"candidate (\d+)", where)
            src = number_src.get(int(m.group(1))) if m else None
            refused.append((src or where, why))
    entries = payload["candidates"]
    for e, c in zip(entries, cands, strict=True):  # safety renumbered the kept candidates
        e.update(by_extra[id(c)])
    source_of = {c.number: by_source[id(c)] for c in cands}
    for e in entries:
        if e["verdict"]["kind"] == "NOOP":
            dup[source_of[e["number"]]] += 1
    fresh = [e for e in entries if e["verdict"]["kind"] != "NOOP"]
    summary = _summary(results, fresh, source_of, dup, later, refused, bad)
    if args.dry_run or not fresh:
        text = summary
        if args.dry_run and fresh:
            preview = approvals.preview_text({**payload, "candidates": fresh}, None, None)
            text += "\n\n" + _with_sources(preview, fresh)
        elif not pieces:
            text += "\nNo instructions found to import."
        else:
            text += "\nNothing new to propose."
        data = {
            "files": _files_data(results),
            "proposed": 0,
            "candidates": [
                {k: e[k] for k in ("type", "id", "title", "text", "verdict_line", "import")}
                for e in fresh
            ],
        }
        return emit(Result(text=text, data=data), args)
    for i, e in enumerate(fresh, start=1):
        e["number"] = i
    payload["candidates"] = fresh
    token, expires_at = approvals.store_proposal(roots, payload)
    result = approvals.proposal_result(payload, token, expires_at)
    approvals._redaction_notes(result, redacted)
    result.text = summary + "\n\n" + _with_sources(result.text, fresh)
    result.data["files"] = _files_data(results)
    if args.propose:
        return emit(approvals.for_person(result), args)
    from engram.cli.write import _prompt_loop

    return _prompt_loop(roots, result, args)


def run_pointer(args: argparse.Namespace) -> int:
    """Replace approved sections with a pointer block (or restore the originals); --plan: diff."""
    from engram.core.commit import content_of
    from engram.importers import pointer

    if args.replace_with_pointer and args.restore:
        raise UsageError("--replace-with-pointer and --restore undo each other; pick one")
    if args.dry_run or args.propose:
        raise UsageError(
            "--replace-with-pointer and --restore take --plan, not --dry-run/--propose"
        )
    roots = roots_from(args)
    place = pointer.place_for(roots.project_dir, user_level=args.user_level)
    if args.restore:
        edits = pointer.plan_restore(place, [_shown(place, p) for p in args.paths])
    else:
        _, pieces = _pieces(args, roots.project_dir or place.base)
        held = _held_contents(roots, [r.scope for r in roots.all])
        ranges: dict[str, list[tuple[int, int]]] = {}
        for piece in pieces:
            if not args.user_level and piece.source.startswith(("~", "/")):
                continue  # another program's file (Claude's auto memory) is left alone
            body = _content(piece)
            if body is not None and content_of(body).strip() in held:
                ranges.setdefault(piece.source, []).append((piece.start, piece.end))
        edits = pointer.plan_pointers(place, ranges)
    if not args.plan:
        pointer.apply(place, edits, restoring=args.restore)
    return emit(_pointer_result(edits, args), args)


def _shown(place: Any, path: str) -> str:
    """A file named on the command line, as the place names it."""
    import os

    full = os.path.abspath(os.path.expanduser(path))
    rel = os.path.relpath(full, place.base).replace(os.sep, "/")
    if rel.startswith(".."):
        raise UsageError(f"{path} is outside {place.base}")
    return place.label + rel


def _content(piece: Any) -> str | None:
    from engram.core.candidates import make_candidate
    from engram.core.errors import EngramError

    try:
        return make_candidate(1, type=piece.type, text=piece.text).text
    except EngramError:
        return None


def _pointer_result(edits: list[Any], args: argparse.Namespace) -> Result:
    from engram.core.results import Diagnostic
    from engram.importers.pointer import diffs

    verb = "Restored" if args.restore else "Replaced"
    lines: list[str] = []
    for e in edits:
        if e.problem:
            lines.append(f"  left as it is: {e.problem}")
        elif e.after == e.before:
            lines.append(f"  unchanged: {e.rel}")
        elif args.restore:
            lines.append(f"  {'would restore' if args.plan else 'restored'}: {e.rel}")
        else:
            what = "would replace" if args.plan else "replaced"
            lines.append(f"  {what} {e.sections} approved section(s) in {e.rel}")
    if not edits:
        lines.append(
            "  nothing to restore: no file has an Engram pointer"
            if args.restore
            else "  nothing to replace: no section left in these files is in memory (approve "
            "an import first; sections already replaced are behind their pointer)"
        )
    diff = diffs(edits)
    if args.plan:
        lines += ["", "Plan only: nothing was written." if diff else "Plan only: no change."]
        if diff:
            lines.append(diff.rstrip("\n"))
    result = Result(
        f"{verb if not args.plan else 'Plan'}:\n" + "\n".join(lines),
        data={
            "plan": bool(args.plan),
            "files": [
                {
                    "file": e.rel,
                    "changed": e.after != e.before and not e.problem,
                    "sections": e.sections,
                    "problem": e.problem,
                }
                for e in edits
            ],
            "diff": diff,
        },
    )
    for e in edits:
        if e.problem and "changed after" in e.problem:
            result.diagnostics.append(Diagnostic("warning", "import.pointer_edited", e.problem))
    return result


def _with_sources(text: str, entries: list[dict[str, Any]]) -> str:
    """The preview with each candidate's source lines under its heading line."""
    where = {str(e["number"]): e.get("import", {}).get("imported_from", "") for e in entries}
    out = []
    for line in text.split("\n"):
        out.append(line)
        m = re.match(r"^(\d+)\. \[", line)
        if m and where.get(m.group(1)):
            out.append(f"   From: {where[m.group(1)]}")
    return "\n".join(out)


def _held_contents(roots: Any, scopes: list[str]) -> set[str]:
    from engram.core.approvals import durable_memories

    out: set[str] = set()
    for s in scopes:
        root = roots.by_scope(s)
        if root is not None:
            out |= {m.content.strip() for m in durable_memories(root)}
    return out


def _files_data(results: list[Any]) -> list[dict[str, Any]]:
    return [
        {"file": r.source, "host": r.host, "pieces": len(r.pieces), "problems": r.problems}
        for r in results
    ]


def _summary(
    results: list[Any],
    fresh: list[dict[str, Any]],
    source_of: dict[int, str],
    dup: Counter[str],
    later: Counter[str],
    refused: list[tuple[str, str]],
    bad: list[str],
) -> str:
    """Per source file: candidates of each type, already in memory, deferred, refused."""
    lines = [f"Read {len(results)} instruction file(s):"]
    sources = [(r.source, r.host, r.problems) for r in results]
    known = {r.source for r in results}
    for src in dict.fromkeys([*source_of.values(), *dup, *later]):
        if src not in known:  # read through an @import
            sources.append((src, "imported", []))
    for source, host, problems in sources:
        mine = [e for e in fresh if source_of.get(e["number"]) == source]
        kinds = Counter(e["type"] for e in mine)
        parts = [f"{kinds[t]} {t}" for t in ("rule", "skill", "knowledge") if kinds[t]]
        deferred = sum(1 for e in mine if e["deferred_reason"])
        gone = sum(1 for w, _ in refused if w == source)
        for count, what in (
            (dup[source], "already in memory"),
            (deferred, "will be deferred"),
            (gone, "refused"),
            (later[source], "left for the next import (50 per proposal)"),
        ):
            if count:
                parts.append(f"{count} {what}")
        lines.append(f"  {source} ({host}): " + (", ".join(parts) or "nothing to import"))
        lines += [f"    not read: {p}" for p in problems]
        lines += [f"    refused: {why}" for w, why in refused if w == source]
    lines += [f"  refused ({w}): {why}" for w, why in refused if w not in {s[0] for s in sources}]
    lines += [f"  refused: {b}" for b in bad]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
