"""The installed `engram` executable: read commands, --json envelopes and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ws_root


def engram(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram.cli.main", *args], cwd=cwd, capture_output=True, text=True, input=stdin,
        env=os.environ.copy(), timeout=60,
    )  # fmt: skip


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    proj = tmp_path / "demo"
    proj.mkdir()
    res = engram("init", "--example", cwd=proj)
    assert res.returncode == 0, res.stderr
    return proj


def test_init_then_load_prints_a_routed_pack(demo: Path) -> None:
    res = engram("load", "prepare a release", cwd=demo)
    assert res.returncode == 0
    assert "# How to cut a release" in res.stdout


def test_json_envelope_of_load_search_route(demo: Path) -> None:
    for args in (
        ["load", "release"],
        ["search", "release"],
        ["route", "release"],
        ["status"],
        ["verify"],
    ):
        res = engram(*args, "--json", cwd=demo)
        env = json.loads(res.stdout)
        assert set(env) == {"contract_version", "ok", "data", "diagnostics"}, args
    load = json.loads(engram("load", "release", "--json", cwd=demo).stdout)["data"]
    assert {"selected_keys", "body_keys", "card_ids", "omitted_ids", "tokens"} <= set(load)
    entries = json.loads(engram("route", "release", "--json", cwd=demo).stdout)["data"]["entries"]
    assert entries and all({"id", "type", "scope", "score"} <= set(e) for e in entries)


def test_works_from_a_subfolder(demo: Path) -> None:
    sub = demo / "src" / "deep"
    sub.mkdir(parents=True)
    assert engram("search", "database", cwd=sub).returncode == 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["load", "--bogus"], "unrecognized arguments"),
        (["load", ""], "empty query"),
        (["load", "--id", "../x"], "not valid"),
        (["load", "--id", "a/b"], "not valid"),
        (["load", "x", "--limit", "0"], "from 1 to 32"),
        (["config", "set", "load.limit", "99"], "load.limit"),
        (["config", "set", "colour", "red"], "unknown configuration key"),
        (["set-rule-variant", "loud"], "light, balanced, strict, off, status"),
        (["search", "x", "--limit", "abc"], "integer"),
    ],
)
def test_bad_input_is_one_clear_line_with_exit_2_and_nothing_changes(
    demo: Path, args: list[str], message: str
) -> None:
    before = {
        p: p.read_bytes()
        for p in ws_root(demo).rglob("*")
        if p.is_file() and "cache" not in p.parts
    }
    res = engram(*args, cwd=demo)
    assert res.returncode == 2, res
    assert message in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    after = {
        p: p.read_bytes()
        for p in ws_root(demo).rglob("*")
        if p.is_file() and "cache" not in p.parts
    }
    assert before == after


def test_no_root_is_a_clear_error(tmp_path: Path) -> None:
    res = engram("load", "anything", cwd=tmp_path)
    assert res.returncode == 1
    assert "engram init" in res.stderr


def test_verify_exits_non_zero_when_something_is_wrong(demo: Path) -> None:
    assert engram("verify", cwd=demo).returncode == 0
    p = ws_root(demo) / "rules" / "no-secrets-in-logs.md"
    p.write_text(p.read_text() + "\n- hand edit\n")
    res = engram("verify", cwd=demo)
    assert res.returncode == 1 and "modified: rules/no-secrets-in-logs.md" in res.stdout
    assert engram("verify", "--accept", str(p), cwd=demo).returncode == 0


def test_set_role_and_role_override(demo: Path, write_memory) -> None:
    write_memory(
        ws_root(demo),
        "knowledge",
        "css-grid",
        "Use CSS grid for layouts",
        "- grid over flex",
        role=["frontend"],
    )
    assert "css-grid" not in engram("load", "css grid layout", cwd=demo).stdout
    assert "css-grid" in engram("load", "css grid layout", "--role", "frontend", cwd=demo).stdout
    assert engram("set-role", "frontend", cwd=demo).returncode == 0
    assert "css-grid" in engram("load", "css grid layout", cwd=demo).stdout
    assert engram("set-role", "--clear", cwd=demo).returncode == 0
    assert "css-grid" not in engram("load", "css grid layout", cwd=demo).stdout


def test_rebuild_index_command(demo: Path) -> None:
    res = engram("rebuild-index", cwd=demo)
    assert res.returncode == 0 and "8 memories indexed" in res.stdout


def test_a_workspace_root_that_is_a_file_is_named(tmp_path: Path) -> None:
    (tmp_path / ".agents").mkdir()
    (tmp_path / ".agents" / ".engram").write_text("oops")
    res = engram("load", "anything", cwd=tmp_path)
    assert res.returncode == 2
    assert "is a file" in res.stderr and len(res.stderr.strip().splitlines()) == 1


def test_unwritable_root_is_one_line_and_changes_nothing(
    demo: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    import engram.core.store.files as store
    from engram.cli.main import main

    def refuse(path, data, **kw):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(store, "atomic_write", refuse)
    monkeypatch.chdir(demo)
    before = (ws_root(demo) / "config.json").read_bytes()
    assert main(["config", "set", "load.limit", "5"]) == 1
    err = capsys.readouterr().err
    assert (
        err.startswith("engram: error: Permission denied: ") and len(err.strip().splitlines()) == 1
    )
    assert (ws_root(demo) / "config.json").read_bytes() == before


def test_json_errors_print_an_envelope_with_ok_false(demo: Path) -> None:
    res = engram("load", "--id", "no-such-memory", "--json", cwd=demo)
    assert res.returncode == 1
    env = json.loads(res.stdout)
    assert env["ok"] is False and env["diagnostics"][0]["code"] == "not_found"


# `engram load` without argparse: the fast reader answers exactly as the full parser, or
# leaves the words to it.
LOAD_ARGVS: list[list[str]] = [
    ["fix", "the", "login", "bug"],
    ["fix the login bug", "--json"],
    ["--json", "--dry-run", "fix", "bug"],
    ["--budget", "300", "x"],
    ["--budget-tokens=200", "x", "--explain"],
    ["x", "--budget-tokens", "1000000", "--full", "--all"],
    ["--id", "a-b", "--id", "c", "--json"],
    ["--disclosure", "cards", "--limit", "3", "--role", "backend,ops", "db migration"],
    ["--disclosure=bodies", "x", "--role="],
    ["--role", "", "x"],
    ["--budget", "1_000", "x"],
    ["--budget", " 12 ", "x"],
    ["--budget", "+5", "x"],
    ["x", "--json", "--json"],
    ["--path", "src/a.py", "--path=src/b.py", "--branch", "fix/x", "x"],
    ["--branch=", "--path", "", "x"],
    [],
    [""],
]
LOAD_ARGVS_LEFT_TO_ARGPARSE: list[list[str]] = [
    ["--budget", "0", "x"],
    ["--budget", "-5", "x"],
    ["--budget", "ten", "x"],
    ["--budget", "²", "x"],
    ["--limit", "40", "x"],
    ["--disclosure", "nope", "x"],
    ["--bud", "100", "x"],
    ["--frob", "x"],
    ["-h"],
    ["x", "--", "--json"],
    ["fix", "--json", "the", "bug"],
    ["--role"],
    ["--id", "--json"],
    ["--json=1", "x"],
    ["-", "x"],
    ["x", "-C", "/tmp"],
    ["--path"],
    ["--pat", "a.py", "x"],
]


def _full_parse(argv: list[str], workspace: str | None) -> dict[str, object] | None:
    from engram.cli.main import build_parser

    prefix = ["-C", workspace] if workspace else []
    try:
        ns = build_parser("load").parse_args([*prefix, "load", *argv])
    except SystemExit:
        return None
    return vars(ns)


@pytest.mark.parametrize("workspace", [None, "/some/dir"])
def test_the_fast_load_reader_equals_the_full_parser(workspace: str | None, capsys) -> None:
    from engram.cli.read import fast_load_args

    for argv in LOAD_ARGVS:
        fast = fast_load_args(argv, workspace)
        assert fast is not None, argv
        assert vars(fast) == _full_parse(argv, workspace), argv
    for argv in LOAD_ARGVS_LEFT_TO_ARGPARSE:
        assert fast_load_args(argv, workspace) is None, argv
    capsys.readouterr()


def test_a_cold_load_imports_only_what_it_needs(demo: Path) -> None:
    probe = (
        "import sys; from engram.cli.main import main; sys.argv = ['engram', *sys.argv[1:]];"
        " code = main(); sys.stdout.flush();"
        " sys.stderr.write(' '.join(m for m in ('argparse', '_hashlib', 'subprocess', 'secrets',"
        " 'engram.core.read.signals', 'engram.core.safety.scan',"
        " 'engram.core.safety.injection', 'engram.core.safety.secrets')"
        " if m in sys.modules))"
    )
    for task in ("prepare a release", "release"):  # the first loads build the index and
        assert engram("load", task, cwd=demo).returncode == 0  # scan what they show, once
    for args in (["load", "prepare a release"], ["-C", str(demo), "load", "release", "--json"]):
        res = subprocess.run(
            [sys.executable, "-c", probe, *args], cwd=demo, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert res.returncode == 0 and "release" in res.stdout.lower(), res.stdout
        assert res.stderr == "", res.stderr
    res = subprocess.run(
        [sys.executable, "-c", probe, "load", "--bud", "9", "x"], cwd=demo,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2 and "ambiguous option: --bud" in res.stderr  # argparse answered


def test_load_output_is_the_same_through_either_reader(demo: Path, capsys, monkeypatch) -> None:
    import engram.cli.read as read
    from engram.cli.main import main

    monkeypatch.chdir(demo)
    argv = ["load", "prepare a release", "--json", "--dry-run", "--budget", "400"]
    assert main(argv) == 0
    fast = capsys.readouterr().out
    monkeypatch.setattr(read, "fast_load_args", lambda *a: None)
    assert main(argv) == 0
    assert capsys.readouterr().out == fast and json.loads(fast)["ok"] is True


def _billing_workspace(demo: Path, write_memory) -> Path:
    root = ws_root(demo)
    write_memory(root, "rule", "billing-money", "Money is integer cents",
                 "- never floats for amounts", paths=["src/billing/**"])  # fmt: skip
    write_memory(root, "knowledge", "waitlist-notes", "How the waitlist fills slots",
                 "- the logic lives in `src/scheduling/waitlist.py`; first come, first served")  # fmt: skip
    return root


def test_load_takes_the_files_and_branch_of_the_work(demo: Path, write_memory) -> None:
    _billing_workspace(demo, write_memory)
    task = "the test fails after my change, fix it"

    def load(*args: str, cwd: Path = demo) -> dict:
        res = engram("load", *args, "--json", "--dry-run", cwd=cwd)
        assert res.returncode == 0, res.stderr
        return json.loads(res.stdout)["data"]

    assert "billing-money" not in load(task)["body_keys"]
    data = load(task, "--path", "src/billing/charge.py", "--branch", "fix/rounding")
    assert data["body_keys"][:1] == ["billing-money"]
    assert data["signals"] == {"paths": ["src/billing/charge.py"], "branch": "fix/rounding"}
    # a relative path starts from the current folder, as any path on a command line
    sub = demo / "src" / "scheduling"
    sub.mkdir(parents=True)
    data = load(task, "--path", "waitlist.py", cwd=sub)
    assert data["signals"]["paths"] == ["src/scheduling/waitlist.py"]
    assert "waitlist-notes" in data["body_keys"]
    assert load(task, "--path", str(demo / "src/billing/x.py"))["body_keys"][:1] == [
        "billing-money"
    ]
    # -C: relative to that folder
    other = demo.parent / "elsewhere"
    other.mkdir()
    res = engram("-C", str(demo), "load", task, "--path", "src/billing/x.py", "--json", cwd=other)
    assert json.loads(res.stdout)["data"]["body_keys"][:1] == ["billing-money"]
    # the signals alone are a task
    alone = load("--path", "src/billing/charge.py")
    assert alone["body_keys"] == ["billing-money"] and alone["query"] in (None, "")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--path", "../other/x.py"], "is outside the project"),
        (["--path", "/etc/passwd"], "is outside the project"),
        (["--path", "   "], "is not a file path"),
        (["--path", "a" * 1001], "is not a file path"),
        ([arg for i in range(51) for arg in ("--path", f"f{i}.py")], "at most 50 per load"),
        (["--branch", "b" * 201], "longer than 200 characters"),
        (["--path", "a\x1b[31m.py"], "paths: contains an ESC character"),
    ],
)
def test_bad_task_signals_are_one_clear_line(demo: Path, args: list[str], message: str) -> None:
    res = engram("load", "fix it", *args, cwd=demo)
    assert res.returncode == 2, res.stderr
    assert message in res.stderr and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert res.stdout == ""
