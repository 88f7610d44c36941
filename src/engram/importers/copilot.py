"""GitHub Copilot custom instructions (docs.github.com "Adding repository custom instructions").

`.github/copilot-instructions.md` is repository-wide plain Markdown;
`.github/instructions/*.instructions.md` are path-specific, with front matter `applyTo`
(comma-separated globs, `**` for every file) carried into `paths:`. Personal instructions
live in the editor's settings or on github.com, not in a file of a known place, so there is
nothing user-level to read.
"""

from __future__ import annotations

from engram.importers import FileResult, Workspace, front_matter, glob_list
from engram.importers.split import split_markdown

HOST = "copilot"


def matches(rel: str) -> bool:
    return rel == ".github/copilot-instructions.md" or (
        rel.startswith(".github/instructions/") and rel.endswith(".instructions.md")
    )


def read(ws: Workspace, rel: str, res: FileResult) -> None:
    fields, body, at = front_matter(ws.read(rel))
    globs = [g for g in glob_list(fields.get("applyTo", "")) if g not in ("**", "**/*")]
    res.pieces += split_markdown(body, rel, first_line=at, paths=globs)
