"""The one interface every host module implements, and what all hosts share.

A host module (claude, codex, gemini, …) is a plain module exposing the names of `Host`:
its `NAME`, a human `TITLE`, and `targets(scope)`, the list of files (or printed commands)
Engram manages for that host in one scope. The link engine (`hosts.ops`) applies, removes
and inspects those targets; nothing here knows about terminals or argument parsing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from engram.hosts.targets import Target

WORKSPACE = "workspace"
GLOBAL = "global"

INSTRUCTIONS_TITLE = "## Engram memory"
INSTRUCTIONS = f"""{INSTRUCTIONS_TITLE}

This project keeps its durable rules, skills and knowledge in Engram, served by the
`engram` MCP server (files under `.agents/.engram/`, owned by the humans of the project).

- At the start of every task, call `engram_load` with a one-line summary of the task and
  follow the rules it returns; call it again when the task changes direction.
- To remember something durable, propose it with `engram_save` or `engram_save_session`
  and show the numbered candidates to the human. Never edit `.agents/.engram/` yourself.
- Never call `engram_commit` before the human has approved the displayed candidates in
  this conversation: an approval token proves that a proposal exists, not that anyone
  approved it.
"""

PIN_RE = re.compile(r"==(?P<version>[0-9][0-9A-Za-z.+!-]*)")


class Conflict(Exception):
    """An existing entry that Engram did not write; replacing it needs --force."""


class Host(Protocol):
    """What a host module provides (module-level names, as in pre-commit's languages)."""

    NAME: str
    TITLE: str

    def targets(self, scope: Scope) -> list[Target]: ...


@dataclass(frozen=True)
class Scope:
    """Where a link applies: a project folder, or the user's home for `--global`."""

    kind: str  # WORKSPACE | GLOBAL
    base: Path  # the project folder, or $HOME
    server: tuple[str, ...]  # the command that starts engram-mcp
    engram: tuple[str, ...]  # the command that runs `engram` (for hooks)
    hooks: bool = True  # install hooks where the host has them

    @property
    def is_global(self) -> bool:
        return self.kind == GLOBAL

    @property
    def home(self) -> Path:
        return home_dir()

    def hook_command(self, host: str, event: str) -> str:
        return shlex.join([*self.engram, "hook", host, event])


def home_dir() -> Path:
    """$HOME (tests and sandboxes point it elsewhere), else the platform's home."""
    env = os.environ.get("HOME") or os.environ.get("USERPROFILE")
    return Path(env) if env else Path.home()


def runner_prefix() -> list[str]:
    """The pinned runner used when Engram's executables are not on PATH (R-REG-3)."""
    from engram import DISTRIBUTION, __version__

    return ["uvx", "--from", f"{DISTRIBUTION}=={__version__}"]


def server_command() -> tuple[str, ...]:
    """`engram-mcp` when it is on PATH, otherwise the runner form pinned to this release."""
    if shutil.which("engram-mcp"):
        return ("engram-mcp",)
    return (*runner_prefix(), "engram-mcp")


def engram_command() -> tuple[str, ...]:
    if shutil.which("engram"):
        return ("engram",)
    return (*runner_prefix(), "engram")


def make_scope(kind: str, base: Path, *, hooks: bool = True) -> Scope:
    return Scope(kind, base, server_command(), engram_command(), hooks)


def pinned_version(command: list[str] | tuple[str, ...]) -> str | None:
    """The release a runner-form command is pinned to (None for a bare `engram-mcp`)."""
    from engram import DISTRIBUTION

    for part in command:
        if part.startswith(DISTRIBUTION):
            m = PIN_RE.search(part)
            if m:
                return m.group("version")
    return None


SERVER_NAMES = ("engram-mcp", "engram-mcp.exe")
# Options Engram itself decides on when it writes a registration (R-INS-3).
MANAGED_OPTIONS = frozenset({"--always-load"})


def runs_engram_mcp(command: list[str] | tuple[str, ...]) -> bool:
    """Whether a registered command starts Engram's MCP server (any pinned form)."""
    return any(Path(str(p)).name in SERVER_NAMES for p in command)


def person_options(command: list[str] | tuple[str, ...]) -> list[str]:
    """Server options after `engram-mcp` that a person added (`--no-elicitation`, …).

    Re-pinning replaces the command in front of them and keeps them (R-REG-4, R-INS-5).
    """
    for i, part in enumerate(command):
        if Path(str(part)).name in SERVER_NAMES:
            return [str(o) for o in command[i + 1 :] if o not in MANAGED_OPTIONS]
    return []


HOOK_RE = re.compile(
    r"(?:^|[\s/\\])engram(?:\.exe)?\s+hook\s+(?P<host>[a-z]+)\s+(?P<event>[a-z-]+)"
)


def is_engram_hook(command: str, host: str | None = None) -> bool:
    m = HOOK_RE.search(command or "")
    return bool(m) and (host is None or m.group("host") == host)
