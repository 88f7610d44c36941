"""Host checks for `engram doctor`: is each linked host's wiring present, runnable and current?

Findings carry stable codes (`host.gemini_trust` for R-APP-8, `host.commit_allowed` for
R-APP-10, `host.command_missing`, `host.version_stale`, …) and say what to run to fix them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from engram.core.results import Diagnostic
from engram.hosts import HOSTS, get_host
from engram.hosts.base import Scope, pinned_version
from engram.hosts.ops import inspect_host, rel, scopes_in_view
from engram.hosts.targets import HOOKS, INSTRUCTIONS, REGISTRATION, Inspection, Printed, Skipped


def host_findings(start: Path | None) -> tuple[list[Diagnostic], list[dict]]:
    """Diagnostics for every linked host in view, plus a summary row per linked host."""
    from engram import __version__

    out: list[Diagnostic] = []
    rows: list[dict] = []
    for scope in scopes_in_view(start):
        for name in HOSTS:
            seen = inspect_host(name, scope)
            if not any(isinstance(i, Inspection) and i.present for _, i in seen):
                continue
            rows.append({"host": name, "scope": scope.kind})
            _check_host(name, scope, seen, out, __version__)
    return out, rows


def _check_host(name: str, scope: Scope, seen: list, out: list[Diagnostic], version: str) -> None:
    where = f"{name} ({scope.kind})"
    fix = f"engram link {name}" + (" --global" if scope.is_global else "")

    def add(level: str, code: str, message: str, path: Path | None = None) -> None:
        out.append(Diagnostic(level, code, f"{where}: {message}", _p(scope, path)))

    registered: Inspection | None = None
    for target, insp in seen:
        if isinstance(target, Skipped):
            continue
        if isinstance(insp, str):
            add(
                "warning",
                "host.config_invalid",
                insp + "; fix the file by hand",
                target.path,
            )
            continue
        if target.role == REGISTRATION and not insp.present:
            if insp.foreign:
                add(
                    "warning",
                    "host.entry_conflict",
                    f"an `engram` entry that does not run engram-mcp is registered; "
                    f"run `{fix} --force` to replace it",
                    target.path,
                )
            elif isinstance(target, Printed):
                add(
                    "warning",
                    "host.registration_missing",
                    f"MCP server not registered; run: {target.command}",
                )
            else:
                add(
                    "warning",
                    "host.registration_missing",
                    f"MCP server not registered; run `{fix}`",
                    target.path,
                )
            continue
        if not insp.present:
            if target.role == INSTRUCTIONS:
                add(
                    "warning",
                    "host.instructions_missing",
                    f"no Engram instructions; run `{fix}`",
                    target.path,
                )
            elif target.role == HOOKS:
                add(
                    "info",
                    "host.hooks_missing",
                    f"no Engram hooks (memory loads only through the MCP tools); run `{fix}` to add them",
                    target.path,
                )
            continue
        if target.role == REGISTRATION:
            registered = insp
        _check_command(add, insp, target.role, target.path, version)
        if insp.stale and not (
            insp.command and pinned_version(insp.command) not in (None, version)
        ):
            add(
                "info",
                "host.outdated",
                f"{target.label} differs from what this release writes; run `engram upgrade`",
                target.path,
            )
        if insp.detail.get("trust") is True:
            add(
                "warning",
                "host.gemini_trust",
                "mcpServers.engram sets `trust: true`, which skips the confirmation of "
                "engram_commit; remove it so that a human approves every write",
                target.path,
            )
        if name == "codex" and target.role == REGISTRATION:
            from engram.hosts.codex import COMMIT_APPROVAL_MODE

            if insp.detail.get("approval_mode") != COMMIT_APPROVAL_MODE:
                add(
                    "warning",
                    "host.codex_approval",
                    f"[mcp_servers.engram.tools.engram_commit] approval_mode is not {COMMIT_APPROVAL_MODE!r}; run `engram upgrade`",
                    target.path,
                )
    if name == "claude":
        from engram.hosts.claude import commit_allow_rules

        for path, rule in commit_allow_rules(scope):
            add(
                "warning",
                "host.commit_allowed",
                f"permissions.allow has `{rule}`, which lets engram_commit write without "
                "asking; remove it so that a human approves every write",
                path,
            )
    if name == "claude" and registered is not None:
        from engram.hosts.claude import hooks_in_effect

        hooked = hooks_in_effect(scope)
        if hooked and "--always-load" in (registered.command or []):
            add(
                "warning",
                "host.always_load_with_hooks",
                f"--always-load is set although Engram's hooks already inject context (R-INS-3); run `{fix}`",
            )


def _check_command(add, insp: Inspection, role: str, path: Path | None, version: str) -> None:
    command = insp.command or []
    if not command or role == INSTRUCTIONS:
        return
    what = "hook command" if role == HOOKS else "server command"
    if not shutil.which(command[0]):
        add(
            "warning",
            "host.command_missing",
            f"{what} `{command[0]}` is not on PATH; install Engram (or uv) or run `engram upgrade` after installing",
            path,
        )
    pinned = pinned_version(command)
    if pinned is not None and pinned != version:
        add(
            "warning",
            "host.version_stale",
            f"{what} is pinned to {pinned}, this is {version}; run `engram upgrade`",
            path,
        )


def _p(scope: Scope, path: Path | None) -> str | None:
    return rel(scope, path) if path else None


def titles() -> dict[str, str]:
    return {n: get_host(n).TITLE for n in HOSTS}
