"""`engram benchmark CASES.json`: measure routing quality against labelled cases."""

from __future__ import annotations

import argparse
from pathlib import Path

from engram.cli.common import add_json_flag, emit


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
            "workspace. Exits 1 when must-load recall is under the threshold or a forbidden "
            "memory loads."
        ),
    )
    p.add_argument("cases", metavar="CASES.json", help="the labelled cases file")
    p.add_argument(
        "--min-recall",
        type=_recall,
        default=0.95,
        metavar="R",
        help="required must-load recall, 0 to 1 (default 0.95)",
    )
    add_json_flag(p)
    p.set_defaults(func=run_benchmark)


def run_benchmark(args: argparse.Namespace) -> int:
    from engram.core.benchmark import run_routing_benchmark

    return emit(run_routing_benchmark(Path(args.cases), min_recall=args.min_recall), args)
