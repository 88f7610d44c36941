"""A load is one LoadRequest; a request may carry the host model's own searches."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import UsageError
from engram.core.read.request import LoadRequest
from engram.core.store.roots import resolve_roots
from tests.conftest import ws_root


@pytest.fixture
def ws(project: Path, write_memory) -> Path:
    root = ws_root(project)
    write_memory(root, "knowledge", "nightly-export-job", "The nightly export job runs at 02:00",
                 "- The CSV export is built by `jobs/export_nightly.py` and retried twice.",
                 tags=["export", "cron"])  # fmt: skip
    write_memory(root, "rule", "no-pii-in-logs", "Never log personal data",
                 "- Mask emails and names before logging.", tags=["logging", "privacy"])  # fmt: skip
    write_memory(root, "knowledge", "design-tokens", "Design tokens for the frontend",
                 "- colors come from tokens.css", tags=["frontend", "css"])  # fmt: skip
    return project


def test_the_request_is_frozen_and_checks_what_it_is_given() -> None:
    req = LoadRequest(query="x", ids=["a"], paths=["p"], queries=[" export job "])
    assert req.ids == ("a",) and req.paths == ("p",) and req.queries == ("export job",)
    with pytest.raises(AttributeError):
        req.query = "y"  # type: ignore[misc]
    with pytest.raises(UsageError, match="at most 5 searches"):
        LoadRequest(queries=["a"] * 6)
    with pytest.raises(UsageError, match=r"queries\[1\] has 201 characters: at most 200"):
        LoadRequest(queries=["ok", "x" * 201])
    with pytest.raises(UsageError, match=r"queries\[0\] is empty"):
        LoadRequest(queries=["  "])
    with pytest.raises(UsageError, match="invalid disclosure 'some'"):
        LoadRequest(query="x", disclosure="some")
    assert not LoadRequest(query="x", dry_run=True).counts


def test_searches_find_what_the_task_words_alone_do_not(ws: Path) -> None:
    roots = resolve_roots(ws)
    task = "the file customers download every morning is late again"
    alone = api.load(roots, api.LoadRequest(query=task, count_usage=False))
    assert "nightly-export-job" not in alone.data["selected_keys"]
    planned = api.load(
        roots,
        api.LoadRequest(
            query=task, queries=("nightly export job schedule", "export retry"), count_usage=False
        ),
    )
    assert planned.data["body_keys"][:1] == ["nightly-export-job"]
    assert "design-tokens" not in planned.data["selected_keys"]


def test_explain_says_which_search_found_a_memory(ws: Path) -> None:
    roots = resolve_roots(ws)
    res = api.load(
        roots,
        api.LoadRequest(
            query="privacy review", queries=("logging personal data", "export job"), explain=True
        ),
    )
    found = {e["id"]: e for e in res.data["explain"]["selected"]}
    # search 1 is the task itself, then the model's searches in order
    assert any(k in found["no-pii-in-logs"]["parts"] for k in ("search 1", "search 2"))
    assert "search 3" in found["nightly-export-job"]["parts"]
