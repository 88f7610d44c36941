"""`engram doctor`: roots, hashes, index, configuration and every linked host, with stable codes."""

from __future__ import annotations

import argparse
import sys

from engram.cli.common import add_json_flag, emit, start_dir
from engram.hosts.doctor import doctor


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check roots, hashes, index and linked hosts")
    p.add_argument("--strict", action="store_true", help="exit non-zero on warnings too")
    add_json_flag(p)
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    result = doctor(start_dir(args))
    levels = {d.level for d in result.diagnostics}
    failed = "error" in levels or (args.strict and "warning" in levels)
    result.ok = not failed
    if args.json:
        emit(result, args, exit_nonzero_when_not_ok=False)
    else:  # the findings are the text; emit() would repeat them on stderr
        sys.stdout.write(result.text + "\n")
    return 1 if failed else 0
