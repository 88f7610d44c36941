"""Host findings: trust, stale pins, missing commands, missing pieces."""

from __future__ import annotations

import json
import os
import sys

import pytest

from engram.hosts import ops
from engram.hosts.doctor import host_findings

from .conftest import SERVER, old_scope


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


def _errors(env) -> dict[str, str]:
    return {d.code: d.message for d in host_findings(env["project"])[0] if d.level == "error"}


def _set_command(env, command: str, args: list[str] | None = None) -> None:
    path = env["project"] / ".cursor" / "mcp.json"
    data = json.loads(path.read_text())
    data["mcpServers"]["engram"]["command"] = command
    if args is not None:
        data["mcpServers"]["engram"]["args"] = args
    path.write_text(json.dumps(data))


def test_a_registration_that_cannot_start_this_installation_is_an_error(env, tmp_path):
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["cursor"], scope).ok
    assert _errors(env) == {}  # the absolute path of this installation's engram-mcp starts
    assert ops.run("link", ["cursor"], old_scope(scope)).ok  # what an older release wrote
    errors = _errors(env)
    assert (
        "host.command_unavailable" in errors
        and "package index" in errors["host.command_unavailable"]
    )
    assert SERVER in errors["host.command_unavailable"]  # the fix names what to register
    _set_command(env, "engram-mcp", [])  # bare, and not on the (empty) PATH
    assert "not on PATH" in _errors(env)["host.command_missing"]
    _set_command(env, str(tmp_path / "gone" / "engram-mcp"))
    assert "does not exist" in _errors(env)["host.command_missing"]
    plain = tmp_path / "bin" / "engram-mcp"
    plain.parent.mkdir()
    plain.write_text("#!/bin/sh\n")
    _set_command(env, str(plain))
    assert "host.command_not_executable" in _errors(env)
    plain.write_text("#!/nowhere/venv/bin/python\nimport engram\n")
    plain.chmod(0o755)
    assert "/nowhere/venv/bin/python" in _errors(env)["host.command_broken"]
    plain.write_text("#!/bin/sh\nexec true\n")
    assert "another Engram installation" in _errors(env)["host.command_other_installation"]
    upgraded = ops.run("upgrade", ["cursor"], ops.resolve_scope(env["project"], global_=False))
    assert upgraded.ok and _errors(env) == {}


def test_doctor_exits_non_zero_when_a_host_cannot_start_the_server(env, monkeypatch):
    from engram.cli.main import main

    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["cursor"], old_scope(scope)).ok
    monkeypatch.chdir(env["project"])
    assert main(["doctor"]) == 1
    assert main(["upgrade"]) == 0
    assert main(["doctor"]) == 0


@pytest.mark.parametrize("host", ["claude", "gemini"])
def test_hook_commands_are_checked_too(env, host):
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", [host], old_scope(scope)).ok
    errors = [d for d in host_findings(env["project"])[0] if d.code == "host.command_unavailable"]
    assert any("hook command" in d.message for d in errors), errors


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


def _trust(env, rules: dict[str, str]) -> None:
    path = env["home"] / ".gemini" / "trustedFolders.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("// folders I trust\n" + json.dumps(rules), encoding="utf-8")


def test_gemini_untrusted_folder_is_said_on_link_and_found_by_doctor(env, monkeypatch):
    """Gemini CLI 0.61 disables every MCP server in a folder the person has not trusted;
    the rules are read the way Gemini reads them (longest matching path wins)."""
    from engram.hosts import gemini

    project = env["project"]
    scope = ops.resolve_scope(project, global_=False)
    result = ops.run("link", ["gemini"], scope)
    notes = [c["message"] for c in result.data["changes"] if c["action"] == "note"]
    assert len(notes) == 1 and "untrusted folders" in notes[0] and str(project) in notes[0]
    assert "host.gemini_folder_untrusted" in codes(env)
    cases = [
        ({str(project): "TRUST_FOLDER"}, True),
        ({str(project.parent): "TRUST_FOLDER"}, True),  # a trusted parent covers the project
        ({str(project / "x"): "TRUST_PARENT"}, True),  # TRUST_PARENT trusts the rule's parent
        ({str(project.parent): "TRUST_FOLDER", str(project): "DO_NOT_TRUST"}, False),
        ({str(project / "sub"): "TRUST_FOLDER"}, False),
        ({str(project): "BOGUS"}, False),
    ]
    for rules, trusted in cases:
        _trust(env, rules)
        assert gemini.folder_trusted(scope, project) is trusted, rules
        assert ("host.gemini_folder_untrusted" in codes(env)) is not trusted, rules
    _trust(env, {})
    monkeypatch.setenv("GEMINI_CLI_TRUST_WORKSPACE", "true")
    assert gemini.folder_trusted(scope, project)
    monkeypatch.delenv("GEMINI_CLI_TRUST_WORKSPACE")
    settings = env["home"] / ".gemini" / "settings.json"
    settings.write_text(json.dumps({"security": {"folderTrust": {"enabled": False}}}))
    assert "host.gemini_folder_untrusted" not in codes(env)
    assert "note" not in {c["action"] for c in ops.run("link", ["gemini"], scope).data["changes"]}


def test_gemini_global_link_is_checked_against_the_project_in_view(env):
    assert ops.run("link", ["gemini"], ops.resolve_scope(None, global_=True)).ok
    found = [
        d for d in host_findings(env["project"])[0] if d.code == "host.gemini_folder_untrusted"
    ]
    assert found and "gemini (global)" in found[0].message
    _trust(env, {str(env["project"]): "TRUST_FOLDER"})
    assert "host.gemini_folder_untrusted" not in codes(env)


def test_claude_pending_and_disabled_project_server_have_codes(env):
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["claude"], scope).ok
    assert "host.claude_approval_pending" in codes(env)
    state = {"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["engram"]}
    claude_json = env["home"] / ".claude.json"
    claude_json.write_text(json.dumps({"projects": {str(env["project"]): state}}))
    assert not codes(env) & {"host.claude_approval_pending", "host.claude_server_disabled"}
    state = {"hasTrustDialogAccepted": True, "disabledMcpjsonServers": ["engram"]}
    claude_json.write_text(json.dumps({"projects": {str(env["project"]): state}}))
    assert "host.claude_server_disabled" in codes(env)
    claude_json.write_text("{not json")  # unreadable state: assume the step is still to do
    assert "host.claude_approval_pending" in codes(env)


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="the suite runs outside a virtualenv")
def test_a_bare_command_found_only_through_the_activated_venv_is_a_warning(env, monkeypatch):
    """What an older link wrote in an activated venv: the host, started elsewhere, fails."""
    scope = ops.resolve_scope(env["project"], global_=False)
    assert ops.run("link", ["cursor"], scope).ok
    _set_command(env, "engram-mcp", [])
    monkeypatch.setenv("PATH", os.path.dirname(SERVER))  # this shell has the venv activated
    found = [
        d for d in host_findings(env["project"])[0] if d.code == "host.command_needs_activation"
    ]
    assert found and found[0].level == "warning" and SERVER in found[0].message
    assert ops.run("upgrade", ["cursor"], ops.resolve_scope(env["project"], global_=False)).ok
    assert "host.command_needs_activation" not in codes(env)
