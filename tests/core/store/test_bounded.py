"""Bounded reads (`engram.core.store.bounded`), and hostile files where Engram keeps state or a
host keeps its settings, driven through the installed executables in a temporary HOME.

A FIFO or a sparse gigabyte file as `AGENTS.md` or `cache/pointers.json`, or a committed
`config.json` / `hashes.json` / `pending-approvals.json` of 100,000 nested brackets: every
command returns within seconds with one clear line naming the file, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.core.store import bounded
from tests.mcp.mcp_wire import McpProcess

BIN = Path(sys.executable).parent
TIMEOUT_S = 30  # a failure condition, not a timing measurement
DEEP = "[" * 100_000 + "]" * 100_000
# the commands that must name the broken file (the others go on without it)
NAMED_BY = {"config.json": ("load", "status", "doctor"), "hashes.json": ("doctor", "verify")}


def run(tmp_path: Path, project: Path, *args: str, stdin: str = "") -> tuple[int, str, float]:
    env = {**os.environ, "HOME": str(tmp_path / "home"), "ENGRAM_HOME": str(tmp_path / "eh")}
    start = time.monotonic()
    done = subprocess.run(
        [str(BIN / "engram"), *args],
        cwd=project,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )
    out = done.stdout + done.stderr
    assert "Traceback" not in out and "RecursionError" not in out, out[-3000:]
    return done.returncode, out, time.monotonic() - start


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    project = tmp_path / "project"
    project.mkdir()
    assert run(tmp_path, project, "init", "--example")[0] == 0
    return project


def test_parse_json_limits_depth_and_names_the_file() -> None:
    assert bounded.parse_json('{"a": [[1]]}', "x.json") == {"a": [[1]]}
    for text in (DEEP, "[" * 65 + "]" * 65):
        with pytest.raises(bounded.BadFileError, match=r"x\.json nests JSON deeper than 64"):
            bounded.parse_json(text, "x.json")
    with pytest.raises(bounded.BadFileError, match=r"x\.json is not valid JSON"):
        bounded.parse_json("{", "x.json")


def test_read_plain_refuses_fifos_and_large_files(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(bounded.BadFileError, match="not a regular file"):
        bounded.read_plain(fifo)
    sparse = tmp_path / "sparse"
    with open(sparse, "wb") as fh:
        fh.truncate(1 << 30)
    with pytest.raises(bounded.BadFileError, match="1024 MiB, larger than the 16 MiB"):
        bounded.read_plain(sparse)


@pytest.mark.parametrize("kind", ["fifo", "sparse"])
def test_a_hostile_agents_md_never_hangs_doctor_or_link(
    tmp_path: Path, workspace: Path, kind: str
) -> None:
    assert run(tmp_path, workspace, "link", "codex")[0] == 0
    agents = workspace / "AGENTS.md"
    agents.unlink()
    if kind == "fifo":
        os.mkfifo(agents)
    else:
        with open(agents, "wb") as fh:
            fh.truncate(1 << 30)
    code, out, took = run(tmp_path, workspace, "doctor")
    assert took < 10 and "AGENTS.md" in out, out
    assert "regular file" in out or "larger than" in out, out
    code, out, took = run(tmp_path, workspace, "link", "codex")
    assert code != 0 and took < 10 and "AGENTS.md" in out, out
    code, out, took = run(tmp_path, workspace, "import", "--dry-run")
    assert took < 10, out


@pytest.mark.parametrize("kind", ["fifo", "deep"])
def test_a_hostile_pointer_record_never_hangs_restore(
    tmp_path: Path, workspace: Path, kind: str
) -> None:
    state = workspace / ".agents" / ".engram" / "cache" / "pointers.json"
    state.parent.mkdir(exist_ok=True)
    if kind == "fifo":
        os.mkfifo(state)
    else:
        state.write_text(DEEP)
    _code, out, took = run(tmp_path, workspace, "import", "--restore")
    assert took < 10, out
    assert "nothing to restore" in out.lower() or "no " in out.lower(), out


@pytest.mark.parametrize(
    "name", ["config.json", "hashes.json", "pending-approvals.json", "cache/hook-state.json"]
)
def test_deeply_nested_state_files_get_one_clear_line(
    tmp_path: Path, workspace: Path, name: str
) -> None:
    path = workspace / ".agents" / ".engram" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(DEEP)
    for args in (
        ["load", "cut a release"],
        ["status"],
        ["doctor"],
        ["verify"],
        ["save", "rule", "Run the linter before every push", "--propose"],
        ["pending"],
    ):
        code, out, took = run(tmp_path, workspace, *args)
        assert took < 15, (args, took)
        if args[0] in NAMED_BY.get(name, ()):
            assert name in out and "deeper than 64" in out, (args, out)
    payload = json.dumps({"session_id": "s", "cwd": str(workspace), "prompt": "cut a release"})
    code, out, _ = run(tmp_path, workspace, "hook", "claude", "user-prompt-submit", stdin=payload)
    assert code == 0


def test_the_mcp_server_names_a_deep_config_and_keeps_running(
    tmp_path: Path, workspace: Path
) -> None:
    (workspace / ".agents" / ".engram" / "config.json").write_text(DEEP)
    env = {**os.environ, "HOME": str(tmp_path / "home"), "ENGRAM_HOME": str(tmp_path / "eh")}
    server = McpProcess([], workspace, env, command=[str(BIN / "engram-mcp")])
    server.initialize()
    answer = server.call("engram_load", {"query": "cut a release"})
    text = json.dumps(answer)
    assert "config.json" in text and "deeper than 64" in text, text
    assert "result" in server.call("engram_verify", {})  # still answering
    _, stderr = server.close()
    assert "Traceback" not in stderr
