"""`engram pending [--json] [--decline N|ID]`: the proposals waiting for a person's approval.

The pending file keeps only a hash of each token, so a proposal is named here by its
number (oldest first) or its proposal id; approving still needs the token the proposal
printed, declining does not (it only takes a capability away).
"""

from __future__ import annotations

import argparse
from typing import Any

from engram.cli.common import add_json_flag, emit, roots_from
from engram.core.api import decline_waiting, iso_time, now, printable, waiting_proposals
from engram.core.errors import UsageError
from engram.core.results import Result

DECLINED_HERE = "approval was declined with `engram pending --decline`"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("pending", help="list proposals waiting for approval, or decline one")
    p.add_argument(
        "--decline",
        metavar="N|ID",
        help="decline proposal N of the list (or its id, p-…): its token stops working",
    )
    p.add_argument("--reason", help="why it is declined (a later commit with the token says so)")
    add_json_flag(p)
    p.set_defaults(func=run)


def _shown(value: Any, limit: int = 100) -> str:
    """A value from the pending file as one safe line (the file is writable by anyone with a
    shell in the project: no control characters or escape sequences reach the terminal)."""

    text = printable(" ".join(str(value or "").split()))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _age(created: str, at: float) -> str:
    import datetime as dt

    try:
        then = dt.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except (TypeError, ValueError):
        return "age unknown"
    minutes = max(0, int((at - then.timestamp()) // 60))
    return "made just now" if minutes < 1 else f"made {minutes} min ago"


def waiting(roots: Any) -> Result:
    """The waiting proposals, numbered from 1 (oldest first), with their candidates."""

    at = now()
    items: list[dict[str, Any]] = []
    for w in waiting_proposals(roots):
        p = w.proposal
        cands = [
            {
                "number": c.number,
                "type": _shown(c.type, 20),
                "id": _shown(c.id, 80),
                "title": _shown(c.title),
                "verdict": _shown(c.verdict_line, 80),
                "deferred_reason": _shown(c.deferred_reason, 300),
            }
            for c in (p.candidates if p else ())
        ]
        items.append(
            {
                "number": w.number,
                "proposal_id": _shown(p.proposal_id if p else "", 40),
                "created_at": _shown(w.created_at, 40),
                "expires_at": iso_time(w.expires_at),
                "minutes_left": max(0, int((w.expires_at - at) // 60)),
                "scopes": [_shown(s, 20) for s in (p.scopes if p else ())],
                "candidates": cands,
                **({"problem": _shown(w.problem, 300)} if w.problem else {}),
            }
        )
    lines: list[str] = []
    if not items:
        lines.append("No proposals are waiting for approval.")
    for p in items:
        size = len(p["candidates"])
        lines.append(
            f"{p['number']}. {p['proposal_id']}: {size} candidate{'s' if size != 1 else ''} "
            f"for {' + '.join(p['scopes'])} memory, {_age(p['created_at'], at)}, expires "
            f"{p['expires_at']} (in {p['minutes_left']} min)"
        )
        if p.get("problem"):
            lines.append(f"   {p['problem']}; decline it with `engram pending --decline "
                         f"{p['number']}`")  # fmt: skip
        for c in p["candidates"]:
            lines.append(f"   {c['number']}. [{c['type']}] {c['id']}: {c['verdict']}")
            lines.append(f"      {c['title']}")
            if c["deferred_reason"]:
                lines.append(f"      will be deferred: {c['deferred_reason']}")
    if items:
        lines += [
            "",
            "Approve with the token the proposal printed: engram commit TOKEN --approve all",
            "Decline one (its token stops working): engram pending --decline N",
        ]
    return Result(text="\n".join(lines), data={"proposals": items})


def run(args: argparse.Namespace) -> int:
    roots = roots_from(args)
    if args.decline is None:
        if args.reason is not None:
            raise UsageError("--reason goes with --decline N (the proposal to decline)")
        return emit(waiting(roots), args)

    given = (args.reason or "").strip()
    reason = f"{DECLINED_HERE}: {given}" if given else DECLINED_HERE
    return emit(decline_waiting(roots, args.decline, reason), args)
