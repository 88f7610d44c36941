"""Routing units: which words count, how tasks are classified, how packs are selected."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.core import api
from engram.core.roots import resolve_roots
from engram.core.routing import classify_task, query_terms, stem, synonym_expansions, tokenize
from tests.conftest import ws_root


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
    res = api.load(resolve_roots(project), "how big is the android http cache", explain=True)
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
    keys = api.load(resolve_roots(project), "rabbitmq dead letter queue").data["selected_keys"]
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
    assert api.load(roots, "please fix the bug in checkout").data["selected_keys"] == [
        "regression-test-first"
    ]
    assert api.load(roots, "fix the typo").data["selected_keys"] == []
