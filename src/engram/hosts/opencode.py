"""OpenCode.

What OpenCode reads (its own documentation):
- Configuration, https://opencode.ai/docs/config : `opencode.json` or `opencode.jsonc` at
  the project root (JSONC: comments and trailing commas are allowed), and
  `~/.config/opencode/opencode.json[c]` for every project.
- MCP servers, https://opencode.ai/docs/mcp-servers : the `mcp` object, a local server being
  `{"type": "local", "command": [...], "enabled": true}`; Engram writes the R-REG-6 shape
  (with `"args": []`), the whole command in the `command` array.
- Rules, https://opencode.ai/docs/rules : `AGENTS.md` at the project root and
  `~/.config/opencode/AGENTS.md`.
"""

from __future__ import annotations

from pathlib import Path

from engram.hosts.base import INSTRUCTIONS, Scope
from engram.hosts.targets import JsonServer, Target, TextBlock

NAME = "opencode"
TITLE = "OpenCode"


def config_file(folder: Path, prefer_jsonc: bool) -> Path:
    """The file OpenCode reads: an existing opencode.jsonc / opencode.json, else a new one."""
    jsonc, plain = folder / "opencode.jsonc", folder / "opencode.json"
    for candidate in (jsonc, plain) if prefer_jsonc else (plain, jsonc):
        if candidate.exists():
            return candidate
    return jsonc if prefer_jsonc else plain


def targets(scope: Scope) -> list[Target]:
    folder = scope.home / ".config" / "opencode" if scope.is_global else scope.base
    entry = {"type": "local", "command": list(scope.server), "args": [], "enabled": True}
    return [
        JsonServer(
            config_file(folder, prefer_jsonc=scope.is_global),
            ("mcp", "engram"),
            entry,
            command_of=lambda e: (
                [*e.get("command", []), *e.get("args", [])]
                if isinstance(e.get("command"), list)
                else [e.get("command", "")]
            ),
            options_key="command",  # OpenCode runs the `command` array as is
        ),
        TextBlock(folder / "AGENTS.md", NAME, INSTRUCTIONS),
    ]
