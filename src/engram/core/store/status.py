"""`engram status`: roots, counts, index freshness, pending approvals, last verify."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from engram.core.results import Result
from engram.core.store.config import load_config
from engram.core.store.files import read_json
from engram.core.store.index import open_index
from engram.core.store.integrity import last_verify
from engram.core.store.layout import Roots
from engram.core.store.pending import signed_by_you


def _pending_count(roots: Roots) -> int:
    """Live proposals in the primary root's pending file (where proposals are stored)."""
    try:
        data = read_json(roots.primary, roots.primary.pending_path)
    except (OSError, ValueError):
        return 0
    entries = data.get("entries", data.get("proposals", data)) if isinstance(data, dict) else data
    items = (
        entries.values()
        if isinstance(entries, dict)
        else entries
        if isinstance(entries, list)
        else []
    )
    now = time.time()
    count = 0
    keyed = entries.items() if isinstance(entries, dict) else [("", i) for i in items]
    for key, item in keyed:
        if not isinstance(item, dict):
            continue
        exp = item.get("expires_at")
        if isinstance(exp, int | float) and exp < now:
            continue
        if item.get("status", "pending") == "pending" and signed_by_you(str(key), item):
            count += 1  # an entry this user did not sign is no proposal of theirs
    return count


def status_report(roots: Roots) -> Result:
    roots.primary  # noqa: B018 - clear error when no root exists
    t0 = time.perf_counter()
    index = open_index(roots)
    refresh_ms = round((time.perf_counter() - t0) * 1000, 1)
    rows = index.conn.execute("SELECT scope, type, tier FROM memories").fetchall()
    by_type = Counter(r["type"] for r in rows)
    by_scope = Counter(r["scope"] for r in rows)
    by_tier = Counter(r["tier"] or "durable" for r in rows)
    cfg = load_config(roots)
    verify = last_verify(roots)
    data: dict[str, Any] = {
        "roots": {r.scope: str(r.path) for r in roots.all},
        "counts": {
            "total": len(rows),
            "type": dict(by_type),
            "scope": dict(by_scope),
            "tier": dict(by_tier),
        },
        "unreadable": len(index.parse_errors),
        "index": {
            "path": str(index.path) if index.path else None,
            "fresh": True,
            "refresh_ms": refresh_ms,
        },
        "pending_approvals": _pending_count(roots),
        "last_verify": verify,
        "config": {
            k: cfg.get(k)
            for k in (
                "roles",
                "rule_variant",
                "save_target",
                "read_mode",
                "proof",
                "load.limit",
                "load.budget_tokens",
            )
        },
    }
    lines = [f"{scope} root: {path}" for scope, path in data["roots"].items()]
    groups = [
        ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))
        for counter in (by_type, by_scope, by_tier)
    ]
    lines.append(f"memories: {len(rows)}" + (f" ({'; '.join(groups)})" if rows else ""))
    if index.parse_errors:
        lines.append(f"unreadable files: {len(index.parse_errors)} (see `engram verify`)")
    lines.append(
        f"index: fresh ({data['index']['path'] or 'in memory'}, checked in {refresh_ms} ms)"
    )
    lines.append(f"pending approvals: {data['pending_approvals']}")
    lines.append(
        "last verify: "
        + (
            f"{'ok' if verify['ok'] else str(verify['problems']) + ' problem(s)'} at {verify['at']}"
            if verify
            else "never run"
        )
    )
    c = data["config"]
    lines.append(
        f"roles: {', '.join(c['roles']) or '(none)'} · rule variant: {c['rule_variant']} · read mode: {c['read_mode']} · proof: {c['proof']}"
    )
    return Result(text="\n".join(lines), data=data)
