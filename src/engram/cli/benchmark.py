"""`engram benchmark CASES.json …`: measure routing quality against labelled cases."""

from __future__ import annotations

import argparse
from pathlib import Path

from engram.cli.common import add_json_flag, emit
from engram.core.benchmark import leave_one_out, run_routing_benchmark
from engram.core.errors import UsageError


def _recall(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"--min-recall must be a number from 0 to 1, not {text!r}")
    return value


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "benchmark",
        help="run labelled routing cases and report recall, forbidden loads and tokens",
        description=(
            "Run every case of CASES.json through `engram load` on a temporary copy of its "
            "workspace and report, per suite and per category, must-recall@8 over bodies and "
            "cards, forbidden loads, empty-case precision and tokens. Exits 1 when must-load "
            "recall is under the threshold or a forbidden memory loads as a body. With "
            "--leave-one-out and several files: choose the confidence thresholds on all "
            "suites but one and report the one left out, for each in turn."
        ),
    )
    p.add_argument("cases", metavar="CASES.json", nargs="+", help="labelled cases file(s)")
    p.add_argument(
        "--min-recall",
        type=_recall,
        default=0.95,
        metavar="R",
        help="required must-load recall, 0 to 1 (default 0.95)",
    )
    p.add_argument(
        "--leave-one-out",
        action="store_true",
        help="choose thresholds on the other suites and report each suite left out",
    )
    p.add_argument(
        "--unseen",
        metavar="CASES.json",
        action="append",
        default=[],
        help="a suite never used to choose anything, reported with the router's defaults",
    )
    p.add_argument(
        "--queries",
        metavar="QUERIES.json",
        action="append",
        default=[],
        help="case name → the searches a host model wrote for it (`[]`: it would not load "
        "memory); each case loads with its task and those searches, as engram_load `queries`. "
        "With --leave-one-out: once per cases file, in the same order (chooses the body "
        "threshold of planned retrieval)",
    )
    add_json_flag(p)
    p.set_defaults(func=run_benchmark)


def run_benchmark(args: argparse.Namespace) -> int:
    if args.leave_one_out:
        res = leave_one_out(
            [Path(c) for c in args.cases],
            [Path(u) for u in args.unseen],
            [Path(q) for q in args.queries] or None,
        )
        return emit(res, args)
    if len(args.cases) > 1 or args.unseen:
        raise UsageError("several cases files or --unseen need --leave-one-out")
    if len(args.queries) > 1:
        raise UsageError("one cases file takes one --queries file")
    queries = Path(args.queries[0]) if args.queries else None
    res = run_routing_benchmark(
        Path(args.cases[0]), min_recall=args.min_recall, queries_path=queries
    )
    return emit(res, args)
