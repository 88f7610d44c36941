"""A temporary person for the real host programs: own HOME, XDG folders, project and PATH.

The host programs come from `$ENGRAM_TEST_<HOST>` (what `.ci/run` exports after installing
pinned versions with npm) or the project-local `.ci-node` prefix `.ci/run` installs into;
the suite never downloads them. `PATH` holds only the system folders and Node's, never the
virtualenv, so a registration works only if it names what really starts this installation.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from engram.hosts.base import installed_script

REPO = Path(__file__).resolve().parents[3]
LOCAL_BIN = REPO / ".ci-node" / "node_modules" / ".bin"
# host -> (environment variable, executable name, npm package)
PROGRAMS = {
    "claude": ("ENGRAM_TEST_CLAUDE", "claude", "@anthropic-ai/claude-code"),
    "codex": ("ENGRAM_TEST_CODEX", "codex", "@openai/codex"),
    "gemini": ("ENGRAM_TEST_GEMINI", "gemini", "@google/gemini-cli"),
    "opencode": ("ENGRAM_TEST_OPENCODE", "opencode", "opencode-ai"),
}
TIMEOUT_S = 120
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def program(host: str) -> Path | None:
    """The installed host program, or None (then its tests skip)."""
    var, exe, _ = PROGRAMS[host]
    explicit = os.environ.get(var)
    candidates = [Path(explicit)] if explicit else [LOCAL_BIN / exe]
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    return None


def skip_reason(host: str) -> str:
    var, exe, package = PROGRAMS[host]
    return (
        f"{exe} ({package}) is not installed: .ci/run installs it with npm into .ci-node and "
        f"exports {var}; the suite never downloads it"
    )


def plain(text: str) -> str:
    """Host output without colour codes."""
    return ANSI.sub("", text)


def _offline_prefix() -> list[str]:
    """`unshare -rn` when this machine allows it: host listings then run with no network."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return []
    try:
        probe = subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [unshare, "-rn"] if probe.returncode == 0 else []


OFFLINE = _offline_prefix()


@dataclass
class Sandbox:
    """One person's machine: a HOME with XDG folders, a project, and a PATH without Engram."""

    home: Path
    project: Path
    env: dict[str, str]

    @classmethod
    def create(cls, base: Path) -> Sandbox:
        home, project = base / "home", base / "project"
        home.mkdir()
        project.mkdir()
        node = shutil.which("node")
        folders = [str(Path(node).parent)] if node else []
        path = os.pathsep.join(dict.fromkeys([*folders, "/usr/bin", "/bin"]))
        env = {
            "HOME": str(home),
            "PATH": path,
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
            "XDG_CONFIG_HOME": str(home / ".config"),
            "XDG_DATA_HOME": str(home / ".local" / "share"),
            "XDG_CACHE_HOME": str(home / ".cache"),
            "XDG_STATE_HOME": str(home / ".local" / "state"),
            "ENGRAM_HOME": str(home / ".engram-home"),
            # No telemetry, update checks or other traffic the hosts can be told to skip.
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "GEMINI_CLI_NO_RELAUNCH": "true",
        }
        return cls(home, project, env)

    def engram(self, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        """The installed `engram`, by its absolute path (it is not on this PATH)."""
        exe = installed_script("engram")
        assert exe is not None, "the engram executable is not installed next to this Python"
        return subprocess.run(
            [str(exe), *args],
            cwd=cwd or self.project,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            stdin=subprocess.DEVNULL,
        )

    def ok(self, *args: str) -> str:
        done = self.engram(*args)
        assert done.returncode == 0, f"engram {shlex.join(args)}: {done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr
        return done.stdout

    def link(self, *args: str) -> dict:
        """`engram link … --json`: the result's data."""
        return json.loads(self.ok("link", *args, "--json"))["data"]

    def run(
        self,
        argv: list[str],
        *,
        offline: bool = True,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> subprocess.CompletedProcess[str]:
        """A host program's command, with no network when the machine allows it."""
        done = subprocess.run(
            [*(OFFLINE if offline else []), *argv],
            cwd=cwd or self.project,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
        done.stdout, done.stderr = plain(done.stdout), plain(done.stderr)
        return done

    def write(self, rel: str, text: str, *, base: Path | None = None) -> Path:
        path = (base or self.project) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))
        return path

    def files(self, base: Path, rels: list[str]) -> dict[str, bytes | None]:
        """The bytes of each file (None: absent)."""
        out: dict[str, bytes | None] = {}
        for rel in rels:
            path = base / rel
            out[rel] = path.read_bytes() if path.is_file() else None
        return out

    def project_files(self) -> dict[str, bytes]:
        """Every file of the project outside Engram's memory root."""
        return {
            str(p.relative_to(self.project)): p.read_bytes()
            for p in sorted(self.project.rglob("*"))
            if p.is_file() and ".agents" not in p.relative_to(self.project).parts
        }


def restored(before: dict[str, bytes], after: dict[str, bytes], host_written: set[str]) -> None:
    """Every file as before; new ones only those the host program wrote itself."""
    assert {k: v for k, v in after.items() if k in before} == before
    assert set(after) - set(before) <= host_written, sorted(set(after) - set(before))


def touched(data: dict) -> list[str]:
    """The files a link result names (relative to its base)."""
    return sorted({c["path"] for c in data["changes"] if c.get("path")})


def notes(data: dict) -> list[str]:
    return [c["message"] for c in data["changes"] if c["action"] == "note"]
