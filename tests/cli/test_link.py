"""`engram link / unlink / upgrade` through the CLI."""

from __future__ import annotations

import json

import pytest

from engram.cli.main import main


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "home" / "engram-home"))
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    (tmp_path / "home").mkdir()
    proj = tmp_path / "proj"
    proj.mkdir()
    monkeypatch.chdir(proj)
    assert main(["init"]) == 0
    return proj


def test_link_plan_list_unlink(project, capsys):
    capsys.readouterr()
    assert main(["link", "claude", "--plan"]) == 0
    out = capsys.readouterr().out
    assert "Plan only: nothing was written." in out and "+++ b/.mcp.json" in out
    assert not (project / ".mcp.json").exists()
    assert main(["link", "claude", "gemini", "--json"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env["ok"] and env["data"]["scope"] == "workspace"
    assert main(["link", "list", "--json"]) == 0
    links = json.loads(capsys.readouterr().out)["data"]["links"]
    assert [r["host"] for r in links] == ["claude", "gemini"]
    assert main(["unlink", "all"]) == 0
    assert not (project / ".mcp.json").exists() and not (project / ".gemini").exists()


def test_link_without_a_workspace_or_with_a_bad_host(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    assert main(["link", "claude"]) == 1
    assert "engram init" in capsys.readouterr().err
    assert main(["link", "vim", "--global"]) == 2  # UsageError names the known hosts
    assert "known hosts" in capsys.readouterr().err


def test_conflict_exits_1_and_force_replaces(project, capsys):
    (project / ".mcp.json").write_text('{"mcpServers": {"engram": {"command": "x"}}}')
    assert main(["link", "claude"]) == 1
    assert "--force" in capsys.readouterr().err
    assert main(["link", "claude", "--force"]) == 0


def test_upgrade_repins_both_scopes(project, monkeypatch, capsys):
    from engram.hosts import base

    old = ("uvx", "--from", "engram-workspace-memory==0.0.1", "engram-mcp")
    real = base.server_command
    monkeypatch.setattr(base, "server_command", lambda: old)
    assert main(["link", "windsurf", "--global"]) == 0
    assert main(["link", "cursor"]) == 0
    monkeypatch.setattr(base, "server_command", real)
    capsys.readouterr()
    assert main(["upgrade", "--plan"]) == 0
    assert "-" in capsys.readouterr().out
    assert main(["upgrade"]) == 0
    home = project.parent / "home"
    ours = json.dumps(str(base.installed_script("engram-mcp")))
    for path in (home / ".codeium/windsurf/mcp_config.json", project / ".cursor/mcp.json"):
        text = path.read_text()
        assert ours in text and "==0.0.1" not in text


def test_scope_flag_and_a_failed_link_writes_nothing(project, capsys):
    """`--scope workspace|global` names the scope; a conflict leaves every file untouched."""
    assert main(["link", "codex", "--scope", "workspace"]) == 0
    out = capsys.readouterr().out
    assert ".codex/config.toml" in out and "trusted project" in out
    assert main(["unlink", "codex", "--scope", "workspace"]) == 0
    assert not (project / ".codex").exists() and not (project / "AGENTS.md").exists()
    (project / ".mcp.json").write_text('{"mcpServers": {"engram": {"command": "x"}}}')
    capsys.readouterr()
    assert main(["link", "codex", "claude"]) == 1
    captured = capsys.readouterr()
    assert "Nothing was written" in captured.out + captured.err
    assert not (project / "AGENTS.md").exists() and not (project / ".codex").exists()
    with pytest.raises(SystemExit) as exited:
        main(["link", "codex", "--global", "--scope", "workspace"])
    assert exited.value.code == 2


@pytest.mark.parametrize(
    ("link", "host", "written"),
    [
        (".claude", "claude", ".claude/settings.json"),
        (".mcp.json", "claude", ".mcp.json"),
        (".gemini", "gemini", ".gemini/settings.json"),
        ("AGENTS.md", "codex", "AGENTS.md"),
    ],
)
def test_a_project_host_file_reached_through_a_link_is_never_written(
    project, tmp_path, capsys, link, host, written
):
    """A cloned repository may ship `.claude -> ~/somewhere`: link writes nothing through it."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "settings.json").write_text('{"mine": true}\n')
    (victim / ".mcp.json").write_text('{"mine": true}\n')
    (victim / "AGENTS.md").write_text("mine\n")
    before = {p.name: p.read_bytes() for p in victim.iterdir()}
    target = victim if "/" in written else victim / written
    (project / link).symlink_to(target)
    capsys.readouterr()
    assert main(["link", host]) == 1
    err = capsys.readouterr()
    assert "symbolic link" in err.out + err.err and "Traceback" not in err.out + err.err
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == before
    assert main(["unlink", host]) in (0, 1)
    assert {p.name: p.read_bytes() for p in victim.iterdir()} == before
