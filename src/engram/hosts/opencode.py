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
- Permissions, https://opencode.ai/docs/permissions : `permission` maps a tool name (an MCP
  tool is `<server>_<tool>`, so `engram_engram_commit`) or a wildcard pattern (`*`, `?`) to
  `allow`, `ask` or `deny`; the user config's rules come first, the project's after them,
  an agent's own `permission` after both, and the last matching rule wins. A tool no rule
  matches is allowed. Checked with OpenCode 1.18.33 and a scripted model: without a rule,
  `opencode run` let the model call engram_save then engram_commit and the memory was
  written with nobody asked; with `"engram_engram_commit": "ask"` nothing was written; a
  later `"*": "allow"` or `"engram_*": "allow"` (in either file) wrote again; `deny` hides
  the tool; `opencode run --auto` approves every `ask` (the person's explicit choice).

Why a rule: OpenCode has no per-server approval setting, and Engram's human gate is the
host's own prompt before engram_commit (R-APP-10). `engram link opencode` therefore writes
`"engram_engram_commit": "ask"` as the last rule of `permission`, `engram doctor` reports
`host.opencode_commit_preapproved` when the rules in effect would allow the call, and
`engram upgrade` writes the rule back.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from engram.hosts.base import INSTRUCTIONS, Scope
from engram.hosts.files import ConfigParseError, JsonDoc, read_host_file
from engram.hosts.targets import JsonGate, JsonServer, Target, TextBlock

NAME = "opencode"
TITLE = "OpenCode"
SERVER_KEY = "engram"
COMMIT_TOOL = f"{SERVER_KEY}_engram_commit"  # OpenCode names an MCP tool <server>_<tool>
ASK, ALLOW, DENY = "ask", "allow", "deny"


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


def user_folder(scope: Scope) -> Path:
    return scope.home / ".config" / "opencode"


def _pattern(rule: str) -> re.Pattern[str]:
    """OpenCode's wildcard: `*` any run of characters, `?` one, everything else literal."""
    return re.compile(
        "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in rule)
    )


def _rules_of(value: Any) -> list[tuple[str, Any]]:
    """A `permission` value as ordered (pattern, action) rules; a string is `{"*": it}`."""
    if isinstance(value, str):
        return [("*", value)]
    if isinstance(value, dict):
        return list(value.items())
    return []


def _config_files(scope: Scope, project: Path | None) -> list[Path]:
    """The configuration files OpenCode reads for a project, in the order it merges them."""
    user = user_folder(scope)
    out = [user / "config.json", user / "opencode.json", user / "opencode.jsonc"]
    custom = os.environ.get("OPENCODE_CONFIG")
    if custom:
        out.append(Path(custom).expanduser())
    if project is not None:
        out += [project / "opencode.json", project / "opencode.jsonc"]
        out += [project / ".opencode" / "opencode.json", project / ".opencode" / "opencode.jsonc"]
    return out


def commit_action(scope: Scope, project: Path | None) -> tuple[str, str]:
    """(the action OpenCode takes for engram_commit, where the deciding rule is) — for the
    main agent and for each agent with its own rules, the most permissive one."""
    base: list[tuple[str, Any, str]] = []
    agents: dict[str, list[tuple[str, Any, str]]] = {}
    for path in _config_files(scope, project):
        try:
            value = JsonDoc(read_host_file(path)).value
        except (OSError, ConfigParseError):
            continue
        base += [(p, a, str(path)) for p, a in _rules_of(value.get("permission"))]
        for key in ("agent", "mode"):
            table = value.get(key)
            for name, agent in table.items() if isinstance(table, dict) else []:
                if isinstance(agent, dict) and "permission" in agent:
                    rules = [
                        (p, a, f"{path} ({key}.{name})") for p, a in _rules_of(agent["permission"])
                    ]
                    agents.setdefault(name, []).extend(rules)
    outcomes = [_decide(base)] + [_decide(base + extra) for extra in agents.values()]
    order = {ALLOW: 0, ASK: 1, DENY: 2}
    return min(outcomes, key=lambda o: order.get(o[0], 0))


def _decide(rules: list[tuple[str, Any, str]]) -> tuple[str, str]:
    action, where = ALLOW, "no rule (OpenCode allows a tool no rule names)"
    for pattern, value, origin in rules:
        if isinstance(pattern, str) and _pattern(pattern).fullmatch(COMMIT_TOOL):
            action = value if value in (ASK, DENY) else ALLOW
            where = f"`{pattern}: {json.dumps(value, ensure_ascii=False)}` in {origin}"
    return action, where


def targets(scope: Scope) -> list[Target]:
    folder = user_folder(scope) if scope.is_global else scope.base
    entry = {"type": "local", "command": list(scope.server), "enabled": True}
    config = config_file(folder, prefer_jsonc=scope.is_global)
    return [
        JsonServer(
            config,
            ("mcp", SERVER_KEY),
            entry,
            command_of=command_of,
            options_key="command",  # OpenCode runs the `command` array as is
            obsolete=("args", "env"),
            migrate=migrate,
        ),
        JsonGate(config, ("permission",), COMMIT_TOOL, value=ASK, keep=(DENY,)),
        TextBlock(folder / "AGENTS.md", NAME, INSTRUCTIONS),
    ]
