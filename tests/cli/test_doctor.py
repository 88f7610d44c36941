"""`engram doctor`: stable codes, --json, --strict."""

from __future__ import annotations

import json

from engram.cli.main import main


def run(capsys, *args):
    code = main(["doctor", *args])
    return code, capsys.readouterr().out


def test_doctor_without_a_root(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "eh"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    code, out = run(capsys, "--json")
    assert code == 1
    assert "root.missing" in {f["code"] for f in json.loads(out)["data"]["findings"]}


def test_doctor_reports_hosts_manifest_and_strict(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "eh"))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["init", "--example"]) == 0
    capsys.readouterr()
    code, out = run(capsys)
    assert code == 0 and "all good" in out
    assert main(["link", "gemini"]) == 0
    settings = tmp_path / ".gemini/settings.json"
    data = json.loads(settings.read_text())
    data["mcpServers"]["engram"]["trust"] = True
    settings.write_text(json.dumps(data))
    rule = next((tmp_path / ".agents/.engram/rules").glob("*.md"))
    rule.write_text(rule.read_text() + "\nedited by hand\n")
    capsys.readouterr()
    code, out = run(capsys, "--json")
    env = json.loads(out)
    codes = {f["code"] for f in env["data"]["findings"]}
    assert {"host.gemini_trust", "host.gemini_folder_untrusted", "manifest.modified"} <= codes
    assert not any(c.startswith("host.command") for c in codes)  # an absolute path: it starts
    assert code == 0  # warnings only
    assert run(capsys, "--strict")[0] == 1
    assert env["data"]["hosts"] == [{"host": "gemini", "scope": "workspace"}]


def test_a_broken_config_is_reported_once(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "eh"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    (tmp_path / ".agents" / ".engram" / "config.json").write_text("{bad", encoding="utf-8")
    capsys.readouterr()
    code, out = run(capsys, "--json")
    findings = json.loads(out)["data"]["findings"]
    assert code == 1
    assert [f["code"] for f in findings].count("config.invalid") == 1, findings


def test_doctor_fails_when_a_linked_host_cannot_start_the_server(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("ENGRAM_HOME", str(tmp_path / "eh"))
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    (tmp_path / "home").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["init"]) == 0
    assert main(["link", "opencode"]) == 0
    config = tmp_path / "opencode.json"
    data = json.loads(config.read_text())
    data["mcp"]["engram"]["command"] = ["engram-mcp"]  # bare, while not on PATH
    config.write_text(json.dumps(data))
    capsys.readouterr()
    code, out = run(capsys)
    assert code == 1 and "host.command_missing" in out and "engram upgrade" in out
    assert main(["upgrade"]) == 0
    capsys.readouterr()
    assert run(capsys)[0] == 0
