"""`engram init` (alias `inject`): create or adopt the workspace memory root."""

from __future__ import annotations

import argparse
from pathlib import Path

from engram.cli.common import add_json_flag, emit, start_dir
from engram.core import api


def register(sub: argparse._SubParsersAction) -> None:
    for name in ("init",):
        p = sub.add_parser(
            name, aliases=["inject"], help="create .agents/.engram/ in this project (idempotent)"
        )
        p.add_argument(
            "--global-path", metavar="PATH", help="create a global root at PATH and remember it"
        )
        p.add_argument("--example", action="store_true", help="also write a few example memories")
        add_json_flag(p)
        p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    start = start_dir(args) or Path.cwd()
    gp = Path(args.global_path) if args.global_path else None
    return emit(api.init(start, global_path=gp, example=args.example), args)
