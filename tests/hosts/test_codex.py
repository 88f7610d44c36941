"""Codex: a managed TOML block with the engram_commit approval table (R-APP-7)."""

from __future__ import annotations

import pytest
import tomlkit

from engram.hosts import ops


def test_block_parses_and_carries_the_commit_approval(env):
    config = env["home"] / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('# mine\nmodel = "gpt-5"\n', encoding="utf-8")
    assert ops.run("link", ["codex"], ops.resolve_scope(None, global_=True)).ok
    data = tomlkit.parse(config.read_text())
    assert data["model"] == "gpt-5"
    server = data["mcp_servers"]["engram"]
    assert server["command"] == "uvx" and server["args"][-1] == "engram-mcp"
    assert server["tools"]["engram_commit"]["approval_mode"] == "approve"
    assert config.read_text().startswith('# mine\nmodel = "gpt-5"\n')


def test_codex_home_is_honoured(env, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert ops.run("link", ["codex"], ops.resolve_scope(None, global_=True)).ok
    assert (tmp_path / "codex-home" / "config.toml").exists()


def test_user_table_needs_force_and_invalid_toml_is_left_alone(env):
    config = env["home"] / ".codex" / "config.toml"
    config.parent.mkdir()
    config.write_text('[mcp_servers.engram]\ncommand = "mine"\n', encoding="utf-8")
    scope = ops.resolve_scope(None, global_=True)
    result = ops.run("link", ["codex"], scope)
    assert not result.ok and "--force" in result.text
    assert ops.run("link", ["codex"], scope, force=True).ok
    assert tomlkit.parse(config.read_text())["mcp_servers"]["engram"]["command"] == "uvx"
    config.write_text("[[broken", encoding="utf-8")
    assert not ops.run("link", ["codex"], scope).ok
    assert config.read_text() == "[[broken"


@pytest.mark.parametrize("host", ["codex", "windsurf", "antigravity"])
def test_workspace_registration_is_skipped_with_a_reason(env, host):
    result = ops.run("link", [host], ops.resolve_scope(env["project"], global_=False))
    skipped = [c for c in result.data["changes"] if c["action"] == "skip"]
    assert len(skipped) == 1 and "--global" in skipped[0]["message"]


def test_shared_agents_md_block_stays_until_the_last_host_unlinks(env):
    scope = ops.resolve_scope(env["project"], global_=False)
    ops.run("link", ["codex", "opencode"], scope)
    agents = env["project"] / "AGENTS.md"
    assert 'hosts="codex,opencode"' in agents.read_text()
    ops.run("unlink", ["codex"], scope)
    assert 'hosts="opencode"' in agents.read_text()
    ops.run("unlink", ["opencode"], scope)
    assert not agents.exists()


def test_R_INS_5_upgrade_keeps_no_elicitation_in_the_block(env):
    """A person who needs --no-elicitation adds it to the block; re-pinning keeps it."""
    config = env["home"] / ".codex" / "config.toml"
    scope = ops.resolve_scope(None, global_=True)
    assert ops.run("link", ["codex"], scope).ok
    text = config.read_text()
    config.write_text(
        text.replace('"engram-mcp"]', '"engram-mcp", "--no-elicitation"]').replace(
            "==0.1.0", "==0.0.9"
        )
    )
    for action in ("link", "upgrade"):
        assert ops.run(action, ["codex"], scope).ok
        args = tomlkit.parse(config.read_text())["mcp_servers"]["engram"]["args"]
        assert args[-2:] == ["engram-mcp", "--no-elicitation"], args
        assert "engram-workspace-memory==0.1.0" in args
    from engram.hosts.doctor import host_findings

    assert "host.outdated" not in {d.code for d in host_findings(None)[0]}


def test_inline_mcp_servers_table_is_explained_and_left_alone(env):
    """`mcp_servers = {…}` cannot take a [mcp_servers.engram] table: say so, touch nothing."""
    config = env["home"] / ".codex" / "config.toml"
    config.parent.mkdir()
    mine = 'model = "o3"\nmcp_servers = { docs = { command = "docs-server" } }\n'
    config.write_text(mine, encoding="utf-8")
    for force in (False, True):
        result = ops.run("link", ["codex"], ops.resolve_scope(None, global_=True), force=force)
        assert not result.ok
        assert "inline table" in result.text and "[mcp_servers.docs]" in result.text, result.text
        assert "not valid" not in result.text
        assert config.read_text(encoding="utf-8") == mine
