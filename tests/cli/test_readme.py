"""The README's "Two commands", run literally one after the other in one shell, in a fresh clone.

The clone is of the committed working copy (what a user gets). The second command runs the test
suite; inside it this test skips itself (no recursion), and the nested run is narrowed to the CLI
tests unless ENGRAM_README_FULL=1 asks for the whole suite (CI already runs the whole suite once).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
NESTED = "ENGRAM_README_TEST_NESTED"
TIME_LIMIT = 900  # seconds for both commands: two installs into a new venv, then the tests


def readme_commands(readme: str) -> list[str]:
    """The fenced bash blocks of the "## Two commands" section, in order."""
    m = re.search(r"^## Two commands\n(.*?)(?=^## )", readme, re.M | re.S)
    assert m, 'README.md has no "## Two commands" section'
    return [b.strip() for b in re.findall(r"^```bash\n(.*?)^```", m.group(1), re.M | re.S)]


def test_the_section_has_two_commands_and_no_fixed_shared_path() -> None:
    commands = readme_commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2
    for cmd in commands:
        assert "/tmp/" not in cmd and not re.search(r"(^|&&|;)\s*cd\s", cmd), cmd


def _fresh_shell_env(home: Path, tmp: Path) -> dict[str, str]:
    """The user's shell: no active venv of ours, HOME and TMPDIR of its own."""
    venv = os.environ.get("VIRTUAL_ENV")
    path = [
        p
        for p in os.environ.get("PATH", "").split(os.pathsep)
        if p and not (venv and Path(p).resolve().is_relative_to(Path(venv).resolve()))
    ]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ENGRAM_", "PYTEST_", "VIRTUAL_ENV", "PYTHONPATH"))
    }
    env.update(HOME=str(home), TMPDIR=str(tmp), PATH=os.pathsep.join(path), NO_COLOR="1")
    env[NESTED] = "1"
    if not os.environ.get("ENGRAM_README_FULL"):
        env["PYTEST_ADDOPTS"] = "tests/cli"
    return env


@pytest.mark.skipif(bool(os.environ.get(NESTED)), reason="already inside the README's test run")
@pytest.mark.skipif(not shutil.which("git"), reason="git is not installed")
def test_the_two_readme_commands_run_one_after_the_other_in_a_fresh_clone(tmp_path: Path) -> None:
    clone, home, tmp = tmp_path / "engram", tmp_path / "home", tmp_path / "tmp"
    home.mkdir()
    tmp.mkdir()
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    commands = readme_commands((clone / "README.md").read_text(encoding="utf-8"))
    assert len(commands) == 2
    script = "set -e\n" + "\n".join(commands) + '\necho "cwd: $PWD"\n'
    proc = subprocess.run(
        ["bash", "-c", script],
        cwd=clone,
        env=_fresh_shell_env(home, tmp),
        capture_output=True,
        text=True,
        timeout=TIME_LIMIT,
        check=False,
    )
    tail = (proc.stdout[-3000:] + "\n--- stderr ---\n" + proc.stderr[-3000:]).strip()
    assert proc.returncode == 0, tail
    out = proc.stdout
    assert "wrote 8 example memories" in out, tail
    assert re.search(r'Engram memory for "prepare a release" .* [1-9]\d* bodies', out), tail
    assert re.search(r"\b\d+ passed\b", out) and " failed" not in out, tail
    assert out.rstrip().endswith(f"cwd: {clone}"), tail
    demos = [p for p in tmp.iterdir() if (p / ".agents/.engram").is_dir()]
    assert len(demos) == 1 and demos[0].parent == tmp  # the demo went to a new mktemp folder
    assert not (clone / ".agents/.engram").exists()
