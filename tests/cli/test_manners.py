"""Everyday CLI manners: aliases in help, "did you mean", y/yes at prompts, `~/` paths,
redaction warnings with the preview, and a useful next step after `engram init`."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.cli.main import main

ENGRAM = Path(sys.executable).with_name("engram")


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def engram(*argv: str, cwd: Path, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config")}
    env.pop("ENGRAM_HOME", None)
    return subprocess.run(
        [str(ENGRAM), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
        check=False,
    )  # fmt: skip


def prompt(project: Path, monkeypatch, capsys, answers: str, *argv: str) -> tuple[int, str, str]:
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "stdin", Tty(answers))
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def saved(project: Path) -> list[Path]:
    return sorted((project / ".agents/.engram").glob("*/*.md"))


def test_aliases_are_shown_as_aliases_in_help(tmp_path: Path, isolated_home: Path) -> None:
    out = engram("--help", cwd=tmp_path, home=isolated_home).stdout
    assert "init (inject)" in out and "save-session (ss)" in out
    lines = [ln.split()[0] for ln in out.splitlines() if ln.startswith("    ") and ln.split()]
    assert "inject" not in lines and "ss" not in lines  # not listed as commands of their own


def test_aliases_still_run(project: Path, isolated_home: Path) -> None:
    res = engram("inject", cwd=project, home=isolated_home)
    assert res.returncode == 0 and "already set up" in res.stdout
    res = subprocess.run(
        [str(ENGRAM), "ss", "-f"], cwd=project, input="TYPE: rule | TEXT: Always sign commits.\n",
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert res.returncode == 0 and "Saved 1 memory" in res.stdout


@pytest.mark.parametrize(
    ("argv", "hint"),
    [(["lod", "x"], "did you mean 'load'?"), (["sav-session"], "did you mean 'save-session'?"),
     (["save", "--scope", "glbal", "x"], "did you mean 'global'?")],
)  # fmt: skip
def test_mistyped_commands_and_choices_get_a_suggestion(
    tmp_path: Path, isolated_home: Path, argv: list[str], hint: str
) -> None:
    res = engram(*argv, cwd=tmp_path, home=isolated_home)
    assert res.returncode == 2 and hint in res.stderr and "Traceback" not in res.stderr
    assert len(res.stderr.splitlines()) == 1


def test_an_unknown_command_far_from_any_is_named_without_a_guess(
    tmp_path: Path, isolated_home: Path
) -> None:
    res = engram("zzzz", cwd=tmp_path, home=isolated_home)
    assert res.returncode == 2 and "unknown command 'zzzz'" in res.stderr
    assert "did you mean" not in res.stderr


@pytest.mark.parametrize("answer", ["y", "yes", "Y", "YES"])
def test_y_and_yes_approve_at_the_prompt(project: Path, monkeypatch, capsys, answer) -> None:
    code, out, _ = prompt(project, monkeypatch, capsys, f"{answer}\n", "save", "rule",
                          "Always sign commits.")  # fmt: skip
    assert code == 0 and "Saved 1 memory" in out and len(saved(project)) == 1


@pytest.mark.parametrize("answer", ["n", "no", "No"])
def test_n_and_no_cancel_at_the_prompt(project: Path, monkeypatch, capsys, answer) -> None:
    code, out, _ = prompt(project, monkeypatch, capsys, f"{answer}\n", "save", "rule",
                          "Always sign commits.")  # fmt: skip
    assert code == 0 and "nothing was saved" in out and saved(project) == []


def test_redaction_warnings_come_with_the_preview_before_approval(
    project: Path, monkeypatch, capsys
) -> None:
    code, out, err = prompt(project, monkeypatch, capsys, "A\n", "save", "knowledge",
                            "The admin is bob@northwind-mail.com for this service.")  # fmt: skip
    assert code == 0
    warning = out.index("Warning:")
    assert "email" in out[warning:].splitlines()[0]
    assert warning < out.index("Approve?") < out.index("Saved 1 memory")
    assert "email" not in err  # not repeated after "Saved"


def test_global_paths_are_printed_with_a_tilde(tmp_path: Path, isolated_home: Path) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    res = engram("init", "--global-path", str(isolated_home / "mem"), cwd=proj, home=isolated_home)
    assert res.returncode == 0 and "Global root: ~/mem" in res.stdout
    status = engram("status", cwd=proj, home=isolated_home).stdout
    assert "global root: ~/mem" in status and str(isolated_home) not in status
    data = json.loads(engram("status", "--json", cwd=proj, home=isolated_home).stdout)
    assert str(isolated_home / "mem") in json.dumps(data)  # scripts keep absolute paths


def test_init_in_an_empty_project_suggests_a_command_that_works_there(
    tmp_path: Path, isolated_home: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    out = engram("init", cwd=proj, home=isolated_home).stdout
    assert 'engram load "prepare a release"' not in out
    tip = out[out.index("Try: ") + 5 :].split(",")[0]
    assert tip.startswith("engram save ")
    import shlex

    argv = shlex.split(tip)[1:]
    res = engram(argv[0], "-f", *argv[1:], cwd=proj, home=isolated_home)
    assert res.returncode == 0 and "Saved 1 memory" in res.stdout


def _on_a_terminal(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    """Run the installed engram with stdout and stderr on a pseudo-terminal; return what it wrote."""
    import pty

    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(ENGRAM), *argv], cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=follower,
        stderr=follower,
    )  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    proc.wait(timeout=60)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a pseudo-terminal")
def test_colour_only_on_a_terminal_and_never_with_no_color(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    assert "\x1b[" in _on_a_terminal(["load", "x"], tmp_path, env)  # the error, in colour
    assert "\x1b[" not in _on_a_terminal(["load", "x"], tmp_path, {**env, "NO_COLOR": "1"})
    piped = subprocess.run(
        [str(ENGRAM), "load", "x"], cwd=tmp_path, env=env, capture_output=True, text=True,
        timeout=60, check=False,
    )  # fmt: skip
    assert piped.returncode != 0 and "error:" in piped.stderr and "\x1b[" not in piped.stderr
    forced = subprocess.run(
        [str(ENGRAM), "load", "x"], cwd=tmp_path, env={**env, "FORCE_COLOR": "1"},
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert "\x1b[31;1merror:" in forced.stderr


def test_search_and_route_are_aligned_tables_on_a_terminal_only(tmp_path: Path) -> None:
    proj = tmp_path / "demo"
    proj.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    env["TERM"] = "xterm"
    subprocess.run([str(ENGRAM), "init", "--example"], cwd=proj, env=env, check=True,
                   capture_output=True, timeout=60)  # fmt: skip
    for argv in (["search", "release"], ["route", "prepare a release"]):
        shown = _on_a_terminal([*argv], proj, {**env, "NO_COLOR": "1"}).replace("\r", "")
        rows = [ln for ln in shown.splitlines()[1:] if ln.strip()]
        assert rows[0].split()[:3] == ["#", "TYPE", "ID"]
        starts = {ln.index(ln.split()[2]) for ln in rows}  # the ID column starts at one place
        assert len(starts) == 1 and len(rows) >= 3
        assert "\x1b[" not in shown
        piped = subprocess.run([str(ENGRAM), *argv], cwd=proj, env=env, capture_output=True,
                               text=True, timeout=60, check=True).stdout  # fmt: skip
        assert "TYPE" not in piped and "`release-process`" in piped  # one line per entry
