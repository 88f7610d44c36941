from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from engram.cli.main import main

ENGRAM = Path(sys.executable).with_name("engram")


def test_verify_lists_each_problem_once(project: Path, monkeypatch, capsys, write_memory) -> None:
    write_memory(project / ".agents/.engram", "rule", "hand", "Hand rule")
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "stdin", None)
    assert main(["verify"]) == 1
    out, err = capsys.readouterr()
    assert (out + err).count("rules/hand.md") == 1
    assert main(["verify", "--json"]) == 1
    env = json.loads(capsys.readouterr().out)
    assert env["ok"] is False and env["diagnostics"][0]["path"] == "rules/hand.md"


@pytest.mark.parametrize("argv", [["verify", "--accept"], ["verify"]])
def test_verify_is_quiet_when_clean(project: Path, monkeypatch, capsys, argv) -> None:
    monkeypatch.chdir(project)
    assert main(argv) == 0
    out, err = capsys.readouterr()
    assert "ok" in out and err == ""


def test_an_invalid_file_is_told_how_to_fix_it_not_to_accept_it(project: Path) -> None:
    import subprocess

    rules = project / ".agents/.engram/rules"
    (rules / "plain.md").write_text("no front matter here\n")
    engram = [str(Path(sys.executable).with_name("engram")), "-C", str(project), "verify"]
    p = subprocess.run(engram, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1
    assert "invalid: rules/plain.md: missing YAML front matter" in p.stdout
    assert "1 file(s) cannot be read" in p.stdout and "edit the file to fix it" in p.stdout
    assert "record them with `engram verify --accept" not in p.stdout  # nothing else to accept
    (rules / "plain.md").write_text("---\nid: plain\ntype: rule\n---\n# Plain\n")
    p = subprocess.run(engram, capture_output=True, text=True, timeout=60)
    assert "cannot be read" not in p.stdout and "engram verify --accept" in p.stdout


def test_a_linked_file_or_folder_is_named_and_never_accepted(tmp_path: Path) -> None:
    import os

    project = tmp_path / "p"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HOME": str(home)}
    env.pop("ENGRAM_GLOBAL_DIR", None)

    def engram(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(ENGRAM), *argv], cwd=project, env=env, capture_output=True, text=True
        )

    assert engram("init").returncode == 0
    outside = tmp_path / "leak.md"
    outside.write_text("---\nid: leak\ntype: knowledge\n---\n# Leak\n\n- x\n")
    root = project / ".agents" / ".engram"
    (root / "knowledge" / "leak.md").symlink_to(outside)
    (root / "rules" / "linkdir").symlink_to(tmp_path)
    refused = engram("verify", "--accept", "knowledge/leak.md")
    assert refused.returncode == 2 and "symbolic link" in refused.stderr
    report = engram("verify")
    assert "folder.symlink" in report.stdout and "rules/linkdir" in report.stdout
    assert "file.symlink" in report.stdout and "--accept" not in report.stdout.splitlines()[-1]
