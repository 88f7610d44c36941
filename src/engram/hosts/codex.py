"""OpenAI Codex (CLI, IDE extension and app share one configuration).

What Codex reads (its own documentation, and checked with Codex 0.171):
- MCP servers, https://developers.openai.com/codex/mcp and the configuration reference
  https://developers.openai.com/codex/config-reference : `[mcp_servers.<name>]` tables with
  `command` and `args` in `~/.codex/config.toml` (`$CODEX_HOME/config.toml`), and in a
  project's `.codex/config.toml` once the person trusted the project (Codex records that as
  `[projects."<path>"] trust_level = "trusted"` in the user config; an untrusted project's
  file is ignored). Per-tool overrides go in `[mcp_servers.<name>.tools.<tool>]` with
  `approval_mode`, a server-wide default in `default_tools_approval_mode`.
- Instructions, https://developers.openai.com/codex/guides/agents-md : `AGENTS.md` at the
  project root, and `~/.codex/AGENTS.md` (`$CODEX_HOME/AGENTS.md`) for every project.

Why `approval_mode = "prompt"`: Codex's enum is `auto | prompt | writes | approve`, and
`approve` means *pre-approved* — it is what Codex stores when a person picks "allow and
don't ask again", and its tool-call handler then runs the tool without asking. `prompt`
asks the human on every call, which is the human gate engram_commit relies on (R-APP-7).
`engram doctor` warns (`host.codex_commit_preapproved`) when a config says `approve` for
engram_commit or for every engram tool, and `engram upgrade` writes `prompt` back.

The registration is a managed block (R-APP-7) so that comments and the rest of config.toml
stay byte for byte; when Codex rewrites the file itself (`codex mcp add …` drops the begin
marker), Engram's table is still recognised by what it is and edited in place with tomlkit.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from engram.hosts.base import INSTRUCTIONS, Scope
from engram.hosts.files import read_host_file
from engram.hosts.targets import Notice, Target, TextBlock, TomlServerBlock, toml_parse

NAME = "codex"
TITLE = "Codex"
# `prompt` asks on every call; `approve` would be pre-approved (see the module docstring).
COMMIT_APPROVAL_MODE = "prompt"
PREAPPROVED = "approve"
TRUSTED = "trusted"
# Variables that place Engram's per-user folder (store/layout.user_config_dir) and global
# memory; Codex drops every variable outside its own short list unless `env_vars` names it.
PASSED_VARIABLES = ("ENGRAM_HOME", "ENGRAM_GLOBAL_DIR", "XDG_CONFIG_HOME")


def codex_home(scope: Scope) -> Path:
    env = os.environ.get("CODEX_HOME")
    return Path(env).expanduser() if env else scope.home / ".codex"


def config_path(scope: Scope) -> Path:
    if scope.is_global:
        return codex_home(scope) / "config.toml"
    return scope.base / ".codex" / "config.toml"


def server_block(scope: Scope) -> str:
    command, *args = scope.server
    unlink = "engram unlink codex" + (" --global" if scope.is_global else "")
    return (
        f"# Engram memory server (`{unlink}` removes this block)\n"
        "[mcp_servers.engram]\n"
        f"command = {json.dumps(command)}\n"
        f"args = {json.dumps(args)}\n"
        f"{_env_vars_line()}"
        "\n"
        '# engram_commit writes memory: "prompt" makes Codex ask the human on every call\n'
        '# ("approve" would mean pre-approved)\n'
        "[mcp_servers.engram.tools.engram_commit]\n"
        f'approval_mode = "{COMMIT_APPROVAL_MODE}"\n'
    )


def _env_vars_line() -> str:
    """`env_vars` naming those of PASSED_VARIABLES set where the person links: without it
    a Codex-spawned server would look for the per-user key (and settings) elsewhere than
    the person's own `engram` does, and refuse every approval they made. Names only, never
    values; a variable left unset is not named, since Codex's doctor warns about those.
    """
    names = [name for name in PASSED_VARIABLES if os.environ.get(name)]
    if not names:
        return ""
    return (
        "# Codex passes a server only a short list of variables: these place Engram's\n"
        "# per-user folder, where the person's approval key lives\n"
        f"env_vars = {json.dumps(names)}\n"
    )


def _project_keys(project: Path) -> list[Path]:
    """The folders Codex may key a project by: the folder itself and its Git root."""
    out = [project]
    for parent in [project, *project.parents]:
        if (parent / ".git").exists():
            if parent not in out:
                out.append(parent)
            break
    resolved = [p.resolve() for p in out]
    return out + [p for p in resolved if p not in out]


def project_trust(scope: Scope) -> str | None:
    """The `trust_level` Codex recorded for this project in the user config (None: none)."""

    try:
        text = read_host_file(codex_home(scope) / "config.toml")
        projects = toml_parse(text).get("projects")
    except (OSError, ValueError):
        return None
    if not isinstance(projects, dict):
        return None
    for key in _project_keys(scope.base):
        entry = projects.get(str(key))
        if isinstance(entry, dict) and isinstance(entry.get("trust_level"), str):
            return str(entry["trust_level"])
    return None


def trust_step(scope: Scope) -> str | None:
    """What the person must do before Codex reads the project's `.codex/config.toml`."""
    if scope.is_global or project_trust(scope) == TRUSTED:
        return None
    user_config = codex_home(scope) / "config.toml"
    return (
        "Codex reads .codex/config.toml only in a trusted project: run `codex` in "
        f"{scope.base} and choose to trust it, or add "
        f'`[projects.{json.dumps(str(scope.base))}]` with `trust_level = "trusted"` '
        f"to {user_config}"
    )


def effective_commit_mode(detail: dict) -> str | None:
    """engram_commit's approval mode as Codex applies it: its own, else the server default."""
    return detail.get("approval_mode") or detail.get("default_tools_approval_mode")


def targets(scope: Scope) -> list[Target]:
    home = codex_home(scope)
    instructions = home / "AGENTS.md" if scope.is_global else scope.base / "AGENTS.md"
    out: list[Target] = [
        TomlServerBlock(config_path(scope), NAME, server_block(scope)),
        TextBlock(instructions, NAME, INSTRUCTIONS),
    ]
    if not scope.is_global:
        out.append(Notice(lambda: trust_step(scope)))
    return out
