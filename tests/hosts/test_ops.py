"""link / relink / unlink / upgrade for every host in both scopes, against realistic files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.hosts import HOSTS, ops
from engram.hosts.base import GLOBAL, WORKSPACE, make_scope

from .conftest import HOME_FILES, WORKSPACE_FILES, dirs, snapshot, write_tree

CASES = [(h, s) for h in HOSTS for s in (WORKSPACE, GLOBAL)]


def scope_for(env: dict[str, Path], kind: str, **kw):
    return ops.resolve_scope(env["project"], global_=kind == GLOBAL, **kw)


@pytest.fixture
def user_files(env):
    write_tree(env["project"], WORKSPACE_FILES)
    write_tree(env["home"], HOME_FILES)
    return env


@pytest.mark.parametrize(("host", "kind"), CASES)
def test_link_then_unlink_restores_every_byte(user_files, host, kind):
    env = user_files
    before, before_dirs = snapshot(env["project"], env["home"]), dirs(env["project"], env["home"])
    linked = ops.run("link", [host], scope_for(env, kind))
    assert linked.ok, linked.text
    assert snapshot(env["project"], env["home"]) != before
    relinked = ops.run("link", [host], scope_for(env, kind))
    assert relinked.ok
    assert {c["action"] for c in relinked.data["changes"]} <= {"unchanged", "skip", "print"}
    unlinked = ops.run("unlink", [host], scope_for(env, kind))
    assert unlinked.ok, unlinked.text
    assert snapshot(env["project"], env["home"]) == before
    assert dirs(env["project"], env["home"]) == before_dirs


@pytest.mark.parametrize(("host", "kind"), CASES)
def test_link_changes_files_and_keeps_other_entries(user_files, host, kind):
    env = user_files
    before = snapshot(env["project"], env["home"])
    result = ops.run("link", [host], scope_for(env, kind))
    after = snapshot(env["project"], env["home"])
    changed = {k for k in after if before.get(k) != after[k]}
    assert changed, result.text
    for name in changed & set(before):
        old, new = before[name].decode(), after[name].decode()
        if name.endswith((".json", ".jsonc")):
            from engram.hosts.files import JsonDoc

            old_v, new_v = JsonDoc(old).value, JsonDoc(new).value
            for key, value in old_v.items():  # every user key survives, values untouched
                if isinstance(value, dict):
                    assert all(new_v[key][k] == v for k, v in value.items())
                else:
                    assert new_v[key] == value
        else:
            assert new.startswith(old.rstrip("\n")) or old in new


@pytest.mark.parametrize(("host", "kind"), CASES)
def test_plan_writes_nothing_and_shows_a_diff(user_files, host, kind):
    env = user_files
    before = snapshot(env["project"], env["home"])
    result = ops.run("link", [host], scope_for(env, kind), plan=True)
    assert snapshot(env["project"], env["home"]) == before
    assert "+++ " in result.data["diff"]
    assert "engram" in result.data["diff"]


@pytest.mark.parametrize(("host", "kind"), CASES)
def test_upgrade_repins_an_old_release_and_is_idempotent(user_files, host, kind, monkeypatch):
    import engram

    env = user_files
    monkeypatch.setattr(engram, "__version__", "0.0.1")
    ops.run("link", [host], scope_for(env, kind))
    old = snapshot(env["project"], env["home"])
    pins_something = not (kind == WORKSPACE and host in ("antigravity", "windsurf", "codex"))
    assert any(b"==0.0.1" in v for v in old.values()) == pins_something
    monkeypatch.setattr(engram, "__version__", "0.2.0")
    scope = make_scope(scope_for(env, kind).kind, scope_for(env, kind).base, hooks=False)
    first = ops.run("upgrade", list(HOSTS), scope)
    assert first.ok, first.text
    now = snapshot(env["project"], env["home"])
    assert not any(b"==0.0.1" in v for v in now.values())
    second = ops.run("upgrade", list(HOSTS), scope)
    assert snapshot(env["project"], env["home"]) == now
    assert {c["action"] for c in second.data["changes"]} <= {"unchanged", "skip", "print"}


def test_upgrade_touches_nothing_when_nothing_is_linked(user_files):
    before = snapshot(user_files["project"], user_files["home"])
    result = ops.run("upgrade", list(HOSTS), scope_for(user_files, WORKSPACE, hooks=False))
    assert result.data["changes"] == []
    assert "nothing is linked in the workspace scope" in result.text
    assert snapshot(user_files["project"], user_files["home"]) == before


def test_link_all_then_unlink_all_in_both_scopes(user_files):
    env = user_files
    before = snapshot(env["project"], env["home"])
    for kind in (WORKSPACE, GLOBAL):
        assert ops.run("link", ops.host_names(["all"]), scope_for(env, kind)).ok
    listed = ops.list_links(env["project"]).data["links"]
    assert {(r["host"], r["scope"]) for r in listed} >= {(h, WORKSPACE) for h in HOSTS}
    for kind in (WORKSPACE, GLOBAL):
        assert ops.run("unlink", list(HOSTS), scope_for(env, kind)).ok
    assert snapshot(env["project"], env["home"]) == before
    assert ops.list_links(env["project"]).data["links"] == []


def test_unparsable_file_is_reported_and_left_alone(env):
    bad = env["project"] / ".mcp.json"
    bad.write_text('{"mcpServers": {,}', encoding="utf-8")
    result = ops.run("link", ["claude"], scope_for(env, WORKSPACE))
    assert not result.ok
    assert bad.read_text(encoding="utf-8") == '{"mcpServers": {,}'
    assert any(d.code == "host.config_invalid" for d in result.diagnostics)
    assert (env["project"] / "CLAUDE.md").exists()  # the other targets still apply


def test_foreign_engram_entry_needs_force(env):
    mcp = env["project"] / ".mcp.json"
    mcp.write_text('{"mcpServers": {"engram": {"command": "my-engram"}}}\n', encoding="utf-8")
    result = ops.run("link", ["claude"], scope_for(env, WORKSPACE))
    assert not result.ok and any(d.code == "host.entry_conflict" for d in result.diagnostics)
    assert json.loads(mcp.read_text())["mcpServers"]["engram"] == {"command": "my-engram"}
    assert ops.run("unlink", ["claude"], scope_for(env, WORKSPACE)).ok
    assert json.loads(mcp.read_text())["mcpServers"]["engram"] == {"command": "my-engram"}
    forced = ops.run("link", ["claude"], scope_for(env, WORKSPACE), force=True)
    assert forced.ok
    assert "engram-mcp" in json.loads(mcp.read_text())["mcpServers"]["engram"]["args"]


def test_relink_repins_but_keeps_keys_a_person_added(env):
    ops.run("link", ["gemini"], scope_for(env, WORKSPACE))
    settings = env["project"] / ".gemini" / "settings.json"
    data = json.loads(settings.read_text())
    data["mcpServers"]["engram"]["env"] = {"LOG": "1"}
    data["mcpServers"]["engram"]["command"] = "old-engram-mcp"
    data["mcpServers"]["engram"]["args"] = ["engram-mcp"]
    settings.write_text(json.dumps(data, indent=2))
    assert ops.run("link", ["gemini"], scope_for(env, WORKSPACE)).ok
    entry = json.loads(settings.read_text())["mcpServers"]["engram"]
    assert entry["env"] == {"LOG": "1"} and entry["command"] == "uvx"


@pytest.mark.parametrize(
    ("host", "file", "keys", "options"),
    [
        ("claude", ".mcp.json", ("mcpServers", "engram"), "args"),
        ("cursor", ".cursor/mcp.json", ("mcpServers", "engram"), "args"),
        ("opencode", "opencode.json", ("mcp", "engram"), "command"),
    ],
)
def test_R_INS_5_relink_and_upgrade_keep_the_server_options_a_person_added(
    env, host, file, keys, options
):
    """Re-pinning changes Engram's command, never a person's `--no-elicitation`."""
    scope = scope_for(env, WORKSPACE)
    assert ops.run("link", [host], scope).ok
    path = env["project"] / file
    data = json.loads(path.read_text())
    entry = data[keys[0]][keys[1]]
    entry[options] = [*entry[options], "--no-elicitation"]
    if options == "args":
        entry["args"] = ["--from", "engram-workspace-memory==0.0.9", *entry["args"][2:]]
    path.write_text(json.dumps(data, indent=2))
    for action in ("link", "upgrade"):
        result = ops.run(action, [host], scope)
        assert result.ok, result.text
        entry = json.loads(path.read_text())[keys[0]][keys[1]]
        command = [*entry["command"], *entry["args"]] if host == "opencode" else entry["args"]
        assert "engram-workspace-memory==0.1.0" in command, command
        assert command.count("--no-elicitation") == 1, command
    assert ops.run("unlink", [host], scope).ok
    assert not path.exists()  # Engram created the file; the person's option went with it


def test_workspace_link_needs_a_workspace(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    from engram.core.errors import EngramError

    with pytest.raises(EngramError, match="engram init"):
        ops.resolve_scope(tmp_path, global_=False)


def test_unknown_host_names_the_known_ones():
    from engram.core.errors import UsageError

    with pytest.raises(UsageError, match="claude, codex"):
        ops.host_names(["vim"])
