"""Retrieval quality, measured: run labelled routing cases through the real read path.

A cases file names a workspace (a folder holding `.agents/.engram/`, relative to the file)
and a list of cases: a task as a developer would type it, the memory ids that must load,
the ids that must not, and optionally the active roles. Every case goes through
`api.load` on a temporary copy of the workspace, so the labelled fixture never changes and
no usage is counted. A case may carry a `category` (direct, paraphrase, nothing_applies,
chit_chat, ...; without one it is `nothing_applies` when nothing must load, `role` when it
names roles, else `general`) and the task's signals: `paths` (files the work touches) and
`branch`. The suite passes when must-load recall reaches the threshold and no forbidden id
loads as a body; anything else is reported case by case with what actually loaded.

Figures, per suite and per category: must-recall@8 over bodies and cards, the share of
cases with a forbidden memory among the bodies and among bodies and cards, empty-case
precision (the share of nothing-applies cases that load no body) and tokens per load.
`leave_one_out` chooses the router's two confidence thresholds on all suites but one and
reports the one left out, for each suite in turn; with a query file per suite it chooses
the body threshold of planned retrieval (the host model's own searches) the same way.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from engram.core import api
from engram.core.errors import EngramError, UsageError
from engram.core.read.routing import (
    BODY_CONFIDENCE,
    CARD_CONFIDENCE,
    SEARCH_BODY_CONFIDENCE,
    tier_for,
)
from engram.core.results import Result
from engram.core.store.files import MEMORY_DIRS
from engram.core.store.layout import ARCHIVE_DIR, WORKSPACE_SUBDIR, Root, Roots
from engram.core.store.memoryfiles import load_memories

MIN_RECALL = 0.95
CASE_KEYS = ("name", "task", "must", "must_not", "roles", "category", "paths", "branch")
RECALL_AT = 8  # must-recall counts the first 8 memories shown (bodies and cards)


# ---------------------------------------------------------------- reading the cases file


def _fail(path: Path, message: str) -> UsageError:
    return UsageError(f"{path}: {message}")


def _str_list(path: Path, where: str, value: Any) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise _fail(path, f"{where} must be a list of non-empty strings")
    return list(value)


def read_cases(cases_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    """Parse and validate a cases file; return (workspace folder, cases)."""
    try:
        raw = cases_path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"cases file {cases_path} does not exist") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read cases file {cases_path}: {exc}") from exc
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise _fail(cases_path, f"not valid JSON ({exc})") from exc
    if not isinstance(doc, dict):
        raise _fail(cases_path, 'expected an object {"workspace": ..., "cases": [...]}')
    ws = doc.get("workspace")
    if not isinstance(ws, str) or not ws.strip():
        raise _fail(cases_path, '"workspace" must name a folder, relative to the cases file')
    workspace = (cases_path.parent / ws).resolve()
    if not (workspace / WORKSPACE_SUBDIR).is_dir():
        raise _fail(
            cases_path, f"workspace {workspace} has no {WORKSPACE_SUBDIR.as_posix()}/ folder"
        )
    cases_in = doc.get("cases")
    if not isinstance(cases_in, list) or not cases_in:
        raise _fail(cases_path, '"cases" must be a non-empty list')
    cases: list[dict[str, Any]] = []
    seen: set[str] = set()
    for n, case in enumerate(cases_in, 1):
        if not isinstance(case, dict):
            raise _fail(cases_path, f"case #{n} must be an object")
        unknown = sorted(set(case) - set(CASE_KEYS))
        if unknown:
            raise _fail(
                cases_path,
                f"case #{n} has unknown key(s) {', '.join(unknown)}; allowed: {', '.join(CASE_KEYS)}",
            )
        name = case.get("name")
        if not isinstance(name, str) or not name.strip():
            raise _fail(cases_path, f'case #{n} needs a non-empty "name"')
        if name in seen:
            raise _fail(cases_path, f"case name {name!r} is used twice")
        seen.add(name)
        task = case.get("task")
        if not isinstance(task, str) or not task.strip():
            raise _fail(cases_path, f'case {name!r} needs a non-empty "task"')
        must = _str_list(cases_path, f'case {name!r} "must"', case.get("must"))
        must_not = _str_list(cases_path, f'case {name!r} "must_not"', case.get("must_not"))
        both = sorted(set(must) & set(must_not))
        if both:
            raise _fail(
                cases_path, f"case {name!r} lists {', '.join(both)} in both must and must_not"
            )
        roles = _str_list(cases_path, f'case {name!r} "roles"', case.get("roles"))
        paths = _str_list(cases_path, f'case {name!r} "paths"', case.get("paths"))
        branch = case.get("branch") or ""
        category = case.get("category") or (
            "nothing_applies" if not must else "role" if roles else "general"
        )
        for key, value in (("branch", branch), ("category", category)):
            if not isinstance(value, str):
                raise _fail(cases_path, f'case {name!r} "{key}" must be a string')
        cases.append(
            {
                "name": name,
                "task": task,
                "must": must,
                "must_not": must_not,
                "roles": roles,
                "category": category,
                "paths": paths,
                "branch": branch,
            }
        )
    return workspace, cases


# ---------------------------------------------------------------- running


@contextlib.contextmanager
def _isolated_environment(home: Path) -> Iterator[None]:
    """Hide the user's configuration and global root so only the fixture decides."""
    saved = {k: os.environ.get(k) for k in ("ENGRAM_HOME", "ENGRAM_GLOBAL_DIR")}
    os.environ["ENGRAM_HOME"] = str(home)
    os.environ.pop("ENGRAM_GLOBAL_DIR", None)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _known_ids(root: Root, result: Result) -> set[str]:
    """Ids of every memory file of the root, archived ones included (cases may forbid them)."""

    memories, errors = load_memories(root, (*MEMORY_DIRS, ARCHIVE_DIR))
    for rel, reason in errors:
        result.warn("benchmark.unparsable", f"{rel}: {reason}", path=rel)
    return {m.id for m in memories}


def _stats(values: list[float], digits: int = 1) -> dict[str, float]:
    if not values:
        return {"mean": 0.0, "median": 0.0, "min": 0.0, "max": 0.0}
    return {
        "mean": round(statistics.fmean(values), digits),
        "median": round(statistics.median(values), digits),
        "min": round(min(values), digits),
        "max": round(max(values), digits),
    }


def read_queries(path: Path) -> dict[str, list[str]]:
    """A queries file: case name → the searches a host model wrote for it (`[]`: it would
    not look in project memory for that task, so nothing is loaded)."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"queries file {path} does not exist") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"cannot read queries file {path}: {exc}") from exc
    if not isinstance(doc, dict) or not all(
        isinstance(v, list) and all(isinstance(q, str) for q in v) for v in doc.values()
    ):
        raise _fail(path, "expected an object: case name → list of search strings")
    return {str(k): [q.strip()[:200] for q in v if q.strip()][:5] for k, v in doc.items()}


def _run_case(
    roots: Roots, case: dict[str, Any], searches: list[str] | None = None
) -> dict[str, Any]:
    error = ""
    bodies: list[str] = []
    cards: list[str] = []
    graded: list[dict[str, Any]] = []
    tokens = 0
    start = time.perf_counter()
    try:
        if searches != []:  # []: the host model would not look in memory for this task
            res = api.load(
                roots,
                api.LoadRequest(
                    query=case["task"],
                    queries=tuple(searches or ()),
                    roles=case["roles"],
                    count_usage=False,
                    explain=True,
                    paths=case["paths"],
                    branch=case["branch"],
                ),
            )
            bodies = [str(k) for k in res.data.get("body_keys", [])]
            cards = [str(k) for k in res.data.get("card_ids", [])]
            graded = list(res.data.get("explain", {}).get("graded", []))
            tokens = int(res.data.get("pack_tokens", 0))
    except EngramError as exc:
        error = exc.message
    ms = (time.perf_counter() - start) * 1000
    loaded = bodies + cards
    shown = set(loaded[:RECALL_AT])
    return {
        "name": case["name"],
        "task": case["task"],
        "category": case["category"],
        "roles": case["roles"],
        "must": case["must"],
        "must_not": case["must_not"],
        "loaded": loaded,
        "bodies": bodies,
        "cards": cards,
        "graded": graded,
        "missed": [i for i in case["must"] if i not in shown],
        "forbidden": [i for i in case["must_not"] if i in set(bodies)],
        "forbidden_cards": [i for i in case["must_not"] if i in set(cards)],
        "tokens": tokens,
        "ms": round(ms, 2),
        "error": error,
    }


def figures(results: list[dict[str, Any]]) -> dict[str, Any]:
    """The quality figures of a set of case results (see the module docstring)."""
    must_total = sum(len(r["must"]) for r in results)
    missed = sum(len(r["missed"]) for r in results)
    empty = [r for r in results if not r["must"]]
    n = max(len(results), 1)
    in_body = sum(len(set(r["must"]) & set(r["bodies"])) for r in results)
    return {
        "cases": len(results),
        "recall": round(1.0 if must_total == 0 else (must_total - missed) / must_total, 4),
        "body_recall": round(1.0 if must_total == 0 else in_body / must_total, 4),
        "forbidden_bodies": round(sum(1 for r in results if r["forbidden"]) / n, 4),
        "forbidden_shown": round(
            sum(1 for r in results if r["forbidden"] or r["forbidden_cards"]) / n, 4
        ),
        "empty_cases": len(empty),
        "empty_precision": (
            round(sum(1 for r in empty if not r["bodies"]) / len(empty), 4) if empty else None
        ),
        "tokens": round(statistics.fmean(r["tokens"] for r in results), 1) if results else 0.0,
    }


def run_routing_benchmark(
    cases_path: Path, *, min_recall: float = MIN_RECALL, queries_path: Path | None = None
) -> Result:
    """Run every case of `cases_path`; ok when recall >= min_recall and nothing forbidden loads.

    data: cases, memory_files, must_total, must_loaded, recall (@8, bodies and cards),
    min_recall, forbidden_loaded [{case, id}] (bodies), missed [{case, id}], tokens {mean,
    median, min, max}, loaded_per_case, load_ms, failing_cases, figures, categories {name:
    figures}, results [{name, task, category, roles, loaded, bodies, cards, graded, missed,
    forbidden, forbidden_cards, tokens, ms, error}].
    """

    cases_path = Path(cases_path)
    workspace, cases = read_cases(cases_path)
    planned = read_queries(Path(queries_path)) if queries_path else None
    result = Result(text="")
    with tempfile.TemporaryDirectory(prefix="engram-benchmark-") as tmp:
        project = Path(tmp) / "workspace"
        shutil.copytree(workspace, project, symlinks=True)
        root = Root(project / WORKSPACE_SUBDIR, "workspace")
        shutil.rmtree(root.cache_dir, ignore_errors=True)  # derived data: start from the files
        roots = Roots(project, root, None)
        known = _known_ids(root, result)
        unknown = [
            f"{c['name']}: {i}"
            for c in cases
            for i in (*c["must"], *c["must_not"])
            if i not in known
        ]
        if unknown:
            raise _fail(
                cases_path,
                "cases name ids that no memory file of the workspace has: "
                + "; ".join(unknown[:10])
                + (" …" if len(unknown) > 10 else ""),
            )
        with _isolated_environment(Path(tmp) / "home"):
            api.rebuild_index(roots)  # index build is not part of the per-load timings
            results = [
                _run_case(roots, c, None if planned is None else planned.get(c["name"], []))
                for c in cases
            ]

    must_total = sum(len(c["must"]) for c in cases)
    missed = [{"case": r["name"], "id": i} for r in results for i in r["missed"]]
    forbidden = [{"case": r["name"], "id": i} for r in results for i in r["forbidden"]]
    recall = 1.0 if must_total == 0 else (must_total - len(missed)) / must_total
    passed = recall >= min_recall and not forbidden
    by_category: dict[str, list[dict[str, Any]]] = {}
    for r in results:
        by_category.setdefault(r["category"], []).append(r)
    failing = [r for r in results if r["missed"] or r["forbidden"] or r["error"]]
    tokens = [float(r["tokens"]) for r in results]
    counts = [float(len(r["loaded"])) for r in results]
    times = sorted(r["ms"] for r in results)
    load_ms = _stats(times, 2)
    load_ms["p90"] = round(times[min(len(times) - 1, int(0.9 * len(times)))], 2)

    result.ok = passed
    result.data = {
        "cases_file": str(cases_path),
        "workspace": str(workspace),
        "cases": len(cases),
        "memory_files": len(known),
        "must_total": must_total,
        "must_loaded": must_total - len(missed),
        "recall": round(recall, 4),
        "min_recall": min_recall,
        "forbidden_loaded": forbidden,
        "missed": missed,
        "tokens": _stats(tokens),
        "loaded_per_case": _stats(counts),
        "load_ms": load_ms,
        "passed": passed,
        "failing_cases": [r["name"] for r in failing],
        "figures": figures(results),
        "categories": {k: figures(v) for k, v in sorted(by_category.items())},
        "results": results,
    }
    result.text = _report(result.data, failing)
    return result


def _report(d: dict[str, Any], failing: list[dict[str, Any]]) -> str:
    t, n, ms = d["tokens"], d["loaded_per_case"], d["load_ms"]
    lines = [
        f"Routing benchmark: {d['cases']} cases over {d['memory_files']} memory files",
        f"  must-load recall   {d['recall']:.3f} ({d['must_loaded']}/{d['must_total']}),"
        f" required {d['min_recall']:.2f}",
        f"  forbidden loaded   {len(d['forbidden_loaded'])} as bodies",
        f"  tokens per load    mean {t['mean']:.0f}, median {t['median']:.0f}"
        f" (min {t['min']:.0f}, max {t['max']:.0f})",
        f"  memories per load  mean {n['mean']:.1f}, median {n['median']:.0f}, max {n['max']:.0f}",
        f"  time per load      median {ms['median']:.1f} ms, p90 {ms['p90']:.1f} ms",
        f"  result             {'PASS' if d['passed'] else 'FAIL'}",
        "",
        FIGURES_HEADER,
        _figures_row("all", d["figures"]),
        *(_figures_row(k, v) for k, v in d["categories"].items()),
    ]
    if failing:
        lines += ["", f"Cases with a problem ({len(failing)}):"]
        for r in failing:
            roles = f" [roles: {', '.join(r['roles'])}]" if r["roles"] else ""
            lines.append(f"- {r['name']}: {r['task']!r}{roles}")
            if r["missed"]:
                lines.append(f"    missed:    {', '.join(r['missed'])}")
            if r["forbidden"]:
                lines.append(f"    forbidden: {', '.join(r['forbidden'])}")
            if r["error"]:
                lines.append(f"    error:     {r['error']}")
            lines.append(f"    loaded:    {', '.join(r['loaded']) or '(nothing)'}")
    return "\n".join(lines)


FIGURES_HEADER = (
    f"  {'':<18} {'cases':>5} {'recall@8':>8} {'in body':>7} {'forb.body':>9} {'forb.shown':>10}"
    f" {'empty-prec':>10} {'tokens':>6}"
)


def _figures_row(label: str, f: dict[str, Any]) -> str:
    empty = "-" if f["empty_precision"] is None else f"{f['empty_precision']:.2f}"
    return (
        f"  {label:<18} {f['cases']:>5} {f['recall']:>8.3f} {f['body_recall']:>7.3f}"
        f" {f['forbidden_bodies']:>9.3f}"
        f" {f['forbidden_shown']:>10.3f} {empty:>10} {f['tokens']:>6.0f}"
    )


# ---------------------------------------------------------------- leave one suite out


class Targets(NamedTuple):
    """What the thresholds are chosen for: among the threshold pairs that keep recall,
    forbidden bodies, empty-case precision and tokens within these, the one where the agent
    sees the most must-load memories, sees the most of them in full and is shown a
    misleading one least often (recall@8 + body recall − forbidden shown)."""

    recall: float
    forbidden: float
    empty: float
    tokens: float


# On the task's own words (the prompt hook, `engram load TASK`).
TASK_TARGETS = Targets(recall=0.0, forbidden=0.10, empty=0.70, tokens=600.0)
# With the searches the host's model wrote: the model opens cards by id, so a body has to be
# right (what the read path promises for planned retrieval).
SEARCH_TARGETS = Targets(recall=0.95, forbidden=0.02, empty=0.90, tokens=400.0)
BODY_GRID = tuple(round(0.40 + 0.05 * i, 2) for i in range(12))  # 0.40 … 0.95
# Cards start at 0.20: below a fifth of the evidence scale a memory is never shown, so
# "unsure" stays a tier whatever the suites would prefer (cards are cheap, not free).
CARD_GRID = tuple(round(0.20 + 0.05 * i, 2) for i in range(16))  # 0.20 … 0.95


def retier(r: dict[str, Any], body_at: float, card_at: float) -> dict[str, Any]:
    """A case result as it would be with other tier thresholds (from its graded memories).

    Tokens are re-estimated from the measured cost of each body and card plus the header.
    """

    tiers = [(g, tier_for(g["confidence"], body_at, card_at)) for g in r["graded"]]
    bodies = [g["id"] for g, t in tiers if t == "body"]
    cards = [g["id"] for g, t in tiers if t == "card"]
    shown = set((bodies + cards)[:RECALL_AT])
    header = (len(r["task"]) + 80 + 3) // 4
    tokens = header + sum(
        g["body_tokens"] if t == "body" else g["card_tokens"] if t == "card" else 0
        for g, t in tiers
    )
    return {
        **r,
        "bodies": bodies,
        "cards": cards,
        "loaded": bodies + cards,
        "missed": [i for i in r["must"] if i not in shown],
        "forbidden": [i for i in r["must_not"] if i in set(bodies)],
        "forbidden_cards": [i for i in r["must_not"] if i in set(cards)],
        "tokens": tokens + (12 if cards else 0),
    }


def _macro(suites: list[list[dict[str, Any]]], body_at: float, card_at: float) -> dict[str, float]:
    """Figures averaged over suites (each suite counts once, whatever its size)."""
    per = [figures([retier(r, body_at, card_at) for r in s]) for s in suites]
    keys = ("recall", "body_recall", "forbidden_bodies", "forbidden_shown", "tokens")
    out = {k: statistics.fmean(f[k] for f in per) for k in keys}
    empties = [f["empty_precision"] for f in per if f["empty_precision"] is not None]
    out["empty_precision"] = statistics.fmean(empties) if empties else 1.0
    return out


def choose_thresholds(
    suites: list[list[dict[str, Any]]],
    targets: Targets = TASK_TARGETS,
    card_grid: tuple[float, ...] = CARD_GRID,
) -> tuple[float, float]:
    """The (body, card) confidence thresholds that serve `targets` best on `suites`."""
    best: tuple[tuple[float, ...], tuple[float, float]] | None = None
    for body_at in BODY_GRID:
        for card_at in (c for c in card_grid if c <= body_at):
            f = _macro(suites, body_at, card_at)
            shortfall = (
                max(0.0, targets.recall - f["recall"])
                + max(0.0, f["forbidden_bodies"] - targets.forbidden)
                + max(0.0, targets.empty - f["empty_precision"])
                + max(0.0, f["tokens"] - targets.tokens) / targets.tokens
            )
            gain = f["recall"] + f["body_recall"] - f["forbidden_shown"]
            key = (-round(shortfall, 4), round(gain, 4), -f["tokens"])
            if best is None or key > best[0]:
                best = (key, (body_at, card_at))
    assert best is not None
    return best[1]


def leave_one_out(
    cases_paths: list[Path],
    unseen: list[Path] | None = None,
    queries: list[Path] | None = None,
) -> Result:
    """Choose the thresholds on all suites but one, report the one left out, for each suite.

    With `queries` (one query file per cases file, in order) every case loads with the
    searches a host model wrote, and the body threshold of planned retrieval is chosen for
    `SEARCH_TARGETS` (cards keep the router's threshold). Unseen suites are never used to
    choose anything: they are reported with the router's own thresholds. data: at_defaults
    {cases_file: {figures, categories}} (each suite with the router's thresholds), suites
    [{cases_file, body_at, card_at, figures, categories}], all_suites {body_at, card_at}
    (the choice on every suite), defaults {body_at, card_at}, unseen [{cases_file, figures,
    categories}], targets.
    """

    if len(cases_paths) < 2:
        raise UsageError("--leave-one-out needs at least two cases files (one is left out)")
    if queries and len(queries) != len(cases_paths):
        raise UsageError(
            f"--leave-one-out takes one --queries file per cases file, in the same order "
            f"({len(cases_paths)} cases files, {len(queries)} query files)"
        )
    if queries and unseen:
        raise UsageError(
            "--unseen goes without --queries: run an unseen suite with its query file on its "
            "own (`engram benchmark CASES.json --queries QUERIES.json`)"
        )
    planned = dict(zip(map(str, cases_paths), queries or [], strict=False))
    if queries:
        targets, card_grid = SEARCH_TARGETS, (CARD_CONFIDENCE,)
        defaults = (SEARCH_BODY_CONFIDENCE, CARD_CONFIDENCE)
    else:
        targets, card_grid, defaults = TASK_TARGETS, CARD_GRID, (BODY_CONFIDENCE, CARD_CONFIDENCE)
    runs = {
        str(p): run_routing_benchmark(p, min_recall=0.0, queries_path=planned.get(str(p))).data
        for p in cases_paths
    }
    results = {k: v["results"] for k, v in runs.items()}
    suites_out: list[dict[str, Any]] = []
    for held in results:
        others = [v for k, v in results.items() if k != held]
        body_at, card_at = choose_thresholds(others, targets, card_grid)
        rs = [retier(r, body_at, card_at) for r in results[held]]
        suites_out.append(_suite_entry(held, rs, body_at, card_at))
    all_body, all_card = choose_thresholds(list(results.values()), targets, card_grid)
    unseen_out = []
    for p in unseen or []:
        data = run_routing_benchmark(p, min_recall=0.0).data
        unseen_out.append(_suite_entry(str(p), data["results"], *defaults))
    result = Result(text="")
    result.data = {
        "at_defaults": {
            k: {"figures": v["figures"], "categories": v["categories"]} for k, v in runs.items()
        },
        "suites": suites_out,
        "all_suites": {"body_at": all_body, "card_at": all_card},
        "defaults": {"body_at": defaults[0], "card_at": defaults[1]},
        "unseen": unseen_out,
        "queries": bool(queries),
        "targets": {
            "recall": targets.recall,
            "forbidden_bodies": targets.forbidden,
            "empty_precision": targets.empty,
            "tokens": targets.tokens,
        },
    }
    result.text = _loo_report(result.data)
    return result


def _suite_entry(
    path: str, rs: list[dict[str, Any]], body_at: float, card_at: float
) -> dict[str, Any]:
    by_category: dict[str, list[dict[str, Any]]] = {}
    for r in rs:
        by_category.setdefault(r["category"], []).append(r)
    return {
        "cases_file": path,
        "body_at": body_at,
        "card_at": card_at,
        "figures": figures(rs),
        "categories": {k: figures(v) for k, v in sorted(by_category.items())},
    }


def _loo_report(d: dict[str, Any]) -> str:
    lines = [
        "Leave one suite out: thresholds chosen on the other suites, figures of the one left out",
        FIGURES_HEADER + "  thresholds (body/card)",
    ]
    for s in d["suites"]:
        lines.append(
            _figures_row(Path(s["cases_file"]).stem, s["figures"])
            + f"  {s['body_at']:.2f}/{s['card_at']:.2f}"
        )
    a, df = d["all_suites"], d["defaults"]
    lines.append(
        f"Chosen on all of them: {a['body_at']:.2f}/{a['card_at']:.2f};"
        f" the router's defaults: {df['body_at']:.2f}/{df['card_at']:.2f}"
    )
    for s in d["unseen"]:
        lines += ["", f"Unseen suite {Path(s['cases_file']).stem} (router defaults):"]
        lines.append(FIGURES_HEADER)
        lines.append(_figures_row("all", s["figures"]))
        lines += [_figures_row(k, v) for k, v in s["categories"].items()]
    return "\n".join(lines)
