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
    """A terminal on stdin: the human's answers, one per line."""

    def isatty(self) -> bool:
        return True


def run(
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    answers: str | None = None,
    stdin: str | None = None,
) -> tuple[int, str, str]:
    monkeypatch.chdir(project)
    if answers is not None:
        monkeypatch.setattr(sys, "stdin", Tty(answers))
    else:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO((stdin or "").encode())))
    try:
        code = main(list(argv))
    except SystemExit as exc:  # argparse errors
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def files(project: Path, sub: str = "*") -> list[str]:
    root = project / ".agents/.engram"
    return sorted(
        str(p.relative_to(root))
        for d in ("rules", "skills", "knowledge", "working", "archive")
        for p in (root / d).glob("*.md")
        if sub == "*" or d == sub
    )


def test_save_approve_all(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", "Always sign commits.",
                       answers="A\n")  # fmt: skip
    assert code == 0
    assert "Verdict: ADD" in out and "Approve?" in out and "Approval token" not in out
    assert "Saved 1 memory" in out
    assert files(project) == ["rules/always-sign-commits.md"]


def test_save_cancel_and_eof_write_nothing(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save", "Sign commits.", answers="C\n")
    assert code == 0 and "nothing was saved" in out
    code, out, _ = run(project, monkeypatch, capsys, "save", "Sign commits.", answers="")
    assert "nothing was saved" in out
    assert files(project) == []


def test_save_revise_then_approve(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save", "knowledge", "CI runs on Linux.",
                       answers="B CI runs on Linux and macOS.\nA\n")  # fmt: skip
    assert code == 0
    assert "Revision: CI runs on Linux and macOS." in out
    assert files(project) == ["knowledge/ci-runs-linux-macos.md"]


def test_save_session_approve_some_with_bad_answer_first(
    project: Path, monkeypatch, capsys, tmp_path: Path
) -> None:
    f = tmp_path / "c.txt"
    f.write_text(
        "TYPE: rule | TEXT: Pin Python.\nTYPE: knowledge | TEXT: CI runs on Linux.\n"
        "TYPE: rule | TEXT: Sign commits.\n"
    )
    code, out, err = run(project, monkeypatch, capsys, "save-session", "--file", str(f),
                         answers="A 7\nwhat\nB 2: CI runs on Debian.\nA 1,2\n")  # fmt: skip
    assert code == 0
    assert "candidate 7 does not exist" in err
    assert "Answer A (or y), A 1,3, B <note> or C (or n)." in out
    assert files(project) == ["knowledge/ci-runs-debian.md", "rules/pin-python.md"]


def test_non_interactive_stdin_is_refused_not_hung(project: Path, monkeypatch, capsys) -> None:
    code, _, err = run(project, monkeypatch, capsys, "save", "rule", "Sign commits.", stdin="A\n")
    # read by an agent as often as by a person: it never advertises the way around approval
    assert code == 2 and "stdin is not a terminal" in err and "--force" not in err
    code, _, err = run(project, monkeypatch, capsys, "ss", stdin="TYPE: rule | TEXT: x y\n")
    assert code == 2 and "--propose" in err
    code, _, err = run(project, monkeypatch, capsys, "note", "x", "--objective", "o", stdin="y\n")
    assert code == 2
    assert files(project) == []


def test_ss_force_shortcut_keeps_last_sessions(project: Path, monkeypatch, capsys) -> None:
    text = (
        "## Session 1\nTYPE: rule | TEXT: One rule.\n"
        "## Session 2\nTYPE: rule | TEXT: Two rule.\n"
        "## Session 3\nTYPE: rule | TEXT: Three rule.\n"
    )
    code, out, _ = run(project, monkeypatch, capsys, "ss", "-f", "last", "2", "sessions",
                       stdin=text)  # fmt: skip
    assert code == 0, out
    assert files(project) == ["rules/three-rule.md", "rules/two-rule.md"]


@pytest.mark.parametrize(
    "argv",
    [
        ("ss", "-f", "--query-level", "0"),
        ("ss", "-f", "--query-level", "-3"),
        ("ss", "-f", "--query-level", "two"),
        ("ss", "-f", "last", "zero", "sessions"),
        ("ss", "-f", "--query-level", "2", "last", "3", "sessions"),
        ("save-session", "-f", "--scope", "global"),
    ],
)
def test_bad_save_session_arguments(project: Path, monkeypatch, capsys, argv) -> None:
    code, _, err = run(project, monkeypatch, capsys, *argv, stdin="TYPE: rule | TEXT: x y\n")
    assert code == 2 and "error:" in err
    assert files(project) == []


def test_propose_then_commit_with_json(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save-session", "--propose", "--json",
                       stdin="TYPE: rule | TEXT: Pin Python.\nTYPE: rule | TEXT: Sign commits.\n")  # fmt: skip
    env = json.loads(out)
    assert code == 0 and env["ok"] and env["contract_version"]
    token = env["data"]["approval_token"]
    code, _, err = run(project, monkeypatch, capsys, "commit", token, "--approve", "3")
    assert code == 2 and "the proposal has 2 candidates" in err
    code, out, _ = run(project, monkeypatch, capsys, "commit", token, "--approve", "2", "--json")
    assert code == 0 and json.loads(out)["data"]["written"][0]["id"] == "sign-commits"
    code, _, err = run(project, monkeypatch, capsys, "commit", token, "--approve", "all")
    assert code == 1 and "already used" in err
    assert files(project) == ["rules/sign-commits.md"]


def test_archive_note_and_promote_commands(project: Path, monkeypatch, capsys) -> None:
    run(project, monkeypatch, capsys, "save", "knowledge", "Builds use Bazel.", "--force")
    code, out, _ = run(project, monkeypatch, capsys, "archive", "builds-use-bazel",
                       "--reason", "moved to Pants")  # fmt: skip
    assert code == 0 and "archive/builds-use-bazel.md" in out
    code, _, err = run(project, monkeypatch, capsys, "archive", "nope", "--reason", "x")
    assert code == 1 and "no memory 'nope'" in err
    code, out, _ = run(project, monkeypatch, capsys, "note", "Cache key changed.",
                       "--objective", "fix CI", answers="y\n")  # fmt: skip
    assert code == 0 and files(project, "working") == ["working/cache-key-changed.md"]
    code, out, _ = run(project, monkeypatch, capsys, "note", "Other.", "--objective", "o",
                       answers="n\n")  # fmt: skip
    assert "nothing was saved" in out and len(files(project, "working")) == 1
    code, out, _ = run(project, monkeypatch, capsys, "promote", "cache-key-changed",
                       answers="A\n")  # fmt: skip
    assert code == 0
    assert files(project, "working") == []
    assert "knowledge/cache-key-changed.md" in files(project)


def test_installed_executable_end_to_end(project: Path) -> None:
    env = {**os.environ}
    base = [str(ENGRAM), "-C", str(project)]
    p = subprocess.run([*base, "save", "rule", "Pin Python.", "--propose", "--json"],
                       capture_output=True, text=True, env=env, stdin=subprocess.DEVNULL)  # fmt: skip
    assert p.returncode == 0, p.stderr
    token = json.loads(p.stdout)["data"]["approval_token"]
    p = subprocess.run([*base, "commit", token, "--approve", "all"], capture_output=True,
                       text=True, env=env)  # fmt: skip
    assert p.returncode == 0 and "rules/pin-python.md" in p.stdout
    p = subprocess.run([*base, "ss", "-f"], input="TYPE: knowledge | TEXT: CI runs on Linux.\n",
                       capture_output=True, text=True, env=env)  # fmt: skip
    assert p.returncode == 0 and "knowledge/ci-runs-linux.md" in p.stdout
    p = subprocess.run([*base, "save", "rule", "Sign."], capture_output=True, text=True,
                       env=env, stdin=subprocess.DEVNULL, timeout=30)  # fmt: skip
    assert p.returncode == 2 and "not a terminal" in p.stderr
    p = subprocess.run([*base, "verify"], capture_output=True, text=True, env=env)
    assert p.returncode == 0, p.stdout


class InterruptedTty(Tty):
    """A terminal where the human presses Ctrl-C at the prompt."""

    def readline(self, *args: object) -> str:  # type: ignore[override]
        raise KeyboardInterrupt


def pending_statuses(project: Path) -> list[str]:
    data = json.loads((project / ".agents/.engram/pending-approvals.json").read_text())
    return sorted(e["status"] for e in data["entries"].values())


def test_ctrl_c_at_the_prompt_declines_the_proposal(project: Path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(project)
    monkeypatch.setattr(sys, "stdin", InterruptedTty(""))
    assert main(["save", "rule", "Sign commits."]) == 130
    assert pending_statuses(project) == ["declined"]
    assert files(project) == []


def test_eof_at_the_prompt_ends_the_prompt_line(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save", "Sign commits.", answers="")
    assert code == 0
    assert "C (or n) = cancel: \nCancelled; nothing was saved." in out


def test_force_still_reports_what_was_redacted(project: Path, monkeypatch, capsys) -> None:
    code, out, err = run(project, monkeypatch, capsys, "save", "-f", "knowledge",
                         "The admin is bob@northwind-mail.com for this service.")  # fmt: skip
    assert code == 0 and "Saved 1 memory" in out
    assert "redacted" in err and "email" in err
    code, out, err = run(project, monkeypatch, capsys, "note", "-f", "Ask bob@northwind-mail.com.",
                         "--objective", "call +1 415 823 4417 first")  # fmt: skip
    assert code == 0 and "email" in err and "objective" in err


def test_revising_twice_keeps_the_first_revision(
    project: Path, monkeypatch, capsys, tmp_path: Path
) -> None:
    f = tmp_path / "c.txt"
    f.write_text("TYPE: rule | TEXT: Pin Python.\nTYPE: knowledge | TEXT: CI runs on Linux.\n")
    code, out, _ = run(project, monkeypatch, capsys, "ss", "--file", str(f),
                       answers="B 1: Pin Python 3.11.\nB 2: CI runs on Debian.\nA\n")  # fmt: skip
    assert code == 0, out
    assert files(project) == ["knowledge/ci-runs-debian.md", "rules/pin-python-3-11.md"]


def test_promote_prompt_says_a_promotion_cannot_be_revised(
    project: Path, monkeypatch, capsys
) -> None:
    run(project, monkeypatch, capsys, "note", "-f", "Cache key changed.", "--objective", "ci")
    code, out, _ = run(project, monkeypatch, capsys, "promote", "cache-key-changed",
                       answers="B Cache key changed twice.\nC\n")  # fmt: skip
    assert code == 0
    assert "cannot be revised" in out
    assert files(project) == ["working/cache-key-changed.md"]


def test_force_and_propose_exclude_each_other(project: Path, monkeypatch, capsys) -> None:
    code, _, err = run(project, monkeypatch, capsys, "save", "-f", "--propose", "Sign commits.")
    assert code == 2 and "--force" in err and "--propose" in err
    assert (
        files(project) == [] and not (project / ".agents/.engram/pending-approvals.json").exists()
    )


def test_huge_stdin_is_refused_without_reading_it_all(project: Path, monkeypatch, capsys) -> None:
    from engram.cli import write

    big = "TYPE: rule | TEXT: " + "x" * (write.MAX_INPUT_BYTES + 10)
    code, _, err = run(project, monkeypatch, capsys, "ss", "-f", stdin=big)
    assert code == 2 and "at most" in err
    assert files(project) == []


def test_unsafe_ids_are_usage_errors(project: Path, monkeypatch, capsys) -> None:
    for argv in (("archive", "../rules/x", "--reason", "r"), ("promote", "-f", "a/b")):
        code, _, err = run(project, monkeypatch, capsys, *argv)
        assert code == 2 and "is not a memory id" in err, (argv, err)


def test_archiving_an_archived_memory_says_where_it_is(project: Path, monkeypatch, capsys) -> None:
    run(project, monkeypatch, capsys, "save", "-f", "knowledge", "Builds use Bazel.")
    run(project, monkeypatch, capsys, "archive", "builds-use-bazel", "--reason", "Pants now")
    code, _, err = run(project, monkeypatch, capsys, "archive", "builds-use-bazel",
                       "--reason", "again")  # fmt: skip
    assert code == 1 and "already archived" in err and "archive/builds-use-bazel.md" in err


def test_save_with_a_type_and_no_text_is_refused(project: Path, monkeypatch, capsys) -> None:
    code, _, err = run(project, monkeypatch, capsys, "save", "-f", "rule")
    assert code == 2 and "text" in err
    assert files(project) == []


def test_several_type_text_pairs_make_one_proposal_of_several_memories(
    project: Path, monkeypatch, capsys
) -> None:
    code, out, err = run(project, monkeypatch, capsys, "save", "-f", "rule", "Always sign commits.",
                         "knowledge", "The CI runs on Fedora 40.")  # fmt: skip
    assert code == 0, err
    assert "Saved 2 memories" in out
    saved = files(project)
    assert len(saved) == 2
    assert [s.split("/")[0] for s in saved] == ["knowledge", "rules"]
    bodies = {s: (project / ".agents/.engram" / s).read_text() for s in saved}
    assert not any("knowledge The CI" in b or "commits. knowledge" in b for b in bodies.values())


def test_pairs_can_be_revised_one_at_a_time(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", "Always sign commits.",
                       "skill", "To release: tag, then push the tag.",
                       answers="B 2: To release: tag, push the tag, then publish.\nA\n")  # fmt: skip
    assert code == 0 and "Saved 2 memories" in out
    skills = files(project, "skills")
    assert len(skills) == 1
    assert "then publish" in (project / ".agents/.engram" / skills[0]).read_text()


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (["rulez", "Always sign commits."], "'rule'"),
        (["knowlege", "The CI runs on Fedora."], "'knowledge'"),
        (["skil", "To release: tag it."], "'skill'"),
        (["rule", "Always sign commits.", "knowlege", "The CI runs on Fedora."], "'knowledge'"),
    ],
)
def test_a_type_one_edit_away_is_an_error_with_a_suggestion(
    project: Path, monkeypatch, capsys, argv: list[str], wanted: str
) -> None:
    code, _, err = run(project, monkeypatch, capsys, "save", "-f", *argv)
    assert code == 2 and "not a memory type" in err and f"did you mean {wanted}" in err
    assert "Traceback" not in err and files(project) == []


def test_the_near_miss_hint_saves_the_words_as_typed(project: Path, monkeypatch, capsys) -> None:
    code, _, _ = run(
        project, monkeypatch, capsys, "save", "-f", "knowledge", "Rulez is our linter."
    )
    assert code == 0 and len(files(project, "knowledge")) == 1


def test_unquoted_words_after_a_type_stay_one_memory(project: Path, monkeypatch, capsys) -> None:
    code, out, _ = run(project, monkeypatch, capsys, "save", "-f", "rule", "never", "kill", "the",
                       "build", "daemon")  # fmt: skip
    assert code == 0 and "Saved 1 memory" in out and len(files(project, "rules")) == 1


def test_installed_save_with_two_pairs(project: Path) -> None:
    def engram(*argv: str) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "NO_COLOR": "1"}
        return subprocess.run(
            [str(ENGRAM), *argv], cwd=project, capture_output=True, text=True, env=env,
            timeout=60, check=False,
        )  # fmt: skip

    proc = engram("save", "-f", "rule", "Always sign commits.", "knowledge", "The CI is Fedora.")
    assert proc.returncode == 0, proc.stderr
    assert len(files(project)) == 2
    proc = engram("save", "rulez", "Always sign commits.")
    assert proc.returncode == 2 and "did you mean 'rule'" in proc.stderr
    assert len(files(project)) == 2


# ---------------------------------------------------------------- keeping a possible duplicate

EXISTING = "Run `pytest -q` before every commit"
SIMILAR = "Always run make lint and pytest -q before opening a pull request"


def _with_existing(project: Path, monkeypatch, capsys) -> None:
    code, _, err = run(project, monkeypatch, capsys, "save", "rule", EXISTING, "--force")
    assert code == 0, err


def test_plain_approval_still_defers_a_possible_duplicate(
    project: Path, monkeypatch, capsys
) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, answers="A\n")
    assert code == 0 and "Nothing was written" in out and "Deferred 1" in out
    assert files(project, "rules") == ["rules/run-pytest-q-before-every-commit.md"]


def test_k_at_the_prompt_keeps_a_possible_duplicate_as_new(
    project: Path, monkeypatch, capsys
) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, answers="K 1\n")
    assert "   Keep as new: answer K 1" in out  # shown next to the deferred candidate
    assert "K/U/S 1 = keep as new, update or skip a possible duplicate" in out
    assert code == 0 and "Saved 1 memory" in out and "Deferred" not in out
    assert len(files(project, "rules")) == 2


def test_a_with_k_approves_the_others_and_keeps_the_duplicate(
    project: Path, monkeypatch, capsys
) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, err = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, "knowledge",
                         "Builds use Bazel.", "knowledge", "Deploys run on Fridays.",
                         answers="K 2\nA 2,3 K 1\n")  # fmt: skip
    assert "candidate 2 is not deferred as a possible duplicate" in err
    assert code == 0 and "Saved 3 memories" in out
    assert len(files(project)) == 4


def test_propose_prints_the_shell_commands_and_no_prompt_answers(
    project: Path, monkeypatch, capsys
) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, "--propose")
    token = next(ln.split()[-1] for ln in out.splitlines() if ln.startswith("Approval token:"))
    assert code == 0 and "Terminal:" not in out and "Agent:" not in out
    assert f"engram commit {token} --approve all" in out
    assert f"   Keep as new: engram commit {token} --keep 1" in out
    assert f"   Update run-pytest-q-before-every-commit: engram commit {token} --update 1" in out


def test_u_at_the_prompt_updates_the_memory_a_duplicate_may_repeat(
    project: Path, monkeypatch, capsys
) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, answers="U 1\n")
    assert "   Update run-pytest-q-before-every-commit: answer U 1" in out
    assert code == 0 and "UPDATE" in out and "revision 1 -> 2" in out
    assert files(project, "rules") == ["rules/run-pytest-q-before-every-commit.md"]


def test_s_at_the_prompt_skips_a_possible_duplicate(project: Path, monkeypatch, capsys) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, answers="S 1\n")
    assert code == 0 and "Nothing was written" in out and "skipped   #1" in out
    assert "Deferred" not in out


def test_commit_keep_needs_a_terminal(project: Path, monkeypatch, capsys) -> None:
    _with_existing(project, monkeypatch, capsys)
    code, out, _ = run(project, monkeypatch, capsys, "save", "rule", SIMILAR, "--propose", "--json")
    token = json.loads(out)["data"]["approval_token"]
    code, _, err = run(project, monkeypatch, capsys, "commit", token, "--keep", "1")
    assert code == 2 and "for a person at a terminal" in err
    assert len(files(project, "rules")) == 1
    code, out, err = run(project, monkeypatch, capsys, "commit", token, "--keep", "1", answers="")
    assert code == 0 and "Saved 1 memory" in out, err
    assert len(files(project, "rules")) == 2


def test_commit_needs_approve_or_keep(project: Path, monkeypatch, capsys) -> None:
    code, _, err = run(project, monkeypatch, capsys, "commit", "eng1_x")
    assert code == 2 and "needs --approve" in err


def test_installed_commit_keep_is_refused_without_a_terminal_and_mcp_defers(project: Path) -> None:
    base = [str(ENGRAM), "-C", str(project)]
    opts = {"capture_output": True, "text": True, "stdin": subprocess.DEVNULL, "timeout": 60}
    subprocess.run([*base, "save", "rule", EXISTING, "--force"], check=True, **opts)
    p = subprocess.run([*base, "save", "rule", SIMILAR, "--propose", "--json"], **opts)
    token = json.loads(p.stdout)["data"]["approval_token"]
    p = subprocess.run([*base, "commit", token, "--approve", "all", "--keep", "1"], **opts)
    assert p.returncode == 2 and "for a person at a terminal" in p.stderr
    # Over MCP the same proposal is deferred as usual, whatever extra argument is sent.
    req = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "engram_commit",
            "arguments": {"approval_token": token, "approve": "all", "keep": [1]}}},
    ]  # fmt: skip
    mcp = subprocess.run(
        [str(ENGRAM.with_name("engram-mcp"))], input="".join(json.dumps(r) + "\n" for r in req),
        capture_output=True, text=True, cwd=project, timeout=60,
    )  # fmt: skip
    assert len(files(project, "rules")) == 1, mcp.stdout


@pytest.mark.parametrize(
    ("answer", "parsed"),
    [("A", ("all", {})), ("a all", ("all", {})), ("A 1,3", ("1,3", {})), ("K 3", ("", {3: "new"})),
     ("A 1,2 K 3", ("1,2", {3: "new"})), ("A K 2", ("all", {2: "new"})), ("k1", ("", {1: "new"})),
     ("U 2 S 3", ("", {2: "update", 3: "skip"})), ("A 1 K 2,3 S 4", ("1", {2: "new", 3: "new", 4: "skip"})),
     ("K 2 U 2", None), ("A 1 3", None), ("K", None), ("B x", None), ("", None), ("A 1,2 K", None)],
)  # fmt: skip
def test_prompt_answers(answer: str, parsed: tuple[str, dict[int, str]] | None) -> None:
    from engram.cli.write import parse_answer

    assert parse_answer(answer) == parsed
