"""Routing units: which words count, how tasks are classified, how packs are selected."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.core import api
from engram.core.read.routing import classify_task, phrase_match, query_terms, synonym_expansions
from engram.core.store.roots import resolve_roots
from engram.core.words import stem, tokenize
from tests.conftest import ws_root

ENGRAM = shutil.which("engram") or str(Path(sys.executable).with_name("engram"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("where's the runbook?", ["where", "the", "runbook"]),
        ("I can't deploy, it won't start", ["i", "can", "deploy", "it", "will", "start"]),
        ("Don’t log secrets", ["do", "log", "secrets"]),
    ],
)
def test_tokenize_drops_contraction_tails(text: str, expected: list[str]) -> None:
    assert tokenize(text) == expected


def test_query_terms_keep_only_meaningful_words() -> None:
    assert query_terms("update the rule memory knowledge") == []
    assert query_terms("what's the difference between a trail and a recording?") == [
        "trail",
        "recording",
    ]
    assert query_terms("force everyone below 25.10 to update the app") == ["force"]
    assert query_terms("HTTP 404 errors on /invoices") == ["http", "404", "errors", "invoices"]
    assert query_terms("migrations and migration") == ["migrations"]  # one stem, one term


def test_stem_compares_forms() -> None:
    assert stem("migrations") == stem("migration")
    assert stem("invoices") == stem("invoice")
    assert stem("policies") == stem("policy")


def test_synonyms_cover_words_and_two_word_phrases() -> None:
    terms = query_terms("check the settings screen with screen readers")
    found = dict(synonym_expansions("check the settings screen with screen readers", terms))
    assert found["accessibility"] in terms and found["voiceover"] in terms
    assert ("database", "db") in synonym_expansions("db index", ["db", "index"])
    assert synonym_expansions("a reader of screens", ["reader", "screens"]) == []


@pytest.mark.parametrize(
    ("task", "kind"),
    [("fix the crash on login", "bugfix"), ("cut the 3.2 release", "release"), ("add a webhook endpoint", "feature"),
     ("the checkout test is flaky", "test"), ("review my pull request", "review"), ("tidy the weather", "general")],
)  # fmt: skip
def test_task_types_are_stable(task: str, kind: str) -> None:
    assert classify_task(task) == kind


def test_a_weak_subset_match_is_dropped_when_a_stronger_memory_covers_more(
    project: Path, write_memory
) -> None:
    root = ws_root(project)
    write_memory(root, "knowledge", "android-http-cache", "Android HTTP cache size", "- the android http cache holds 50 MB",
                 tags=["android", "http", "cache"])  # fmt: skip
    for i in range(6):
        write_memory(
            root,
            "knowledge",
            f"other-note-{i}",
            f"Unrelated note {i}",
            f"- some detail number {i} about queues",
        )
    write_memory(
        root, "knowledge", "server-cache", "Server cache", "- redis keeps the cache for the api"
    )
    res = api.load(
        resolve_roots(project),
        api.LoadRequest(query="how big is the android http cache", explain=True),
    )
    assert res.data["selected_keys"][0] == "android-http-cache"
    dropped = {d["id"]: d["reason"] for d in res.data["explain"]["dropped"]}
    assert "server-cache" not in res.data["selected_keys"]
    assert "android-http-cache" in dropped.get("server-cache", "") or "cutoff" in dropped.get(
        "server-cache", ""
    )


def test_a_weak_dependent_does_not_pull_its_prerequisites(project: Path, write_memory) -> None:
    root = ws_root(project)
    write_memory(root, "rule", "sign-commits", "Sign commits", "- git commit -S")
    write_memory(root, "skill", "publish-wheel", "Publish the wheel", "- twine upload dist/*; mention the queue once",
                 depends_on=["sign-commits"])  # fmt: skip
    write_memory(root, "knowledge", "queue-broker", "Queue broker", "- the queue broker is rabbitmq with a dead letter queue",
                 tags=["queue", "rabbitmq"])  # fmt: skip
    keys = api.load(
        resolve_roots(project), api.LoadRequest(query="rabbitmq dead letter queue")
    ).data["selected_keys"]
    assert keys[0] == "queue-broker"
    assert "sign-commits" not in keys


def test_a_trigger_phrase_routes_even_when_its_words_are_generic(
    project: Path, write_memory
) -> None:
    root = ws_root(project)
    write_memory(root, "skill", "regression-test-first", "Start with a failing regression test",
                 "- reproduce it in a test first", triggers=["fix a bug"])  # fmt: skip
    write_memory(root, "knowledge", "other-thing", "Queue broker", "- rabbitmq")
    roots = resolve_roots(project)
    assert api.load(roots, api.LoadRequest(query="please fix the bug in checkout")).data[
        "selected_keys"
    ] == ["regression-test-first"]
    assert api.load(roots, api.LoadRequest(query="fix the typo")).data["selected_keys"] == []


# ---------------------------------------------------------------- confidence tiers


def _tiered_workspace(project: Path, write_memory) -> Path:
    root = ws_root(project)
    write_memory(root, "rule", "commit-messages", "Commit messages follow Conventional Commits",
                 "- feat:, fix:, chore: prefixes; the subject line under 72 characters",
                 tags=["commit", "git"])  # fmt: skip
    write_memory(root, "knowledge", "db-transactions", "Database transactions",
                 "- each request runs in one transaction; commit at the end of the request",
                 tags=["database"])  # fmt: skip
    write_memory(root, "knowledge", "celery-tasks", "Celery tasks",
                 "- tasks commit their own session; retries are idempotent", tags=["celery"])  # fmt: skip
    write_memory(root, "knowledge", "kafka-topics", "Kafka topic naming",
                 "- topics are named domain.entity.event; partitions by tenant",
                 tags=["kafka", "topics"])  # fmt: skip
    write_memory(root, "knowledge", "kafka-consumers", "Kafka consumer groups",
                 "- one consumer group per service; lag alerts at 10k", tags=["kafka"])  # fmt: skip
    for i in range(8):
        write_memory(root, "knowledge", f"filler-{i}", f"Filler note {i}",
                     f"- the weather station {i} reports rainfall hourly")  # fmt: skip
    return project


def test_a_confident_match_is_a_body_and_explain_shows_each_confidence(
    project: Path, write_memory
) -> None:
    roots = resolve_roots(_tiered_workspace(project, write_memory))
    res = api.load(
        roots, api.LoadRequest(query="name the new kafka topic for invoice events", explain=True)
    )
    assert res.data["body_keys"][0] == "kafka-topics"
    entries = {e["id"]: e for e in res.data["explain"]["selected"]}
    assert (
        entries["kafka-topics"]["confidence"] >= 0.6 and entries["kafka-topics"]["tier"] == "body"
    )
    for e in entries.values():  # every routed memory carries a confidence and what it earned
        assert 0.0 <= e["confidence"] <= 1.0 and e["tier"] in ("body", "card")
    assert "kafka-topics (knowledge, workspace) → body · confidence" in res.text


def test_nothing_applies_loads_nothing_and_says_so_in_one_line(project: Path, write_memory) -> None:
    roots = resolve_roots(_tiered_workspace(project, write_memory))
    res = api.load(roots, api.LoadRequest(query="translate the onboarding emails into Portuguese"))
    assert res.data["body_keys"] == [] and res.data["selected_keys"] == []
    assert res.text.count("\n") == 0 and "nothing loaded" in res.text


def test_a_plausible_but_unsure_match_is_a_card_never_a_body(project: Path, write_memory) -> None:
    roots = resolve_roots(_tiered_workspace(project, write_memory))
    # Every word is known to memory (a word no memory has lowers every confidence).
    res = api.load(
        roots,
        api.LoadRequest(
            query="does the request commit when the station reports rainfall", explain=True
        ),
    )
    graded = {e["id"]: e for e in res.data["explain"]["selected"]}
    for mid in res.data["card_ids"]:
        assert graded[mid]["confidence"] < 0.6
    for mid in res.data["body_keys"]:
        assert graded[mid]["confidence"] >= 0.6
    assert res.data["card_ids"], res.text
    if not res.data["body_keys"]:
        assert "no confident match: cards only" in res.text


def test_a_bare_instruction_routes_at_most_one_clear_memory(project: Path, write_memory) -> None:
    """ "commit this" names one word: only the memory whose title and tags name it may be
    shown in full; the database and Celery notes that merely say "commit" are never bodies."""
    roots = resolve_roots(_tiered_workspace(project, write_memory))
    for prompt in ("thanks, looks good. commit this", "commit this", "continue", "thanks!"):
        res = api.load(roots, api.LoadRequest(query=prompt))
        assert set(res.data["body_keys"]) <= {"commit-messages"}, (prompt, res.data)
        assert not {"db-transactions", "celery-tasks"} & set(res.data["body_keys"])


@pytest.mark.parametrize("budget", [1, 30, 60, 99])
def test_a_budget_too_small_for_a_body_yields_cards_or_omitted_ids(
    project: Path, write_memory, budget: int
) -> None:
    roots = resolve_roots(_tiered_workspace(project, write_memory))
    res = api.load(
        roots, api.LoadRequest(query="kafka topic naming and consumer groups", budget_tokens=budget)
    )
    assert res.ok
    d = res.data
    assert d["body_keys"] == [] or d["tokens"] <= budget
    assert d["card_ids"] or d["omitted_ids"]


def test_the_cli_accepts_the_same_budgets_as_the_mcp_tool(project: Path, write_memory) -> None:
    _tiered_workspace(project, write_memory)
    from engram.mcp.tools import TOOLS

    spec = next(t for t in TOOLS if t.name == "engram_load").properties["budget_tokens"]
    for budget in (spec["minimum"], 60, spec["maximum"]):
        proc = subprocess.run(
            [ENGRAM, "load", "kafka topics", "--budget-tokens", str(budget), "--json"],
            cwd=project, capture_output=True, text=True, check=False,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr
    bad = subprocess.run(
        [ENGRAM, "load", "kafka topics", "--budget-tokens", str(spec["minimum"] - 1)],
        cwd=project, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


# ---------------------------------------------------------------- the hook's noise budget


def _hook(project: Path, prompt: str) -> str:
    payload = {"prompt": prompt, "cwd": str(project), "session_id": prompt}
    proc = subprocess.run(
        [ENGRAM, "hook", "claude", "user-prompt-submit"],
        input=json.dumps(payload), cwd=project, capture_output=True, text=True, check=True,
    )  # fmt: skip
    if not proc.stdout.strip():
        return ""
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def test_the_prompt_hook_injects_nothing_for_chit_chat(project: Path, write_memory) -> None:
    _tiered_workspace(project, write_memory)
    for prompt in ("thanks", "continue", "ok, go on", "thanks, looks good. commit this"):
        text = _hook(project, prompt)
        assert "db-transactions" not in text and "celery-tasks" not in text, prompt
        assert "Also relevant" not in text, prompt  # no cards for a one-word prompt
        assert text.count("\n---\nid: ") <= 1, prompt


def test_the_prompt_hook_caps_its_bodies_as_configured(project: Path, write_memory) -> None:
    root = ws_root(_tiered_workspace(project, write_memory))
    for i in range(6):
        write_memory(root, "rule", f"kafka-rule-{i}", f"Kafka consumer rule {i}",
                     f"- kafka consumer groups rule {i}: commit offsets after processing",
                     tags=["kafka", "consumer"])  # fmt: skip
    task = "kafka consumer groups commit offsets"
    assert (
        api.load(resolve_roots(project), api.LoadRequest(query=task)).data["body_keys"].__len__()
        > 3
    )
    assert _hook(project, task).count("---\nid: ") == 3  # the default noise budget
    config = root / "config.json"
    data = json.loads(config.read_text()) if config.exists() else {}
    config.write_text(json.dumps({**data, "hook": {"max_bodies": 1}}))
    text = _hook(project, task + " again")
    assert text.count("---\nid: ") == 1 and "Also relevant" in text


# ---------------------------------------------------------------- task signals


@pytest.mark.parametrize(
    ("globs", "path", "expected"),
    [(["src/billing/**"], "src/billing/invoice/pdf.py", True), (["src/billing/**"], "src/billingx/a.py", False),
     (["*.sql"], "db/migrations/0001_init.sql", True), (["src/*.py"], "src/a/b.py", False),
     (["docs/"], "docs/guide/setup.md", True), (["**/test_*.py"], "tests/core/test_x.py", True),
     (["a?c.txt"], "abc.txt", True), (["["], "[", True), ([""], "x", False)],
)  # fmt: skip
def test_path_globs_match_as_host_rule_files_do(
    globs: list[str], path: str, expected: bool
) -> None:
    from engram.core.read.signals import glob_matches

    assert glob_matches(globs, path) is expected


def test_touched_paths_are_normalised_and_never_leave_the_project(tmp_path: Path) -> None:
    from engram.core.read.signals import normalise_paths, signal_words

    proj = tmp_path / "p"
    got = normalise_paths(
        ["./src//billing/a.py", "src/billing/a.py", "../etc/passwd", str(proj / "web/app.tsx"),
         "/etc/shadow", "", "x\x00y", "docs\\guide.md"],
        proj,
    )  # fmt: skip
    assert got == ["src/billing/a.py", "web/app.tsx", "docs/guide.md"]
    assert signal_words(["src/billing/invoicePdf_render.py"], "fix/waitlist-reminders-42") == [
        "src", "billing", "invoice", "pdf", "render", "fix", "waitlist", "reminders",
    ]  # fmt: skip


def _signal_workspace(project: Path, write_memory) -> Path:
    root = ws_root(project)
    write_memory(root, "rule", "billing-money", "Money is integer cents",
                 "- never floats for amounts", paths=["src/billing/**"])  # fmt: skip
    write_memory(root, "knowledge", "waitlist-notes", "How the waitlist fills slots",
                 "- the logic lives in `src/scheduling/waitlist.py`; first come, first served")  # fmt: skip
    write_memory(root, "knowledge", "kafka-topics", "Kafka topic naming",
                 "- topics are named domain.entity.event", tags=["kafka"])  # fmt: skip
    for i in range(6):
        write_memory(root, "knowledge", f"filler-{i}", f"Filler note {i}",
                     f"- the weather station {i} reports rainfall hourly")  # fmt: skip
    return project


def test_a_touched_file_routes_the_memories_that_name_it(project: Path, write_memory) -> None:
    roots = resolve_roots(_signal_workspace(project, write_memory))
    task = "the test fails after my change, fix it"
    assert api.load(roots, api.LoadRequest(query=task)).data["body_keys"] == []
    by_glob = api.load(roots, api.LoadRequest(query=task, paths=["src/billing/charge.py"]))
    assert by_glob.data["body_keys"] == ["billing-money"]
    by_body = api.load(
        roots, api.LoadRequest(query=task, paths=["src/scheduling/waitlist.py"], explain=True)
    )
    assert by_body.data["body_keys"] == ["waitlist-notes"]
    assert "paths=3" in by_body.text and by_body.data["signals"]["paths"] == [
        "src/scheduling/waitlist.py"
    ]
    # a path outside the project or a traversal names nothing
    assert (
        api.load(roots, api.LoadRequest(query=task, paths=["../src/billing/x.py"])).data[
            "body_keys"
        ]
        == []
    )


def _git(project: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=project, check=True, capture_output=True,
                   env={"PATH": "/usr/bin:/bin", "HOME": str(project), "GIT_AUTHOR_NAME": "a",
                        "GIT_AUTHOR_EMAIL": "a@b", "GIT_COMMITTER_NAME": "a",
                        "GIT_COMMITTER_EMAIL": "a@b"})  # fmt: skip


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_hooks_route_on_changed_files_branch_and_objective(project: Path, write_memory) -> None:
    _signal_workspace(project, write_memory)
    (project / "src/billing").mkdir(parents=True)
    (project / "src/billing/charge.py").write_text("x = 1\n")
    _git(project, "init", "-q", "-b", "main")
    _git(project, "add", "src")
    _git(project, "commit", "-q", "-m", "start")
    assert "billing-money" not in _hook(project, "the test fails after my change, fix it")
    (project / "src/billing/charge.py").write_text("x = 2\n")  # a change the work makes
    assert "Money is integer cents" in _hook(project, "the test fails after my change, fix it")
    # a session start on a branch named for its work, with no changed file
    (project / "src/billing/charge.py").write_text("x = 1\n")
    _git(project, "checkout", "-q", "-b", "feature/kafka-topics")
    payload = json.dumps({"cwd": str(project), "session_id": "s1"})
    out = subprocess.run([ENGRAM, "hook", "claude", "session-start"], input=payload,
                         cwd=project, capture_output=True, text=True, check=True).stdout  # fmt: skip
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "branch feature/kafka-topics" in context and "Kafka topic naming" in context
    env = {**os.environ, "ENGRAM_SESSION_OBJECTIVE": "how does the waitlist fill slots"}
    out = subprocess.run([ENGRAM, "hook", "claude", "session-start"], input=payload, env=env,
                         cwd=project, capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "first come, first served" in json.loads(out)["hookSpecificOutput"]["additionalContext"]


def test_an_edited_paths_key_is_seen_on_the_next_load(project: Path, write_memory) -> None:
    root = ws_root(_signal_workspace(project, write_memory))
    roots = resolve_roots(project)
    task = "the build fails after my change"
    assert api.load(roots, api.LoadRequest(query=task, paths=["src/billing/a.py"])).data[
        "body_keys"
    ] == ["billing-money"]
    write_memory(root, "rule", "billing-money", "Money is integer cents",
                 "- never floats for amounts", paths=["web/**"])  # fmt: skip
    assert (
        api.load(roots, api.LoadRequest(query=task, paths=["src/billing/a.py"])).data["body_keys"]
        == []
    )
    assert api.load(roots, api.LoadRequest(query=task, paths=["web/app.tsx"])).data[
        "body_keys"
    ] == ["billing-money"]


def test_a_task_word_no_memory_has_weighs_against_every_match(project: Path, write_memory) -> None:
    """ "who takes over the pager on monday": only "monday" is known, from a memory about
    release days; the task is mostly about something memory does not hold."""
    root = ws_root(project)
    write_memory(root, "knowledge", "release-days", "Release days",
                 "- we release on monday and thursday", tags=["release"])  # fmt: skip
    for i in range(6):
        write_memory(root, "knowledge", f"note-{i}", f"Note {i}", f"- service {i} logs to loki")  # fmt: skip
    roots = resolve_roots(project)
    res = api.load(
        roots, api.LoadRequest(query="who takes over the pager rota on monday", explain=True)
    )
    assert "release-days" not in res.data["body_keys"], res.text
    assert (
        "release-days"
        in api.load(roots, api.LoadRequest(query="which days do we release on")).data["body_keys"]
    )


def _stems(task: str) -> set[str]:
    return {stem(t) for t in tokenize(task)}


@pytest.mark.parametrize(
    ("phrase", "task", "expected"),
    [
        ("OIDC callback fails", "the OIDC callback fails after login", 1.0),  # every word
        ("OIDC callback fails", "the OIDC callback is broken", 2 / 3),  # near: 2 of 3 topic words
        ("OIDC callback fails", "the OIDC page", 0.0),  # one word is not the phrase
        ("sign in with Apple", "sign in with Google", 0.0),  # half of it: another question
        ("fix a flaky test bug", "fix this bug", 0.0),  # generic words alone are no match
        ("the and of", "the and of", 0.0),  # nothing but stopwords asks nothing
    ],
)
def test_a_trigger_phrase_matches_the_task_as_a_phrase(
    phrase: str, task: str, expected: float
) -> None:
    assert phrase_match(phrase, _stems(task)) == pytest.approx(expected)


def test_a_near_trigger_admits_its_memory(project: Path, write_memory) -> None:
    write_memory(ws_root(project), "knowledge", "auth-providers", "Auth providers",
                 body="- Providers are registered in auth/providers.py.",
                 triggers=["OIDC callback fails", "add a login provider"])  # fmt: skip
    write_memory(ws_root(project), "rule", "lint-first", "Lint first", body="- Run ruff.")
    roots = resolve_roots(project)
    keys = api.load(roots, api.LoadRequest(query="the oidc callback is broken on staging"))
    assert "auth-providers" in keys.data["selected_keys"]
    assert api.load(roots, api.LoadRequest(query="the staging page")).data["selected_keys"] == []
