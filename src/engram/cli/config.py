"""`engram config get|set`, `engram set-role`, `engram set-rule-variant`."""

from __future__ import annotations

import argparse

from engram.cli.common import add_json_flag, emit, roots_from
from engram.core import api
from engram.core.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="read or change configuration values")
    cs = p.add_subparsers(dest="action", metavar="get|set", required=True)
    g = cs.add_parser("get", help="print one key, or every key")
    g.add_argument("key", nargs="?")
    add_json_flag(g)
    g.set_defaults(func=run_get)
    s = cs.add_parser("set", help="validate and store a value")
    s.add_argument("key")
    s.add_argument("value")
    s.add_argument(
        "--user",
        action="store_true",
        help="write the user configuration instead of the workspace's",
    )
    add_json_flag(s)
    s.set_defaults(func=run_set)

    p = sub.add_parser("set-role", help="set the active roles (ROLE…), or --clear")
    p.add_argument("roles", nargs="*")
    p.add_argument("--clear", action="store_true")
    add_json_flag(p)
    p.set_defaults(func=run_set_role)

    p = sub.add_parser("set-rule-variant", help="light|balanced|strict|off|status")
    p.add_argument("mode")
    add_json_flag(p)
    p.set_defaults(func=run_set_variant)


def run_get(args: argparse.Namespace) -> int:
    return emit(api.config_get(roots_from(args, require=False), args.key), args)


def run_set(args: argparse.Namespace) -> int:
    return emit(
        api.config_set(roots_from(args, require=False), args.key, args.value, user=args.user), args
    )


def run_set_role(args: argparse.Namespace) -> int:
    if args.clear and args.roles:
        raise UsageError("give roles or --clear, not both")
    if not args.clear and not args.roles:
        raise UsageError("give at least one role (engram set-role backend) or --clear")
    roles = [r for item in args.roles for r in item.split(",") if r.strip()]
    return emit(api.set_role(roots_from(args), None if args.clear else roles), args)


def run_set_variant(args: argparse.Namespace) -> int:
    return emit(api.set_rule_variant(roots_from(args), args.mode), args)
