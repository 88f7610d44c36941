"""Splitting Markdown instruction files into candidates (engram.importers.split)."""

from __future__ import annotations

from engram.importers.split import split_markdown


def test_groups_types_lines_and_tags() -> None:
    text = (
        "# Backend\n\n## Testing\n- Run pytest before pushing.\n- Never skip failing tests.\n\n"
        "## Stack\nWe use Postgres for storage.\n\n## Deploy\n1. Build the image.\n"
        "2. Push it to the registry.\n\n```sh\n# not a heading\n- not a bullet\n```\n"
    )
    pieces = split_markdown(text, "AGENTS.md", paths=["svc/**"])
    kinds = [(p.title, p.type, p.start, p.end) for p in pieces]
    assert ("rule", 4, 4) in [k[1:] for k in kinds]  # two short rules: one memory each
    assert ("rule", 5, 5) in [k[1:] for k in kinds]
    assert ("We use Postgres for storage", "knowledge", 8, 8) in kinds
    assert ("Deploy", "skill", 11, 17) in kinds  # its code example belongs to it
    assert all(p.paths == ["svc/**"] for p in pieces)
    testing = next(p for p in pieces if p.start == 4)
    assert testing.tags[:2] == ["testing", "backend"]
    assert testing.imported_from == "AGENTS.md:4"
    assert not any(p.title == "not a heading" for p in pieces)


def test_managed_block_is_left_out() -> None:
    text = '- Keep functions small.\n<!-- engram:begin x="1" -->\n- Engram text.\n<!-- engram:end -->\n'
    pieces = split_markdown(text, "CLAUDE.md")
    assert [p.text for p in pieces] == ["Keep functions small."]


def _texts(text: str, source: str = "AGENTS.md") -> list[tuple[str, str]]:
    return [(p.type, p.text) for p in split_markdown(text, source)]


def test_bullets_that_stand_alone_are_one_memory_each_and_entries_stay_together() -> None:
    text = (
        "## Style\n- Money is always an integer number of cents in every service.\n"
        "- Keep React components under two hundred lines each.\n\n"
        "## Commands\n- `make dev` starts the stack.\n- `make test` runs the suite.\n\n"
        "## Stack\n- Node 20 LTS\n- Postgres 15 via Neon\n"
    )
    got = _texts(text)
    assert ("rule", "Money is always an integer number of cents in every service.") in got
    assert ("rule", "Keep React components under two hundred lines each.") in got
    assert ("knowledge", "`make dev` starts the stack. `make test` runs the suite.") in got
    assert ("knowledge", "Node 20 LTS. Postgres 15 via Neon.") in got


def test_structure_ties_lead_ins_code_and_examples_to_their_statement() -> None:
    text = (
        "## Review\nBefore you say a change is ready:\n\n- Tests pass.\n- Docs are updated.\n\n"
        "## Setup\nRun these once:\n```sh\nmake install\nmake seed\n```\n\n"
        "## Errors\nDo:\n```ts\nawait safe(call())\n```\n\nDon't:\n```ts\ntry {} catch {}\n```\n\n"
        "Use `safe()` for every network call.\n"
    )
    got = [t for _, t in _texts(text)]
    assert "Before you say a change is ready: Tests pass. Docs are updated." in got
    assert "Run these once: `make install` `make seed`" in got
    errors = next(t for t in got if "safe()` for every" in t)
    assert "await safe(call())" in errors and "try {} catch {}" in errors and "Do:" in errors


def test_what_is_not_a_memory_is_left_out() -> None:
    text = (
        "# Tidewater\n\nThis file provides guidance to Claude Code in this repository. "
        "Rules for the API live in `.claude/rules/api.md`.\n\n"
        "## Contents\n- [Setup](#setup)\n- [Style](docs/style.md)\n\n"
        "## Overview\n_Coming soon._\n\n## Deploy\nTODO: write this.\n\n"
        "## Style\n- Prefer early returns over nested conditionals.\n"
    )
    assert [t for _, t in _texts(text, "CLAUDE.md")] == [
        "Prefer early returns over nested conditionals."
    ]


def test_headings_without_hash_numbered_rules_and_whole_paragraphs() -> None:
    text = (
        "Key Principles\n- Write concise code and avoid classes where a function will do.\n"
        "- Name files in lowercase with underscores everywhere.\n\n"
        "1. Always use the Composition API in new components.\n"
        "2. Never use default exports in TypeScript modules.\n\n"
        "Quarry indexes documents into OpenSearch. It runs as a Kafka consumer. "
        "Queries must go through quarry-api only.\n"
    )
    pieces = split_markdown(text, ".cursorrules")
    assert "key" in pieces[0].tags and "principles" in pieces[0].tags
    numbered = [p for p in pieces if "Composition API" in p.text or "default exports" in p.text]
    assert [p.type for p in numbered] == ["rule", "rule"] and len(numbered) == 2
    prose = [(p.type, p.text) for p in pieces if "Quarry" in p.text or "quarry-api" in p.text]
    # a paragraph is one memory, as its author wrote it (never a sentence of its own)
    assert [t for _, t in prose] == [
        "Quarry indexes documents into OpenSearch. It runs as a Kafka consumer. "
        "Queries must go through quarry-api only."
    ]


def test_sentences_do_not_end_inside_code_numbers_or_abbreviations() -> None:
    from engram.importers.split import sentences

    assert sentences("We use 3.12, e.g. for `a.b`. It runs! 次。文。") == [
        "We use 3.12, e.g. for `a.b`.",
        "It runs!",
        "次。",
        "文。",
    ]


def test_yaml_list_front_matter_and_brace_globs() -> None:
    from engram.importers import front_matter, glob_list

    fields, _, at = front_matter(
        '---\npaths:\n  - "web/src/**/*.{ts,tsx}"\n  - web/tests/**\n---\nx'
    )
    assert glob_list(fields["paths"]) == ["web/src/**/*.{ts,tsx}", "web/tests/**"] and at == 6


def test_setext_headings_indented_code_symbol_items_checklists_and_html() -> None:
    text = (
        "Setup\n=====\n\nRun it like this:\n\n    make install\n    make seed\n\n"
        "Rules\n-----\n\n✅ Use the vault for secrets in every environment.\n"
        "❌ Never commit a .env file to the repository.\n\n"
        "<details>\n<summary>Done</summary>\n\n- [ ] Tests pass\n- [x] Docs updated\n</details>\n"
        "\n```html\n<details>kept in code</details>\n```\n"
    )
    pieces = split_markdown(text, "CLAUDE.md")
    got = [(p.title, p.text) for p in pieces]
    assert ("Setup", "Run it like this: `make install` `make seed`") in got
    vault = "✅ Use the vault for secrets in every environment."
    assert ("Use the vault for secrets in every environment", vault) in got
    env = "❌ Never commit a .env file to the repository."
    assert ("Never commit a .env file to the repository", env) in got
    checklist = next(p for p in pieces if "Tests pass" in p.text)
    assert checklist.text.startswith("Tests pass. Docs updated.") and "[ ]" not in checklist.text
    assert any("<details>kept in code</details>" in p.text for p in pieces)


def test_an_import_inside_a_managed_block_is_not_followed(tmp_path) -> None:
    from engram.importers import Workspace, read_all

    (tmp_path / "CLAUDE.md").write_text(
        '- Keep the changelog current.\n<!-- engram:begin hosts="claude" -->\n@secret.md\n'
        "<!-- engram:end -->\n"
    )
    (tmp_path / "secret.md").write_text("- Text only an import would bring in.\n")
    got = read_all(Workspace(tmp_path))
    assert [p.text for r in got for p in r.pieces] == ["Keep the changelog current."]


def test_a_table_is_one_knowledge_memory_row_by_row() -> None:
    text = "## Ports\n| Service | Port |\n|---|---|\n| gateway | 8000 |\n| billing | 8102 |\n"
    (piece,) = split_markdown(text, "AGENTS.md")
    assert (piece.type, piece.title, piece.start, piece.end) == ("knowledge", "Ports", 2, 5)
    assert piece.text == "Service | Port; gateway | 8000; billing | 8102."


def test_short_independent_rules_are_one_memory_each_lists_that_belong_together_stay() -> None:
    text = (
        "## Git\n- Never force-push to main.\n- Squash commits before merging.\n"
        "- Use imperative commit messages.\n- Rebase on main before opening a PR.\n\n"
        "## Stack\n- Node 20 LTS\n- Postgres 15 via Neon\n- FastAPI\n\n"
        "## Services\n- Gateway: port 8000\n- Billing: port 8102\n\n"
        "## Done\n- [ ] Tests pass.\n- [ ] Docs updated.\n\n"
        "## Release\n1. Bump the version.\n2. Tag the commit.\n3. Push the tag.\n"
    )
    got = _texts(text)
    for rule in (
        "Never force-push to main.",
        "Squash commits before merging.",
        "Use imperative commit messages.",
        "Rebase on main before opening a PR.",
    ):
        assert ("rule", rule) in got, got
    together = [t for _, t in got if "Node 20" in t or "Gateway" in t or "Tests pass" in t]
    assert len(together) == 3 and "FastAPI" in together[0] and "Billing" in together[1]
    assert "Docs updated" in together[2]
    (release,) = [(k, t) for k, t in got if "Bump" in t]
    assert release[0] == "skill" and "Tag the commit" in release[1]


def test_titles_say_what_each_memory_says_and_tags_are_headings_and_names() -> None:
    text = (
        "# Tidewater — guidance for Claude Code\n\n## Code style\n"
        "- Type-hint every public function; `mypy --strict` must pass.\n"
        "- Log with `structlog`; never use `print` in library code.\n"
        "- Prefer dataclasses over dicts for structured data.\n\n"
        "## Database migrations\nTo add a migration:\n\n1. Change the model in `app/models/`.\n"
        "2. run `alembic revision --autogenerate`.\n"
    )
    pieces = split_markdown(text, "CLAUDE.md")
    titles = [p.title for p in pieces]
    assert len(set(titles)) == len(titles) and "Code style" not in titles
    assert "Type-hint every public function" in titles and "Log with structlog" in titles
    log = next(p for p in pieces if "structlog" in p.text)
    assert log.tags[:3] == ["code", "style", "structlog"]
    assert not {"tidewater", "guidance", "claude"} & {t for p in pieces for t in p.tags}
    skill = next(p for p in pieces if p.type == "skill")
    assert skill.title == "Database migrations"
    # steps are sentences of their own (the skill lists one per line), not "1) … 2) …"
    assert skill.text == (
        "To add a migration: Change the model in `app/models/`. "
        "Run `alembic revision --autogenerate`."
    )


def test_an_imported_id_leaves_paths_out() -> None:
    from engram.core.write.candidates import make_candidate
    from engram.importers.propose import _preferred_id

    cand = make_candidate(1, type="rule", text="Go tests in tests/api/ use the tests/api helpers.")
    assert _preferred_id("Go tests in tests/api use the tests/api helpers", cand) == (
        "go-tests-use-helpers"
    )


def test_a_list_of_instructions_without_full_stops_is_split_a_stack_without_verbs_is_not() -> None:
    text = (
        "## Git\n- Never force-push to main\n- Squash commits before merging\n"
        "- Use imperative commit messages\n- Rebase on main before opening a PR\n\n"
        "## Stack\n- Redis for queues\n- Docker for local dev\n- Node 20 LTS\n"
    )
    got = _texts(text)
    assert ("rule", "Squash commits before merging.") in got
    assert ("rule", "Rebase on main before opening a PR.") in got and len(got) == 5
    assert ("knowledge", "Redis for queues. Docker for local dev. Node 20 LTS.") in got


def test_a_line_that_heads_a_list_in_a_file_without_hashes_is_in_its_source_lines() -> None:
    text = (
        "Intro line here.\n\nGit\n- Never force-push to main.\n- Squash commits before merging.\n"
    )
    pieces = split_markdown(text, ".cursorrules")
    assert [(p.start, p.end) for p in pieces] == [(1, 1), (3, 4), (5, 5)]
    assert all("git" in p.tags for p in pieces[1:])  # the pointer then replaces the heading too


def test_a_two_word_instruction_is_its_own_rule_not_dropped() -> None:
    pieces = split_markdown(
        "# Notes\n\n- Use tabs.\n- Use uv.\n- No emojis in commits.\n", "AGENTS.md"
    )
    assert [p.text for p in pieces] == ["Use tabs.", "Use uv.", "No emojis in commits."]
    assert {p.type for p in pieces} == {"rule"}
