"""`engram import`: existing agent instruction files become one reviewed proposal.

The files are read (never changed), split into candidates, and proposed through the same
write path as `engram save`: redaction, injection checks, verdicts against existing
memory. Candidates that duplicate memory already there (a second import) are left out,
so importing the same files again proposes nothing.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from engram.cli.common import add_json_flag, emit, roots_from
from engram.cli.write import interactive, print_proposal, prompt_loop
from engram.core.errors import UsageError
from engram.core.results import Diagnostic, Result
from engram.importers import pointer
from engram.importers.pointer import diffs
from engram.importers.propose import ImportRequest, held_ranges, propose_import


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


def _request(args: argparse.Namespace, project: Any) -> Any:
    """The command line as an import request (PATHs made relative to the project)."""

    paths = None
    if args.paths and not args.user_level:
        paths = []
        for p in args.paths:
            rel = os.path.relpath(os.path.abspath(p), os.path.realpath(project))
            if rel.startswith(".."):
                raise UsageError(f"{p} is outside the workspace {project}")
            paths.append(rel.replace(os.sep, "/"))
    elif args.paths:
        raise UsageError("--global reads your user-level files; PATH names workspace files only")
    return ImportRequest(
        hosts=args.hosts,
        paths=paths,
        scope=args.scope,
        user_level=args.user_level,
        dry_run=args.dry_run,
    )


def run_import(args: argparse.Namespace) -> int:
    if args.replace_with_pointer or args.restore:
        return run_pointer(args)
    if args.plan:
        raise UsageError("--plan goes with --replace-with-pointer or --restore; use --dry-run")
    if args.dry_run and args.propose:
        raise UsageError("--dry-run proposes nothing and --propose only proposes; pick one")
    if not (args.dry_run or args.propose):
        if not interactive():
            raise UsageError(
                "import asks for approval, but stdin is not a terminal; pass --propose to print "
                "the approval token for `engram commit`, or --dry-run to see the candidates"
            )
        if args.json:
            raise UsageError("--json needs --propose or --dry-run (the prompt is for a person)")
    roots = roots_from(args)
    project = roots.project_dir or roots.primary.path.parent.parent
    result = propose_import(roots, _request(args, project))
    if not result.data.get("approval_token"):
        return emit(result, args)
    if args.propose:
        return print_proposal(result, args)

    return prompt_loop(roots, result, args)


def run_pointer(args: argparse.Namespace) -> int:
    """Replace approved sections with a pointer block (or restore the originals); --plan: diff."""

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
        base = roots.project_dir or place.base
        ranges = held_ranges(roots, _request(args, base), base, user_level=args.user_level)
        edits = pointer.plan_pointers(place, ranges)
    if not args.plan:
        pointer.apply(place, edits, restoring=args.restore)
    return emit(_pointer_result(edits, args), args)


def _shown(place: Any, path: str) -> str:
    """A file named on the command line, as the place names it."""
    full = os.path.abspath(os.path.expanduser(path))
    rel = os.path.relpath(full, place.base).replace(os.sep, "/")
    if rel.startswith(".."):
        raise UsageError(f"{path} is outside {place.base}")
    return place.label + rel


def _pointer_result(edits: list[Any], args: argparse.Namespace) -> Result:
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
    for e in edits:  # a file left as it is: the command did not do all it was asked
        if e.problem:
            result.ok = False
            result.diagnostics.append(Diagnostic("error", "import.pointer_refused", e.problem))
    return result


if __name__ == "__main__":  # pragma: no cover
    sys.exit(1)
