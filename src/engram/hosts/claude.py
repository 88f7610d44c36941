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

R-INS-3: `--always-load` is added to `.mcp.json` and to the printed command only when no
Engram Claude hook is installed or being installed (the hooks already inject context).
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from engram.hosts.base import GLOBAL, INSTRUCTIONS, Scope
from engram.hosts.targets import JsonHooks, JsonServer, Printed, Target, TextBlock

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
        return target.inspect(target.path.read_text(encoding="utf-8")).present
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
    from engram.hosts.files import JsonDoc

    settings = _settings(scope)
    paths = [settings] if scope.is_global else [settings, settings.with_name("settings.local.json")]
    found: list[tuple[Path, str]] = []
    for path in paths:
        try:
            data = JsonDoc(path.read_text(encoding="utf-8")).value
        except (OSError, ValueError):
            continue
        permissions = data.get("permissions") if isinstance(data, dict) else None
        allow = permissions.get("allow") if isinstance(permissions, dict) else None
        for rule in allow if isinstance(allow, list) else []:
            if isinstance(rule, str) and rule.strip() in COMMIT_ALLOW_RULES:
                found.append((path, rule.strip()))
    return found


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
    return out
