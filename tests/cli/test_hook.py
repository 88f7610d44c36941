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


def test_the_prompt_hook_asks_git_only_inside_a_repository(tmp_path):
    """A `git` first on PATH records each call and runs the real one: outside a repository
    the hook starts no git process; inside one it reads the changed files and the branch."""
    import os
    import shutil
    import subprocess
    import sys

    real_git = shutil.which("git")
    if real_git is None:
        pytest.skip("git is not installed")
    bin_dir, calls = tmp_path / "bin", tmp_path / "git-calls"
    bin_dir.mkdir()
    (bin_dir / "git").write_text(f'#!/bin/sh\necho "$@" >> "{calls}"\nexec "{real_git}" "$@"\n')
    (bin_dir / "git").chmod(0o755)
    env = {**os.environ, "HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "eh"),
           "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
           "GIT_CEILING_DIRECTORIES": str(tmp_path)}  # fmt: skip
    for name in ("GIT_DIR", "GIT_WORK_TREE"):
        env.pop(name, None)
    project = tmp_path / "project"
    project.mkdir()
    engram = [sys.executable, "-m", "engram.cli.main"]
    subprocess.run([*engram, "init", "--example"], cwd=project, env=env, check=True,
                   capture_output=True)  # fmt: skip
    subprocess.run([*engram, "set-read", "always"], cwd=project, env=env, check=True,
                   capture_output=True)  # fmt: skip

    def prompt_hook(prompt: str) -> str:
        payload = json.dumps({"session_id": prompt, "cwd": str(project), "prompt": prompt})
        res = subprocess.run([*engram, "hook", "claude", "user-prompt-submit"], input=payload,
                             cwd=project, env=env, capture_output=True, text=True, timeout=60)  # fmt: skip
        assert res.returncode == 0 and res.stderr == "", res.stderr
        return res.stdout

    assert "release" in prompt_hook("how do we cut a release?").lower()
    assert not calls.exists()  # not a repository: no git process
    for args in (["init", "-q", "-b", "feature/changelog"], ["add", "-A"]):
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)
    calls.unlink(missing_ok=True)
    assert "release" in prompt_hook("how do we cut a release now?").lower()
    assert "status" in calls.read_text()


def test_a_prompt_hook_imports_only_what_it_needs(tmp_path):
    """A host runs the hook on every prompt: no argparse, no subprocess (git is spawned
    directly), no OpenSSL or secrets (the state file's temp name comes from os.urandom)."""
    import os
    import shutil
    import subprocess
    import sys

    env = {**os.environ, "HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "eh")}
    project = tmp_path / "project"
    project.mkdir()
    engram = [sys.executable, "-m", "engram.cli.main"]
    for args in (["init", "--example"], ["set-read", "always"]):
        subprocess.run([*engram, *args], cwd=project, env=env, check=True, capture_output=True)
    if shutil.which("git"):
        subprocess.run(["git", "init", "-q"], cwd=project, env=env, check=True)
    probe = (
        "import sys; from engram.cli.main import main; sys.argv = ['engram', *sys.argv[1:]];"
        " main(); sys.stdout.flush(); sys.stderr.write(' '.join(m for m in ('argparse',"
        " 'subprocess', '_hashlib', 'secrets') if m in sys.modules))"
    )
    prompts = ("how do we cut a release?", "what about database migrations?")
    for prompt in prompts:  # the first loads build the index and scan what they show, once
        subprocess.run([*engram, "load", prompt], cwd=project, env=env, check=True,
                       capture_output=True)  # fmt: skip
    for n, prompt in enumerate(prompts):
        payload = json.dumps({"session_id": "s", "cwd": str(project), "prompt": prompt})
        res = subprocess.run([sys.executable, "-c", probe, "hook", "claude", "user-prompt-submit"],
                             input=payload, cwd=project, env=env, capture_output=True,
                             text=True, timeout=60)  # fmt: skip
        assert res.returncode == 0 and res.stdout.strip(), (n, res.stdout)
        assert res.stderr == "", (n, res.stderr)
    assert (project / ".agents/.engram/cache/hook-state.json").exists()  # the state was written
