"""Claude Code: hooks by default, --always-load only without Engram hooks (R-INS-3)."""

from __future__ import annotations

import json

from engram.hosts import ops


def test_link_installs_hooks_and_no_always_load(env):
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["claude"], scope).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert "--always-load" not in entry["args"]
    settings = json.loads((env["project"] / ".claude" / "settings.json").read_text())
    commands = [h["command"] for g in settings["hooks"]["SessionStart"] for h in g["hooks"]]
    assert commands == [
        "uvx --from engram-workspace-memory==0.1.0 engram hook claude session-start"
    ]
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
    assert printed == [
        "run: claude mcp add --scope user engram -- uvx --from "
        "engram-workspace-memory==0.1.0 engram-mcp --always-load"
    ]
    with_hooks = ops.run("link", ["claude"], ops.resolve_scope(None, global_=True), plan=True)
    assert "--always-load" not in with_hooks.text
    assert not (env["home"] / ".claude.json").exists()  # Claude Code's own file is never written


def test_bare_command_when_engram_mcp_is_on_path(env, tmp_path, monkeypatch):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("engram-mcp", "engram"):
        exe = bin_dir / name
        exe.write_text("#!/bin/sh\n")
        exe.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert ops.run("link", ["claude"], ops.resolve_scope(env["project"], global_=False)).ok
    entry = json.loads((env["project"] / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry == {"command": "engram-mcp", "args": []}
    settings = (env["project"] / ".claude" / "settings.json").read_text()
    assert '"engram hook claude session-start"' in settings


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
