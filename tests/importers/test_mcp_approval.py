"""An import proposal is approved over MCP like a save: the real `engram-mcp` over stdio."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "mcp"))  # the shared stdio helpers

from mcp_wire import McpProcess, data_of, text_of

BIN = Path(sys.executable).parent
ROOT = Path(".agents/.engram")


def _engram(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "engram"), *argv], cwd=project, capture_output=True, text=True, timeout=60
    )


def _server(project: Path) -> McpProcess:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    srv = McpProcess([], project, env, command=[str(BIN / "engram-mcp"), "--no-elicitation"])
    srv.initialize("2025-11-25")
    return srv


def test_pending_import_proposal_is_committed_with_engram_commit(project: Path) -> None:
    (project / "AGENTS.md").write_text(
        "## Testing\n- Run `make test` before every push.\n\n## Release\n1. Bump the version.\n"
        "2. Tag the commit.\n\n## Stack\nWe use Postgres 16 for storage.\n"
    )
    proposed = _engram(project, "import", "--propose", "--json")
    assert proposed.returncode == 0, proposed.stderr
    data = json.loads(proposed.stdout)["data"]
    token = data["approval_token"]
    numbers = {c["title"]: c["number"] for c in data["candidates"]}
    stack = (
        "We use Postgres 16 for storage"  # one statement: its own title; a procedure: its heading
    )
    assert set(numbers) == {"Run make test before every push", "Release", stack}
    srv = _server(project)
    try:
        # the same tool, arguments and answer as for a save: approve some numbers
        picked = [numbers["Release"], numbers[stack]]
        done = srv.call("engram_commit", {"approval_token": token, "approve": picked})
        assert done["result"]["isError"] is False, text_of(done)
        written = sorted(w["file"] for w in data_of(done)["written"])
        assert written == ["knowledge/use-postgres-16-storage.md", "skills/release.md"]
        skill = (project / ROOT / "skills/release.md").read_text()
        assert "source: import" in skill and "imported_from: AGENTS.md:5-6" in skill
        assert not list((project / ROOT / "rules").glob("*make-test*"))
        again = srv.call("engram_commit", {"approval_token": token, "approve": "all"})
        assert again["result"]["isError"] is True  # single use, as for a save
        # a save proposed over MCP goes the same way
        save = srv.call("engram_save", {"text": "Never force-push to main."})
        save_token = data_of(save)["approval_token"]
        saved = srv.call("engram_commit", {"approval_token": save_token, "approve": "all"})
        assert saved["result"]["isError"] is False
        # what was approved is loaded for a task over MCP, and the rest stays proposable
        loaded = text_of(srv.call("engram_load", {"query": "tag and bump a release"}))
        assert "Bump the version" in loaded
    finally:
        srv.close()
    rest = _engram(project, "import", "--dry-run")
    assert "make test" in rest.stdout and "Bump the version" not in rest.stdout
    assert re.search(r"AGENTS\.md \(agents\): 1 rule, 2 already in memory", rest.stdout)
