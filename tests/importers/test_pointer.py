"""`engram import --replace-with-pointer` / `--restore` with the installed executable."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from engram.importers.pointer import replace_sections

ENGRAM = Path(sys.executable).with_name("engram")
GUIDE = (
    "# Guide\r\n\r\nWe deploy with Kamal to two hosts.\r\n\r\n## Testing\r\n"
    "- Run `pytest -q` before every push.\r\n- Never commit `.env` files.\r\n\r\n"
    "## Release\r\n1. Bump the version.\r\n2. Tag the commit.\r\n\r\n## Notes\r\n"
    "Ask before touching the billing code."
)  # CRLF, no final newline: the bytes must come back exactly


def _run(project: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "ENGRAM_GLOBAL_DIR"}
    return subprocess.run(
        [str(ENGRAM), *argv], cwd=project, env=env, capture_output=True, text=True, timeout=60
    )


def _approve(project: Path, numbers: str) -> None:
    out = _run(project, "import", "--propose")
    token = re.search(r"eng1_[A-Za-z0-9_-]+", out.stdout).group()  # type: ignore[union-attr]
    assert _run(project, "commit", token, "--approve", numbers).returncode == 0


def _numbers(project: Path, *titles: str) -> str:
    out = _run(project, "import", "--dry-run").stdout
    found = dict(re.findall(r"^(\d+)\. \[\w+\] (\S+)", out, re.M))
    return ",".join(n for n, t in found.items() if any(t.startswith(x) for x in titles))


def test_replace_plan_apply_again_and_restore_byte_for_byte(project: Path) -> None:
    guide = project / "CLAUDE.md"
    guide.write_bytes(GUIDE.encode())
    _approve(project, _numbers(project, "run-pytest", "never-commit", "release"))
    plan = _run(project, "import", "--replace-with-pointer", "--plan")
    assert (
        plan.returncode == 0 and "would replace 2 approved section(s) in CLAUDE.md" in plan.stdout
    )
    assert "-## Testing" in plan.stdout and "+<!-- engram:pointer" in plan.stdout
    assert guide.read_bytes() == GUIDE.encode()  # --plan writes nothing
    done = _run(project, "import", "--replace-with-pointer")
    assert done.returncode == 0, done.stderr
    text = guide.read_bytes().decode()
    assert "pytest" not in text and "Bump the version" not in text and "## Release" not in text
    assert "We deploy with Kamal" in text and "Ask before touching the billing" in text
    assert "engram_load" in text and "\r\n" in text and "\n" not in text.replace("\r\n", "")
    # the pointer itself is never imported, and what it replaced is not proposed again
    assert "engram_load" not in _run(project, "import", "--dry-run").stdout
    _approve(project, _numbers(project, "deploy-kamal"))
    again = _run(project, "import", "--replace-with-pointer")
    assert "replaced 3 approved section(s)" in again.stdout
    assert "Kamal" not in guide.read_text() and guide.read_text().count("engram:pointer ") == 1
    restored = _run(project, "import", "--restore")
    assert restored.returncode == 0 and "restored: CLAUDE.md" in restored.stdout
    assert guide.read_bytes() == GUIDE.encode()
    state = json.loads((project / ".agents/.engram/cache/pointers.json").read_text())
    assert state["files"] == {}


def test_restore_refuses_to_lose_edits_and_links_are_refused(project: Path) -> None:
    guide = project / "AGENTS.md"
    guide.write_text("## Testing\n- Run the linter before pushing.\n\n## Other\nStay here.\n")
    _approve(project, _numbers(project, "run-linter"))
    assert _run(project, "import", "--replace-with-pointer").returncode == 0
    edited = guide.read_text() + "- A line the person added later.\n"
    guide.write_text(edited)
    out = _run(project, "import", "--restore")
    assert "changed after Engram wrote its pointer" in out.stdout + out.stderr
    assert guide.read_text() == edited and "Traceback" not in out.stderr
    assert out.returncode == 1  # the file was left as it is: not what was asked
    (project / "docs").mkdir()
    (project / "docs/real.md").write_text("## Style\n- Use tabs for Makefiles.\n")
    (project / "CLAUDE.md").symlink_to("docs/real.md")
    _approve(project, _numbers(project, "use-tabs"))
    linked = _run(project, "import", "--replace-with-pointer")
    assert "CLAUDE.md is a symbolic link" in linked.stdout and linked.returncode == 1
    assert (project / "CLAUDE.md").is_symlink()
    assert (project / "docs/real.md").read_text() == "## Style\n- Use tabs for Makefiles.\n"


def test_replace_sections_keeps_unapproved_text_and_drops_emptied_headings() -> None:
    text = "# A\n## B\n- one\n- two\n\n## C\n- three\n\n### D\nfour\n"
    new, count = replace_sections(text, [(3, 4), (10, 10)])
    assert count == 2
    assert "## B" not in new and "### D" not in new and "## C\n- three" in new
    assert new.startswith("# A\n\n<!-- engram:pointer")
    same, none = replace_sections(text, [])
    assert same == text and none == 0


def test_global_files_get_their_pointer_and_come_back(project: Path, isolated_home: Path) -> None:
    user = isolated_home / ".claude/CLAUDE.md"
    user.parent.mkdir(parents=True)
    original = (
        "# Me\n\n## Style\n- Prefer early returns over nested conditionals.\n\n## Other\nKeep.\n"
    )
    user.write_text(original)
    memory = isolated_home / "global-memory"
    memory.mkdir()
    env_set = _run(project, "config", "set", "--user", "global_path", str(memory))
    assert env_set.returncode == 0, env_set.stderr
    out = _run(project, "import", "--global", "--propose")
    token = re.search(r"eng1_[A-Za-z0-9_-]+", out.stdout).group()  # type: ignore[union-attr]
    numbers = dict(re.findall(r"^(\d+)\. \[\w+\] (\S+)", out.stdout, re.M))
    pick = ",".join(n for n, t in numbers.items() if t.startswith("prefer-early"))
    assert _run(project, "commit", token, "--approve", pick).returncode == 0
    plan = _run(project, "import", "--global", "--replace-with-pointer", "--plan")
    assert "--- a/~/.claude/CLAUDE.md" in plan.stdout and user.read_text() == original
    done = _run(project, "import", "--global", "--replace-with-pointer")
    assert done.returncode == 0, done.stderr
    assert "early returns" not in user.read_text() and "Keep." in user.read_text()
    back = _run(project, "import", "--global", "--restore")
    assert back.returncode == 0 and user.read_text() == original


def test_the_count_is_of_sections_and_setext_or_commented_headings_left_empty_go() -> None:
    text = (
        "# Guide\n\nIntro.\n\nArchitecture\n------------\n\n<!-- owner: platform -->\n"
        "We use FastAPI.\n\n## Git\n- Never force-push to main.\n- Squash commits.\n"
        "- Keep this one.\n\n## Style\n- Use tabs.\n- Use ruff.\n"
    )
    new, count = replace_sections(text, [(9, 9), (12, 12), (13, 13), (17, 17), (18, 18)])
    assert count == 3  # five memories from three sections
    assert "Architecture" not in new and "------" not in new and "## Style" not in new
    assert "<!-- owner: platform -->" in new and "## Git\n- Keep this one.\n" in new
    assert new.startswith("# Guide\n\nIntro.\n")


def test_a_heading_over_only_html_tags_goes_when_its_text_is_replaced() -> None:
    text = (
        "## Architecture\n\n<details>\n<summary>Layout</summary>\n\nWe use FastAPI.\n</details>\n"
    )
    new, count = replace_sections(text, [(4, 6)])
    assert count == 1 and "## Architecture" not in new and "FastAPI" not in new


def test_a_backup_shipped_in_a_clone_restores_nothing(project: Path) -> None:
    """A clone controls cache/pointers.json: a forged record must never write .git/config,
    create a file, or overwrite a file that holds no Engram pointer."""
    import hashlib

    git_config = project / ".git" / "config"
    git_config.parent.mkdir(exist_ok=True)
    git_config.write_text("[core]\n\tbare = false\n")
    (project / "main.py").write_text("print('hi')\n")
    (project / "AGENTS.md").write_text("# Agents\n\nUse tabs.\n")

    def rec(path: Path, original: str) -> dict[str, str]:
        return {"original": original, "written": hashlib.sha256(path.read_bytes()).hexdigest()}

    forged = {
        ".git/config": rec(git_config, '[core]\n\tfsmonitor = "touch PWNED; false"\n'),
        "main.py": rec(project / "main.py", "PWNED\n"),
        "AGENTS.md": {**rec(project / "AGENTS.md", "# Agents\n\nPWNED\n"), "mac": "0" * 64},
        ".github/hooks/pre-commit": {"original": "touch PWNED\n", "written": "0" * 64},
    }
    state = project / ".agents" / ".engram" / "cache" / "pointers.json"
    state.parent.mkdir(parents=True, exist_ok=True)
    state.write_text(json.dumps({"version": 1, "files": forged}))
    before = {p: p.read_bytes() for p in (git_config, project / "main.py", project / "AGENTS.md")}

    out = _run(project, "import", "--restore")
    assert "PWNED" not in git_config.read_text()
    assert {p: p.read_bytes() for p in before} == before
    assert not (project / ".github" / "hooks" / "pre-commit").exists()
    assert "not an instruction file" in out.stdout + out.stderr
    assert "not signed with your key" in out.stdout + out.stderr


def test_a_second_pointer_after_a_hand_edit_keeps_the_first_original(project: Path) -> None:
    agents = project / "AGENTS.md"
    original = "# Team\n\n## Git\n- Squash commits before merging to main.\n"
    agents.write_text(original)
    _approve(project, "all")
    assert _run(project, "import", "--replace-with-pointer").returncode == 0
    with agents.open("a") as fh:
        fh.write("\n## Person notes\n- Tag releases with semver.\n")
    edited = agents.read_text()
    _approve(project, "all")
    again = _run(project, "import", "--replace-with-pointer")
    assert "changed after Engram wrote its pointer" in again.stdout + again.stderr
    assert agents.read_text() == edited  # nothing replaced a second time
    state = project / ".agents/.engram/cache/pointers.json"
    assert json.loads(state.read_text())["files"]["AGENTS.md"]["original"] == original


def test_a_line_memory_holds_only_redacted_stays_in_the_file(project: Path) -> None:
    guide = project / "CLAUDE.md"
    guide.write_text(
        "# P\n\n## Build\n\n- The deploy password is Xk29Lmq8Pz!q for the staging box.\n"
        "- Run make build before tagging.\n"
    )
    _approve(project, "all")
    assert _run(project, "import", "--replace-with-pointer").returncode == 0
    text = guide.read_text()
    assert "Xk29Lmq8Pz!q" in text and "Run make build" not in text
