"""Claude Code.

What Claude Code reads (its own documentation):
- MCP servers, https://code.claude.com/docs/en/mcp : project scope is `.mcp.json` at the
  project root, `{"mcpServers": {"<name>": {"command": …, "args": […]}}}`; user scope lives
  in `~/.claude.json` and is managed by `claude mcp add --scope user <name> -- <command> …`
  (Engram prints that command instead of editing Claude Code's own state file, and only
  reads `~/.claude.json` to report whether it was run).
- Hooks, https://code.claude.com/docs/en/hooks : `hooks` in `.claude/settings.json` (user:
  `~/.claude/settings.json`), `{"hooks": {"SessionStart": [{"hooks": [{"type": "command",
  "command": …, "timeout": <seconds>}]}]}}`. SessionStart and UserPromptSubmit receive JSON on
  stdin (`session_id`, `cwd`, `hook_event_name`, `source` / `prompt`) and may answer
  `{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}` with exit code 0.
- Memory files, https://code.claude.com/docs/en/memory : `CLAUDE.md` at the project root and
  `~/.claude/CLAUDE.md` for every project.

A project `.mcp.json` server stays "pending approval" in Claude Code until the person
approves it (checked with Claude Code 2.1): it runs once the project is trusted
(`projects.<path>.hasTrustDialogAccepted` in `~/.claude.json`) and the server is enabled
there or in `.claude/settings*.json` (`enabledMcpjsonServers`, `enableAllProjectMcpServers`),
or when the user settings enable it; `disabledMcpjsonServers` anywhere turns it off.
`engram link` says so and `engram doctor` reads that state (never writes it).

R-INS-3: `--always-load` is added to `.mcp.json` and to the printed command only when no
Engram Claude hook is installed or being installed (the hooks already inject context).
"""

from __future__ import annotations

import os
import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from engram.core.api import parse_json, read_plain
from engram.hosts.base import GLOBAL, INSTRUCTIONS, Scope
from engram.hosts.files import JsonDoc, read_host_file
from engram.hosts.targets import JsonHooks, JsonServer, Notice, Printed, Target, TextBlock

NAME = "claude"
TITLE = "Claude Code"
EVENTS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit"}
HOOK_TIMEOUT_S = 15


def _settings(scope: Scope) -> Path:
    return (scope.home if scope.is_global else scope.base) / ".claude" / "settings.json"


def hook_target(scope: Scope) -> JsonHooks:
    commands = {ev: scope.hook_command(NAME, name) for ev, name in EVENTS.items()}
    return JsonHooks(_settings(scope), NAME, commands, extra=lambda ev: {"timeout": HOOK_TIMEOUT_S})


def _hooks_present(scope: Scope) -> bool:
    target = hook_target(scope)
    try:
        return target.inspect(read_host_file(target.path)).present
    except (OSError, ValueError):
        return False


def hooks_in_effect(scope: Scope) -> bool:
    """Engram hooks that run for this scope: its own, plus the user's for a workspace."""
    if _hooks_present(scope):
        return True
    return not scope.is_global and _hooks_present(replace(scope, kind=GLOBAL))


# Permission rules that let engram_commit run without Claude Code's prompt (R-APP-10).
COMMIT_ALLOW_RULES = ("mcp__engram__engram_commit", "mcp__engram", "mcp__engram__*")


def commit_allow_rules(scope: Scope) -> list[tuple[Path, str]]:
    """Allow rules in the scope's settings that would skip the human gate of engram_commit."""
    settings = _settings(scope)
    paths = [settings] if scope.is_global else [settings, settings.with_name("settings.local.json")]
    found: list[tuple[Path, str]] = []
    for path in paths:
        try:
            data = JsonDoc(read_host_file(path)).value
        except (OSError, ValueError):
            continue
        permissions = data.get("permissions") if isinstance(data, dict) else None
        allow = permissions.get("allow") if isinstance(permissions, dict) else None
        for rule in allow if isinstance(allow, list) else []:
            if isinstance(rule, str) and rule.strip() in COMMIT_ALLOW_RULES:
                found.append((path, rule.strip()))
    return found


APPROVED, PENDING, DISABLED = "approved", "pending", "disabled"


def claude_json(scope: Scope) -> Path:
    """Claude Code's own state file (`$CLAUDE_CONFIG_DIR/.claude.json` when that is set)."""
    env = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(env).expanduser() / ".claude.json" if env else scope.home / ".claude.json"


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON object from Claude Code's files ({} when absent or unreadable). `~/.claude.json`
    can be megabytes of history, so this is the C parser, not the span-keeping one."""
    try:
        value = parse_json(read_plain(path), path)
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def _project_entry(scope: Scope) -> dict[str, Any]:
    projects = _read_json(claude_json(scope)).get("projects")
    if not isinstance(projects, dict):
        return {}
    folder = scope.base
    keys = [folder, folder.resolve()]
    for parent in [folder, *folder.parents]:  # Claude Code keys a repository by its root
        if (parent / ".git").exists():
            keys.append(parent)
            break
    for key in keys:
        entry = projects.get(str(key))
        if isinstance(entry, dict):
            return entry
    return {}


def _names(data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key)
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def mcpjson_state(scope: Scope) -> str:
    """Whether Claude Code runs the project's `engram` server: approved, pending or disabled."""
    user = _read_json(scope.home / ".claude" / "settings.json")
    project = [_read_json(_settings(scope).with_name(n)) for n in LOCAL_SETTINGS]
    entry = _project_entry(scope)
    if any("engram" in _names(d, "disabledMcpjsonServers") for d in [user, entry, *project]):
        return DISABLED
    if user.get("enableAllProjectMcpServers") is True or "engram" in _names(
        user, "enabledMcpjsonServers"
    ):
        return APPROVED
    if entry.get("hasTrustDialogAccepted") is True and any(
        d.get("enableAllProjectMcpServers") is True
        or "engram" in _names(d, "enabledMcpjsonServers")
        for d in [entry, *project]
    ):
        return APPROVED
    return PENDING


LOCAL_SETTINGS = ("settings.json", "settings.local.json")
APPROVAL_STEP = (
    "Claude Code shows the project's `engram` server as pending approval: run `claude` in "
    "{base} and approve it when asked (or in /mcp)"
)
DISABLED_STEP = (
    "Claude Code has the project's `engram` server in disabledMcpjsonServers; enable it in "
    "/mcp (or remove it from that list)"
)


def approval_step(scope: Scope) -> str | None:
    state = mcpjson_state(scope)
    if state == PENDING:
        return APPROVAL_STEP.format(base=scope.base)
    return DISABLED_STEP if state == DISABLED else None


def targets(scope: Scope) -> list[Target]:
    hooked = scope.hooks or hooks_in_effect(scope)
    extra = [] if hooked else ["--always-load"]
    out: list[Target] = []
    if scope.is_global:
        add = ["claude", "mcp", "add", "--scope", "user", "engram", "--", *scope.server, *extra]
        out.append(
            Printed(
                command=shlex.join(add),
                remove_command="claude mcp remove --scope user engram",
                check_path=scope.home / ".claude.json",
                check_keys=("mcpServers", "engram"),
            )
        )
        memory = scope.home / ".claude" / "CLAUDE.md"
    else:
        entry = {"command": scope.server[0], "args": [*scope.server[1:], *extra]}
        out.append(JsonServer(scope.base / ".mcp.json", ("mcpServers", "engram"), entry))
        memory = scope.base / "CLAUDE.md"
    out.append(hook_target(scope))
    out.append(TextBlock(memory, NAME, INSTRUCTIONS))
    if not scope.is_global:
        out.append(Notice(lambda: approval_step(scope)))
    return out
