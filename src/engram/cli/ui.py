"""`engram ui [--port N] [--no-browser]`: serve the local review page for this workspace."""

from __future__ import annotations

import argparse

from engram.cli.common import start_dir
from engram.ui.server import serve


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(
            f"--port must be an integer from 0 to 65535 (0: any free port), not {text!r}"
        )
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ui", help="serve a local review page: memory, what a task loads, proposals, health"
    )
    p.add_argument("--port", type=_port, default=0, help="port on 127.0.0.1 (default: a free one)")
    p.add_argument("--no-browser", action="store_true", help="print the URL; do not open it")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    return serve(start_dir(args), args.port, open_browser=not args.no_browser)
