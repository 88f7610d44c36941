"""The fix for each `engram verify` / `engram doctor` finding code, as the Health view shows it.

The codes are stable (docs/hosts.md lists them); a finding is only useful to a person next
to what to do about it. A code without an entry here falls back to its family (`host.…`),
then to the message itself, which names the command where one exists.
"""

from __future__ import annotations

import re

FIXES: dict[str, str] = {
    "root.missing": "run `engram init` in the project folder",
    "root.invalid": "run `engram init` again; it repairs the layout and keeps every memory",
    "root.global_missing": "point ENGRAM_GLOBAL_DIR at an existing folder, or unset it",
    "root.symlink": "replace the link with a real folder: Engram never follows links in a root",
    "folder.symlink": "replace the linked folder with a real one (move its files in first)",
    "file.symlink": "replace the link with the file itself: a linked file is never read",
    "manifest.modified": "review the change (git diff FILE), then record it: "
    "`engram verify --accept FILE`",
    "manifest.missing": "restore the file (git checkout FILE), or record that it is gone: "
    "`engram verify --accept FILE`",
    "manifest.unmanaged": "review the file; keep it with `engram verify --accept FILE`, or "
    "delete it",
    "memory.parse_error": "fix the front matter (the file starts with a `---` line and holds "
    "valid YAML), then `engram verify --accept FILE`",
    "config.invalid": "see the value with `engram config get`, set an allowed one with "
    "`engram config set KEY VALUE`",
    "index.rebuild_failed": "run `engram rebuild-index` (the index is derived; memory files "
    "are untouched)",
    "hook.errors": "read .agents/.engram/cache/hook.log for the failing hook; `engram upgrade` "
    "refreshes the hook commands",
    "host.registration_missing": "run `engram link HOST` again",
    "host.instructions_missing": "run `engram upgrade` to write the instruction block again",
    "host.hooks_missing": "run `engram link HOST` to add the hooks",
    "host.gemini_trust": "remove `trust: true` from mcpServers.engram, or run `engram upgrade`",
    "host.codex_approval": "run `engram upgrade` (engram_commit is set to prompt)",
    "host.codex_commit_preapproved": "run `engram upgrade` (engram_commit is set back to prompt)",
    "host.codex_project_untrusted": "trust this project in Codex, so it reads .codex/config.toml",
    "host.claude_approval_pending": "start Claude Code in the project and approve the "
    "`engram` server when it asks",
    "host.claude_server_disabled": "remove `engram` from disabledMcpjsonServers in Claude "
    "Code's settings",
    "host.gemini_folder_untrusted": "trust this folder in Gemini CLI (/permissions), or its "
    "MCP servers stay off",
    "host.commit_allowed": "remove the permissions.allow rule that lets engram_commit run "
    "without asking",
    "host.always_load_with_hooks": "link again without --always-load: the hooks already give "
    "the memory",
    "host.entry_conflict": "rename or remove the other `engram` entry, then `engram link HOST`",
    "host.config_invalid": "fix the syntax of the host's file, then `engram doctor` again",
    "host.command_needs_activation": "run `engram upgrade` from the installation hosts "
    "should start (it registers an absolute path)",
    "memory.unsafe": "read the file; rewrite the flagged text, or keep it as written for you: "
    "`engram verify --accept FILE` (the Keep as written button does the same)",
    "memory.secret": "remove the secret from the file, or, if it is not one, keep the file as "
    "written for you: `engram verify --accept FILE`",
    "safety.redacted": "nothing to do: the secret was replaced before anything was stored",
    "safety.refused": "rephrase the line as a plain fact, rule or workflow and propose it again",
}
FAMILY: dict[str, str] = {
    "host.command": "run `engram upgrade` from the Engram installation the host should start",
    "host.version": "run `engram upgrade`",
    "host.outdated": "run `engram upgrade`",
    "manifest.": "review the file, then `engram verify --accept FILE`",
}
_COMMAND = re.compile(r"(?:run|with)\s+`([^`]+)`")


def fix_for(code: str, message: str = "", path: str | None = None) -> str:
    """What to do about a finding; FILE is replaced by the finding's own path."""
    fix = FIXES.get(code)
    if fix is None:
        fix = next((v for k, v in FAMILY.items() if code.startswith(k)), None)
    if fix is None:
        found = _COMMAND.search(message)
        fix = f"run `{found.group(1)}`" if found else "see the message"
    return fix.replace("FILE", path) if path else fix
