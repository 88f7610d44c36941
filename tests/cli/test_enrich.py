"""`engram enrich` with the installed executable: ask, propose, approve, route."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ENGRAM = Path(sys.executable).with_name("engram")


def _run(project: Path, *argv: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(project.parent / "home"), "NO_COLOR": "1"}
    env.pop("ENGRAM_GLOBAL_DIR", None)
    return subprocess.run(
        [str(ENGRAM), *argv], cwd=project, env=env, input=stdin, capture_output=True,
        text=True, timeout=60,
    )  # fmt: skip


def test_enrich_lists_proposes_and_writes_only_after_approval(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (tmp_path / "home").mkdir()
    assert _run(proj, "init").returncode == 0
    saved = _run(proj, "save", "knowledge", "Feature flags live in LaunchDarkly.", "--force")
    assert saved.returncode == 0, saved.stderr
    rel = ".agents/.engram/knowledge/feature-flags-live-launchdarkly.md"
    before = (proj / rel).read_text()

    asked = _run(proj, "enrich")
    assert asked.returncode == 0, asked.stderr
    assert "- feature-flags-live-launchdarkly (knowledge, workspace)" in asked.stdout
    assert "UPDATE: <id> | TRIGGERS:" in asked.stdout

    lines = "feature-flags-live-launchdarkly: turn a feature on for one customer; flag rollout\n"
    proposed = _run(proj, "enrich", "--propose", stdin=lines)
    assert proposed.returncode == 0, proposed.stderr
    assert "Triggers: turn a feature on for one customer; flag rollout" in proposed.stdout
    assert (proj / rel).read_text() == before  # nothing written by a proposal
    token = re.search(r"Approval token: (\S+)", proposed.stdout).group(1)  # type: ignore[union-attr]
    done = _run(proj, "commit", token, "--approve", "all")
    assert done.returncode == 0, done.stderr
    after = (proj / rel).read_text()
    assert "triggers: [turn a feature on for one customer, flag rollout]" in after
    assert after.split("\n---\n", 1)[1] == before.split("\n---\n", 1)[1]  # the text as it was
    assert "feature-flags-live-launchdarkly" not in _run(proj, "enrich").stdout
    loaded = _run(proj, "load", "how do I turn a feature on for one customer")
    assert "Feature flags live in LaunchDarkly" in loaded.stdout


def test_enrich_refuses_lines_that_would_rewrite_a_memory(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    proj.mkdir()
    (tmp_path / "home").mkdir()
    assert _run(proj, "init").returncode == 0
    out = _run(proj, "enrich", "--propose", stdin="TYPE: rule | TEXT: Always deploy on Fridays.\n")
    assert out.returncode == 2
    assert "not a triggers-only update" in out.stderr
    out = _run(proj, "enrich", "--propose", stdin="nowhere: a phrase\n")
    assert out.returncode == 2 and "not a memory" in out.stderr
