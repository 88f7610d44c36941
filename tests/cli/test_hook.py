"""`engram set-read`, `engram set-proof` and the `engram hook` entry."""

from __future__ import annotations

import io
import json

import pytest

from engram.cli.main import main


def test_set_read_and_proof(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "engram-home"))
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert main(["set-read", "always"]) == 0
    assert main(["set-proof", "compact", "--json"]) == 0
    out = capsys.readouterr().out
    assert json.loads(out[out.index("{") :])["data"]["value"] == "compact"
    config = json.loads((tmp_path / ".agents/.engram/config.json").read_text())
    assert config["read_mode"] == "always" and config["proof"] == "compact"
    with pytest.raises(SystemExit) as bad:
        main(["set-read", "sometimes"])
    assert bad.value.code == 2
    assert main(["set-read", "off", "--user"]) == 0
    assert json.loads((tmp_path / "engram-home/config.json").read_text())["read_mode"] == "off"


def test_hook_routes_without_argparse(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO("{}"))
    assert main(["hook", "claude", "session-start"]) == 0
    assert capsys.readouterr().out == ""  # no workspace: nothing to inject
    assert main(["hook", "--help"]) == 0
    assert "usage: engram hook" in capsys.readouterr().out
