"""Kernel change notification: a long-lived process sees edits without re-stating every file."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

import engram.core.store.index as index_mod
from engram.core import api
from engram.core.store.roots import resolve_roots
from engram.core.store.watch import FolderWatch
from tests.conftest import ws_root

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="inotify is Linux-only"
)


def test_folder_watch_reports_changed_names(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    watch = FolderWatch.start({"a": str(tmp_path / "a")})
    assert watch is not None
    assert watch.changes() == set()
    (tmp_path / "a" / "x.md").write_text("1")
    os.replace(tmp_path / "a" / "x.md", tmp_path / "a" / "y.md")
    assert {("a", "x.md"), ("a", "y.md")} <= watch.changes()
    assert watch.changes() == set()
    watch.close()


def test_missing_folder_means_no_watch(tmp_path: Path) -> None:
    assert FolderWatch.start({"a": str(tmp_path / "nope")}) is None


def test_warm_process_sees_in_place_edits_adds_and_deletes_at_once(
    project: Path, write_memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index_mod, "ALWAYS_SCAN_BELOW", 0)  # behave like a 10,000-file workspace
    root = ws_root(project)
    p = write_memory(root, "knowledge", "queue-broker", "Queue broker", "- the broker is rabbitmq")
    roots = resolve_roots(project)
    ids = lambda q: [e["id"] for e in api.search(roots, q).data["entries"]]  # noqa: E731
    assert ids("rabbitmq") == ["queue-broker"]
    assert ids("rabbitmq") == ["queue-broker"]  # second call starts the watch
    idx = index_mod.open_index(roots, refresh=False)
    assert idx._watch is not None
    text = p.read_text().replace("rabbitmq", "kafka")
    with p.open("w", encoding="utf-8") as fh:  # in place: the folder's mtime does not move
        fh.write(text)
    assert ids("kafka") == ["queue-broker"]
    write_memory(root, "knowledge", "cache-ttl", "Cache TTL", "- redis ttl is 60s")
    assert ids("redis") == ["cache-ttl"]
    (root / "knowledge" / "cache-ttl.md").unlink()
    assert ids("redis") == []
