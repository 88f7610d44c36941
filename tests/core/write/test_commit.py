from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import NotFoundError, SafetyError, UsageError
from engram.core.memory import parse_memory
from engram.core.read.request import LoadRequest
from engram.core.store import journal as store_journal
from engram.core.store.manifest import current_hashes, read_manifest
from engram.core.store.roots import create_layout, resolve_roots
from engram.core.write import commit


def root_of(project: Path) -> Path:
    return project / ".agents/.engram"


def load(project: Path, rel: str):
    return parse_memory((root_of(project) / rel).read_text())


def assert_verify_clean(project: Path) -> None:
    roots = resolve_roots(project)
    result = api.verify(roots)
    assert result.ok, result.text
    for root in roots.all:
        assert read_manifest(root) == current_hashes(root)


def test_force_writes_files_and_manifest(project: Path) -> None:
    roots = resolve_roots(project)
    out = api.save_session_force(
        roots,
        "TYPE: rule | TEXT: Always run the tests before a release. | CONTEXT: 1.2 shipped broken\n"
        "TYPE: skill | TEXT: To release: run tests, tag. | DEPENDS_ON: always-run-tests-before-release"
        " | LEVEL: advanced",
    )
    assert [w["file"] for w in out.data["written"]] == [
        "rules/always-run-tests-before-release.md",
        "skills/release-run-tests-tag.md",
    ]
    rule = load(project, "rules/always-run-tests-before-release.md")
    assert rule.source == "session" and rule.revision == 1 and rule.authority == "instruction"
    assert rule.variants["balanced"] == "Always run the tests before a release."
    assert set(rule.variants) == {"light", "balanced", "strict"}
    assert rule.origin == "1.2 shipped broken"
    skill = load(project, "skills/release-run-tests-tag.md")
    assert skill.depends_on == ["always-run-tests-before-release"] and skill.level == "advanced"
    assert_verify_clean(project)


def test_force_defers_duplicates_missing_dependencies_and_possible_duplicates(
    project: Path,
) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: rule | TEXT: Always run the tests before a release.")
    out = api.save_session_force(
        roots,
        "TYPE: rule | TEXT: Always run the tests before a release.\n"
        "TYPE: skill | TEXT: To deploy: build and push. | DEPENDS_ON: docker-login\n"
        "TYPE: rule | TEXT: Always run the tests before a release is cut on Fridays.\n"
        "TYPE: knowledge | TEXT: Staging deploys happen on Fridays.",
    )
    deferred = {d["number"]: d for d in out.data["deferred"]}
    assert set(deferred) == {1, 2, 3}
    assert deferred[1]["reason"] == "duplicate of always-run-tests-before-release"
    assert deferred[1]["guidance"] == "engram load --id always-run-tests-before-release"
    assert "depends on missing id(s): docker-login" in deferred[2]["reason"]
    assert deferred[3]["reason"].startswith("possible duplicate of always-run-tests")
    assert [w["id"] for w in out.data["written"]] == ["staging-deploys-happen-fridays"]
    assert "Deferred 3" in out.text and "engram load --id" in out.text
    assert_verify_clean(project)


def test_dependency_on_a_candidate_of_the_same_commit_is_fine(project: Path) -> None:
    roots = resolve_roots(project)
    out = api.save_session_force(
        roots,
        "TYPE: skill | TEXT: To ship: build. | DEPENDS_ON: docker-login-first\n"
        "TYPE: rule | TEXT: Docker login first.",
    )
    assert len(out.data["written"]) == 2 and out.data["deferred"] == []


def test_update_bumps_revision_and_keeps_created(project: Path, write_memory) -> None:
    write_memory(root_of(project), "knowledge", "invoice-retries", "Invoice retries",
                 created="2023-01-02", revision=3)  # fmt: skip
    api.verify(resolve_roots(project), accept_all=True)
    roots = resolve_roots(project)
    before = (root_of(project) / "knowledge/invoice-retries.md").read_bytes()
    out = api.save_session_force(
        roots, "TYPE: knowledge | TEXT: Invoice retries use jitter. | UPDATE: invoice-retries"
    )
    (w,) = out.data["written"]
    assert {k: w[k] for k in ("id", "scope", "file", "verdict")} == {
        "id": "invoice-retries", "scope": "workspace", "file": "knowledge/invoice-retries.md",
        "verdict": "UPDATE"}  # fmt: skip
    assert w["previous"] == {"revision": 3, "file": "archive/invoice-retries.r3.md"}
    assert (root_of(project) / "archive/invoice-retries.r3.md").read_bytes() == before
    assert (
        "+- Invoice retries use jitter." in w["diff"]
        and "archive/invoice-retries.r3.md" in out.text
    )
    m = load(project, "knowledge/invoice-retries.md")
    assert m.revision == 4 and m.created == "2023-01-02" and "jitter" in m.content
    assert_verify_clean(project)


def test_supersede_archives_the_old_memory_with_links(project: Path) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: rule | TEXT: Always squash merge pull requests.")
    out = api.save_session_force(roots, "TYPE: rule | TEXT: Never squash merge pull requests.")
    (w,) = out.data["written"]
    assert w["verdict"] == "SUPERSEDE"
    (a,) = out.data["archived"]
    assert a == {"id": "always-squash-merge-pull-requests", "scope": "workspace",
                 "file": "archive/always-squash-merge-pull-requests.md",
                 "superseded_by": w["id"]}  # fmt: skip
    assert not (root_of(project) / "rules/always-squash-merge-pull-requests.md").exists()
    old = load(project, a["file"])
    assert old.superseded_by == w["id"]
    assert load(project, w["file"]).supersedes == "always-squash-merge-pull-requests"
    assert_verify_clean(project)


def test_supersede_is_applied_only_while_it_still_matches(project: Path) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: rule | TEXT: Always squash merge pull requests.")
    token = api.propose(roots, "TYPE: rule | TEXT: Never squash merge pull requests.").data[
        "approval_token"
    ]
    api.archive(roots, "always-squash-merge-pull-requests", "policy dropped")
    out = api.commit(roots, token, "all")
    assert out.data["written"] == []
    (d,) = out.data["deferred"]
    assert "SUPERSEDE always-squash-merge-pull-requests no longer matches" in d["reason"]
    assert "recomputed: ADD" in d["reason"]


def test_archive_moves_and_never_deletes(project: Path) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: knowledge | TEXT: Builds use Bazel.")
    before = (root_of(project) / "knowledge/builds-use-bazel.md").read_text()
    out = api.archive(roots, "builds-use-bazel", "moved to Pants; ask jane.doe@northwind-mail.com")
    assert out.data["file"] == "archive/builds-use-bazel.md"
    archived = load(project, "archive/builds-use-bazel.md")
    assert archived.archived_reason == "moved to Pants; ask [REDACTED:email]"
    assert archived.content == parse_memory(before).content
    assert not (root_of(project) / "knowledge/builds-use-bazel.md").exists()
    api.save_session_force(roots, "TYPE: knowledge | TEXT: Builds use Bazel again.")
    api.archive(roots, "builds-use-bazel-again", "no")
    assert_verify_clean(project)
    with pytest.raises(NotFoundError):
        api.archive(roots, "builds-use-bazel", "twice")
    with pytest.raises(SafetyError):
        api.archive(roots, "../hashes", "x")
    with pytest.raises(UsageError, match="reason"):
        api.archive(roots, "builds-use-bazel-again", " ")


def test_a_crash_mid_commit_is_finished_by_the_next_command(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: rule | TEXT: Always squash merge pull requests.")
    import engram.core.store.files as store

    real = store.atomic_write
    calls = {"n": 0}

    def dying_write(path, data, **kw):
        calls["n"] += 1
        if calls["n"] == 3:  # journal, first file, then the process "dies"
            raise KeyboardInterrupt
        return real(path, data, **kw)

    token = api.propose(
        roots,
        "TYPE: rule | TEXT: Never squash merge pull requests.\n"
        "TYPE: knowledge | TEXT: The linter is ruff.",
    ).data["approval_token"]
    monkeypatch.setattr(store, "atomic_write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        api.commit(roots, token, "all")
    monkeypatch.setattr(store, "atomic_write", real)
    assert (root_of(project) / "cache" / store_journal.JOURNAL_FILE).exists()
    from engram.core.store.integrity import check_root

    half = check_root(roots.workspace)  # half applied: manifest and files disagree
    assert half["modified"] or half["missing"] or half["unmanaged"]
    api.save_session_force(roots, "TYPE: knowledge | TEXT: Docs are built with mkdocs.")
    assert not (root_of(project) / "cache" / store_journal.JOURNAL_FILE).exists()
    files = sorted(p.name for p in root_of(project).rglob("*.md"))
    assert "never-squash-merge-pull-requests.md" in files
    assert "linter-ruff.md" in files and "docs-built-mkdocs.md" in files
    assert (root_of(project) / "archive/always-squash-merge-pull-requests.md").exists()
    assert_verify_clean(project)


def test_verify_finishes_an_interrupted_commit(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = resolve_roots(project)
    import engram.core.store.files as store

    real = store.atomic_write
    calls = {"n": 0}

    def dying_write(path, data, **kw):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyboardInterrupt
        return real(path, data, **kw)

    monkeypatch.setattr(store, "atomic_write", dying_write)
    with pytest.raises(KeyboardInterrupt):
        api.save_session_force(
            roots,
            "TYPE: knowledge | TEXT: The linter is ruff.\nTYPE: knowledge | TEXT: Docs use mkdocs.",
        )
    monkeypatch.setattr(store, "atomic_write", real)
    result = api.verify(roots)
    assert result.ok and "Finished an interrupted commit" in result.text
    assert not (root_of(project) / "cache" / store_journal.JOURNAL_FILE).exists()


def test_recover_interrupted_is_a_no_op_without_journal(project: Path) -> None:
    assert store_journal.recover_interrupted(resolve_roots(project)) == []


# ---------------------------------------------------------------- processes

CHILD = r"""
import json, sys, time
from pathlib import Path
from engram.core import api
from engram.core.store.roots import resolve_roots
roots = resolve_roots(Path(sys.argv[1]))
mode = sys.argv[2]
gate = Path(sys.argv[3])
while not gate.exists():
    time.sleep(0.002)
try:
    if mode == "commit":
        out = api.commit(roots, sys.argv[4], "all")
    else:
        out = api.save_session_force(roots, Path(sys.argv[4]).read_text())
    print(json.dumps(out.data["written"]))
except Exception as exc:
    print("ERR " + type(exc).__name__ + ": " + str(exc))
    sys.exit(1)
"""


def _spawn(project: Path, *args: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHILD, str(project), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )


def test_two_processes_commit_different_proposals_at_once(project: Path, tmp_path: Path) -> None:
    roots = resolve_roots(project)
    t1 = api.propose(roots, "TYPE: rule | TEXT: Pin the Python version.").data["approval_token"]
    t2 = api.propose(roots, "TYPE: knowledge | TEXT: CI runs on Linux.").data["approval_token"]
    gate = tmp_path / "go"
    procs = [_spawn(project, "commit", str(gate), t) for t in (t1, t2)]
    time.sleep(0.5)
    gate.touch()
    outs = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    manifest = read_manifest(roots.primary)
    assert "rules/pin-python-version.md" in manifest
    assert "knowledge/ci-runs-linux.md" in manifest
    assert_verify_clean(project)


def test_one_token_used_by_two_processes_at_once_writes_once(project: Path, tmp_path: Path) -> None:
    roots = resolve_roots(project)
    token = api.propose(roots, "TYPE: rule | TEXT: Pin the Python version.").data["approval_token"]
    gate = tmp_path / "go"
    procs = [_spawn(project, "commit", str(gate), token) for _ in range(2)]
    time.sleep(0.5)
    gate.touch()
    outs = [p.communicate(timeout=60) for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 1], outs
    loser = next(o for p, o in zip(procs, outs, strict=True) if p.returncode == 1)
    assert "already used" in loser[0]
    m = load(project, "rules/pin-python-version.md")
    assert m.revision == 1
    assert sorted(p.name for p in root_of(project).rglob("*.md")) == ["pin-python-version.md"]


def test_killed_commits_leave_old_or_new_files_and_the_next_command_repairs(
    project: Path, tmp_path: Path
) -> None:
    roots = resolve_roots(project)
    api.save_session_force(
        roots,
        "\n".join(
            f"TYPE: knowledge | TEXT: Service {i} listens on its own port." for i in range(20)
        ),
    )
    rng = random.Random(3)
    for round_ in range(4):
        lines = tmp_path / f"lines{round_}.txt"
        lines.write_text(
            "\n".join(
                f"TYPE: knowledge | TEXT: Service {i} listens on its own port. | "
                f"UPDATE: service-{i}-listens-own-port"
                for i in range(20)
            )
            + "\n"
            + "\n".join(f"TYPE: rule | TEXT: Round {round_} rule number {i}." for i in range(15))
        )
        gate = tmp_path / f"go{round_}"
        proc = _spawn(project, "force", str(gate), str(lines))
        time.sleep(0.6)
        gate.touch()
        time.sleep(rng.uniform(0.0, 0.12))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        for path in root_of(project).rglob("*.md"):
            parse_memory(path.read_text())  # never truncated: each file old or new
        api.save_session_force(roots, f"TYPE: knowledge | TEXT: Round {round_} finished cleanly.")
        assert not (root_of(project) / "cache" / store_journal.JOURNAL_FILE).exists()
        assert_verify_clean(project)
    leftovers = [p for p in root_of(project).rglob("*.tmp")]
    assert leftovers == [] or all(p.stat().st_size >= 0 for p in leftovers)


def test_global_root_commit(project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    gdir = tmp_path / "global"
    create_layout(gdir)
    monkeypatch.setenv("ENGRAM_GLOBAL_DIR", str(gdir))
    roots = resolve_roots(project)
    out = api.save_session_force(roots, "TYPE: rule | TEXT: Sign commits.", scope="both")
    assert sorted(w["scope"] for w in out.data["written"]) == ["global", "workspace"]
    assert "rules/sign-commits.md" in json.loads((gdir / "hashes.json").read_text())["files"]
    assert_verify_clean(project)


def test_update_refreshes_tags_made_by_engram_and_keeps_hand_written_ones(
    project: Path, write_memory
) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: rule | TEXT: Use ruff for linting Python code.")
    api.save_session_force(
        roots, "TYPE: rule | TEXT: Use black for formatting. | UPDATE: use-ruff-linting-python-code"
    )
    m = load(project, "rules/use-ruff-linting-python-code.md")
    assert "ruff" not in m.tags and "black" in m.tags
    write_memory(root_of(project), "knowledge", "ci", "CI", "- CI runs on Linux.",
                 tags=["continuous-integration"])  # fmt: skip
    api.verify(roots, accept_all=True)
    api.save_session_force(roots, "TYPE: knowledge | TEXT: CI runs on Debian. | UPDATE: ci")
    assert load(project, "knowledge/ci.md").tags == ["continuous-integration"]
    assert_verify_clean(project)


def test_tags_are_not_made_of_redaction_markers(project: Path) -> None:
    roots = resolve_roots(project)
    out = api.save_session_force(
        roots, "TYPE: knowledge | TEXT: The db url is postgres://app:S3cretPass@db.internal/app"
    )
    tags = load(project, out.data["written"][0]["file"]).tags
    assert not {"redacted", "connection", "string"} & set(tags), tags


def test_committed_note_says_it_is_a_working_note_and_until_when(project: Path) -> None:
    roots = resolve_roots(project)
    token = api.propose_note(roots, "Cache key changed.", "fix CI").data["approval_token"]
    out = api.commit(roots, token, "all")
    assert "working note" in out.text and f"valid until {out.data['valid_until']}" in out.text


def test_possible_duplicate_deferral_says_how_to_go_on(project: Path) -> None:
    roots = resolve_roots(project)
    api.save_session_force(roots, "TYPE: rule | TEXT: Always run the tests before a release.")
    out = api.save_session_force(
        roots, "TYPE: rule | TEXT: Always run the tests before a release is cut on Fridays."
    )
    (d,) = out.data["deferred"]
    assert "UPDATE: always-run-tests-before-release" in d["reason"]


def test_a_role_memory_says_when_it_loads(project: Path) -> None:
    roots = resolve_roots(project)
    token = api.save(roots, "rule", "Review SQL migrations.", role="dba").data["approval_token"]
    out = api.commit(roots, token, "all")
    assert "engram set-role dba" in out.text
    assert (
        api.load(roots, api.LoadRequest(query="review sql migrations")).data["selected_keys"] == []
    )
    assert api.load(roots, api.LoadRequest(query="review sql migrations", roles=["dba"])).data[
        "selected_keys"
    ]


def test_archiving_a_prerequisite_names_the_memories_that_depend_on_it(project: Path) -> None:
    roots = resolve_roots(project)
    api.save_session_force(
        roots,
        "TYPE: rule | TEXT: Docker login first.\n"
        "TYPE: skill | TEXT: To ship: build and push. | DEPENDS_ON: docker-login-first",
    )
    out = api.archive(roots, "docker-login-first", "registry is public now")
    (warning,) = [d for d in out.diagnostics if d.code == "archive.dependents"]
    assert "ship-build-push" in warning.message and out.data["dependents"] == ["ship-build-push"]
    assert_verify_clean(project)


# ---------------------------------------------------------------- keeping a possible duplicate

DUP_EXISTING = "TYPE: rule | TEXT: Run `pytest -q` before every commit\n"
DUP_NEW = "TYPE: rule | TEXT: Always run make lint and pytest -q before opening a pull request\n"


def _duplicate_proposal(project: Path) -> tuple[object, str]:
    roots = resolve_roots(project)
    api.save_session_force(roots, DUP_EXISTING)
    prop = api.propose(roots, DUP_NEW + "TYPE: knowledge | TEXT: Builds use Bazel.\n")
    assert prop.data["candidates"][0]["deferred_reason"].startswith("possible duplicate of")
    assert not prop.data["candidates"][1]["deferred_reason"]
    return roots, prop.data["approval_token"]


def test_a_possible_duplicate_is_deferred_by_a_plain_commit(project: Path) -> None:
    roots, token = _duplicate_proposal(project)
    out = api.commit(roots, token, "all")
    assert [d["number"] for d in out.data["deferred"]] == [1]
    assert [w["id"] for w in out.data["written"]] == ["builds-use-bazel"]


def test_commit_choosing_writes_the_possible_duplicate_as_new(project: Path) -> None:
    roots, token = _duplicate_proposal(project)
    out = commit.commit_choosing(roots, token, "", {1: "new"})
    assert out.data["deferred"] == []
    assert [w["verdict"] for w in out.data["written"]] == ["ADD"]
    assert out.data["written"][0]["id"].startswith("always-run-make-lint")
    assert (root_of(project) / "rules/run-pytest-q-before-every-commit.md").is_file()
    assert_verify_clean(project)
    with pytest.raises(Exception, match="already used"):
        api.commit(roots, token, "all")


def test_commit_choosing_with_other_approved_candidates(project: Path) -> None:
    roots, token = _duplicate_proposal(project)
    out = commit.commit_choosing(roots, token, [2], {1: "new"})
    assert sorted(w["id"].split("-")[0] for w in out.data["written"]) == ["always", "builds"]


def test_commit_choosing_update_replaces_the_memory_it_may_repeat_and_keeps_its_revision(
    project: Path,
) -> None:
    roots, token = _duplicate_proposal(project)
    out = commit.commit_choosing(roots, token, "all", {1: "update"})
    assert out.data["deferred"] == []
    written = {w["id"]: w for w in out.data["written"]}
    assert written["run-pytest-q-before-every-commit"]["verdict"] == "UPDATE"
    assert written["run-pytest-q-before-every-commit"]["previous"]["revision"] == 1
    rules = sorted(p.name for p in (root_of(project) / "rules").glob("*.md"))
    assert rules == ["run-pytest-q-before-every-commit.md"]  # no second rule beside it
    text = (root_of(project) / "rules/run-pytest-q-before-every-commit.md").read_text()
    assert "make lint" in text and "revision: 2" in text
    archived = list((root_of(project) / "archive").rglob("*.md"))
    assert archived and "before every commit" in archived[0].read_text()
    assert_verify_clean(project)


def test_commit_choosing_update_of_a_target_edited_since_is_deferred(project: Path) -> None:
    roots, token = _duplicate_proposal(project)
    target = root_of(project) / "rules/run-pytest-q-before-every-commit.md"
    target.write_text(target.read_text().replace("before every commit", "before each commit"))
    out = commit.commit_choosing(roots, token, [1], {1: "update"})
    assert out.data["written"] == []
    assert "changed after the proposal" in out.data["deferred"][0]["reason"]
    assert "before each commit" in target.read_text()  # the hand edit is kept


def test_commit_choosing_skip_leaves_it_out_and_says_so(project: Path) -> None:
    roots, token = _duplicate_proposal(project)
    with pytest.raises(UsageError, match="'later' is not a choice"):
        commit.commit_choosing(roots, token, "all", {1: "later"})  # type: ignore[dict-item]
    out = commit.commit_choosing(roots, token, "all", {1: "skip"})
    assert [w["id"] for w in out.data["written"]] == ["builds-use-bazel"]
    assert out.data["deferred"] == [] and out.data["skipped"][0]["number"] == 1
    assert "skipped   #1" in out.text and "run-pytest-q-before-every-commit stays" in out.text


def test_keeping_a_candidate_that_is_no_possible_duplicate_is_refused_and_spends_nothing(
    project: Path,
) -> None:
    roots, token = _duplicate_proposal(project)
    with pytest.raises(UsageError, match="candidate 2 is not deferred as a possible duplicate"):
        commit.commit_choosing(roots, token, "all", {2: "new"})
    with pytest.raises(UsageError, match="candidate 5 does not exist"):
        commit.commit_choosing(roots, token, "all", {5: "new"})
    out = api.commit(roots, token, "all")  # the token still works
    assert [d["number"] for d in out.data["deferred"]] == [1]


def test_the_light_variant_of_a_prohibition_does_not_contradict_itself() -> None:
    from engram.core.write.commit import rule_variants

    assert rule_variants("Never commit .env files")["light"] == "Prefer not to commit .env files."
    assert rule_variants("Always run the tests")["light"] == "Where practical, run the tests."


def test_triggers_are_written_and_route_a_task_to_the_memory(project: Path) -> None:
    roots = resolve_roots(project)
    api.save_session_force(
        roots,
        "TYPE: rule | TEXT: Run the smoke tests after every deploy. "
        "| TRIGGERS: is production healthy; verify the release",
    )
    m = load(project, "rules/run-smoke-tests-after-every-deploy.md")
    assert m.triggers == ["is production healthy", "verify the release"]
    routed = api.load(resolve_roots(project), LoadRequest(query="is production healthy now?"))
    assert "run-smoke-tests-after-every-deploy" in routed.data["body_keys"][0]
    assert_verify_clean(project)


def test_a_triggers_only_update_keeps_the_text_and_the_old_revision(
    project: Path, write_memory
) -> None:
    write_memory(root_of(project), "rule", "smoke-tests", "Smoke tests",
                 body="- Run `make smoke` after *every* deploy.", revision=2)  # fmt: skip
    api.verify(resolve_roots(project), accept_all=True)
    rel = "rules/smoke-tests.md"
    before = (root_of(project) / rel).read_bytes()
    out = api.save_session_force(
        resolve_roots(project), "TYPE: rule | UPDATE: smoke-tests | TRIGGERS: post-deploy check"
    )
    (w,) = out.data["written"]
    assert w["verdict"] == "UPDATE" and w["diff"] == ["+triggers: post-deploy check"]
    m = load(project, rel)
    old = parse_memory(before.decode())
    assert m.content == old.content and m.title == old.title and m.variants == old.variants
    assert m.triggers == ["post-deploy check"] and m.revision == 3
    assert (root_of(project) / "archive/smoke-tests.r2.md").read_bytes() == before
    assert_verify_clean(project)


def test_a_triggers_only_update_of_a_missing_memory_is_refused(project: Path) -> None:
    with pytest.raises(UsageError, match="not a memory"):
        api.propose(resolve_roots(project), "TYPE: rule | UPDATE: nowhere | TRIGGERS: x y")


def test_a_trigger_holding_a_secret_is_left_out(project: Path) -> None:
    out = api.propose(
        resolve_roots(project),
        "TYPE: rule | TEXT: Rotate keys monthly. | TRIGGERS: key rotation; "
        "password hunter2-Xq9!zz7Lm",
    )
    (c,) = out.data["candidates"]
    assert c["triggers"] == ["key rotation"]
    assert "hunter2" not in json.dumps(out.data) and "hunter2" not in out.text
