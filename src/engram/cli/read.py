"""`engram load`, `route`, `search`, `rebuild-index`: the read path from a terminal."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from engram.cli.common import add_json_flag, emit, roots_from

if TYPE_CHECKING:  # argparse is imported only when the full parser is built
    import argparse

    from engram.core.results import Result


def _roles(value: str | None) -> list[str] | None:
    return None if value is None else [r for r in value.split(",") if r.strip()]


def _int_arg(name: str, lo: int, hi: int):
    def parse(text: str) -> int:
        from argparse import ArgumentTypeError

        try:
            value = int(text)
        except ValueError:
            raise ArgumentTypeError(
                f"{name} must be an integer from {lo} to {hi}, not {text!r}"
            ) from None
        if not lo <= value <= hi:
            raise ArgumentTypeError(f"{name} must be an integer from {lo} to {hi}, not {value}")
        return value

    return parse


# `engram load` options as the fast reader knows them: the option -> (destination, kind,
# allowed values). They mirror `register` below; a test holds the two readers equal.
LOAD_VALUES = {
    "--id": ("ids", "append", None),
    "--budget-tokens": ("budget_tokens", "int", (1, 1_000_000)),
    "--budget": ("budget_tokens", "int", (1, 1_000_000)),
    "--disclosure": ("disclosure", "choice", ("auto", "cards", "bodies")),
    "--limit": ("limit", "int", (1, 32)),
    "--role": ("role", "text", None),
    "--path": ("paths", "append", None),
    "--branch": ("branch", "text", None),
    "--query": ("queries", "append", None),
}
LOAD_FLAGS = {
    "--full": "full",
    "--explain": "explain",
    "--all": "all_",
    "--dry-run": "dry_run",
    "--json": "json",
}


def fast_load_args(argv: list[str], workspace: str | None) -> SimpleNamespace | None:
    """The arguments of `engram load ARGV` read without argparse, or None to let argparse
    read them (help, abbreviations, `--`, a bad value, anything unusual): a host runs this
    command on every prompt, and importing argparse and building the parser costs more
    than the load's own work at a thousand memories.

    When it answers, the result equals what the full parser gives for the same words."""
    ns: dict[str, object] = {
        "workspace": workspace, "command": "load", "query": [], "ids": None,
        "budget_tokens": None, "disclosure": "auto", "full": False, "explain": False,
        "all_": False, "limit": None, "dry_run": False, "role": None, "paths": None,
        "branch": None, "json": False, "queries": None,
    }  # fmt: skip
    words_done = False  # argparse takes the task's words as one run; a second run is an error
    i = 0
    while i < len(argv):
        arg = argv[i]
        i += 1
        if not arg.startswith("-"):
            if words_done:
                return None
            ns["query"].append(arg)  # type: ignore[attr-defined]
            continue
        if ns["query"]:
            words_done = True
        if arg in LOAD_FLAGS:
            ns[LOAD_FLAGS[arg]] = True
            continue
        name, eq, value = arg.partition("=")
        if name not in LOAD_VALUES:
            return None
        if not eq:
            if i >= len(argv) or argv[i].startswith("-"):
                return None
            value = argv[i]
            i += 1
        dest, kind, allowed = LOAD_VALUES[name]
        if kind == "append":
            ns[dest] = [*(ns[dest] or []), value]  # type: ignore[misc]
        elif kind == "int":
            lo, hi = allowed  # type: ignore[misc]
            try:
                number = int(value)
            except ValueError:
                return None
            if not lo <= number <= hi:
                return None
            ns[dest] = number
        elif kind == "choice":
            if value not in allowed:  # type: ignore[operator]
                return None
            ns[dest] = value
        else:
            ns[dest] = value
    return SimpleNamespace(**ns, func=run_load)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "load", help="route a task to memories and print them within the token budget"
    )
    p.add_argument("query", nargs="*", help="the task, in words")
    p.add_argument(
        "--id",
        dest="ids",
        action="append",
        metavar="ID",
        help="load this memory's body (repeatable)",
    )
    p.add_argument(
        "--budget-tokens",
        "--budget",
        type=_int_arg("--budget-tokens", 1, 1_000_000),
        help="token budget",
    )
    p.add_argument("--disclosure", choices=("auto", "cards", "bodies"), default="auto")
    p.add_argument("--full", action="store_true", help="all front matter and every rule variant")
    p.add_argument("--explain", action="store_true", help="show ranking evidence instead of bodies")
    p.add_argument("--all", dest="all_", action="store_true", help="lift the load limit")
    p.add_argument("--limit", type=_int_arg("--limit", 1, 32), help="memories per load (1-32)")
    p.add_argument("--dry-run", action="store_true", help="show what would load; count nothing")
    p.add_argument("--role", metavar="ROLE[,ROLE…]", help="active roles for this call")
    p.add_argument(
        "--path",
        dest="paths",
        action="append",
        metavar="PATH",
        help="a file the work touches, a task signal besides the words (repeatable)",
    )
    p.add_argument("--branch", metavar="BRANCH", help="the branch the work is on, a task signal")
    p.add_argument(
        "--query",
        dest="queries",
        action="append",
        metavar="WORDS",
        help="a search of your own for the task, in the words a memory about it would use "
        "(repeatable, at most 5 of at most 200 characters); rankings are fused",
    )
    add_json_flag(p)
    p.set_defaults(func=run_load)

    p = sub.add_parser(
        "route", help="classify a task and list the memories it routes to, in load order"
    )
    p.add_argument("query", nargs="+")
    p.add_argument("--role", metavar="ROLE[,ROLE…]")
    add_json_flag(p)
    p.set_defaults(func=run_route)

    p = sub.add_parser("search", help="ranked search over all visible memories")
    p.add_argument("query", nargs="+")
    p.add_argument("--limit", type=_int_arg("--limit", 1, 200), default=10)
    p.add_argument("--role", metavar="ROLE[,ROLE…]")
    add_json_flag(p)
    p.set_defaults(func=run_search)

    p = sub.add_parser("rebuild-index", help="delete and rebuild the derived search index")
    add_json_flag(p)
    p.set_defaults(func=run_rebuild)


def run_load(args: argparse.Namespace) -> int:
    from engram.core import api
    from engram.core.errors import UsageError

    query = " ".join(args.query)
    queries = tuple(getattr(args, "queries", None) or ())
    if not args.ids and not query.strip() and not args.paths and not args.branch and not queries:
        raise UsageError(
            'empty query: give the task in words (engram load "fix the login bug"), '
            "the files it touches (--path PATH, --branch BRANCH) or --id ID"
        )
    roots = roots_from(args)
    paths: list[str] = []
    branch = ""
    if args.paths or args.branch:  # task signals besides the words
        from engram.cli.common import start_dir
        from engram.core.api import checked_signals

        paths, branch = checked_signals(
            args.paths, args.branch, roots.project_dir, start_dir(args) or Path.cwd()
        )
    request = api.LoadRequest(
        query=query or None, queries=queries, ids=tuple(args.ids or ()),
        budget_tokens=args.budget_tokens, disclosure=args.disclosure, full=args.full,
        explain=args.explain, all_=args.all_, dry_run=args.dry_run, roles=_roles(args.role),
        limit=args.limit, paths=tuple(paths), branch=branch,
    )  # fmt: skip
    result = api.load(roots, request)
    return emit(result, args)


def _as_table(result: Result, args: argparse.Namespace) -> Result:
    """On a terminal, route and search entries as an aligned table; pipes keep one line each."""
    import sys

    from engram.cli.colour import is_terminal, table

    entries = (result.data or {}).get("entries") or []
    if getattr(args, "json", False) or not entries or not is_terminal(sys.stdout):
        return result
    rows = [
        [
            str(n),
            str(e.get("type", "")),
            str(e.get("id", "")),
            str(e.get("scope", "")),
            f"{float(e.get('score') or 0):.2f}",
            str(e.get("title", "")) + (f" ({e['reason']})" if e.get("reason") else ""),
        ]
        for n, e in enumerate(entries, start=1)
    ]
    lines = result.text.splitlines() if result.text else [""]
    if len(lines) - 1 != len(entries):  # more than a heading and one line per entry: keep it
        return result
    head = lines[0]
    grid = table(["#", "TYPE", "ID", "SCOPE", "SCORE", "TITLE"], rows, sys.stdout)
    result.text = f"{head}\n{grid}\n"
    return result


def run_route(args: argparse.Namespace) -> int:
    from engram.core import api

    result = api.route(roots_from(args), " ".join(args.query), roles=_roles(args.role))
    return emit(_as_table(result, args), args)


def run_search(args: argparse.Namespace) -> int:
    from engram.core import api

    result = api.search(
        roots_from(args), " ".join(args.query), limit=args.limit, roles=_roles(args.role)
    )
    return emit(_as_table(result, args), args)


def run_rebuild(args: argparse.Namespace) -> int:
    from engram.core import api

    return emit(api.rebuild_index(roots_from(args)), args)
