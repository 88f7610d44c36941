from __future__ import annotations

import random

from engram.core.candidates import make_candidate
from engram.core.memory import Memory
from engram.core.verdicts import Verdict, find_cycle, judge, profile, sort_existing


def mem(mid: str, mtype: str, text: str, scope: str = "workspace", **kw: object) -> Memory:
    return Memory(
        id=mid, type=mtype, title=text.rstrip("."), content=f"- {text}", scope=scope, **kw
    )  # type: ignore[arg-type]


EXISTING = sort_existing(
    [
        mem("run-tests-before-release", "rule", "Always run the tests before a release."),
        mem("release-notes-changelog", "knowledge", "Release notes live in CHANGELOG.md."),
        mem("use-tabs", "rule", "Use tabs for indentation in Makefiles."),
        mem("invoice-retries", "knowledge", "Invoice retries back off exponentially."),
        mem("deploy-workflow", "skill", "To deploy: build the image, push it, roll out."),
    ]
)


def verdict(text: str, mtype: str = "rule", **fields: str) -> Verdict:
    return judge(make_candidate(type=mtype, text=text, **fields), EXISTING).verdict


def test_new_subject_is_add() -> None:
    assert verdict("Database migrations run in a transaction.", "knowledge").line() == "ADD"


def test_identical_or_near_identical_text_is_noop() -> None:
    assert verdict("Always run the tests before a release.").line() == (
        "NOOP duplicate of run-tests-before-release"
    )
    assert verdict("always run tests before the release").kind == "NOOP"
    # Identical text of another type is still a duplicate.
    assert verdict("Release notes live in CHANGELOG.md.", "rule").line() == (
        "NOOP duplicate of release-notes-changelog"
    )


def test_explicit_update_and_near_match_update() -> None:
    v = verdict("Invoice retries use jitter.", "knowledge", update="invoice-retries")
    assert v.line() == "UPDATE invoice-retries"
    near = verdict("Release notes live in CHANGELOG.md at the repository root.", "knowledge")
    assert near.line() == "UPDATE release-notes-changelog"


def test_contradiction_is_supersede() -> None:
    assert verdict("Never run the tests before a release.").line() == (
        "SUPERSEDE run-tests-before-release"
    )
    assert verdict("Use spaces instead of tabs for indentation in Makefiles.").line() == (
        "SUPERSEDE use-tabs"
    )
    assert verdict("Avoid tabs for indentation in Makefiles.").line() == "SUPERSEDE use-tabs"


def test_contradiction_of_another_type_is_not_supersede() -> None:
    assert verdict("Never run the tests before a release.", "knowledge").kind == "ADD"


def test_related_hints_and_possible_duplicates() -> None:
    j = judge(make_candidate(type="skill", text="To release: run the tests, then tag."), EXISTING)
    assert j.verdict.kind == "ADD"
    ids = {r["id"]: r["hint"] for r in j.related}
    assert ids.get("run-tests-before-release") == "suggested depends_on"
    dup = judge(
        make_candidate(
            type="rule", text="Always run the tests before a release is cut on Fridays."
        ),
        EXISTING,
    )
    assert dup.verdict.kind == "ADD"
    assert dup.possible_duplicate == "run-tests-before-release"
    assert dup.related[0]["hint"] == "possible duplicate"


def test_repeated_candidate_in_one_proposal_is_noop_of_the_first() -> None:
    first = make_candidate(1, type="rule", text="Pin the Python version.")
    again = make_candidate(2, type="rule", text="pin the python version")
    j = judge(again, EXISTING, [("pin-python-version", first)])
    assert j.verdict.line() == "NOOP duplicate of pin-python-version"


def test_verdicts_are_deterministic_whatever_the_order_of_memories() -> None:
    texts = [
        ("rule", "Never run the tests before a release."),
        ("knowledge", "Release notes live in CHANGELOG.md at the root."),
        ("rule", "Use spaces instead of tabs for indentation in Makefiles."),
        ("skill", "To release: run the tests, then tag."),
    ]
    expected = [judge(make_candidate(type=t, text=x), EXISTING).verdict.line() for t, x in texts]
    rng = random.Random(7)
    for _ in range(5):
        shuffled = EXISTING[:]
        rng.shuffle(shuffled)
        got = [
            judge(make_candidate(type=t, text=x), sort_existing(shuffled)).verdict.line()
            for t, x in texts
        ]
        assert got == expected


def test_ties_prefer_workspace_then_id() -> None:
    both = sort_existing(
        [
            mem("b-copy", "rule", "Sign every commit.", scope="global"),
            mem("a-copy", "rule", "Sign every commit.", scope="global"),
            mem("z-copy", "rule", "Sign every commit."),
        ]
    )
    assert judge(make_candidate(type="rule", text="Sign every commit."), both).verdict.target == (
        "z-copy"
    )


def test_profile_polarity() -> None:
    assert profile("Never push to main").negated
    assert not profile("Push to main").negated
    assert not profile("Do not never push").negated  # double negation


def test_find_cycle() -> None:
    edges = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    assert find_cycle(edges, "a") == ["a", "b", "c", "a"]
    assert find_cycle(edges, "d") is None
    assert find_cycle({"x": ["x"]}, "x") == ["x", "x"]
