"""Host checks for `engram doctor`: is each linked host's wiring present, runnable and current?

Findings carry stable codes (`host.gemini_trust` for R-APP-8, `host.commit_allowed` for
R-APP-10, `host.codex_commit_preapproved`, `host.command_missing`, …) and say what to run to
fix them. A linked host that cannot start the server (command missing, not executable,
another installation, a runner release the index does not have) is an error, so `doctor`
exits non-zero; steps the host asks of the person (approve, trust) are warnings.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from engram import __version__
from engram.core import api
from engram.core.results import Diagnostic, Result
from engram.hosts import HOSTS, claude, codex, gemini, get_host, opencode
from engram.hosts.base import (
    RUNNER_INSTALLABLE,
    WORKSPACE,
    Scope,
    engram_command,
    launch_problem,
    only_by_activation,
    pinned_version,
    server_command,
)
from engram.hosts.claude import commit_allow_rules, hooks_in_effect
from engram.hosts.ops import inspect_host, scopes_in_view, shown
from engram.hosts.targets import (
    HOOKS,
    INSTRUCTIONS,
    REGISTRATION,
    Inspection,
    Notice,
    Printed,
    Skipped,
)


def host_findings(start: Path | None) -> tuple[list[Diagnostic], list[dict]]:
    """Diagnostics for every linked host in view, plus a summary row per linked host."""

    out: list[Diagnostic] = []
    rows: list[dict] = []
    scopes = scopes_in_view(start)
    workspace = next((s.base for s in scopes if not s.is_global), None)
    for scope in scopes:
        for name in HOSTS:
            seen = inspect_host(name, scope)
            if not any(isinstance(i, Inspection) and i.present for _, i in seen):
                continue
            rows.append({"host": name, "scope": scope.kind})
            _check_host(name, scope, seen, out, __version__, workspace)
            _check_person_steps(name, scope, seen, out, workspace)
    return out, rows


def _registered(seen: list) -> tuple[object, Inspection] | None:
    for target, insp in seen:
        if target.role == REGISTRATION and isinstance(insp, Inspection) and insp.present:
            return target, insp
    return None


def _check_person_steps(
    name: str, scope: Scope, seen: list, out: list[Diagnostic], workspace: Path | None
) -> None:
    """What the host itself asks of the person before it starts the server (R-APP-8 kin)."""
    where = f"{name} ({scope.kind})"
    found = _registered(seen)
    if found is None:
        return
    target, _ = found
    path = _p(scope, getattr(target, "path", None))
    if name == "claude" and not scope.is_global:
        state = claude.mcpjson_state(scope)
        if state == claude.PENDING:
            message = claude.APPROVAL_STEP.format(base=scope.base)
            out.append(
                Diagnostic("warning", "host.claude_approval_pending", f"{where}: {message}", path)
            )
        elif state == claude.DISABLED:
            out.append(
                Diagnostic(
                    "warning",
                    "host.claude_server_disabled",
                    f"{where}: {claude.DISABLED_STEP}",
                    path,
                )
            )
    if name == "codex" and not scope.is_global:
        step = codex.trust_step(scope)
        if step:
            code = "host.codex_project_untrusted"
            out.append(Diagnostic("warning", code, f"{where}: {step}", path))
    if name == "gemini":
        from dataclasses import replace

        folder = scope.base if not scope.is_global else workspace
        if folder is not None and not gemini.folder_trusted(scope, folder):
            step = gemini.trust_step(replace(scope, kind=WORKSPACE, base=folder))
            out.append(
                Diagnostic("warning", "host.gemini_folder_untrusted", f"{where}: {step}", path)
            )


def _check_host(
    name: str, scope: Scope, seen: list, out: list[Diagnostic], version: str, workspace: Path | None
) -> None:
    where = f"{name} ({scope.kind})"
    fix = f"engram link {name}" + (" --global" if scope.is_global else "")

    def add(level: str, code: str, message: str, path: Path | None = None) -> None:
        out.append(Diagnostic(level, code, f"{where}: {message}", _p(scope, path)))

    registered: Inspection | None = None
    for target, insp in seen:
        if isinstance(target, Skipped | Notice):
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
            mode = codex.effective_commit_mode(insp.detail)
            if mode == codex.PREAPPROVED:
                whose = (
                    "[mcp_servers.engram.tools.engram_commit] approval_mode"
                    if insp.detail.get("approval_mode")
                    else "[mcp_servers.engram] default_tools_approval_mode"
                )
                add(
                    "warning",
                    "host.codex_commit_preapproved",
                    f'{whose} is "approve", which in Codex means pre-approved: engram_commit '
                    "would write memory without asking anyone; run `engram upgrade` to set "
                    f'approval_mode = "{codex.COMMIT_APPROVAL_MODE}"',
                    target.path,
                )
            elif mode != codex.COMMIT_APPROVAL_MODE:
                add(
                    "warning",
                    "host.codex_approval",
                    f"engram_commit's approval_mode is {mode!r}, not "
                    f"{codex.COMMIT_APPROVAL_MODE!r} (Codex then decides whether to ask); "
                    "run `engram upgrade`",
                    target.path,
                )
    if name == "opencode" and registered is not None:
        project = scope.base if not scope.is_global else workspace
        action, where = opencode.commit_action(scope, project)
        if action == opencode.ALLOW:
            add(
                "warning",
                "host.opencode_commit_preapproved",
                f"OpenCode would run engram_commit without asking anyone ({where} decides); "
                f'run `engram upgrade` to add `"{opencode.COMMIT_TOOL}": "ask"` as the last rule '
                "of `permission`, and remove any later rule that allows it",
            )
    if name == "claude":
        for path, rule in commit_allow_rules(scope):
            add(
                "warning",
                "host.commit_allowed",
                f"permissions.allow has `{rule}`, which lets engram_commit write without "
                "asking; remove it so that a human approves every write",
                path,
            )
    if name == "claude" and registered is not None:
        hooked = hooks_in_effect(scope)
        if hooked and "--always-load" in (registered.command or []):
            add(
                "warning",
                "host.always_load_with_hooks",
                f"--always-load is set although Engram's hooks already inject context (R-INS-3); run `{fix}`",
            )


def _check_command(add, insp: Inspection, role: str, path: Path | None, version: str) -> None:
    """A registered or hook command that would not start this installation is an error."""
    command = insp.command or []
    if not command or role == INSTRUCTIONS:
        return
    hook = role == HOOKS
    what = "hook command" if hook else "server command"
    problem = launch_problem(command, "engram" if hook else "engram-mcp")
    if problem is not None:
        code, why = problem
        wanted = shlex.join(engram_command() if hook else server_command())
        add(
            "error",
            code,
            f"the host cannot start the {what}: {why}; run `engram upgrade` to register "
            f"this installation (`{wanted}`)",
            path,
        )
        return
    found = shutil.which(command[0]) if os.sep not in command[0] else None
    if found and only_by_activation(found):
        wanted = shlex.join(engram_command() if hook else server_command())
        add(
            "warning",
            "host.command_needs_activation",
            f"{what} `{command[0]}` is found only because this virtualenv is activated in "
            "this shell; a host started from elsewhere will not find it; run `engram upgrade` "
            f"to register `{wanted}`",
            path,
        )
    pinned = pinned_version(command)
    if RUNNER_INSTALLABLE and pinned is not None and pinned != version:
        add(
            "warning",
            "host.version_stale",
            f"{what} is pinned to {pinned}, this is {version}; run `engram upgrade`",
            path,
        )


def _p(scope: Scope, path: Path | None) -> str | None:
    return shown(scope, path) if path else None


def titles() -> dict[str, str]:
    return {n: get_host(n).TITLE for n in HOSTS}


def doctor(start: Path | None) -> Result:
    """`engram doctor`: the memory checks, then every linked host, each finding said once."""
    memory = api.health(start)
    findings = list(memory.diagnostics)
    data = dict(memory.data)
    host_diags, rows = host_findings(start)
    findings += host_diags
    data["hosts"] = rows
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
