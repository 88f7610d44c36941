"""Smoke run of the MCP Inspector CLI against the real server, in both eras.

The Inspector is a Node package; the suite never downloads it. It runs when it is already
available: `$ENGRAM_TEST_INSPECTOR` (the `mcp-inspector` executable), `mcp-inspector` on
PATH, or `npx --offline` finding it in the npm cache. Otherwise the test is skipped.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = "@modelcontextprotocol/inspector"


def inspector_command() -> list[str] | None:
    explicit = os.environ.get("ENGRAM_TEST_INSPECTOR")
    if explicit:
        return [explicit]
    found = shutil.which("mcp-inspector")
    if found:
        return [found]
    npx = shutil.which("npx")
    if npx is None:
        return None
    try:
        probe = subprocess.run(
            [npx, "--offline", "--yes", PACKAGE, "--help"], capture_output=True, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return [npx, "--offline", "--yes", PACKAGE] if probe.returncode == 0 else None


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    cmd = inspector_command()
    if cmd is None:
        pytest.skip(
            f"MCP Inspector CLI not available offline ({PACKAGE}); the suite does not download "
            "it. Set ENGRAM_TEST_INSPECTOR to an installed mcp-inspector to run this smoke test."
        )
    return cmd


@pytest.mark.parametrize("era", ["legacy", "modern"])
def test_inspector_cli_smoke(inspector, example_project: Path, tmp_path: Path, era: str):
    server_env = {
        "ENGRAM_WORKSPACE": str(example_project),
        "HOME": os.environ["HOME"],
        "ENGRAM_HOME": os.environ["ENGRAM_HOME"],
    }
    config = tmp_path / "inspector.json"
    entry = {"command": sys.executable, "args": ["-m", "engram.mcp.server"], "env": server_env}
    config.write_text(json.dumps({"mcpServers": {"engram": {**entry, "protocolEra": era}}}))
    env = {**os.environ, "MCP_INSPECTOR_SECRET_STORE": "memory"}

    def run(*args: str) -> dict:
        proc = subprocess.run(
            [*inspector, "--cli", "--config", str(config), "--server", "engram", *args],
            capture_output=True,
            timeout=120,
            env=env,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr.decode(errors="replace")
        return json.loads(proc.stdout)

    tools = run("--method", "tools/list")["tools"]
    assert len(tools) == 11
    loaded = run(
        "--method", "tools/call", "--tool-name", "engram_load", "--tool-arg", "query=cut a release"
    )
    assert "run-tests-before-release" in loaded["content"][0]["text"]
    index = run("--method", "resources/read", "--uri", "engram://index")
    assert "release-process" in index["contents"][0]["text"]
    prompt = run("--method", "prompts/get", "--prompt-name", "propose")
    assert "engram_commit" in prompt["messages"][0]["content"]["text"]
