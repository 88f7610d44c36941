"""`engram verify [--json] [--accept [PATH…]]`: integrity of memory files against hashes.json."""

from __future__ import annotations

import argparse

from engram.cli.common import add_json_flag, emit, roots_from
from engram.core import api


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("verify", help="report modified, missing and unmanaged memory files")
    p.add_argument(
        "--accept",
        nargs="*",
        metavar="PATH",
        help="record current hashes after review (all files when no PATH)",
    )
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    roots = roots_from(args)
    if args.accept is None:
        result = api.verify(roots)
    elif args.accept:
        result = api.verify(roots, accept=args.accept)
    else:
        result = api.verify(roots, accept_all=True)
    if not args.json:  # the text already lists every problem; no second copy on stderr
        print(result.text)
        return 0 if result.ok else 1
    return emit(result, args)
