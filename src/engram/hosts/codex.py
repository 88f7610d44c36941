"""OpenAI Codex (CLI, IDE extension and app share one configuration).

What Codex reads (its own documentation):
- MCP servers, https://developers.openai.com/codex/mcp and the configuration reference
  https://developers.openai.com/codex/config-reference : `[mcp_servers.<name>]` tables with
  `command` and `args` in `~/.codex/config.toml` (`$CODEX_HOME/config.toml`); per-tool
  overrides go in `[mcp_servers.<name>.tools.<tool>]` with `approval_mode`. Codex does not
  read `.mcp.json`, so a workspace link writes only the instructions.
- Instructions, https://developers.openai.com/codex/guides/agents-md : `AGENTS.md` at the
  project root, and `~/.codex/AGENTS.md` (`$CODEX_HOME/AGENTS.md`) for every project.

The registration is a managed block (R-APP-7) so that comments and the rest of config.toml
stay byte for byte; tomlkit checks that the file parses before and after the edit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from engram.hosts.base import INSTRUCTIONS, Scope
from engram.hosts.targets import Skipped, Target, TextBlock, TomlServerBlock

NAME = "codex"
TITLE = "Codex"
# R-APP-7 names this value. Codex's configuration reference lists auto | prompt | approve
# for `approval_mode`; keep the value in this one place.
COMMIT_APPROVAL_MODE = "approve"


def codex_home(scope: Scope) -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else scope.home / ".codex"


def server_block(scope: Scope) -> str:
    command, *args = scope.server
    return (
        "# Engram memory server (`engram unlink codex --global` removes this block)\n"
        "[mcp_servers.engram]\n"
        f"command = {json.dumps(command)}\n"
        f"args = {json.dumps(args)}\n"
        "\n"
        "# engram_commit writes memory: the human approves each call\n"
        "[mcp_servers.engram.tools.engram_commit]\n"
        f'approval_mode = "{COMMIT_APPROVAL_MODE}"\n'
    )


def targets(scope: Scope) -> list[Target]:
    if scope.is_global:
        home = codex_home(scope)
        return [
            TomlServerBlock(home / "config.toml", NAME, server_block(scope)),
            TextBlock(home / "AGENTS.md", NAME, INSTRUCTIONS),
        ]
    return [
        Skipped(
            "Codex reads MCP servers only from ~/.codex/config.toml; "
            "run `engram link codex --global` to register the server"
        ),
        TextBlock(scope.base / "AGENTS.md", NAME, INSTRUCTIONS),
    ]
