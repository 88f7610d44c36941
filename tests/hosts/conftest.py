"""Realistic pre-existing user configurations for every host, in a temporary HOME."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.hosts.base import installed_script

# What a link registers when this installation's scripts are not on PATH (the env fixture).
SERVER = str(installed_script("engram-mcp"))
ENGRAM = str(installed_script("engram"))
# A registration an older Engram wrote: the runner form of a release the index does not have.
OLD_SERVER = ("uvx", "--from", "engram-workspace-memory==0.0.1", "engram-mcp")
OLD_ENGRAM = ("uvx", "--from", "engram-workspace-memory==0.0.1", "engram")

# Files a person already has: other servers, comments, trailing commas, odd indentation.
WORKSPACE_FILES = {
    ".mcp.json": '{\n    "mcpServers": {\n        "github": {\n            "command": "npx",\n            "args": ["-y", "@modelcontextprotocol/server-github"]\n        }\n    }\n}\n',
    ".claude/settings.json": '{\n  "permissions": {\n    "allow": ["Bash(npm test)"]\n  },\n  "hooks": {\n    "PostToolUse": [\n      {"matcher": "Write", "hooks": [{"type": "command", "command": "prettier --write"}]}\n    ]\n  }\n}\n',
    "CLAUDE.md": "# Project notes\n\nUse pnpm, not npm.",
    "AGENTS.md": "# Agents\n\n- Keep PRs small.\n",
    ".gemini/settings.json": '{\n\t"theme": "Dracula",\n\t"mcpServers": {}\n}\n',
    ".cursor/mcp.json": '{"mcpServers": {"linear": {"url": "https://mcp.linear.app/sse"}}}',
    "opencode.jsonc": '{\n  "$schema": "https://opencode.ai/config.json",\n  // my local tools\n  "mcp": {\n    "everything": {\n      "type": "local",\n      "command": ["npx", "-y", "@modelcontextprotocol/server-everything"],\n    },\n  },\n}\n',
}
HOME_FILES = {
    ".claude/settings.json": '{\r\n  "model": "opus"\r\n}\r\n',
    ".claude.json": '{"numStartups": 3}\n',
    ".codex/config.toml": '# my Codex settings\nmodel = "gpt-5"  # fast\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--port", "3000"]\n',
    ".gemini/settings.json": '{\n  "selectedAuthType": "gemini-api-key",\n  "mcpServers": {\n    "git": {"command": "uvx", "args": ["mcp-server-git"]}\n  }\n}',
    ".gemini/GEMINI.md": "Always answer in English.\n",
    ".config/opencode/opencode.json": '{\n  "theme": "opencode"\n}\n',
    ".codeium/windsurf/mcp_config.json": '{\n  "mcpServers": {\n    "ollama": {"command": "py", "args": ["-m", "mcp_ollama"], "disabled": false, "env": {}}\n  }\n}\n',
}


def write_tree(base: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = base / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def snapshot(*bases: Path) -> dict[str, bytes]:
    """Every file under the bases except Engram's own workspace and state folders."""
    out = {}
    for base in bases:
        for p in sorted(base.rglob("*")):
            if p.is_file() and ".engram" not in p.parts and "engram-home" not in p.parts:
                out[str(p.relative_to(base.parent))] = p.read_bytes()
    return out


def dirs(*bases: Path) -> set[str]:
    return {
        str(p.relative_to(b.parent))
        for b in bases
        for p in b.rglob("*")
        if p.is_dir() and ".engram" not in p.parts and "engram-home" not in p.parts
    }


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("ENGRAM_HOME", str(home / "engram-home"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    monkeypatch.delenv("ENGRAM_WORKSPACE", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "empty-bin"))  # not on PATH: absolute paths
    for var in ("CLAUDE_CONFIG_DIR", "GEMINI_CLI_HOME", "GEMINI_CLI_TRUSTED_FOLDERS_PATH"):
        monkeypatch.delenv(var, raising=False)
    for var in ("GEMINI_CLI_TRUST_WORKSPACE", "GEMINI_RESTRICTED_MODE"):
        monkeypatch.delenv(var, raising=False)
    from engram.core import api

    api.init(project)
    return {"home": home, "project": project}


def old_scope(scope):
    """The same scope as an older Engram saw it (the runner-form commands it registered)."""
    from dataclasses import replace

    return replace(scope, server=OLD_SERVER, engram=OLD_ENGRAM)
