"""The issue's "done when": a real-looking project with four hosts' files, imported with the
installed `engram`, approved, then answering the tasks those files covered; a second import
proposes nothing, and the files are unchanged."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ENGRAM = Path(sys.executable).with_name("engram")
FIXTURE = Path(__file__).parent / "fixtures" / "four_hosts"

TASKS = {  # a task → text that the routed load must bring, from the file that covered it
    "add a database migration for a new column": "alembic revision --autogenerate",
    "cut a release and publish it": "Tag the commit `vX.Y.Z`",
    "store an invoice amount in the billing service": "integer cents",
    "write a React component for the dashboard": "function components with hooks",
    "where do secrets come from": "Vault",
    "write a regression test for a bug fix": "regression test that fails before the fix",
}


def _run(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_GLOBAL_DIR"}
    return subprocess.run(
        [str(ENGRAM), *argv], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )


@pytest.fixture
def four_hosts(tmp_path: Path) -> Path:
    project = tmp_path / "tidewater"
    shutil.copytree(FIXTURE, project)
    (project / ".git").mkdir()
    assert _run(project, "init").returncode == 0
    return project


def test_import_approve_route_and_import_again(four_hosts: Path) -> None:
    before = {
        p: p.read_bytes()
        for p in four_hosts.rglob("*")
        if p.is_file() and ".agents" not in p.relative_to(four_hosts).parts
    }
    proposed = _run(four_hosts, "import", "--propose")
    assert proposed.returncode == 0, proposed.stderr
    summary = proposed.stdout.split("\n\n")[0]
    for line in (
        "CLAUDE.md (claude): 2 skill, 1 knowledge",
        "AGENTS.md (agents): 3 rule, 1 knowledge",
        "services/billing/AGENTS.md (agents): 2 rule",
        ".cursor/rules/frontend.mdc (cursor): ",
        ".github/copilot-instructions.md (copilot): 3 rule",
        "docs/testing.md (imported): 3 rule",
    ):
        assert line in summary, summary
    assert "guidance to Claude Code" not in proposed.stdout  # the file's introduction
    token = re.search(r"eng1_[A-Za-z0-9_-]+", proposed.stdout).group()  # type: ignore[union-attr]
    committed = _run(four_hosts, "commit", token, "--approve", "all")
    assert committed.returncode == 0, committed.stderr
    root = four_hosts / ".agents/.engram"
    migration = (root / "skills/database-migrations.md").read_text()
    assert "imported_from: CLAUDE.md:" in migration and "source: import" in migration
    # the procedure as written: its lead, its numbered steps, its code spans byte for byte
    assert (
        "To add a migration:\n\n1. Change the SQLAlchemy model in `app/models/`.\n2. Run "
        in migration
    )
    assert '`alembic revision --autogenerate -m "<what changed>"`' in migration
    titles = [
        line for p in root.rglob("*.md") for line in p.read_text().splitlines() if line[:2] == "# "
    ]
    assert len(titles) == len(set(titles)) == 18, titles  # no two memories share a title
    billing = next((root / "rules").glob("store-money-as-integer-cents*.md")).read_text()
    assert "## Rule variants" not in billing  # an imported rule is kept as its source states it
    assert "services/billing/**" in billing  # a nested AGENTS.md scopes its memories
    frontend = "".join(p.read_text() for p in root.rglob("*.md") if "TanStack" in p.read_text())
    assert "web/src/**/*.tsx" in frontend  # the .mdc globs
    for task, expected in TASKS.items():
        loaded = _run(four_hosts, "load", task)
        assert loaded.returncode == 0, loaded.stderr
        assert expected in loaded.stdout, (task, loaded.stdout)
    assert "integer cents" not in _run(four_hosts, "load", "cut a release and publish it").stdout
    again = _run(four_hosts, "import", "--propose")
    assert again.returncode == 0 and "Nothing new to propose" in again.stdout
    assert "eng1_" not in again.stdout
    assert {p: p.read_bytes() for p in before} == before  # import never changes a source file
