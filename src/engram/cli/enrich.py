"""`engram enrich`: ask the host's model for triggers, then propose them for approval.

Without options it prints what the model is asked (the same text as the MCP prompt
`enrich`), for hosts that run commands rather than MCP prompts. `--propose` reads the
model's lines (stdin or --file) and prints a proposal; at a terminal, `--file F` asks
the person right away. Nothing is written without the person's approval.
"""

from __future__ import annotations

import argparse

from engram.cli.common import add_json_flag, emit, roots_from
from engram.cli.write import (
    SCOPE_CHOICES,
    interactive,
    print_proposal,
    prompt_loop,
    read_candidates,
)
from engram.core import api
from engram.core.errors import UsageError


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "enrich", help="ask the agent for triggers of memories that have none; propose them"
    )
    p.add_argument("--limit", type=int, default=30, metavar="N", help="memories to list (30)")
    p.add_argument(
        "--file", metavar="F", help="the agent's trigger lines (default with --propose: stdin)"
    )
    p.add_argument(
        "--propose",
        action="store_true",
        help="propose the trigger lines: print the preview and the approval token",
    )
    p.add_argument(
        "--scope", choices=SCOPE_CHOICES, help="the memories' scope (default: save_target)"
    )
    add_json_flag(p)
    p.set_defaults(func=run_enrich)


def run_enrich(args: argparse.Namespace) -> int:
    if not 1 <= args.limit <= 200:
        raise UsageError(f"--limit must be from 1 to 200, not {args.limit}")
    roots = roots_from(args)
    if not (args.propose or args.file):
        return emit(api.enrichment(roots, args.limit), args)
    if not args.propose:
        if not interactive() or args.file == "-":
            raise UsageError(
                "asking for approval needs a person at a terminal; pass --propose to print "
                "the proposal and its approval token for `engram commit`"
            )
        if args.json:
            raise UsageError("--json needs --propose (the prompt is for a person)")
    result = api.propose_enrichment(roots, read_candidates(args), scope=args.scope)
    if args.propose:
        return print_proposal(result, args)
    return prompt_loop(roots, result, args)
