"""`engram doctor`: roots, hashes, index, configuration and every linked host, with stable codes."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from engram.cli.common import add_json_flag, emit, start_dir
from engram.core.results import Diagnostic, Result

# Findings that mean a memory is not loaded, or a path in a root is refused.
ERROR_CODES = ("memory.parse_error", "root.symlink", "folder.symlink", "file.symlink")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("doctor", help="check roots, hashes, index and linked hosts")
    p.add_argument("--strict", action="store_true", help="exit non-zero on warnings too")
    add_json_flag(p)
    p.set_defaults(func=cmd_doctor)


def cmd_doctor(args: argparse.Namespace) -> int:
    result = doctor(start_dir(args))
    levels = {d.level for d in result.diagnostics}
    failed = "error" in levels or (args.strict and "warning" in levels)
    result.ok = not failed
    if args.json:
        emit(result, args, exit_nonzero_when_not_ok=False)
    else:  # the findings are the text; emit() would repeat them on stderr
        sys.stdout.write(result.text + "\n")
    return 1 if failed else 0


def doctor(start: Path | None) -> Result:
    findings: list[Diagnostic] = []
    data: dict = {}
    roots = _memory_checks(start, findings, data)
    from engram.hosts.doctor import host_findings

    host_diags, rows = host_findings(start)
    findings += host_diags
    data["hosts"] = rows
    if roots is not None:
        findings += _hook_log(roots)
    findings = _once(findings)
    data["findings"] = [d.as_dict() for d in findings]
    counts = {lvl: sum(d.level == lvl for d in findings) for lvl in ("error", "warning", "info")}
    data["counts"] = counts
    lines = [f"{d.level:<7} {d.code:<28} {d.message}" for d in findings]
    linked = ", ".join(f"{r['host']} ({r['scope']})" for r in rows) or "none"
    lines.append(f"linked hosts: {linked}")
    lines.append(
        f"{counts['error']} error(s), {counts['warning']} warning(s), {counts['info']} note(s)"
        + (" — all good" if not counts["error"] and not counts["warning"] else "")
    )
    return Result("\n".join(lines), data=data, diagnostics=findings)


def _once(findings: list[Diagnostic]) -> list[Diagnostic]:
    """One broken file can fail several checks (verify, status, config): say it once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for d in findings:
        if (d.level, d.code, d.message) not in seen:
            seen.add((d.level, d.code, d.message))
            out.append(d)
    return out


def _memory_checks(start: Path | None, out: list[Diagnostic], data: dict):
    from engram.core import api
    from engram.core.errors import EngramError
    from engram.core.store.roots import resolve_roots

    try:
        roots = resolve_roots(start)
    except EngramError as exc:
        out.append(
            Diagnostic("error", exc.code if "." in exc.code else "root.invalid", exc.message)
        )
        return None
    data["roots"] = {r.scope: str(r.path) for r in roots.all}
    env_global = os.environ.get("ENGRAM_GLOBAL_DIR")
    if env_global and roots.global_ is None:
        out.append(
            Diagnostic(
                "warning",
                "root.global_missing",
                f"ENGRAM_GLOBAL_DIR={env_global} is not a folder; create it or unset the variable",
            )
        )
    if not roots.all:
        out.append(
            Diagnostic(
                "error",
                "root.missing",
                "no Engram memory root here; run `engram init` in your project",
            )
        )
        return None
    for name, call in (("verify", api.verify), ("status", api.status)):
        try:
            res = call(roots)
        except EngramError as exc:
            code = "manifest.invalid" if name == "verify" else "index.unavailable"
            out.append(Diagnostic("error", exc.code if "." in exc.code else code, exc.message))
            continue
        except Exception as exc:  # a broken derived file must not stop the other checks
            out.append(Diagnostic("error", f"{name}.failed", f"{name} failed: {exc}"))
            continue
        for d in res.diagnostics:
            level = "error" if d.code in ERROR_CODES else d.level
            out.append(Diagnostic(level, d.code, d.message, d.path))
        data[name] = res.data
    try:
        from engram.core.store.config import load_config

        for problem in load_config(roots).invalid_entries():
            out.append(Diagnostic("warning", "config.invalid", problem))
    except EngramError as exc:
        out.append(Diagnostic("error", "config.invalid", exc.message))
    return roots


def _hook_log(roots) -> list[Diagnostic]:
    import time

    from engram.core.store.files import file_stat, read_bytes

    path = roots.primary.cache_dir / "hook.log"
    try:  # never through a link: verify names a linked log, its target is not shown
        if time.time() - file_stat(roots.primary, path).st_mtime > 86400:
            return []
        last = read_bytes(roots.primary, path).decode("utf-8", "replace").strip().splitlines()[-1]
    except (OSError, ValueError, IndexError):  # absent, a link, too large, empty
        return []
    return [
        Diagnostic(
            "warning",
            "hook.errors",
            f"a hook failed in the last day (hosts were not affected): {last}",
            str(path),
        )
    ]
