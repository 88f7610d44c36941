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
    assert react.title == "Components live in src/components, one per file" and react.start == 6
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


def test_user_level_files_of_each_host(isolated_home: Path, monkeypatch) -> None:
    home = isolated_home
    _write(home, ".claude/CLAUDE.md", "## Style\n- Prefer small functions.\n@notes/extra.md\n")
    _write(home, ".claude/notes/extra.md", "- Explain the why in commit bodies.\n")
    _write(home, ".claude/rules/py/typing.md", "---\npaths: '**/*.py'\n---\n- Type-hint it all.\n")
    _write(home, "codex-home/AGENTS.md", "## Shell\n- Quote every variable expansion.\n")
    _write(home, ".gemini/GEMINI.md", "We use British spelling in prose.\n")
    _write(home, ".codeium/windsurf/memories/global_rules.md", "Answer in English, always.\n")
    _write(home, "Documents/Cline/Rules/git.md", "- Keep commit subjects short.\n")
    _write(home, "AGENTS.md", "- A stray file in the home folder is not a user-level file.\n")
    monkeypatch.setenv("CODEX_HOME", str(home / "codex-home"))
    got = {r.source: r for r in read_all(Workspace(home, user_level=True))}
    assert set(got) == {
        ".claude/CLAUDE.md",
        ".claude/rules/py/typing.md",
        "codex-home/AGENTS.md",
        ".gemini/GEMINI.md",
        ".codeium/windsurf/memories/global_rules.md",
        "Documents/Cline/Rules/git.md",
    }
    claude = got[".claude/CLAUDE.md"].pieces  # type: ignore[attr-defined]
    assert [p.text for p in claude] == [
        "Prefer small functions.",
        "Explain the why in commit bodies.",
    ]
    assert got[".claude/rules/py/typing.md"].pieces[0].paths == ["**/*.py"]  # type: ignore[attr-defined]
    codex = got["codex-home/AGENTS.md"].pieces[0]  # type: ignore[attr-defined]
    assert codex.paths == []  # a user-level file applies everywhere, not to its folder
    windsurf = got[".codeium/windsurf/memories/global_rules.md"].pieces[0]  # type: ignore[attr-defined]
    assert windsurf.type == "rule"  # global rules are always on
    only = read_all(Workspace(home, user_level=True), ["gemini"])
    assert [r.source for r in only] == [".gemini/GEMINI.md"]


def test_claude_auto_memory_is_found_by_its_project_key(
    isolated_home: Path, tmp_path: Path
) -> None:
    from engram.importers.claude_md import auto_memory, project_key

    repo = tmp_path / "my_repo.v2"
    (repo / ".git").mkdir(parents=True)
    (repo / "sub").mkdir()
    wt = tmp_path / "wt"
    wt.mkdir()
    (repo / ".git/worktrees/wt").mkdir(parents=True)
    (wt / ".git").write_text(f"gitdir: {repo}/.git/worktrees/wt\n")
    key = project_key(repo.resolve())
    assert "/" not in key and "_" not in key and "." not in key and key.startswith("-")
    assert auto_memory(repo / "sub") is None
    memory = isolated_home / ".claude/projects" / key / "memory"
    _write(memory, "MEMORY.md", "# Memory\n- The flaky payment test is a known race.\n")
    assert auto_memory(repo / "sub") == (memory, "MEMORY.md")
    assert auto_memory(wt) == (memory, "MEMORY.md")  # worktrees share the repository's memory


def test_a_nested_cursor_rule_applies_in_its_folder(tmp_path: Path) -> None:
    from engram.importers import Workspace, read_all

    rules = tmp_path / "docs" / ".cursor" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.mdc").write_text("---\nglobs: *.mdx\n---\n- Write in the second person.\n")
    (tmp_path / ".git").mkdir()
    [got] = [r for r in read_all(Workspace(tmp_path)) if r.source.endswith("style.mdc")]
    assert got.source == "docs/.cursor/rules/style.mdc"
    assert got.pieces[0].paths == ["docs/**/*.mdx"]
