"""Host findings: trust, stale pins, missing commands, missing pieces."""

from __future__ import annotations

import json

from engram.hosts import ops
from engram.hosts.doctor import host_findings


def codes(env):
    return {d.code for d in host_findings(env["project"])[0]}


def test_gemini_trust_is_a_warning(env):
    ops.run("link", ["gemini"], ops.resolve_scope(env["project"], global_=False))
    settings = env["project"] / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    data["mcpServers"]["engram"]["trust"] = True
    settings.write_text(json.dumps(data))
    found = host_findings(env["project"])[0]
    trust = [d for d in found if d.code == "host.gemini_trust"]
    assert trust and trust[0].level == "warning" and trust[0].path == ".gemini/settings.json"


def test_stale_pin_and_missing_command(env, monkeypatch):
    import engram

    monkeypatch.setattr(engram, "__version__", "0.0.9")
    ops.run("link", ["cursor"], ops.resolve_scope(env["project"], global_=False))
    monkeypatch.setattr(engram, "__version__", "0.1.0")
    assert {"host.version_stale", "host.command_missing"} <= codes(env)


def test_missing_instructions_and_unlinked_hosts_are_quiet(env):
    assert codes(env) == set()
    ops.run("link", ["claude"], ops.resolve_scope(env["project"], global_=False))
    (env["project"] / "CLAUDE.md").write_text("mine\n")
    assert "host.instructions_missing" in codes(env)


def test_always_load_with_user_level_hooks_is_a_warning(env):
    """R-INS-3: .mcp.json keeps --always-load only while no Engram Claude hook runs."""
    ops.run("link", ["claude"], ops.resolve_scope(env["project"], global_=False, hooks=False))
    assert "host.always_load_with_hooks" not in codes(env)
    ops.run("link", ["claude"], ops.resolve_scope(None, global_=True))
    assert "host.always_load_with_hooks" in codes(env)


def test_R_APP_10_claude_allow_list_that_skips_the_commit_prompt_is_a_warning(env):
    """The human gate is Claude Code's permission prompt for engram_commit; an allow rule
    for it (or for every engram tool) removes that gate."""
    ops.run("link", ["claude"], ops.resolve_scope(env["project"], global_=False))
    local = env["project"] / ".claude" / "settings.local.json"
    local.write_text(
        json.dumps({"permissions": {"allow": ["Bash(npm test)", "mcp__engram__engram_load"]}})
    )
    assert "host.commit_allowed" not in codes(env)
    for rule in ("mcp__engram__engram_commit", "mcp__engram", "mcp__engram__*"):
        local.write_text(json.dumps({"permissions": {"allow": [rule]}}))
        found = [d for d in host_findings(env["project"])[0] if d.code == "host.commit_allowed"]
        assert found and found[0].level == "warning", rule
        assert found[0].path == ".claude/settings.local.json" and rule in found[0].message
