"""Retrieval quality, measured: run labelled routing cases through the real read path.

A cases file names a workspace (a folder holding `.agents/.engram/`, relative to the file)
and a list of cases: a task as a developer would type it, the memory ids that must load,
the ids that must not, and optionally the active roles. Every case goes through
`api.load` on a temporary copy of the workspace, so the labelled fixture never changes and
no usage is counted. The suite passes when must-load recall reaches the threshold and no
forbidden id loads; anything else is reported case by case with what actually loaded.
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
from typing import Any

from engram.core.errors import EngramError, UsageError
from engram.core.results import Result
from engram.core.roots import ARCHIVE_DIR, WORKSPACE_SUBDIR, Root, Roots

MIN_RECALL = 0.95
CASE_KEYS = ("name", "task", "must", "must_not", "roles")


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
        cases.append(
            {"name": name, "task": task, "must": must, "must_not": must_not, "roles": roles}
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
    from engram.core.store import MEMORY_DIRS, load_memories

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


def _run_case(roots: Roots, case: dict[str, Any]) -> dict[str, Any]:
    from engram.core import api

    error = ""
    loaded: list[str] = []
    tokens = 0
    start = time.perf_counter()
    try:
        res = api.load(roots, case["task"], roles=case["roles"], count_usage=False)
        loaded = [str(k) for k in res.data.get("selected_keys", [])]
        tokens = int(res.data.get("tokens", 0))
    except EngramError as exc:
        error = exc.message
    ms = (time.perf_counter() - start) * 1000
    loaded_set = set(loaded)
    return {
        "name": case["name"],
        "task": case["task"],
        "roles": case["roles"],
        "must": case["must"],
        "loaded": loaded,
        "missed": [i for i in case["must"] if i not in loaded_set],
        "forbidden": [i for i in case["must_not"] if i in loaded_set],
        "tokens": tokens,
        "ms": round(ms, 2),
        "error": error,
    }


def run_routing_benchmark(cases_path: Path, *, min_recall: float = MIN_RECALL) -> Result:
    """Run every case of `cases_path`; ok when recall >= min_recall and nothing forbidden loads.

    data: cases, memory_files, must_total, must_loaded, recall, min_recall, forbidden_loaded
    [{case, id}], missed [{case, id}], tokens {mean, median, min, max}, loaded_per_case,
    load_ms, failing_cases, results [{name, task, roles, loaded, missed, forbidden, tokens,
    ms, error}].
    """
    from engram.core import api

    cases_path = Path(cases_path)
    workspace, cases = read_cases(cases_path)
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
            results = [_run_case(roots, c) for c in cases]

    must_total = sum(len(c["must"]) for c in cases)
    missed = [{"case": r["name"], "id": i} for r in results for i in r["missed"]]
    forbidden = [{"case": r["name"], "id": i} for r in results for i in r["forbidden"]]
    recall = 1.0 if must_total == 0 else (must_total - len(missed)) / must_total
    passed = recall >= min_recall and not forbidden
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
        f"  forbidden loaded   {len(d['forbidden_loaded'])}",
        f"  tokens per load    mean {t['mean']:.0f}, median {t['median']:.0f}"
        f" (min {t['min']:.0f}, max {t['max']:.0f})",
        f"  memories per load  mean {n['mean']:.1f}, median {n['median']:.0f}, max {n['max']:.0f}",
        f"  time per load      median {ms['median']:.1f} ms, p90 {ms['p90']:.1f} ms",
        f"  result             {'PASS' if d['passed'] else 'FAIL'}",
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
