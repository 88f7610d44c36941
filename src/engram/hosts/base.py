"""The one interface every host module implements, and what all hosts share.

A host module (claude, codex, gemini, …) is a plain module exposing the names of
`engram.hosts.Host`:
its `NAME`, a human `TITLE`, and `targets(scope)`, the list of files (or printed commands)
Engram manages for that host in one scope. The link engine (`hosts.ops`) applies, removes
and inspects those targets; nothing here knows about terminals or argument parsing.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path

from engram import DISTRIBUTION, __version__

WORKSPACE = "workspace"
GLOBAL = "global"

INSTRUCTIONS_TITLE = "## Engram memory"
INSTRUCTIONS = f"""{INSTRUCTIONS_TITLE}

This project keeps its durable rules, skills and knowledge in Engram, served by the
`engram` MCP server (files under `.agents/.engram/`, owned by the humans of the project).

- Before work on the project, call `engram_load` with the task as `query`, 2-4 short
  `queries` in the words a memory about it would use (the subsystem, the kind of change,
  the team's terms and synonyms) and the files it touches as `paths`. Follow the rules it
  returns and fetch a card that applies with `id`; call it again when the task changes
  direction. Skip it for general questions and chit-chat.
- To remember something durable, propose it with `engram_save` or `engram_save_session`
  and show the numbered candidates to the human. Never edit `.agents/.engram/` yourself.
- Never call `engram_commit` before the human has approved the displayed candidates in
  this conversation: an approval token proves that a proposal exists, not that anyone
  approved it.
"""

PIN_RE = re.compile(r"==(?P<version>[0-9][0-9A-Za-z.+!-]*)")


class Conflict(Exception):
    """An existing entry that Engram did not write; replacing it needs --force."""


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


# Whether `uvx --from <distribution>==<version>` can fetch this release. The package index
# does not have Engram's releases today, so the runner form would fail to start; it is never
# registered while this is False (R-REG-3 then falls back to this installation's path).
RUNNER_INSTALLABLE = False
SERVER_MODULE = "engram.mcp.server"
CLI_MODULE = "engram.cli.main"


def runner_prefix() -> list[str]:
    """The pinned runner form (R-REG-3), used only when that release is installable."""

    return ["uvx", "--from", f"{DISTRIBUTION}=={__version__}"]


def scripts_dirs() -> list[Path]:
    """Where this installation's console scripts live (its venv's bin, pipx's, uv tool's)."""
    import sys
    import sysconfig

    out: list[Path] = []
    for raw in (sysconfig.get_path("scripts"), str(Path(sys.executable).parent)):
        if raw and Path(raw) not in out:
            out.append(Path(raw))
    return out


def installed_script(name: str) -> Path | None:
    """The absolute path of this installation's `name` script (None when not installed)."""
    for folder in scripts_dirs():
        for candidate in (folder / name, folder / f"{name}.exe"):
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate.absolute()
    return None


PIP_SH_EXEC = "'''exec' "


def shebang_interpreter(path: Path) -> str | None:
    """The interpreter a console script's `#!` line names (None for binaries and launchers)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            head = os.read(fd, 512) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        finally:
            os.close(fd)
    except OSError:
        return None
    if not head.startswith(b"#!"):
        return None
    line = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    if line.startswith("/bin/sh"):  # pip's wrapper for long paths names it on line 2
        lines = head.decode("utf-8", "replace").splitlines()
        second = lines[1] if len(lines) > 1 else ""
        if not second.startswith(PIP_SH_EXEC):
            return None
        try:
            words = shlex.split(second[len(PIP_SH_EXEC) :])
        except ValueError:
            return None
        return words[0] if words else None
    try:
        parts = shlex.split(line)
    except ValueError:
        return None
    if parts and Path(parts[0]).name == "env" and len(parts) > 1:
        return None  # `#!/usr/bin/env python`: depends on PATH, not on an installation
    return parts[0] if parts else None


def same_installation(found: str | Path, name: str) -> bool:
    """Whether the executable `found` is this installation's `name` (same file, or a script
    run by this very interpreter), not another venv's copy that happens to be on PATH."""
    import sys

    ours = installed_script(name)
    if ours is None:
        return False
    try:
        if Path(found).resolve() == ours.resolve():
            return True
    except OSError:
        return False
    interp = shebang_interpreter(Path(found))
    if interp is None:
        return False
    here = Path(sys.executable)
    try:  # the same venv (python vs python3 are links to one file inside one bin folder)
        return Path(interp).parent.resolve() == here.parent.resolve() and os.path.samefile(
            interp, here
        )
    except OSError:
        return False


def only_by_activation(found: str) -> bool:
    """Whether PATH finds `found` only because this virtualenv is activated in this shell:
    the script sits in the venv's own scripts folder, which a host started from elsewhere
    (a desktop launcher, another terminal) does not have on its PATH. pipx and uv tool link
    their scripts into a shared folder (~/.local/bin), which is not this case."""
    import sys

    if sys.prefix == sys.base_prefix:
        return False  # not a virtualenv: its scripts folder is on PATH for good
    try:
        folder = Path(found).parent.resolve()
        return any(folder == d.resolve() for d in scripts_dirs())
    except OSError:
        return True


def command_for(name: str, module: str) -> tuple[str, ...]:
    """What really starts this installation's `name` from a host, whatever the host's PATH.

    Bare `name` only when PATH resolves it to this installation through a folder that is
    on PATH for good; otherwise its absolute path (as pre-commit registers its interpreter);
    the pinned runner form only when that release is installable; as a last resort this
    interpreter with `-m` (a source checkout without scripts).
    """
    import sys

    found = shutil.which(name)
    if found and same_installation(found, name) and not only_by_activation(found):
        return (name,)
    script = installed_script(name)
    if script is not None:
        return (str(script),)
    if RUNNER_INSTALLABLE:
        return (*runner_prefix(), name)
    return (os.path.abspath(sys.executable), "-m", module)


def server_command() -> tuple[str, ...]:
    return command_for("engram-mcp", SERVER_MODULE)


def engram_command() -> tuple[str, ...]:
    return command_for("engram", CLI_MODULE)


def make_scope(kind: str, base: Path, *, hooks: bool = True) -> Scope:
    return Scope(kind, base, server_command(), engram_command(), hooks)


def pinned_version(command: list[str] | tuple[str, ...]) -> str | None:
    """The release a runner-form command is pinned to (None for a bare `engram-mcp`)."""

    for part in command:
        if part.startswith(DISTRIBUTION):
            m = PIN_RE.search(part)
            if m:
                return m.group("version")
    return None


SERVER_NAMES = ("engram-mcp", "engram-mcp.exe")
# Options Engram itself decides on when it writes a registration (R-INS-3).
MANAGED_OPTIONS = frozenset({"--always-load"})


RUNNERS = frozenset({"uvx", "uv", "pipx", "npx"})
CLI_NAMES = ("engram", "engram.exe")


def _program_at(words: list[str], names: tuple[str, ...], module: str) -> int | None:
    """Index of the word naming Engram's program when the command *is* that program: the
    executable itself, `<python> -m <module>`, or a package runner (`uvx --from … engram-mcp`).

    A command that merely mentions it (`sh -c "… engram-mcp"`) is not Engram's.
    """
    if not words:
        return None
    head = Path(words[0]).name.lower()
    if head in names:
        return 0
    if head.startswith("python") and words[1:3] == ["-m", module]:
        return 2
    if head in RUNNERS:
        return next((i for i, w in enumerate(words) if i and Path(w).name in names), None)
    return None


def _server_at(command: list[str] | tuple[str, ...]) -> int | None:
    return _program_at([str(p) for p in command], SERVER_NAMES, SERVER_MODULE)


def runs_engram_mcp(command: list[str] | tuple[str, ...]) -> bool:
    """Whether a registered command starts Engram's MCP server (any form Engram writes)."""
    return _server_at(command) is not None


def person_options(command: list[str] | tuple[str, ...]) -> list[str]:
    """Server options after `engram-mcp` that a person added (`--no-elicitation`, …).

    Re-pinning replaces the command in front of them and keeps them (R-REG-4, R-INS-5).
    """
    at = _server_at(command)
    if at is None:
        return []
    return [str(o) for o in command[at + 1 :] if o not in MANAGED_OPTIONS]


def is_engram_hook(command: str, host: str | None = None) -> bool:
    """Whether a hook command runs `engram hook <host> <event>` (any form Engram writes)."""
    try:
        words = shlex.split(command or "")
    except ValueError:
        return False
    at = _program_at(words, CLI_NAMES, CLI_MODULE)
    if at is None or len(words) < at + 4 or words[at + 1] != "hook":
        return False
    return host is None or words[at + 2] == host


def launch_problem(command: list[str] | tuple[str, ...], name: str) -> tuple[str, str] | None:
    """Why a registered command would not start this installation's `name`, or None.

    Returns a stable code and a sentence: the runner form of a release the index does not
    have, a command missing from PATH or from disk, a file that cannot run (or whose
    interpreter is gone), or another installation of Engram than this one.
    """
    import sys

    words = [str(w) for w in command]
    if not words:
        return None
    first = words[0]
    pinned = pinned_version(words)
    if Path(first).name in RUNNERS or pinned is not None:
        if RUNNER_INSTALLABLE:
            return None
        return (
            "host.command_unavailable",
            f"`{shlex.join(words[:4])}` installs {DISTRIBUTION}"
            + (f"=={pinned}" if pinned else "")
            + " from the package index, which does not have it",
        )
    if os.path.isabs(first) or os.sep in first or (os.altsep and os.altsep in first):
        path: Path | None = Path(first).expanduser()
        if not path.exists():
            return "host.command_missing", f"`{first}` does not exist"
    else:
        found = shutil.which(first)
        if found is None:
            return "host.command_missing", f"`{first}` is not on PATH"
        path = Path(found)
    if path.is_dir() or not os.access(path, os.X_OK):
        return "host.command_not_executable", f"`{path}` is not an executable file"
    interp = shebang_interpreter(path)
    if interp is not None and not Path(interp).exists():
        return "host.command_broken", f"`{path}` runs {interp}, which no longer exists"
    if "-m" in words:  # `<python> -m engram.…`: this interpreter, or another one?
        try:
            same = os.path.samefile(path, sys.executable)
        except OSError:
            same = False
        if not same:
            return "host.command_other_installation", f"`{path}` is not this installation's Python"
        return None
    if Path(first).name in (name, f"{name}.exe") and not same_installation(path, name):
        return (
            "host.command_other_installation",
            f"`{path}` belongs to another Engram installation than this one",
        )
    return None
