"""Byte-preserving JSON/JSONC edits and managed blocks."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.hosts.files import (
    MARKDOWN,
    ConfigParseError,
    JsonDoc,
    find_block,
    remove_block,
    unified_diff,
    upsert_block,
)

ENTRY = {"command": "engram-mcp", "args": []}
DOCS = [
    '{\n  "mcpServers": {\n    "other": {"command": "x"}\n  }\n}\n',
    '{\n    "mcpServers": {\n        "a": {\n            "command": "x",\n        },\n    },\n}\n',
    '// top\n{\n\t"a": 1 // keep me\n}\n',
    '{"a": 1}',
    "{}",
    '{\n  "mcpServers": { }\n}\n',
    '\ufeff{\r\n  "x": [1, 2]\r\n}\r\n',
    '{\n  /* block */ "a": "b", // trailing\n}',
]


@pytest.mark.parametrize("text", DOCS)
def test_set_then_remove_gives_back_the_same_bytes(text):
    doc = JsonDoc(text)
    parent = doc.node(("mcpServers",))
    inner = doc.inner_text(("mcpServers",)) if parent is not None else ""
    created = doc.set(("mcpServers", "engram"), ENTRY)
    assert JsonDoc(doc.dumps()).get(("mcpServers", "engram")) == ENTRY
    again = JsonDoc(doc.dumps())
    if created:
        again.remove(created[0])
    else:
        again.remove(("mcpServers", "engram"), empty_inner=inner)
    assert again.dumps() == text


def test_comments_and_trailing_commas_survive_an_insert():
    text = DOCS[1]
    doc = JsonDoc(text)
    doc.set(("mcpServers", "engram"), ENTRY)
    out = doc.dumps()
    assert '"engram": {\n            "command": "engram-mcp",' in out
    assert out.count("},\n") >= 2  # trailing-comma style kept for the new member


def test_removing_a_member_in_the_middle_keeps_neighbours_and_comments():
    text = '{\n  "a": 1,\n  "engram": {"command": "engram-mcp"},\n  // about b\n  "b": 2\n}\n'
    doc = JsonDoc(text)
    doc.remove(("engram",))
    assert doc.dumps() == '{\n  "a": 1,\n  // about b\n  "b": 2\n}\n'


def test_array_append_and_remove():
    doc = JsonDoc('{"list": [1, 2]}')
    doc.append(("list",), 3)
    assert doc.get(("list",)) == [1, 2, 3]
    doc.remove(("list", 2))
    assert doc.dumps() == '{"list": [1, 2]}'


@pytest.mark.parametrize(
    "bad", ['{"a": }', "[1, 2]", '{"a": 1} x', '{"a": "unterminated}', "/* open"]
)
def test_invalid_documents_raise_a_readable_error(bad):
    with pytest.raises(ConfigParseError):
        JsonDoc(bad)


@given(
    st.dictionaries(
        st.text("abcxyz", min_size=1, max_size=4),
        st.one_of(st.integers(), st.text(max_size=5), st.lists(st.integers(), max_size=3)),
        max_size=4,
    ),
    st.sampled_from([None, 2, 4, "\t"]),
)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_round_trip_property(data, indent):
    text = __import__("json").dumps(data, indent=indent) + "\n"
    doc = JsonDoc(text)
    created = doc.set(("mcpServers", "engram"), ENTRY)
    assert JsonDoc(doc.dumps()).value == {**data, "mcpServers": {"engram": ENTRY}}
    back = JsonDoc(doc.dumps())
    back.remove(created[0] if created else ("mcpServers", "engram"))
    assert back.dumps() == text


@pytest.mark.parametrize("text", ["", "# Notes\n", "# Notes", "a\n\n", "x\r\ny\r\n"])
def test_markdown_block_round_trip(text):
    new, added = upsert_block(text, MARKDOWN, "## Engram\nbody", {"hosts": "claude"})
    block = find_block(new, MARKDOWN)
    assert block is not None and block.attrs == {"hosts": "claude"}
    assert block.body.replace("\r\n", "\n").strip() == "## Engram\nbody"
    assert remove_block(new, MARKDOWN, added_final_newline=added) == text
    refreshed, _ = upsert_block(new, MARKDOWN, "## Engram\nnew body", {"hosts": "claude,codex"})
    assert refreshed.count("engram:begin") == 1 and "new body" in refreshed


def test_unified_diff_marks_created_files():
    diff = unified_diff(".mcp.json", None, "{}\n")
    assert diff.startswith("--- /dev/null\n+++ b/.mcp.json")
