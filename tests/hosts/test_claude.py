"""Claude Code: hooks by default, --always-load only without Engram hooks (R-INS-3), and the
project-server approval Claude Code asks of the person."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from engram.hosts import claude, ops

from .conftest import ENGRAM, SERVER


def test_link_installs_hooks_and_no_always_load(env):
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["claude"], scope).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry == {"command": SERVER, "args": []}
    settings = json.loads((env["project"] / ".claude" / "settings.json").read_text())
    commands = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert commands == [f"{ENGRAM} hook claude session-start"]
    assert "UserPromptSubmit" in settings["hooks"]
    assert "permissions" not in settings  # never an allow-list entry for engram_commit


def test_no_hooks_adds_always_load_and_relink_with_hooks_removes_it(env):
    bare = ops.resolve_scope(env["project"], global_=False, hooks=False)
    assert ops.run("link", ["claude"], bare).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"][-1] == "--always-load"
    assert not (env["project"] / ".claude" / "settings.json").exists()
    assert ops.run("link", ["claude"], ops.resolve_scope(env["project"], global_=False)).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert "--always-load" not in entry["args"]


def test_global_prints_the_claude_mcp_add_command(env):
    scope = ops.resolve_scope(None, global_=True, hooks=False)
    result = ops.run("link", ["claude"], scope, plan=True)
    printed = [c["message"] for c in result.data["changes"] if c["action"] == "print"]
    assert printed == [f"run: claude mcp add --scope user engram -- {SERVER} --always-load"]
    with_hooks = ops.run("link", ["claude"], ops.resolve_scope(None, global_=True), plan=True)
    assert "--always-load" not in with_hooks.text
    assert not (env["home"] / ".claude.json").exists()  # Claude Code's own file is never written


def test_bare_command_only_when_path_finds_this_installation(env, tmp_path, monkeypatch):
    """Another installation's engram-mcp on PATH would start the wrong Engram (or none):
    the absolute path is registered; a PATH entry that is this installation gives the bare name."""
    other = tmp_path / "other-bin"
    other.mkdir()
    for name in ("engram-mcp", "engram"):
        exe = other / name
        exe.write_text("#!/bin/sh\nexit 1\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(other))
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["claude"], scope).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["command"] == SERVER
    ours = tmp_path / "our-bin"  # e.g. pipx's ~/.local/bin: links to this installation
    ours.mkdir()
    os.symlink(SERVER, ours / "engram-mcp")
    os.symlink(ENGRAM, ours / "engram")
    monkeypatch.setenv("PATH", str(ours))
    assert ops.run("link", ["claude"], ops.resolve_scope(env["project"], global_=False)).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry == {"command": "engram-mcp", "args": []}
    settings = (env["project"] / ".claude" / "settings.json").read_text()
    assert '"engram hook claude session-start"' in settings


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the suite runs outside a virtualenv")
def test_an_activated_venv_on_path_still_gives_the_absolute_path(env, monkeypatch):
    """`engram link` run in a shell with the venv activated: the host, started from a
    launcher or another terminal, will not have that venv on its PATH."""
    monkeypatch.setenv("PATH", str(Path(SERVER).parent))
    scope = ops.resolve_scope(env["project"], global_=False)
    assert scope.server == (SERVER,) and scope.engram == (ENGRAM,)


def test_R_INS_3_global_engram_hooks_count_for_a_workspace_link(env):
    """User-level Engram hooks already inject context in every project, so a workspace
    link without hooks must not add --always-load to .mcp.json either."""
    assert ops.run("link", ["claude"], ops.resolve_scope(None, global_=True)).ok
    bare = ops.resolve_scope(env["project"], global_=False, hooks=False)
    assert ops.run("link", ["claude"], bare).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert "--always-load" not in entry["args"]
    assert ops.run("unlink", ["claude"], ops.resolve_scope(None, global_=True)).ok
    assert ops.run("link", ["claude"], bare).ok  # the hooks are gone: always-load comes back
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"][-1] == "--always-load"


def _claude_json(env, project_entry: dict) -> None:
    data = {"numStartups": 2, "projects": {str(env["project"]): project_entry}}
    (env["home"] / ".claude.json").write_text(json.dumps(data))


def test_project_server_approval_is_said_on_link_and_read_from_claude_state(env):
    """Claude Code 2.1 runs a `.mcp.json` server only once the person approved it; link says
    so until Claude Code's own state (read, never written) shows it approved."""
    scope = ops.resolve_scope(env["project"], global_=False)
    result = ops.run("link", ["claude"], scope)
    notes = [c["message"] for c in result.data["changes"] if c["action"] == "note"]
    assert len(notes) == 1 and "pending approval" in notes[0] and "run `claude`" in notes[0]
    assert claude.mcpjson_state(scope) == claude.PENDING
    _claude_json(env, {"enabledMcpjsonServers": ["engram"]})  # not trusted yet: still pending
    assert claude.mcpjson_state(scope) == claude.PENDING
    _claude_json(env, {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["engram"]})
    assert claude.mcpjson_state(scope) == claude.APPROVED
    relinked = ops.run("link", ["claude"], scope)
    assert "note" not in {c["action"] for c in relinked.data["changes"]}
    _claude_json(env, {"hasTrustDialogAccepted": True, "enableAllProjectMcpServers": True})
    assert claude.mcpjson_state(scope) == claude.APPROVED
    local = env["project"] / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disabledMcpjsonServers": ["engram"]}))
    assert claude.mcpjson_state(scope) == claude.DISABLED
    local.write_text(json.dumps({"enabledMcpjsonServers": ["engram"]}))
    _claude_json(env, {"hasTrustDialogAccepted": True})
    assert claude.mcpjson_state(scope) == claude.APPROVED
    _claude_json(env, {})
    user = env["home"] / ".claude" / "settings.json"
    user.parent.mkdir(exist_ok=True)
    user.write_text(json.dumps({"enableAllProjectMcpServers": True}))
    assert claude.mcpjson_state(scope) == claude.APPROVED
