"""A rule body says each wording once: the content, or the chosen variant when it adds to it."""

from __future__ import annotations

from engram.core.memory import Memory
from engram.core.read.render import render_compact


def rule(content: str, **variants: str) -> Memory:
    return Memory(
        id="lint", type="rule", title="Lint before push", content=content, variants=variants
    )


def test_balanced_variant_equal_to_the_content_is_not_repeated() -> None:
    mem = rule("- Run the linter before every push.", balanced="Run the linter before every push.")
    body = render_compact(mem, "off")
    assert body.count("Run the linter before every push") == 1
    assert "Rule (balanced)" not in body


def test_a_stricter_variant_replaces_the_content_it_contains() -> None:
    mem = rule(
        "- Run the linter before every push.",
        balanced="Run the linter before every push.",
        strict="Run the linter before every push. No exceptions unless the human explicitly approves one.",
    )
    body = render_compact(mem, "strict")
    assert body.count("Run the linter before every push") == 1
    assert "Rule (strict): Run the linter before every push. No exceptions" in body


def test_a_variant_that_says_something_else_is_shown_beside_the_content() -> None:
    mem = rule("- `make lint` must pass.", balanced="Run the linter before every push.")
    body = render_compact(mem, "off")
    assert "- `make lint` must pass." in body
    assert "Rule (balanced): Run the linter before every push." in body
