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
- Folder trust, https://geminicli.com/docs/cli/trusted-folders (checked with Gemini CLI 0.61):
  in a folder the person has not trusted, Gemini CLI disables every MCP server (the user's
  too). Trust lives in `~/.gemini/trustedFolders.json` (`GEMINI_CLI_TRUSTED_FOLDERS_PATH`),
  `{"<path>": "TRUST_FOLDER" | "TRUST_PARENT" | "DO_NOT_TRUST"}`, the longest matching rule
  winning; `security.folderTrust.enabled: false` in the user settings turns the check off.
- Context file, https://geminicli.com/docs/cli/gemini-md : `GEMINI.md` at the project root
  and `~/.gemini/GEMINI.md`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engram.hosts.base import INSTRUCTIONS, Scope
from engram.hosts.files import JsonDoc, read_host_file
from engram.hosts.targets import JsonHooks, JsonServer, Notice, Target, TextBlock

NAME = "gemini"
TITLE = "Gemini CLI"
EVENTS = {"SessionStart": "session-start", "BeforeAgent": "user-prompt-submit"}
HOOK_TIMEOUT_MS = 15000


def _gemini_dir(scope: Scope) -> Path:
    env = os.environ.get("GEMINI_CLI_HOME")
    return (Path(env).expanduser() if env else scope.home) / ".gemini"


def _read_json(path: Path) -> Any:
    try:
        return JsonDoc(read_host_file(path)).value
    except (OSError, ValueError):
        return None


def _within(folder: Path, rule: Path) -> bool:
    try:
        folder.resolve().relative_to(rule.resolve())
        return True
    except (ValueError, OSError):
        return False


def trust_check_off(scope: Scope) -> bool:
    """`security.folderTrust.enabled: false` in the user settings (a project cannot say so)."""
    settings = _read_json(_gemini_dir(scope) / "settings.json")
    security = settings.get("security") if isinstance(settings, dict) else None
    trust = security.get("folderTrust") if isinstance(security, dict) else None
    return isinstance(trust, dict) and trust.get("enabled") is False


def folder_trusted(scope: Scope, folder: Path) -> bool:
    """Whether Gemini CLI trusts `folder` (and so starts MCP servers there), as it decides."""
    if os.environ.get("GEMINI_RESTRICTED_MODE") == "true":
        return False
    env = os.environ.get("GEMINI_CLI_TRUST_WORKSPACE")
    if env in ("true", "false"):
        return env == "true"
    if trust_check_off(scope):
        return True
    path = os.environ.get("GEMINI_CLI_TRUSTED_FOLDERS_PATH")
    rules = _read_json(Path(path) if path else _gemini_dir(scope) / "trustedFolders.json")
    best: tuple[int, str] | None = None
    for rule, level in (rules or {}).items() if isinstance(rules, dict) else []:
        if level not in ("TRUST_FOLDER", "TRUST_PARENT", "DO_NOT_TRUST"):
            continue
        effective = Path(rule).parent if level == "TRUST_PARENT" else Path(rule)
        if _within(folder, effective) and (best is None or len(rule) > best[0]):
            best = (len(rule), level)
    return best is not None and best[1] != "DO_NOT_TRUST"


def trust_step(scope: Scope) -> str | None:
    """What the person must do before Gemini CLI starts the server in this project."""
    if scope.is_global:
        if trust_check_off(scope) or os.environ.get("GEMINI_CLI_TRUST_WORKSPACE") == "true":
            return None
        return (
            "Gemini CLI starts MCP servers only in folders you trust: in each project, run "
            "`gemini` and choose to trust the folder (or `/permissions trust`)"
        )
    if folder_trusted(scope, scope.base):
        return None
    return (
        f"Gemini CLI disables MCP servers in untrusted folders: run `gemini` in {scope.base} "
        "and choose to trust the folder (or `/permissions trust`)"
    )


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
        Notice(lambda: trust_step(scope)),
    ]
