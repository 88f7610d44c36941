"""OpenCode.

What OpenCode reads (its own documentation):
- Configuration, https://opencode.ai/docs/config : `opencode.json` or `opencode.jsonc` at
  the project root (JSONC: comments and trailing commas are allowed), and
  `~/.config/opencode/opencode.json[c]` for every project.
- MCP servers, https://opencode.ai/docs/mcp-servers and its schema
  (https://opencode.ai/config.json, `McpLocalConfig`, checked with OpenCode 1.18): a local
  server is `{"type": "local", "command": [...], "enabled": true}` with optional `cwd`,
  `environment` (a string map) and `timeout`. There is no `args` (OpenCode drops it), so
  the whole command goes in the `command` array; re-linking an older entry moves what was
  in `args` into `command` and an `env` map into `environment`.
- Rules, https://opencode.ai/docs/rules : `AGENTS.md` at the project root and
  `~/.config/opencode/AGENTS.md`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def command_of(entry: dict[str, Any]) -> list[str]:
    """The command OpenCode would run (older entries also carried an `args` list)."""
    command, args = entry.get("command"), entry.get("args")
    words = command if isinstance(command, list) else [command or ""]
    return [str(w) for w in [*words, *(args if isinstance(args, list) else [])]]


def migrate(existing: dict[str, Any], wanted: dict[str, Any]) -> dict[str, Any]:
    """Keys outside OpenCode's schema that an older entry had, mapped to the schema's names."""
    env = existing.get("env")
    if isinstance(env, dict) and "environment" not in existing:
        return {"environment": env}
    return {}


def targets(scope: Scope) -> list[Target]:
    folder = scope.home / ".config" / "opencode" if scope.is_global else scope.base
    entry = {"type": "local", "command": list(scope.server), "enabled": True}
    return [
        JsonServer(
            config_file(folder, prefer_jsonc=scope.is_global),
            ("mcp", "engram"),
            entry,
            command_of=command_of,
            options_key="command",  # OpenCode runs the `command` array as is
            obsolete=("args", "env"),
            migrate=migrate,
        ),
        TextBlock(folder / "AGENTS.md", NAME, INSTRUCTIONS),
    ]
