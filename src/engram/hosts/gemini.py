"""Gemini CLI.

What Gemini CLI reads (its own documentation):
- MCP servers, https://geminicli.com/docs/tools/mcp-server : `mcpServers` in
  `.gemini/settings.json` (project) or `~/.gemini/settings.json` (user), each server with
  `command`, `args`, optional `env`, `timeout`, `trust`. Engram never sets `trust` (it would
  skip the confirmation of `engram_commit`); `engram doctor` warns when a person does (R-APP-8).
- Hooks, https://geminicli.com/docs/hooks/reference : `hooks` in the same settings.json,
  `{"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": …, "name": …,
  "timeout": <ms>}]}]}}`; SessionStart and BeforeAgent (after the prompt is submitted) read
  JSON on stdin and may answer `{"hookSpecificOutput": {"additionalContext": …}}`.
- Context file, https://geminicli.com/docs/cli/gemini-md : `GEMINI.md` at the project root
  and `~/.gemini/GEMINI.md`.
"""

from __future__ import annotations

from engram.hosts.base import INSTRUCTIONS, Scope
from engram.hosts.targets import JsonHooks, JsonServer, Target, TextBlock

NAME = "gemini"
TITLE = "Gemini CLI"
EVENTS = {"SessionStart": "session-start", "BeforeAgent": "user-prompt-submit"}
HOOK_TIMEOUT_MS = 15000


def targets(scope: Scope) -> list[Target]:
    folder = (scope.home if scope.is_global else scope.base) / ".gemini"
    settings = folder / "settings.json"
    entry = {"command": scope.server[0], "args": list(scope.server[1:])}
    commands = {ev: scope.hook_command(NAME, name) for ev, name in EVENTS.items()}
    memory = folder / "GEMINI.md" if scope.is_global else scope.base / "GEMINI.md"
    return [
        JsonServer(settings, ("mcpServers", "engram"), entry),
        JsonHooks(
            settings,
            NAME,
            commands,
            extra=lambda ev: {"name": f"engram-{EVENTS[ev]}", "timeout": HOOK_TIMEOUT_MS},
        ),
        TextBlock(memory, NAME, INSTRUCTIONS),
    ]
