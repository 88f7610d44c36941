"""End to end: what `engram link` registers starts a server that behaves as registered,
and what the server writes is what hooks and `doctor` read (R-INS-3/4, R-APP-7/8, R-NOTE-5)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from mcp_wire import McpProcess

BIN = Path(sys.executable).parent


@pytest.fixture
def env_path(monkeypatch) -> dict[str, str]:
    """PATH with the installed executables first, as in a shell where the venv is activated."""
    if not (BIN / "engram-mcp").exists():
        pytest.skip("the engram-mcp executable is not installed next to this Python")
    monkeypatch.setenv("PATH", f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}")
    return dict(os.environ)


def engram(
    *args: str, cwd: Path, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(BIN / "engram"), *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def start_registered(command: str, args: list[str], cwd: Path, env: dict[str, str]) -> McpProcess:
    """Launch a registration's command the way a host does (looked up on PATH)."""
    exe = shutil.which(command, path=env["PATH"])
    assert exe, f"{command} is not on PATH"
    proc = McpProcess([], cwd, env, command=[exe, *args])
    return proc


def tools_of(proc: McpProcess) -> dict[str, Any]:
    proc.initialize()
    tools = {t["name"]: t for t in proc.request("tools/list")["result"]["tools"]}
    proc.close()
    return tools


def test_R_INS_3_always_load_only_without_engram_hooks(example_project, env_path):
    linked = engram("link", "claude", "--no-hooks", cwd=example_project, env=env_path)
    assert linked.returncode == 0, linked.stderr
    entry = json.loads((example_project / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert entry["args"] == ["--always-load"]
    tools = tools_of(start_registered(entry["command"], entry["args"], example_project, env_path))
    assert tools["engram_load"]["_meta"]["anthropic/alwaysLoad"] is True
    relinked = engram("link", "claude", cwd=example_project, env=env_path)  # hooks installed now
    assert relinked.returncode == 0, relinked.stderr
    entry = json.loads((example_project / ".mcp.json").read_text())["mcpServers"]["engram"]
    assert "--always-load" not in entry["args"]
    tools = tools_of(start_registered(entry["command"], entry["args"], example_project, env_path))
    assert "anthropic/alwaysLoad" not in tools["engram_load"].get("_meta", {})


def test_R_INS_4_a_person_written_entry_changes_only_with_force(example_project, env_path):
    mine = {
        "mcpServers": {
            "engram": {"command": "my-engram", "args": ["--x"]},
            "other": {"command": "o"},
        }
    }
    path = example_project / ".mcp.json"
    path.write_text(json.dumps(mine, indent=2) + "\n")
    before = path.read_bytes()
    engram("link", "claude", "--no-hooks", cwd=example_project, env=env_path)
    assert path.read_bytes() == before
    forced = engram("link", "claude", "--no-hooks", "--force", cwd=example_project, env=env_path)
    assert forced.returncode == 0, forced.stderr
    servers = json.loads(path.read_text())["mcpServers"]
    # an activated venv is on this shell's PATH, not on the host's: the absolute path
    assert servers["engram"]["command"] == str(BIN / "engram-mcp")
    assert servers["other"] == {"command": "o"}


def test_R_APP_7_codex_block_asks_for_approval_of_commit(example_project, env_path):
    linked = engram("link", "codex", "--global", cwd=example_project, env=env_path)
    assert linked.returncode == 0, linked.stderr
    config = tomllib.loads((Path(env_path["HOME"]) / ".codex" / "config.toml").read_text())
    server = config["mcp_servers"]["engram"]
    # In Codex "approve" means pre-approved; "prompt" asks the human on every call.
    assert server["tools"]["engram_commit"]["approval_mode"] == "prompt"
    tools = tools_of(
        start_registered(server["command"], server.get("args", []), example_project, env_path)
    )
    assert tools["engram_commit"]["_meta"]["anthropic/requiresUserInteraction"] is True


def test_R_APP_8_doctor_warns_when_gemini_trusts_the_server(example_project, env_path):
    gemini = example_project / ".gemini"
    gemini.mkdir()
    (gemini / "settings.json").write_text(
        json.dumps({"mcpServers": {"engram": {"command": "engram-mcp", "trust": True}}})
    )
    report = engram("doctor", "--json", cwd=example_project, env=env_path)
    codes = {d["code"] for d in json.loads(report.stdout)["diagnostics"]}
    assert "host.gemini_trust" in codes
    (gemini / "settings.json").write_text(
        json.dumps({"mcpServers": {"engram": {"command": "engram-mcp"}}})
    )
    report = engram("doctor", "--json", cwd=example_project, env=env_path)
    assert "host.gemini_trust" not in {d["code"] for d in json.loads(report.stdout)["diagnostics"]}


def test_R_NOTE_5_session_start_shows_a_note_body_only_for_its_objective(
    mcp, example_project, env_path
):
    srv = mcp("--no-elicitation", cwd=example_project)
    srv.initialize()
    text = "Uploads over 2 GB time out on the staging proxy."
    prop = srv.call("engram_note", {"text": text, "objective": "fix the upload timeout"})
    token = prop["result"]["structuredContent"]["data"]["approval_token"]
    note = srv.call("engram_commit", {"approval_token": token, "approve": "all"})["result"][
        "structuredContent"
    ]["data"]
    event = json.dumps(
        {
            "session_id": "s1",
            "hook_event_name": "SessionStart",
            "source": "startup",
            "cwd": str(example_project),
        }
    )

    def context(objective: str) -> str:
        out = engram(
            "hook",
            "claude",
            "session-start",
            cwd=example_project,
            env={**env_path, "ENGRAM_SESSION_OBJECTIVE": objective},
            stdin=event,
        )
        assert out.returncode == 0
        return (
            json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
            if out.stdout.strip()
            else ""
        )

    body_marker = f"id: {note['id']}\n"  # a body starts with its reduced front matter
    matching = context("fix the upload timeout")
    assert body_marker in matching
    other = context("write the quarterly report")
    assert body_marker not in other
    assert f"`{note['id']}`" in other and "(working note)" in other  # a one-line card instead


@pytest.fixture
def bare_path(tmp_path: Path) -> dict[str, str]:
    """A host's environment where this installation's folder is NOT on PATH (a venv that was
    never activated for the host): only the system folders, HOME in a temporary folder."""
    if not (BIN / "engram-mcp").exists():
        pytest.skip("the engram-mcp executable is not installed next to this Python")
    home = tmp_path / "home"
    home.mkdir()
    system = os.pathsep.join(p for p in ("/usr/bin", "/bin") if Path(p).is_dir())
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "CODEX_", "GEMINI_", "CLAUDE_"))
    }
    return {**env, "PATH": system, "HOME": str(home), "ENGRAM_HOME": str(home / "eh")}


def test_registered_command_starts_this_installation_without_it_on_path(example_project, bare_path):
    """What `engram link` writes must start the server from a host whose PATH lacks the venv:
    every host's registration names this installation's engram-mcp by its absolute path."""
    assert shutil.which("engram-mcp", path=bare_path["PATH"]) is None
    linked = engram("link", "claude", "opencode", "codex", cwd=example_project, env=bare_path)
    assert linked.returncode == 0, linked.stderr
    claude_entry = json.loads((example_project / ".mcp.json").read_text())["mcpServers"]["engram"]
    opencode_entry = json.loads((example_project / "opencode.json").read_text())["mcp"]["engram"]
    codex_entry = tomllib.loads((example_project / ".codex" / "config.toml").read_text())[
        "mcp_servers"
    ]["engram"]
    assert "args" not in opencode_entry and opencode_entry["type"] == "local"
    commands = [
        [claude_entry["command"], *claude_entry["args"]],
        opencode_entry["command"],
        [codex_entry["command"], *codex_entry["args"]],
    ]
    for command in commands:
        assert Path(command[0]).is_absolute(), command
        proc = McpProcess([], example_project, bare_path, command=command)
        tools = tools_of(proc)
        assert "engram_commit" in tools
    report = engram("doctor", "--json", cwd=example_project, env=bare_path)
    assert report.returncode == 0, report.stdout
    codes = {d["code"] for d in json.loads(report.stdout)["diagnostics"]}
    assert not any(c.startswith("host.command") for c in codes), codes
    assert {"host.claude_approval_pending", "host.codex_project_untrusted"} <= codes
    # the venv this registration names is gone: doctor fails and says how to fix it
    claude_entry["command"] = str(example_project / "old-venv" / "bin" / "engram-mcp")
    (example_project / ".mcp.json").write_text(json.dumps({"mcpServers": {"engram": claude_entry}}))
    report = engram("doctor", cwd=example_project, env=bare_path)
    assert report.returncode == 1
    assert "host.command_missing" in report.stdout and "engram upgrade" in report.stdout
    assert engram("upgrade", cwd=example_project, env=bare_path).returncode == 0
    assert engram("doctor", cwd=example_project, env=bare_path).returncode == 0
