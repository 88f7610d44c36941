"""`engram status`: roots, counts, index freshness, pending approvals, last verify."""

from __future__ import annotations

import argparse

from engram.cli.common import add_json_flag, emit, roots_from
from engram.core import api


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("status", help="roots, counts, index, pending approvals, last verify")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    result = api.status(roots_from(args))
    if result.data.get("pending_approvals"):
        # The count alone leaves a person asking which ones: name the commands.
        result.text = "\n".join(
            f"{ln}  (list: engram pending; decline: engram pending --decline N)"
            if ln.startswith("pending approvals:")
            else ln
            for ln in result.text.split("\n")
        )
    return emit(result, args)
