"""`engram hook <host> <event>`: inject routed memory into a host's session, never break it.

Hosts run this on every prompt, so it imports only what it needs (the CLI routes here
before argparse). It reads the host's hook JSON on stdin, picks what to inject from the
read mode (`startup | auto | always | manual | off`), answers in the host's documented
output format (`hookSpecificOutput.additionalContext`) and always exits 0: any internal
error produces no output and one line in `cache/hook.log`.

The hook runs in repositories the user did not write, so its own files (`cache/hook.log`,
`cache/hook-state.json`) are reached without following links: a repository that commits
`cache/hook.log -> ~/.bashrc` gets a hook that answers as usual and writes no log.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engram.core.api import Root

SESSION_START = "session-start"
PROMPT = "user-prompt-submit"
# host -> Engram event -> the host's event name in its hook output
HOST_EVENTS: dict[str, dict[str, str]] = {
    "claude": {SESSION_START: "SessionStart", PROMPT: "UserPromptSubmit"},
    "gemini": {SESSION_START: "SessionStart", PROMPT: "BeforeAgent"},
}
USAGE = (
    "usage: engram hook <host> <event>   (hosts: "
    + ", ".join(HOST_EVENTS)
    + f"; events: {SESSION_START}, {PROMPT}); reads the host's hook JSON on stdin"
)
MAX_STDIN = 4 * 1024 * 1024
MAX_LOG_BYTES = 64 * 1024


def run_hook_command(argv: list[str]) -> int:
    """Entry point for `engram hook …`; returns the exit code (always 0 for hosts)."""
    if not argv or argv[0] in ("-h", "--help"):
        sys.stdout.write(USAGE + "\n")
        return 0
    if len(argv) < 2 or argv[0] not in HOST_EVENTS or argv[1] not in HOST_EVENTS[argv[0]]:
        sys.stderr.write(f"engram hook: unknown host or event {' '.join(argv)!r}\n{USAGE}\n")
        return 0
    host, event = argv[0], argv[1]
    payload: dict[str, Any] = {}
    try:
        payload = _read_payload()
        out = respond(host, event, payload, os.environ)
    except BaseException as exc:  # a hook must never break its host
        if not isinstance(exc, KeyboardInterrupt):
            _log_error(host, event, exc, payload.get("cwd"))
        return 0
    if out is not None:
        try:
            sys.stdout.write(json.dumps(out, ensure_ascii=False) + "\n")
            sys.stdout.flush()
        except (BrokenPipeError, OSError):
            pass
    return 0


def _read_payload() -> dict[str, Any]:
    if sys.stdin is None or sys.stdin.isatty():
        return {}
    raw = sys.stdin.read(MAX_STDIN)
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def respond(
    host: str, event: str, payload: dict[str, Any], env: Any = os.environ
) -> dict[str, Any] | None:
    """What to print for one hook call (None: print nothing)."""
    from engram.core.api import load_config, resolve_roots

    cwd = payload.get("cwd") or env.get("CLAUDE_PROJECT_DIR") or env.get("GEMINI_PROJECT_DIR")
    roots = resolve_roots(Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd())
    if not roots.all:
        return None
    config = load_config(roots)
    mode = config.get("read_mode")
    proof_on = config.get("proof") == "compact"
    session = str(payload.get("session_id") or payload.get("conversation_id") or "-")[:200]

    if mode == "off":
        return None
    query: str | None = None
    if event == PROMPT:
        prompt = payload.get("prompt")
        if isinstance(prompt, str):  # a stray surrogate or control must not cost the memory
            from engram.core.api import printable

            prompt = printable(strip_hook_context(prompt))
        query = prompt if isinstance(prompt, str) and prompt.strip() else None
        if mode in ("startup", "manual") or query is None:
            reason = f"read mode {mode}" if mode in ("startup", "manual") else "empty prompt"
            return _answer(host, event, None, f"skipped ({reason})" if proof_on else None)
    elif mode == "manual":
        return _answer(host, event, None, "skipped (read mode manual)" if proof_on else None)

    from engram.core import api
    from engram.core.api import printable, work_signals

    objective = printable(env.get("ENGRAM_SESSION_OBJECTIVE", ""))  # undecodable bytes too
    cache = HookCache(roots.primary)
    # Task signals: the files the work touches (changed and staged, the cwd) and the branch;
    # a session starts on them and the objective instead of a generic pack.
    hook_cwd = Path(cwd) if isinstance(cwd, str) and cwd else None
    paths, branch = work_signals(roots.project_dir, hook_cwd) if roots.project_dir else ([], "")
    if event == SESSION_START and objective.strip():
        query = objective.strip()[:2000]
    # The noise budget: on a prompt the hook speaks only when it is sure. It injects at most
    # `hook.max_bodies` confident bodies and never a list of weak cards; when the prompt
    # touches memory without a confident match it says so in one line (`POINTER`), so the
    # model can search with its own words; chit-chat and general questions get nothing.
    prompt_only = {
        "max_bodies": config.get("hook.max_bodies"),
        "min_matched": 2,
        "thin_cards": False,
        "cards": False,
    }
    result = api.load(
        roots,
        api.LoadRequest(
            query=query,
            objective=objective,
            count_usage=False,
            paths=paths,
            branch=branch,
            **prompt_only if event == PROMPT else {},
        ),
    )
    if event == SESSION_START and query is not None and not result.data.get("selected_keys"):
        # the objective names no memory: start on the signals, else the generic pack
        result = api.load(
            roots,
            api.LoadRequest(
                query=None, objective=objective, count_usage=False, paths=paths, branch=branch
            ),
        )
    signature = str(result.data.get("signature", ""))
    if mode == "auto" and event == PROMPT and signature and cache.signature(session) == signature:
        n = len(result.data.get("selected_keys", []))
        return _answer(
            host, event, None, f"reused ({n} routed, context unchanged)" if proof_on else None
        )
    api.record_retrievals(roots, list(result.data.get("body_keys", [])))
    cache.remember(session, signature, event)
    selected = list(result.data.get("selected_keys", []))
    unshown = list(result.data.get("unshown_cards") or [])
    # A session starts with the map of what memory covers, so the model's own searches use
    # the team's words; a prompt never repeats it.
    coverage = api.coverage_map(roots) if event == SESSION_START else ""
    if not selected and not result.data.get("withheld"):  # a withheld memory is always told
        if event == PROMPT and unshown:
            return _answer(host, event, POINTER.format(ids=", ".join(unshown)),
                           f"pointer ({len(unshown)} unsure)" if proof_on else None)  # fmt: skip
        if coverage:
            return _answer(
                host, event, coverage, "map only (no memory matched)" if proof_on else None
            )
        return _answer(host, event, None, "skipped (no memory matched)" if proof_on else None)
    ids = ", ".join(selected[:8]) + (", …" if len(selected) > 8 else "")
    proof = f"loaded {len(selected)} ({ids}), {result.data.get('tokens', 0)} tokens"
    context = "\n\n".join(p for p in (result.text, coverage) if p)  # the pack, then the map
    return _answer(host, event, context, proof if proof_on else None)


# At most ~40 tokens: what may apply, and how the model finds out with its own searches.
POINTER = (
    "Engram: project memory may apply ({ids}); if this is project work, call engram_load "
    "with 2-4 short queries of your own."
)


def strip_hook_context(prompt: str) -> str:
    """The person's own prompt: Gemini CLI hands a prompt hook the text with earlier hook
    output (`<hook_context>` blocks, our session-start pack among them) in front of it, and
    routing on that would route on Engram's own words and echo them back."""
    if "<hook_context>" not in prompt:
        return prompt
    import re

    return re.sub(r"<hook_context>.*?</hook_context>\s*", "", prompt, flags=re.DOTALL)


def _answer(host: str, event: str, context: str | None, proof: str | None) -> dict[str, Any] | None:
    if context is None and proof is None:
        return None
    line = f"Engram proof: {proof}" if proof else None
    text = "\n\n".join(p for p in (context, line) if p)
    out: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": HOST_EVENTS[host][event], "additionalContext": text}
    }
    if line:
        out["systemMessage"] = line
    return out


class HookCache:
    """Per-session routed signatures (hashes and session ids only, never prompt text)."""

    FILE = "hook-state.json"
    MAX_SESSIONS = 64

    def __init__(self, root: Root) -> None:
        from engram.core.api import read_json

        self.root = root
        self.path = root.cache_dir / self.FILE
        try:
            data = read_json(root, self.path)
        except (OSError, ValueError):  # absent, broken or a link: start afresh
            data = {}
        sessions = data.get("sessions") if isinstance(data, dict) else None
        self.sessions: dict[str, dict[str, Any]] = sessions if isinstance(sessions, dict) else {}

    def signature(self, session: str) -> str | None:
        entry = self.sessions.get(session)
        return entry.get("signature") if isinstance(entry, dict) else None

    def remember(self, session: str, signature: str, event: str) -> None:
        if self.signature(session) == signature:
            return
        self.sessions[session] = {"signature": signature, "event": event, "at": int(time.time())}
        if len(self.sessions) > self.MAX_SESSIONS:
            newest = sorted(self.sessions.items(), key=lambda kv: -int(kv[1].get("at", 0)))
            self.sessions = dict(newest[: self.MAX_SESSIONS])
        from engram.core.api import atomic_write

        text = json.dumps({"version": 1, "sessions": self.sessions}, indent=1) + "\n"
        with contextlib.suppress(OSError):  # a read-only or linked cache only costs a re-send
            atomic_write(self.path, text, root=self.root)


def log_target(cwd: Any = None) -> tuple[Root | Path, Path]:
    """(root, cache/hook.log) of the workspace (or global) root, else of the user config folder."""
    try:
        from engram.core.api import resolve_roots

        roots = resolve_roots(Path(cwd) if isinstance(cwd, str) and cwd else None)
        if roots.all:
            return roots.primary, roots.primary.cache_dir / "hook.log"
    except BaseException:
        pass
    from engram.core.api import user_config_dir

    folder = user_config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    return folder, folder / "cache" / "hook.log"


def _log_error(host: str, event: str, exc: BaseException, cwd: Any = None) -> None:
    """One line in the hook log; nothing at all when the log (or a folder on the way) is a link."""
    try:
        from engram.core.api import append_text, atomic_write, file_stat, read_bytes

        root, path = log_target(cwd)
        try:
            size = file_stat(root, path).st_size
        except FileNotFoundError:
            size = 0
        if size > MAX_LOG_BYTES:
            tail = read_bytes(root, path)[-MAX_LOG_BYTES // 2 :]
            atomic_write(path, tail[tail.find(b"\n") + 1 :], root=root)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        message = " ".join(str(exc).split())[:300]
        append_text(root, path, f"{stamp} {host} {event} error: {type(exc).__name__}: {message}\n")
    except BaseException:
        pass
