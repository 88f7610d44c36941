"""The real `engram-mcp` process: agents never get the shell form of an approval, and a
cloned repository's committed links never make a tool read or write outside the memory root.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp_wire import McpProcess, data_of, text_of

ROOT = Path(".agents") / ".engram"
MARKER = "LEAKED-MARKER-91c2"
VICTIM = b"victim file outside every memory root\n"
SHELL_FORM = re.compile(r"engram\s+commit\b")


def installed(name: str) -> str:
    here = Path(sys.executable).parent / name
    found = str(here) if here.exists() else shutil.which(name)
    assert found, f"{name} is not installed"
    return found


def start(cwd: Path) -> McpProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = McpProcess([], cwd, env, command=[installed("engram-mcp")])
    proc.initialize("2025-11-25")
    return proc


def close(proc: McpProcess) -> str:
    code, stderr = proc.close()
    assert code == 0 and "Traceback" not in stderr, stderr
    return stderr


SAVES = (
    ("engram_save", {"type": "rule", "text": "Pin third-party CI actions to a commit hash."}),
    (
        "engram_save_session",
        {
            "text": "TYPE: knowledge | TEXT: The staging database is reset every Monday.\n"
            "TYPE: rule | TEXT: Run the linter before every push."
        },
    ),
    ("engram_note", {"text": "The flaky test is test_sync", "objective": "fix the sync bug"}),
)


@pytest.mark.parametrize(("tool", "args"), SAVES, ids=[s[0] for s in SAVES])
def test_save_results_never_hand_the_agent_the_shell_form(example_project, tool, args) -> None:
    srv = start(example_project)
    try:
        resp = srv.call(tool, args)
        assert resp["result"]["isError"] is False, text_of(resp)
        token = data_of(resp)["approval_token"]
        whole = json.dumps(resp)
        assert token in text_of(resp) and "engram_commit" in text_of(resp)
        assert not SHELL_FORM.search(whole), text_of(resp)
        done = srv.call("engram_commit", {"approval_token": token, "approve": "all"})
        assert done["result"]["isError"] is False, text_of(done)
    finally:
        close(srv)


@pytest.mark.parametrize(
    "answer",
    [{"result": {"action": "cancel"}}, {"error": {"code": -32603, "message": "dialog broke"}}],
    ids=["cancel", "client-error"],
)
def test_a_dialog_that_falls_back_gives_no_shell_form_either(example_project, answer) -> None:
    """Cancelled or malformed approval dialogs hand the token back: still no shell command."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    srv = McpProcess([], example_project, env, command=[installed("engram-mcp")])
    try:
        srv.initialize("2025-11-25", {"elicitation": {"form": {}}})
        rid = srv.next_id()
        srv.send(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": "tools/call",
                "params": {"name": "engram_save", "arguments": {"text": "Pin CI actions."}},
            }
        )
        ask = srv.recv()
        assert ask.get("method") == "elicitation/create", ask
        assert not SHELL_FORM.search(json.dumps(ask))
        srv.send({"jsonrpc": "2.0", "id": ask["id"], **answer})
        done = srv.wait_for(rid)
        assert "nothing was saved" in text_of(done).lower()
        assert not SHELL_FORM.search(json.dumps(done)), text_of(done)
    finally:
        close(srv)


def test_the_terminal_preview_keeps_the_shell_form(example_project) -> None:
    """`engram save --propose` is read by a person at a terminal: it may show the command."""
    proc = subprocess.run(
        [installed("engram"), "save", "rule", "Pin CI actions to a commit hash.", "--propose"],
        cwd=example_project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    token = re.search(r"Approval token: (\S+)", proc.stdout).group(1)
    assert f"engram commit {token} --approve all" in proc.stdout


# ---------------------------------------------------------------- hostile clones

LEAK_MEMORY = f"""---
schema_version: 3
id: leak
type: rule
triggers: [release]
---

# Release {MARKER}

## Content

- Release {MARKER}.
"""

CASES = {
    "hook-log": "cache/hook.log",
    "cache-folder": "cache",
    "index": "cache/index.sqlite",
    "lock": "cache/write.lock",
    "pending": "pending-approvals.json",
    "manifest": "hashes.json",
    "config": "config.json",
    "rules-folder": "rules",
    "memory-file": "rules/leak.md",
    "working-folder": "working",
}


def git(*args: str, cwd: Path) -> None:
    subprocess.run(
        ["git", "-c", "user.email=dev@example.com", "-c", "user.name=dev", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def hostile_clone(tmp: Path, rel: str, outside: Path) -> Path:
    from engram.core import api

    src = tmp / "upstream"
    src.mkdir()
    git("init", "-q", cwd=src)
    api.init(src, example=True)
    link = src / ROOT / rel
    if link.is_dir():
        shutil.rmtree(link)
    elif link.exists():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    if rel.endswith(".md"):
        target = outside / "notes" / "leak.md"  # a memory file that would load if followed
    elif "." in rel.rsplit("/", 1)[-1]:
        target = outside / "secret.txt"
    else:
        target = outside / "notes"  # a folder
    os.symlink(target, link)
    git("add", "-f", ".", cwd=src)
    git("commit", "-qm", "ship a link", cwd=src)
    dest = tmp / "clone"
    git("clone", "-q", str(src), str(dest), cwd=tmp)
    assert (dest / ROOT / rel).is_symlink()
    return dest


def snapshot(folder: Path) -> dict[str, bytes | None]:
    return {
        str(p.relative_to(folder)): None if p.is_dir() else p.read_bytes()
        for p in sorted(folder.rglob("*"))
    }


@pytest.mark.parametrize("case", sorted(CASES))
def test_tools_in_a_clone_that_ships_a_link(tmp_path: Path, case: str) -> None:
    outside = tmp_path / "outside"
    (outside / "notes").mkdir(parents=True)
    (outside / "secret.txt").write_bytes(VICTIM)
    (outside / "notes" / "leak.md").write_text(LEAK_MEMORY, encoding="utf-8")
    project = hostile_clone(tmp_path, CASES[case], outside)
    before = snapshot(outside)

    srv = start(project)
    try:
        replies = [
            srv.call("engram_load", {"query": "prepare the release"}),
            srv.call("engram_search", {"query": "release"}),
            srv.call("engram_status"),
        ]
        saved = srv.call(
            "engram_save", {"type": "rule", "text": "Indent Makefile recipes with tabs."}
        )
        replies.append(saved)
        if not saved["result"]["isError"]:
            token = data_of(saved)["approval_token"]
            replies.append(srv.call("engram_commit", {"approval_token": token, "approve": "all"}))
        verify = srv.call("engram_verify")
        replies.append(verify)
        for reply in replies:
            assert "result" in reply, reply  # a tool answer, never a protocol failure
            assert MARKER not in json.dumps(reply)
            if reply["result"]["isError"]:
                assert "symbolic link" in text_of(reply), text_of(reply)
        assert "symbolic link" in text_of(verify)
    finally:
        close(srv)
    assert snapshot(outside) == before
    assert (outside / "secret.txt").read_bytes() == VICTIM

    (project / ROOT / CASES[case]).unlink()
    srv = start(project)
    try:
        saved = srv.call(
            "engram_save", {"type": "rule", "text": "Indent Makefile recipes with tabs."}
        )
        assert saved["result"]["isError"] is False, text_of(saved)
        token = data_of(saved)["approval_token"]
        done = srv.call("engram_commit", {"approval_token": token, "approve": "all"})
        assert done["result"]["isError"] is False, text_of(done)
    finally:
        close(srv)
    assert snapshot(outside) == before
