"""Windsurf rules (docs.windsurf.com "Memories & Rules"): `.windsurfrules`, `.windsurf/rules/*.md`.

A workspace rule file may carry front matter `trigger` (`always_on`, `glob`,
`model_decision`, `manual`), `globs` and `description`; a `glob` rule is scoped by its
globs (carried into `paths:`), an `always_on` rule's statements become rules.
`.windsurfrules` is the legacy single root file. Global rules, for every workspace, are
`~/.codeium/windsurf/memories/global_rules.md` (same page, "Rules": `global_rules.md`),
plain Markdown always in force, so its statements become rules.
"""

from __future__ import annotations

from engram.importers import FileResult, Workspace, read_rule_file

HOST = "windsurf"
USER_FILES = (".codeium/windsurf/memories/global_rules.md",)


def matches(rel: str) -> bool:
    return rel == ".windsurfrules" or (rel.startswith(".windsurf/rules/") and rel.endswith(".md"))


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    always_on = rel.endswith("global_rules.md") and ws.user_level
    read_rule_file(
        ws,
        rel,
        res,
        lambda fields: always_on or fields.get("trigger", "").strip("\"'") == "always_on",
    )
