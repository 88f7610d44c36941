"""Splitting Markdown instruction files into candidates."""

from __future__ import annotations

from engram.core.importing import split_markdown


def test_groups_types_lines_and_tags() -> None:
    text = (
        "# Backend\n\n## Testing\n- Run pytest before pushing.\n- Never skip failing tests.\n\n"
        "## Stack\nWe use Postgres for storage.\n\n## Deploy\n1. Build the image.\n"
        "2. Push it to the registry.\n\n```sh\n# not a heading\n- not a bullet\n```\n"
    )
    pieces = split_markdown(text, "AGENTS.md", paths=["svc/**"])
    kinds = [(p.title, p.type, p.start, p.end) for p in pieces]
    assert ("Testing", "rule", 4, 5) in kinds
    assert ("Stack", "knowledge", 8, 8) in kinds
    assert ("Deploy", "skill", 11, 17) in kinds  # its code example belongs to it
    assert all(p.paths == ["svc/**"] for p in pieces)
    testing = next(p for p in pieces if p.title == "Testing")
    assert testing.tags[:2] == ["testing", "backend"]
    assert testing.imported_from == "AGENTS.md:4-5"
    assert not any(p.title == "not a heading" for p in pieces)


def test_managed_block_is_left_out() -> None:
    text = '- Keep functions small.\n<!-- engram:begin x="1" -->\n- Engram text.\n<!-- engram:end -->\n'
    pieces = split_markdown(text, "CLAUDE.md")
    assert [p.text for p in pieces] == ["Keep functions small."]
