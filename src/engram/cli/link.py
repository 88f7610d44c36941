"""`engram link`, `engram unlink`, `engram upgrade`: wire hosts up, remove exactly that, re-pin."""

from __future__ import annotations

import argparse

from engram.cli.common import add_json_flag, emit, roots_from, start_dir
from engram.core import api
from engram.core.errors import EngramError
from engram.core.results import Result
from engram.hosts import HOSTS, ops
from engram.hosts.base import make_scope


def register(sub: argparse._SubParsersAction) -> None:
    names = ", ".join(HOSTS)
    p = sub.add_parser(
        "link",
        help="register Engram with a host (MCP server, hooks, instructions)",
        description=f"Hosts: {names}; `all` for every host; `list` shows what is linked.",
    )
    p.add_argument("hosts", nargs="+", metavar="HOST", help=f"{names}, all, or list")
    _scope_flags(p)
    p.add_argument("--plan", action="store_true", help="show the changes as a diff; write nothing")
    p.add_argument(
        "--force", action="store_true", help="replace an `engram` entry Engram did not write"
    )
    p.add_argument("--no-hooks", action="store_true", help="do not install hooks (Claude, Gemini)")
    add_json_flag(p)
    p.set_defaults(func=cmd_link)

    u = sub.add_parser("unlink", help="remove exactly what `engram link` added")
    u.add_argument("hosts", nargs="+", metavar="HOST", help=f"{names}, or all")
    _scope_flags(u)
    u.add_argument("--plan", action="store_true", help="show the changes as a diff; write nothing")
    add_json_flag(u)
    u.set_defaults(func=cmd_unlink)

    g = sub.add_parser(
        "upgrade", help="re-pin linked hosts to this release and refresh generated files"
    )
    g.add_argument("--plan", action="store_true", help="show the changes as a diff; write nothing")
    add_json_flag(g)
    g.set_defaults(func=cmd_upgrade)


def _scope_flags(p: argparse.ArgumentParser) -> None:
    group = p.add_mutually_exclusive_group()
    group.add_argument(
        "--global", dest="global_", action="store_true", help="user-level files under $HOME"
    )
    group.add_argument(
        "--scope",
        choices=("workspace", "global"),
        help="workspace (this project, the default) or global (same as --global)",
    )


def _is_global(args: argparse.Namespace) -> bool:
    return bool(args.global_) or args.scope == "global"


def cmd_link(args: argparse.Namespace) -> int:
    if args.hosts == ["list"]:
        return emit(ops.list_links(start_dir(args)), args)
    names = ops.host_names(args.hosts)
    scope = ops.resolve_scope(start_dir(args), global_=_is_global(args), hooks=not args.no_hooks)
    return emit(ops.run("link", names, scope, plan=args.plan, force=args.force), args)


def cmd_unlink(args: argparse.Namespace) -> int:
    names = ops.host_names(args.hosts)
    scope = ops.resolve_scope(start_dir(args), global_=_is_global(args))
    return emit(ops.run("unlink", names, scope, plan=args.plan), args)


def cmd_upgrade(args: argparse.Namespace) -> int:
    """Re-pin every linked host in both scopes, then refresh derived data (the index)."""

    parts: list[Result] = []
    for scope in ops.scopes_in_view(start_dir(args)):
        scope = make_scope(scope.kind, scope.base, hooks=False)  # refresh only what is there
        parts.append(ops.run("upgrade", list(HOSTS), scope, plan=args.plan))
    result = Result(
        "\n".join(p.text for p in parts),
        data={"scopes": [p.data for p in parts]},
        diagnostics=[d for p in parts for d in p.diagnostics],
        ok=all(p.ok for p in parts),
    )
    if not args.plan:
        _refresh_derived(args, result)
    return emit(result, args)


def _refresh_derived(args: argparse.Namespace, result: Result) -> None:
    roots = roots_from(args, require=False)
    if not roots.all:
        return
    try:
        rebuilt = api.rebuild_index(roots)
    except EngramError as exc:
        result.warn("index.rebuild_failed", f"could not rebuild the index: {exc.message}")
        return
    result.text += "\n" + rebuilt.text
    result.data["index"] = rebuilt.data
