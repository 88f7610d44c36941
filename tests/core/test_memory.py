from __future__ import annotations

import pytest

from engram.core.memory import Memory, MemoryParseError, parse_memory, render_memory

HAND_WRITTEN = """---
id: deploy-window
type: workflow
tags:
  - deploy
  - ops
---
# Deploy only in the window

Deploys happen Tuesday to Thursday.
"""


def test_round_trip_keeps_every_field() -> None:
    mem = Memory(
        id="run-tests", type="rule", title="Run tests: always", tags=["release", "ci"], triggers=["cut a release"],
        role=["backend"], depends_on=["ci-setup"], confidence="high", created="2026-11-30", updated="2026-11-30",
        content="- Run `make test`.", variants={"light": "Prefer tests.", "balanced": "Run tests.", "strict": "Never skip tests."},
        origin="A broken release in 2025.", extra={"custom_key": "kept"},
    )  # fmt: skip
    again = parse_memory(render_memory(mem))
    assert again.title == mem.title
    assert again.tags == mem.tags and again.triggers == mem.triggers and again.role == ["backend"]
    assert again.depends_on == ["ci-setup"]
    assert again.variants == mem.variants
    assert again.origin == mem.origin
    assert again.extra == {"custom_key": "kept"}
    assert again.authority == "instruction"


def test_hand_written_file_with_workflow_alias_block_lists_and_no_sections() -> None:
    mem = parse_memory(HAND_WRITTEN)
    assert mem.type == "skill"
    assert mem.tags == ["deploy", "ops"]
    assert mem.title == "Deploy only in the window"
    assert "Tuesday" in mem.content
    assert mem.revision == 1 and mem.schema_version == 3


def test_crlf_and_bom_are_tolerated() -> None:
    text = "\ufeff" + HAND_WRITTEN.replace("\n", "\r\n")
    assert parse_memory(text).id == "deploy-window"


def test_id_falls_back_to_file_name_and_type_to_folder(tmp_path) -> None:
    mem = parse_memory(
        "---\ntags: [x]\n---\n# T\n", tmp_path / "my-note.md", default_type="knowledge"
    )
    assert (mem.id, mem.type) == ("my-note", "knowledge")


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("# no front matter\n", "missing YAML front matter"),
        ("---\nid: x\ntype: rule\n# never closed\n", "not closed"),
        ("---\nid: ../etc\ntype: rule\n---\n", "not a slug"),
        ("---\nid: ok\ntype: poem\n---\n", "not one of rule"),
        ("---\nid: ok\ntype: rule\ntags: [unclosed\n---\n", "not valid YAML"),
        ("---\n- a\n- b\n---\n", "mapping"),
    ],
)
def test_unparsable_files_raise_a_readable_reason(text: str, reason: str) -> None:
    with pytest.raises(MemoryParseError, match=reason):
        parse_memory(text)


def test_quoted_and_unusual_yaml_falls_back_to_full_parser() -> None:
    text = '---\nid: x1\ntype: knowledge\ntitle: "A: quoted title"\ncreated: 2026-01-02\ntags: ["a, b", c]\n---\nbody\n'
    mem = parse_memory(text)
    assert mem.tags == ["a, b", "c"]
    assert mem.created == "2026-01-02"
    assert mem.title == "A: quoted title"


def test_rule_variant_selection() -> None:
    mem = Memory(id="r", type="rule", variants={"light": "L", "balanced": "B", "strict": "S"})
    assert mem.variant_text("strict") == "S"
    assert mem.variant_text("off") == "B"
    assert Memory(id="r", type="rule", variants={"strict": "S"}).variant_text("light") == "S"


def test_variants_as_subheadings() -> None:
    text = "---\nid: r\ntype: rule\n---\n# R\n\n## Rule variants\n\n### Light\nbe nice\n\n### Strict\nbe very\nstrict\n"
    assert parse_memory(text).variants == {"light": "be nice", "strict": "be very strict"}


def test_expiry() -> None:
    import datetime as dt

    mem = Memory(id="n", type="knowledge", valid_until="2026-01-01")
    assert mem.expired(dt.date(2026, 1, 2))
    assert not mem.expired(dt.date(2026, 1, 1))
    assert not Memory(id="n", type="knowledge").expired()


# ---------------------------------------------------------------- hostile front matter


def _doc(*fm_lines: str, body: str = "# T\n\nBody.") -> str:
    return "\n".join(["---", "id: x", "type: rule", *fm_lines, "---", body]) + "\n"


@pytest.mark.parametrize(
    ("lines", "what"),
    [
        (['a: &a ["lol", "lol"]', "b: [*a, *a]"], "a YAML anchor (&a) on line 4"),
        (["? [a]", ": *undefined"], "a YAML alias (*undefined) on line 5"),
        (["meta:", "  <<: {title: x}"], "a YAML merge key (<<) on line 5"),
        (
            ["x: !!python/object/apply:os.system [ls]"],
            "a YAML tag (!!python/object/apply:os.system)",
        ),
        (["x: !custom value"], "a YAML tag (!custom)"),
        (["x: !<tag:example.com,2026:thing> value"], "a YAML tag (tag:example.com,2026:thing)"),
        (["x: !!str 'quoted'"], "a YAML tag (!!str)"),
        (["x: !!map {a: 1}"], "a YAML tag (!!map)"),
    ],
)
def test_front_matter_refuses_anchors_aliases_tags_and_merge_keys(
    lines: list[str], what: str
) -> None:
    with pytest.raises(MemoryParseError, match="front matter uses") as err:
        parse_memory(_doc(*lines))
    assert what in str(err.value)
    assert "front matter is plain data" in str(err.value)
    assert err.value.code == "memory.front_matter_not_plain"


@pytest.mark.parametrize(
    "lines",
    [
        ["x: " + "[" * 9 + "]" * 9],
        ["x: " + "{a: " * 9 + "1" + "}" * 9],
        ["tags: [" + ", ".join(f"t{i}" for i in range(257)) + "]"],  # the fast path
        ["tags:", *[f"  - 't{i}'" for i in range(257)]],  # the YAML path
        [f"k{i}: v" for i in range(257)],
        ['x: "quoted"', *[f"k{i}: v" for i in range(257)]],
    ],
)
def test_front_matter_shape_is_bounded(lines: list[str]) -> None:
    with pytest.raises(MemoryParseError) as err:
        parse_memory(_doc(*lines))
    assert err.value.code == "memory.front_matter_too_complex"


def test_front_matter_at_the_bounds_still_parses() -> None:
    mem = parse_memory(_doc("tags: [" + ", ".join(f"t{i}" for i in range(256)) + "]"))
    assert len(mem.tags) == 256
    mem = parse_memory(_doc("x: " + "[" * 7 + "1" + "]" * 7, 'note: "quoted"'))
    assert mem.extra["note"] == "quoted"


def test_unusual_yaml_values_become_plain_json_data() -> None:
    from engram.core.store.index import doc_to_memory, memory_to_doc

    mem = parse_memory(
        _doc(
            "reviewed: 2026-01-02",
            "when: 2026-01-02 10:00:00",
            "ratio: .nan",
            '1: "int key"',
            "n: ~",
        )
    )
    assert mem.extra["reviewed"] == "2026-01-02" and mem.extra["ratio"] == "nan"
    assert mem.extra["1"] == "int key" and mem.extra["n"] is None
    assert doc_to_memory(memory_to_doc(mem)) == mem  # what the index stores


def test_front_matter_size_is_bounded() -> None:
    text = _doc("note: " + "x" * 17000)
    with pytest.raises(MemoryParseError, match="over the 16,384-byte limit") as err:
        parse_memory(text)
    assert err.value.code == "memory.front_matter_too_large"
    assert parse_memory(text, max_front_matter=32 * 1024).extra["note"].startswith("xxx")


def test_a_heading_inside_fenced_code_is_code_not_a_section() -> None:
    content = (
        "Open the pull request:\n\n```bash\ngh pr create --body \"$(cat <<'EOF'\n## Summary\n"
        '# not a title\nEOF\n)"\n```\n\n- then wait for CI'
    )
    mem = Memory(id="open-pr", type="skill", title="Open a PR", content=content)
    again = parse_memory(render_memory(mem))
    assert again.title == "Open a PR" and again.content == content
    assert again.extra_sections == ""
