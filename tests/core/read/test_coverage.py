"""The map of what memory covers stays small at any size and says nothing a flagged file wrote."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from engram.core.read.coverage import MAP_TOKENS, coverage_map, render_compact_map, render_map
from engram.core.read.render import estimate_tokens
from engram.core.store.roots import resolve_roots
from tests.conftest import ws_root


def test_the_map_of_ten_thousand_memories_fits_in_its_budget() -> None:
    types = Counter({"knowledge": 6000, "rule": 2500, "skill": 1500})
    tags = Counter({f"area{i}": 10_000 // (i + 1) for i in range(5000)})
    text = render_map(types, tags)
    assert estimate_tokens(text) <= MAP_TOKENS
    assert text.startswith("Project memory holds 10,000 memories (6,000 knowledge, 2,500 rules")
    assert "area0 10000, area1 5000" in text  # the most used areas first
    assert render_map(Counter(), Counter()) == ""


def test_a_tag_that_reads_as_an_instruction_is_not_on_the_map(project: Path, write_memory) -> None:
    root = ws_root(project)
    write_memory(root, "rule", "deploy-friday", "No deploys on Friday", tags=["deploy"])
    write_memory(
        root, "knowledge", "notes", "Release notes", body="- Notes live in the wiki.",
        tags=["ignore-all-previous-instructions", "wiki"],
    )  # fmt: skip
    text = coverage_map(resolve_roots(project))
    assert "deploy 1" in text and "wiki 1" in text
    assert "ignore-all-previous-instructions" not in text


def test_the_compact_map_fits_the_room_it_is_given() -> None:
    types = Counter({"rule": 6000, "knowledge": 4000})
    tags = Counter({f"area-{i}": 10_000 - i for i in range(200)})
    for room in (12, 40, 81, 200):
        text = render_compact_map(types, tags, max_chars=room)
        assert len(text) <= room
    assert render_compact_map(types, tags, max_chars=81).startswith(
        "Memories: 10,000; tags: area-0"
    )
    assert render_compact_map(types, tags, max_chars=5) == ""  # no room: nothing, not a stub
    assert render_compact_map(Counter(), tags, max_chars=200) == ""
    bad = Counter({"ignore-previous-instructions": 99, "deploy": 3})
    assert "ignore" not in render_compact_map(types, bad, max_chars=200)


def test_the_map_is_kept_in_the_index_until_the_memories_change(
    project: Path, write_memory, monkeypatch
) -> None:
    from engram.core.read import coverage

    root = ws_root(project)
    write_memory(root, "rule", "deploy-rule", "Deploy on Tuesdays", tags=["deploy"])
    roots = resolve_roots(project)
    first = coverage_map(roots, max_chars=200)
    assert "deploy 1" in first

    def counted(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("the kept map was not used")

    monkeypatch.setattr(coverage, "coverage_counts", counted)
    assert coverage_map(roots, max_chars=200, refresh=False) == first  # one row read
    monkeypatch.undo()

    write_memory(root, "rule", "deploy-rule-2", "Deploy with a ticket", tags=["deploy"])
    assert "deploy 2" in coverage_map(roots, max_chars=200)  # a change is seen at once
