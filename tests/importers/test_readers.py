"""Each host's reader on a realistic file, and bad input reported per file."""

from __future__ import annotations

from pathlib import Path

from engram.importers import MAX_FILE_BYTES, Workspace, read_all


def _write(root: Path, rel: str, text: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")


def _by_file(root: Path, hosts: list[str] | None = None) -> dict[str, object]:
    return {r.source: r for r in read_all(Workspace(root), hosts)}


def test_every_format(tmp_path: Path) -> None:
    _write(tmp_path, "AGENTS.md", "# Repo\n## Commits\n- Write commit messages in English.\n")
    _write(tmp_path, "services/billing/AGENTS.md", "## Money\n- Store amounts as integer cents.\n")
    _write(
        tmp_path,
        ".cursor/rules/react.mdc",
        "---\ndescription: React components\nglobs: src/components/**/*.tsx\n"
        "alwaysApply: true\n---\nComponents live in src/components, one per file.\n",
    )
    _write(tmp_path, ".cursorrules", "- Prefer composition over inheritance.\n")
    _write(
        tmp_path,
        ".windsurf/rules/sql.md",
        "---\ntrigger: glob\nglobs: db/**/*.sql\n---\n- Name tables in the plural.\n",
    )
    _write(tmp_path, ".windsurfrules", "- Keep functions under fifty lines.\n")
    _write(
        tmp_path, ".github/copilot-instructions.md", "## Docs\n- Document every public function.\n"
    )
    _write(
        tmp_path,
        ".github/instructions/go.instructions.md",
        '---\napplyTo: "**/*.go,cmd/**"\n---\n- Return errors, never panic in library code.\n',
    )
    _write(tmp_path, "GEMINI.md", "# Gemini\n@docs/extra.md\n")
    _write(tmp_path, "docs/extra.md", "## Logging\nWe use structlog for logging.\n")
    _write(tmp_path, ".clinerules/style.md", '---\npaths: ["web/**"]\n---\n- Use tabs in web/.\n')
    _write(tmp_path, ".claude/rules/api.md", "---\npaths: api/**\n---\n- Version every endpoint.\n")
    got = _by_file(tmp_path)
    nested = got["services/billing/AGENTS.md"].pieces[0]  # type: ignore[attr-defined]
    assert nested.paths == ["services/billing/**"] and nested.tags == ["money"]
    react = got[".cursor/rules/react.mdc"].pieces[0]  # type: ignore[attr-defined]
    assert react.paths == ["src/components/**/*.tsx"] and react.type == "rule"
    assert react.title == "React components" and react.start == 6
    assert got[".windsurf/rules/sql.md"].pieces[0].paths == ["db/**/*.sql"]  # type: ignore[attr-defined]
    go = got[".github/instructions/go.instructions.md"].pieces[0]  # type: ignore[attr-defined]
    assert go.paths == ["**/*.go", "cmd/**"]
    gemini = got["GEMINI.md"].pieces  # type: ignore[attr-defined]
    assert [(p.source, p.type, p.start) for p in gemini] == [("docs/extra.md", "knowledge", 2)]
    assert got[".clinerules/style.md"].pieces[0].paths == ["web/**"]  # type: ignore[attr-defined]
    assert got[".claude/rules/api.md"].pieces[0].paths == ["api/**"]  # type: ignore[attr-defined]
    for rel in (".cursorrules", ".windsurfrules", ".github/copilot-instructions.md", "AGENTS.md"):
        assert got[rel].pieces, rel  # type: ignore[attr-defined]
    only = _by_file(tmp_path, ["cursor"])
    assert set(only) == {".cursor/rules/react.mdc", ".cursorrules"}


def test_bad_files_are_reported_and_the_rest_goes_on(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("- Secret rules from elsewhere.\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").symlink_to(outside)
    _write(ws, "GEMINI.md", b"\x00\x01\x02")
    _write(ws, ".cursorrules", b"- caf\xe9 latin-1\n")
    _write(ws, ".windsurfrules", "- x\n" * (MAX_FILE_BYTES // 4 + 10))
    _write(ws, "CLAUDE.md", "@a.md\n@../outside.md\n@/etc/passwd\n- Keep the changelog current.\n")
    _write(ws, "a.md", "@b.md\n- Rule from a.\n")
    _write(ws, "b.md", "@a.md\n- Rule from b.\n")
    got = _by_file(ws)
    assert "leads outside the workspace" in got["AGENTS.md"].problems[0]  # type: ignore[attr-defined]
    assert "binary" in got["GEMINI.md"].problems[0]  # type: ignore[attr-defined]
    assert "not UTF-8" in got[".cursorrules"].problems[0]  # type: ignore[attr-defined]
    assert "larger than" in got[".windsurfrules"].problems[0]  # type: ignore[attr-defined]
    claude = got["CLAUDE.md"]
    problems = " | ".join(claude.problems)  # type: ignore[attr-defined]
    assert "@../outside.md leaves the workspace" in problems
    assert "@/etc/passwd leaves the workspace" in problems
    assert "b.md:1 @a.md imports a file that imports it (a loop)" in problems
    texts = {p.text for p in claude.pieces}  # type: ignore[attr-defined]
    assert texts == {"Keep the changelog current.", "Rule from a.", "Rule from b."}
    assert not any("Secret rules" in t for t in texts)


def test_a_link_inside_the_workspace_is_read_once(tmp_path: Path) -> None:
    _write(tmp_path, "AGENTS.md", "## Lint\n- Run ruff check before committing.\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    (tmp_path / "linked").symlink_to(tmp_path.parent, target_is_directory=True)
    got = _by_file(tmp_path)
    assert list(got) == ["AGENTS.md"]
