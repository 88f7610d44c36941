"""`run_routing_benchmark` and `engram benchmark`: recall, forbidden loads, isolation, bad input."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from engram.cli.main import main
from engram.core.benchmark import leave_one_out, retier, run_routing_benchmark
from engram.core.errors import UsageError
from tests.conftest import ws_root


@pytest.fixture
def suite(project: Path, write_memory) -> Path:
    """A small labelled workspace: distinct topics, a prerequisite, a role, an archived memory."""
    root = ws_root(project)
    write_memory(root, "rule", "release-green-pipeline", "Release only from a green pipeline",
                 "- Tag a release only when the main pipeline passed.", tags=["release", "ci"])  # fmt: skip
    write_memory(root, "skill", "release-tagging", "Tagging a release",
                 "- Create a signed tag vX.Y.Z and push it.", tags=["release", "git"],
                 depends_on=["release-green-pipeline"])  # fmt: skip
    write_memory(root, "knowledge", "postgres-pooling", "Postgres connections use PgBouncer",
                 "- Transaction pooling: no session advisory locks.", tags=["database", "postgres"])  # fmt: skip
    write_memory(root, "knowledge", "storybook-stories", "Every component has Storybook stories",
                 "- One story per visual state of the component.", tags=["frontend", "storybook"],
                 role=["frontend"])  # fmt: skip
    write_memory(root, "knowledge", "jenkins-release", "Releases were built on Jenkins",
                 "- The Jenkins release job tags and uploads the build.", tags=["release"],
                 folder="archive")  # fmt: skip
    return project


def write_cases(project: Path, cases: list[dict], name: str = "cases.json") -> Path:
    path = project.parent / name
    path.write_text(json.dumps({"workspace": project.name, "cases": cases}), encoding="utf-8")
    return path


GOOD_CASES = [
    {"name": "tag", "task": "tag and push the new release",
     "must": ["release-tagging", "release-green-pipeline"], "must_not": ["jenkins-release"]},
    {"name": "pooling", "task": "advisory locks misbehave behind PgBouncer",
     "must": ["postgres-pooling"], "must_not": ["release-tagging", "storybook-stories"]},
    {"name": "stories-no-role", "task": "add Storybook stories for the component",
     "must": [], "must_not": ["storybook-stories"]},
    {"name": "stories-frontend", "task": "add Storybook stories for the component",
     "must": ["storybook-stories"], "roles": ["frontend"]},
]  # fmt: skip


def tree_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(folder.rglob("*")):
        h.update(str(p.relative_to(folder)).encode())
        if p.is_file():
            h.update(p.read_bytes())
    return h.hexdigest()


def test_passing_suite_reports_recall_tokens_and_loaded_ids(suite: Path) -> None:
    res = run_routing_benchmark(write_cases(suite, GOOD_CASES))
    d = res.data
    assert res.ok and d["passed"]
    assert d["cases"] == 4
    assert d["must_total"] == 4 and d["must_loaded"] == 4 and d["recall"] == 1.0
    assert d["forbidden_loaded"] == [] and d["missed"] == [] and d["failing_cases"] == []
    assert d["memory_files"] == 5  # the archived memory counts: cases may forbid it
    by_name = {r["name"]: r for r in d["results"]}
    assert {"release-tagging", "release-green-pipeline"} <= set(by_name["tag"]["loaded"])
    assert "storybook-stories" not in by_name["stories-no-role"]["loaded"]
    assert by_name["stories-frontend"]["roles"] == ["frontend"]
    assert all(r["tokens"] > 0 for r in d["results"])
    assert d["tokens"]["min"] <= d["tokens"]["median"] <= d["tokens"]["max"]
    assert "recall   1.000 (4/4)" in res.text and "PASS" in res.text
    assert res.envelope()["ok"] is True


def test_a_missed_must_id_lowers_recall_and_fails(suite: Path) -> None:
    cases = [*GOOD_CASES, {"name": "wrong", "task": "advisory locks behind PgBouncer",
                           "must": ["release-tagging"]}]  # fmt: skip
    res = run_routing_benchmark(write_cases(suite, cases))
    assert not res.ok
    assert res.data["recall"] == pytest.approx(4 / 5)
    assert res.data["missed"] == [{"case": "wrong", "id": "release-tagging"}]
    assert res.data["failing_cases"] == ["wrong"]
    assert "- wrong: 'advisory locks behind PgBouncer'" in res.text
    assert "missed:    release-tagging" in res.text
    assert "loaded:    postgres-pooling" in res.text
    assert "FAIL" in res.text


def test_the_recall_threshold_is_configurable(suite: Path) -> None:
    cases = [*GOOD_CASES, {"name": "wrong", "task": "advisory locks behind PgBouncer",
                           "must": ["release-tagging"]}]  # fmt: skip
    res = run_routing_benchmark(write_cases(suite, cases), min_recall=0.8)
    assert res.ok and res.data["min_recall"] == 0.8


def test_one_forbidden_id_fails_even_with_full_recall(suite: Path) -> None:
    cases = [{"name": "leak", "task": "tag and push the new release",
              "must": ["release-tagging"], "must_not": ["release-green-pipeline"]}]  # fmt: skip
    res = run_routing_benchmark(write_cases(suite, cases))
    assert res.data["recall"] == 1.0
    assert not res.ok
    assert res.data["forbidden_loaded"] == [{"case": "leak", "id": "release-green-pipeline"}]
    assert "forbidden: release-green-pipeline" in res.text


def test_the_fixture_workspace_is_never_modified(suite: Path) -> None:
    before = tree_digest(suite)
    run_routing_benchmark(write_cases(suite, GOOD_CASES))
    assert tree_digest(suite) == before


def test_user_roles_and_global_root_do_not_leak_into_cases(
    suite: Path, tmp_path: Path, isolated_home: Path, monkeypatch: pytest.MonkeyPatch, write_memory
) -> None:
    user_cfg = isolated_home / ".engram-home" / "config.json"
    user_cfg.parent.mkdir(parents=True, exist_ok=True)
    user_cfg.write_text(json.dumps({"roles": ["frontend"]}), encoding="utf-8")
    global_root = tmp_path / "global"
    write_memory(global_root, "rule", "global-storybook", "Storybook stories everywhere",
                 "- Add Storybook stories.", tags=["storybook"])  # fmt: skip
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(global_root))
    cases = [{"name": "stories", "task": "add Storybook stories for the component",
              "must_not": ["storybook-stories"]}]  # fmt: skip
    res = run_routing_benchmark(write_cases(suite, cases))
    assert res.ok, res.text
    assert res.data["results"][0]["loaded"] == []
    assert json.loads(user_cfg.read_text()) == {"roles": ["frontend"]}
    assert os.environ["ENGRAM_GLOBAL_DIR"] == str(global_root)  # restored afterwards
    assert os.environ["ENGRAM_HOME"] == str(isolated_home / ".engram-home")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("not json", "not valid JSON"),
        ("[]", 'expected an object {"workspace"'),
        ('{"cases": []}', '"workspace" must name a folder'),
        ('{"workspace": "nowhere", "cases": []}', "has no .agents/.engram/ folder"),
        ('{"workspace": "project", "cases": []}', '"cases" must be a non-empty list'),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x", "mustnot": []}]}',
         "unknown key(s) mustnot; allowed: name, task, must, must_not, roles, category, paths, branch"),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x", "paths": "src/a.py"}]}',
         '"paths" must be a list of non-empty strings'),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x", "branch": 3}]}',
         '"branch" must be a string'),
        ('{"workspace": "project", "cases": [{"name": "", "task": "x"}]}', 'needs a non-empty "name"'),
        ('{"workspace": "project", "cases": [{"name": "a", "task": " "}]}', 'needs a non-empty "task"'),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x"}, {"name": "a", "task": "y"}]}',
         "case name 'a' is used twice"),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x", "must": "id"}]}',
         "must be a list of non-empty strings"),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x", "must": ["p"], "must_not": ["p"]}]}',
         "lists p in both must and must_not"),
        ('{"workspace": "project", "cases": [{"name": "a", "task": "x", "must": ["no-such-id"]}]}',
         "no memory file of the workspace has: a: no-such-id"),
    ],
)  # fmt: skip
def test_bad_cases_files_get_one_clear_error(suite: Path, content: str, message: str) -> None:
    path = suite.parent / "bad.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UsageError) as exc:
        run_routing_benchmark(path)
    assert message in exc.value.message


def test_a_missing_cases_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="does not exist"):
        run_routing_benchmark(tmp_path / "missing.json")


# ---------------------------------------------------------------- the CLI


def test_cli_json_envelope_and_exit_codes(suite: Path, capsys: pytest.CaptureFixture) -> None:
    ok_path = write_cases(suite, GOOD_CASES)
    assert main(["benchmark", str(ok_path), "--json"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert env["ok"] is True and env["contract_version"]
    assert env["data"]["recall"] == 1.0 and env["data"]["forbidden_loaded"] == []

    bad = write_cases(suite, [{"name": "leak", "task": "tag and push the new release",
                               "must_not": ["release-tagging"]}], "leak.json")  # fmt: skip
    assert main(["benchmark", str(bad)]) == 1
    out = capsys.readouterr().out
    assert "forbidden loaded   1" in out and "forbidden: release-tagging" in out


def test_cli_bad_input_exits_2_with_one_line(suite: Path, capsys: pytest.CaptureFixture) -> None:
    assert main(["benchmark", str(suite.parent / "missing.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("engram: error: cases file") and err.count("\n") == 1
    with pytest.raises(SystemExit) as exc:
        main(["benchmark", str(write_cases(suite, GOOD_CASES)), "--min-recall", "1.5"])
    assert exc.value.code == 2
    assert "--min-recall must be a number from 0 to 1" in capsys.readouterr().err


# ---------------------------------------------------------------- figures and leave one out


CATEGORISED = [
    {**GOOD_CASES[0], "category": "direct"},
    {**GOOD_CASES[1], "category": "paraphrase"},
    {"name": "weather", "task": "what is the weather in Lisbon", "must": [],
     "must_not": ["release-tagging"], "category": "nothing_applies"},
    {"name": "thanks", "task": "thanks!", "must": [], "category": "chit_chat"},
]  # fmt: skip


def test_figures_are_reported_per_category(suite: Path) -> None:
    res = run_routing_benchmark(write_cases(suite, CATEGORISED))
    cats = res.data["categories"]
    assert set(cats) == {"direct", "paraphrase", "nothing_applies", "chit_chat"}
    assert cats["nothing_applies"]["empty_precision"] == 1.0
    assert cats["direct"]["empty_precision"] is None and cats["direct"]["recall"] == 1.0
    f = res.data["figures"]
    assert f["cases"] == 4 and f["forbidden_bodies"] == 0.0 and f["tokens"] > 0
    assert "nothing_applies" in res.text and "recall@8" in res.text
    # each result carries the graded memories the thresholds are chosen from
    tag = next(r for r in res.data["results"] if r["name"] == "tag")
    assert {g["id"] for g in tag["graded"]} >= {"release-tagging", "release-green-pipeline"}
    assert all(0 <= g["confidence"] <= 1 and g["body_tokens"] > 0 for g in tag["graded"])


def test_an_uncategorised_case_gets_a_category_from_its_labels(suite: Path) -> None:
    res = run_routing_benchmark(write_cases(suite, GOOD_CASES))
    assert set(res.data["categories"]) == {"general", "nothing_applies", "role"}


def test_retiering_moves_memories_between_bodies_cards_and_nothing(suite: Path) -> None:
    res = run_routing_benchmark(write_cases(suite, CATEGORISED))
    tag = next(r for r in res.data["results"] if r["name"] == "tag")
    assert retier(tag, 0.0, 0.0)["cards"] == [] and len(retier(tag, 0.0, 0.0)["bodies"]) >= 2
    none = retier(tag, 1.01, 1.01)
    assert none["loaded"] == [] and none["missed"] == tag["must"]
    cards = retier(tag, 1.01, 0.0)
    assert cards["bodies"] == [] and set(tag["must"]) <= set(cards["cards"])
    assert cards["tokens"] < retier(tag, 0.0, 0.0)["tokens"]


def test_leave_one_out_chooses_on_the_others_and_reports_the_unseen(suite: Path) -> None:
    a = write_cases(suite, CATEGORISED[:2], "a.json")
    b = write_cases(suite, CATEGORISED[2:], "b.json")
    c = write_cases(suite, GOOD_CASES, "c.json")
    res = leave_one_out([a, b], [c])
    d = res.data
    assert [s["cases_file"] for s in d["suites"]] == [str(a), str(b)]
    for s in d["suites"]:
        assert s["body_at"] >= s["card_at"] >= 0.2 and s["figures"]["cases"] == 2
    assert d["unseen"][0]["cases_file"] == str(c)
    assert (d["unseen"][0]["body_at"], d["unseen"][0]["card_at"]) == (
        d["defaults"]["body_at"],
        d["defaults"]["card_at"],
    )
    assert "Leave one suite out" in res.text and "Unseen suite c" in res.text
    with pytest.raises(UsageError, match="at least two cases files"):
        leave_one_out([a])


def test_cli_leave_one_out(suite: Path, capsys: pytest.CaptureFixture) -> None:
    a = write_cases(suite, CATEGORISED[:2], "a.json")
    b = write_cases(suite, CATEGORISED[2:], "b.json")
    assert main(["benchmark", str(a), str(b), "--leave-one-out", "--json"]) == 0
    env = json.loads(capsys.readouterr().out)
    assert len(env["data"]["suites"]) == 2 and env["data"]["targets"]["tokens"] == 600
    assert main(["benchmark", str(a), str(b)]) == 2
    assert "need --leave-one-out" in capsys.readouterr().err


def test_cli_leave_one_out_with_query_files_chooses_the_search_body_threshold(
    suite: Path, capsys: pytest.CaptureFixture
) -> None:
    a = write_cases(suite, CATEGORISED[:2], "a.json")
    b = write_cases(suite, CATEGORISED[2:], "b.json")
    qa, qb = suite / "qa.json", suite / "qb.json"
    qa.write_text(json.dumps({c["name"]: ["release tagging"] for c in CATEGORISED[:2]}))
    qb.write_text(json.dumps({c["name"]: [] for c in CATEGORISED[2:]}))
    args = ["benchmark", str(a), str(b), "--leave-one-out", "--queries", str(qa)]
    assert main([*args, "--queries", str(qb), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)["data"]
    assert d["queries"] is True and d["targets"]["forbidden_bodies"] == 0.02
    assert d["defaults"] == {"body_at": 0.8, "card_at": 0.2}
    assert all(s["card_at"] == 0.2 for s in d["suites"])  # cards keep the router's threshold
    assert main(args) == 2
    assert "one --queries file per cases file" in capsys.readouterr().err
    assert main(["benchmark", str(a), "--queries", str(qa), "--queries", str(qb)]) == 2
    assert "one cases file takes one --queries file" in capsys.readouterr().err
    assert main([*args, "--queries", str(qb), "--unseen", str(b)]) == 2
    assert "--unseen goes without --queries" in capsys.readouterr().err


# ---------------------------------------------------------------- the workspace generator


def test_generated_workspaces_are_deterministic_varied_and_loadable(tmp_path: Path) -> None:
    import importlib.util

    from engram.core import api
    from engram.core.store.manifest import read_manifest
    from engram.core.store.roots import resolve_roots

    gen_path = Path(__file__).resolve().parents[2] / "benchmarks" / "generate.py"
    spec = importlib.util.spec_from_file_location("engram_bench_generate", gen_path)
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)

    a = gen.generate_workspace(tmp_path / "a", 400, seed=3)
    b = gen.generate_workspace(tmp_path / "b", 400, seed=3)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*.md"))
    assert len(files_a) == 400
    assert files_a == sorted(p.relative_to(b) for p in b.rglob("*.md"))
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files_a)

    roots = resolve_roots(a)
    archived = sum(1 for f in files_a if f.parts[2] == "archive")
    built = api.rebuild_index(roots).data
    assert (built["indexed"], built["unreadable"]) == (400 - archived, 0)
    bullets = [
        line
        for f in files_a
        for line in (a / f).read_text().splitlines()
        if line.startswith("- ") and not line.startswith(("- Light:", "- Balanced:", "- Strict:"))
    ]
    assert len(bullets) > 1000 and len(set(bullets)) == len(bullets)  # no sentence repeated
    sub_dirs = {f.parts[2] for f in files_a}
    assert sub_dirs == {"rules", "skills", "knowledge", "working", "archive"}
    assert len(read_manifest(roots.primary)) == sum(1 for f in files_a if f.parts[2] != "working")
    res = api.load(roots, api.LoadRequest(query=gen.sample_tasks(1, seed=3)[0], count_usage=False))
    assert res.data["selected_keys"] and not res.diagnostics  # prerequisites are all visible
