"""`engram hook` (the host entry point), `engram set-read`, `engram set-proof`."""

from __future__ import annotations

import argparse

from engram.cli.common import add_json_flag, emit, roots_from

READ_MODES = ("startup", "auto", "always", "manual", "off")
PROOF_MODES = ("off", "compact")


def register(sub: argparse._SubParsersAction) -> None:
    h = sub.add_parser(
        "hook",
        help="run a host hook (hosts call this; reads the hook JSON on stdin)",
        description="engram hook <host> <event>: claude|gemini, session-start|user-prompt-submit.",
    )
    h.add_argument("rest", nargs="*", metavar="HOST EVENT")
    h.set_defaults(func=cmd_hook)

    r = sub.add_parser(
        "set-read",
        help="when hooks inject memory: startup|auto|always|manual|off",
        description=(
            "startup: at session start only; auto: at session start and whenever the routed "
            "memories change; always: on every prompt; manual: never (use `engram load`); "
            "off: hooks do nothing."
        ),
    )
    r.add_argument("mode", choices=READ_MODES)
    r.add_argument("--user", action="store_true", help="set it in the user configuration")
    add_json_flag(r)
    r.set_defaults(func=cmd_set, key="read_mode")

    p = sub.add_parser("set-proof", help="add a proof line to hook output: off|compact")
    p.add_argument("mode", choices=PROOF_MODES)
    p.add_argument("--user", action="store_true", help="set it in the user configuration")
    add_json_flag(p)
    p.set_defaults(func=cmd_set, key="proof")


def cmd_hook(args: argparse.Namespace) -> int:
    from engram.hooks.run import run_hook_command

    return run_hook_command(list(args.rest))


def cmd_set(args: argparse.Namespace) -> int:
    from engram.core import api

    roots = roots_from(args, require=not args.user)
    return emit(api.config_set(roots, args.key, args.mode, user=args.user), args)
