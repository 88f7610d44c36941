from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from engram.cli.main import main


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
