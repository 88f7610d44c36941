from __future__ import annotations

import pytest

from engram.core.errors import UsageError
from engram.core.memory import ID_RE
from engram.core.write.candidates import (
    MAX_ID_CHARS,
    Candidate,
    make_candidate,
    parse_candidates,
    slugify,
    title_of,
    unique_id,
)

SPEC_EXAMPLE = """\
TYPE: rule | TEXT: Always run the tests before a release. | CONTEXT: why it exists
TYPE: knowledge | TEXT: Release notes live in CHANGELOG.md.
TYPE: skill | TEXT: To release: run tests, update changelog, tag. | DEPENDS_ON: release-tests | LEVEL: advanced
TYPE: knowledge | TEXT: Invoice retries back off exponentially. | UPDATE: invoice-retries
"""


def test_parses_the_spec_example() -> None:
    cands = parse_candidates(SPEC_EXAMPLE)
    assert [c.number for c in cands] == [1, 2, 3, 4]
    assert [c.type for c in cands] == ["rule", "knowledge", "skill", "knowledge"]
    assert cands[0].context == "why it exists"
    assert cands[2].text == "To release: run tests, update changelog, tag."
    assert cands[2].depends_on == ["release-tests"]
    assert cands[2].level == "advanced"
    assert cands[3].update == "invoice-retries"
    assert cands[3].line == 4


def test_keys_are_case_insensitive_workflow_is_skill_and_bullets_are_accepted() -> None:
    cands = parse_candidates(
        "- type: Workflow | text: Deploy: build, push. | depends_on: a-b, c\n1. Type: RULE | Text: x y"
    )
    assert cands[0].type == "skill" and cands[0].depends_on == ["a-b", "c"]
    assert cands[1].type == "rule"


def test_a_pipe_inside_text_that_is_not_a_field_stays_in_the_text() -> None:
    (c,) = parse_candidates("TYPE: knowledge | TEXT: grep foo | sort: then uniq")
    assert c.text == "grep foo | sort: then uniq"


def test_every_malformed_line_is_reported_with_its_number() -> None:
    text = "TYPE: rule | TEXT: ok\nnot a candidate\nTYPE: banana | TEXT: x\nTYPE: rule | TEXT:   \n"
    with pytest.raises(UsageError) as err:
        parse_candidates(text)
    msg = err.value.message
    assert "line 2:" in msg and "line 3: unknown type 'banana'" in msg
    assert "line 4: missing or empty TEXT" in msg
    assert "line 1" not in msg


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        ("TYPE: rule | TEXT: a | COLOUR: red", "unknown field 'COLOUR'"),
        ("TYPE: rule | TEXT: a | TEXT: b", "TEXT appears twice"),
        ("TEXT: a", "missing TYPE"),
        ("TYPE: rule | TEXT: a | DEPENDS_ON: ../etc", "not a memory id"),
        ("TYPE: rule | TEXT: a | UPDATE: Bad Id", "not a memory id"),
        ("TYPE: rule | TEXT: a | LEVEL: <b>", "LEVEL"),
        ("TYPE: rule | TEXT: " + "x" * 2001, "at most 2,000"),
        ("TYPE: rule | TEXT: a | TRIGGERS: " + "; ".join(f"t{i}" for i in range(9)), "at most 8"),
        ("TYPE: rule | TEXT: a | TRIGGERS: " + "y" * 121, "at most 120"),
        ("TYPE: rule | TRIGGERS: deploy", "missing or empty TEXT"),  # no UPDATE: no text of its own
    ],
)
def test_bad_fields(line: str, fragment: str) -> None:
    with pytest.raises(UsageError, match="line 1") as err:
        parse_candidates(line)
    assert fragment in err.value.message


def test_empty_huge_and_binary_input_are_refused() -> None:
    with pytest.raises(UsageError, match="no candidates"):
        parse_candidates("\n\n  \n")
    with pytest.raises(UsageError, match="1,000,000 characters"):
        parse_candidates("TYPE: rule | TEXT: " + "x" * (1_000_000 - 19))
    with pytest.raises(UsageError, match=r"line 2 contains a binary/control character \(U\+0000\)"):
        parse_candidates("TYPE: rule | TEXT: a\nTYPE: rule | TEXT: b\x00c")
    with pytest.raises(UsageError, match="at most 50"):
        parse_candidates("\n".join(f"TYPE: rule | TEXT: r{i}" for i in range(51)))


def test_query_level_keeps_the_last_sessions() -> None:
    text = (
        "## Session 1\nTYPE: rule | TEXT: one\n"
        "## Session 2\nTYPE: rule | TEXT: two\nTYPE: rule | TEXT: two-b\n"
        "---\nTYPE: rule | TEXT: three\n"
    )
    assert [c.text for c in parse_candidates(text)] == ["one", "two", "two-b", "three"]
    assert [c.text for c in parse_candidates(text, query_level=2)] == ["two", "two-b", "three"]
    assert [c.number for c in parse_candidates(text, query_level=2)] == [1, 2, 3]
    assert len(parse_candidates(text, query_level=50)) == 4
    for bad in (0, -1, True, "2"):
        with pytest.raises(UsageError, match="positive integer"):
            parse_candidates(text, query_level=bad)  # type: ignore[arg-type]


def test_candidate_round_trips_through_a_line_and_a_dict() -> None:
    c = parse_candidates("TYPE: skill | TEXT: Do x. | CONTEXT: y | DEPENDS_ON: a,b | LEVEL: basic")[
        0
    ]
    assert parse_candidates(c.to_line())[0].as_dict() == c.as_dict()
    assert Candidate.from_dict(c.as_dict()).as_dict() == c.as_dict()


def test_make_candidate_validates_like_a_line() -> None:
    assert make_candidate(type="workflow", text="  a   b ").text == "a b"
    with pytest.raises(UsageError, match="unknown type"):
        make_candidate(type="fact", text="a")
    with pytest.raises(UsageError, match="binary"):
        make_candidate(type="rule", text="a\x07")


def test_ids_are_slugs_from_meaningful_words_and_unique() -> None:
    assert slugify("Always run the tests before a release.") == "always-run-tests-before-release"
    assert slugify("Release notes live in CHANGELOG.md.") == "release-notes-live-changelog-md"
    assert slugify("日本語") == "memory"
    for text in ("x" * 300, "Ünïcödé — stuff!!", "--a--", "The the the"):
        slug = slugify(text)
        assert ID_RE.match(slug) and len(slug) <= MAX_ID_CHARS
    assert unique_id("a", {"a", "a-2"}) == "a-3"
    long = "y" * MAX_ID_CHARS
    assert len(unique_id(long, {long})) <= MAX_ID_CHARS


def test_titles_are_the_first_sentence() -> None:
    assert title_of("release notes live here. More text.") == "Release notes live here"
    assert len(title_of("word " * 100)) <= 81


def test_level_keeps_its_written_form_for_the_safety_scan() -> None:
    cand = parse_candidates("TYPE: skill | TEXT: Deploy. | LEVEL: Advanced")[0]
    assert cand.level == "advanced"
    assert cand.level_raw == "Advanced"
    assert "level_raw" not in cand.as_dict()


def test_ids_skip_redaction_markers() -> None:
    assert slugify("[REDACTED:aws-access-key] is the staging deploy key") == "staging-deploy-key"


def test_ids_keep_accented_words_whole() -> None:
    from engram.core.write.candidates import slugify

    assert slugify("Le déploiement se fait le mardi") == "le-deploiement-se-fait-le-mardi"
    assert slugify("Straße und Größe") == "strasse-und-grosse"
    assert "f-r" not in slugify("Die Prüfung für den Server")


def test_triggers_are_phrases_separated_by_semicolons() -> None:
    (c,) = parse_candidates(
        "TYPE: rule | TEXT: Run smoke tests after deploys. | TRIGGERS: is prod ok;  after "
        "release ; ; Is prod OK"
    )
    assert c.triggers == ["is prod ok", "after release"]  # blanks and repeats dropped
    assert not c.triggers_only
    assert parse_candidates(c.to_line())[0].as_dict() == c.as_dict()
    assert Candidate.from_dict(c.as_dict()).triggers == c.triggers


def test_an_update_with_triggers_and_no_text_only_adds_triggers() -> None:
    (c,) = parse_candidates("TYPE: rule | UPDATE: smoke-tests | TRIGGERS: post-deploy check")
    assert c.triggers_only and c.text == "" and c.update == "smoke-tests"
    assert "TEXT" not in c.to_line()
    assert parse_candidates(c.to_line())[0].as_dict() == c.as_dict()
