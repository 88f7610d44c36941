"""The hook as hosts run it: a subprocess fed real hook payloads on stdin."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from engram.core import api

HOOK = [sys.executable, "-m", "engram.cli.main", "hook"]


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict:
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "ENGRAM_HOME": str(home / "engram-home"),
    }
    env.pop("ENGRAM_GLOBAL_DIR", None)
    env.pop("ENGRAM_SESSION_OBJECTIVE", None)
    for k, v in env.items():
        if k in ("HOME", "ENGRAM_HOME"):
            monkeypatch.setenv(k, v)
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    api.init(project, example=True)
    return {"project": project, "env": env}


def hook(ws: dict, host: str, event: str, payload: dict | str, **env: str):
    data = payload if isinstance(payload, str) else json.dumps(payload)
    proc = subprocess.run(
        [*HOOK, host, event],
        input=data,
        capture_output=True,
        text=True,
        env={**ws["env"], **env},
        cwd=ws["project"],
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout) if proc.stdout.strip() else None, proc


def start(ws, session="s1"):
    return {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(ws["project"]),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }


def prompt(ws, text, session="s1"):
    return {
        "session_id": session,
        "transcript_path": "/tmp/t.jsonl",
        "cwd": str(ws["project"]),
        "permission_mode": "default",
        "hook_event_name": "UserPromptSubmit",
        "prompt": text,
    }


def set_config(ws, key, value):
    api.config_set(_roots(ws), key, value)


def _roots(ws):
    from engram.core.store.roots import resolve_roots

    return resolve_roots(ws["project"])


def test_session_start_injects_the_startup_pack(ws):
    out, _ = hook(ws, "claude", "session-start", start(ws))
    spec = out["hookSpecificOutput"]
    assert spec["hookEventName"] == "SessionStart"
    assert "run-tests-before-release" in spec["additionalContext"]
    assert "systemMessage" not in out  # proof is off by default


def test_session_start_ends_with_the_map_of_what_memory_covers(ws):
    out, _ = hook(ws, "claude", "session-start", start(ws))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("Engram memory")  # the pack first, then the map
    head = context[context.index("Project memory holds ") :]
    assert "engram_load" in head
    assert "release" in head  # a tag of the example memories, with its count
    prompted, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, "how do we cut a release"))
    if prompted is not None:  # a prompt never repeats the map
        assert "Project memory holds" not in prompted["hookSpecificOutput"]["additionalContext"]


def test_auto_mode_reinjects_only_when_the_routing_changes(ws):
    set_config(ws, "proof", "compact")
    first, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, "prepare the release"))
    assert first["hookSpecificOutput"]["hookEventName"] == "UserPromptSubmit"
    assert "Engram proof: loaded" in first["hookSpecificOutput"]["additionalContext"]
    again, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, "prepare the release please"))
    assert again["hookSpecificOutput"]["additionalContext"].startswith("Engram proof: reused")
    other, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, "database migration order"))
    assert "database-migrations" in other["hookSpecificOutput"]["additionalContext"]
    cache = (ws["project"] / ".agents/.engram/cache/hook-state.json").read_text()
    assert "prepare" not in cache and "migration" not in cache  # never prompt text
    assert '"s1"' in cache


def test_always_startup_manual_and_off_modes(ws):
    set_config(ws, "read_mode", "always")
    p = prompt(ws, "prepare the release")
    assert hook(ws, "claude", "user-prompt-submit", p)[0] is not None
    assert hook(ws, "claude", "user-prompt-submit", p)[0] is not None
    set_config(ws, "read_mode", "startup")
    assert hook(ws, "claude", "user-prompt-submit", p)[0] is None
    assert hook(ws, "claude", "session-start", start(ws))[0] is not None
    set_config(ws, "read_mode", "manual")
    set_config(ws, "proof", "compact")
    out = hook(ws, "claude", "session-start", start(ws))[0]
    assert out["systemMessage"] == "Engram proof: skipped (read mode manual)"
    set_config(ws, "read_mode", "off")
    assert hook(ws, "claude", "session-start", start(ws))[0] is None


def test_gemini_before_agent_uses_its_event_name(ws):
    payload = {**prompt(ws, "prepare the release"), "hook_event_name": "BeforeAgent"}
    out, _ = hook(ws, "gemini", "user-prompt-submit", payload)
    assert out["hookSpecificOutput"]["hookEventName"] == "BeforeAgent"


def test_working_note_body_only_for_its_objective(ws):
    note = ws["project"] / ".agents/.engram/working/release-blocker.md"
    note.write_text(
        "---\nschema_version: 3\nid: release-blocker\ntype: knowledge\ntier: working\n"
        "objective: ship the release\ntags: [release]\nvalid_until: 2999-01-01\n---\n"
        "# Release blocker\n\n## Content\n\n- The signing key expires on Friday.\n",
        encoding="utf-8",
    )
    plain, _ = hook(ws, "claude", "session-start", start(ws))
    assert "signing key" not in json.dumps(plain)
    matched, _ = hook(
        ws, "claude", "session-start", start(ws), ENGRAM_SESSION_OBJECTIVE="ship the release"
    )
    assert "signing key" in matched["hookSpecificOutput"]["additionalContext"]


@pytest.mark.parametrize(
    "breakage",
    ["manifest", "memory", "index", "config"],
)
def test_a_corrupt_root_never_breaks_the_host(ws, breakage):
    root = ws["project"] / ".agents/.engram"
    if breakage == "manifest":
        (root / "hashes.json").write_text("{not json", encoding="utf-8")
    elif breakage == "memory":
        (root / "rules" / "broken.md").write_bytes(b"---\nid: [unclosed\n---\n\xff\xfe")
    elif breakage == "index":
        (root / "cache" / "index.sqlite").write_bytes(b"this is not a database")
    else:
        (root / "config.json").write_text("[1, 2", encoding="utf-8")
    out, proc = hook(ws, "claude", "user-prompt-submit", prompt(ws, "prepare the release"))
    assert proc.returncode == 0
    if out is not None:  # the read path may still serve the healthy memories
        assert set(out) <= {"hookSpecificOutput", "systemMessage"}
        assert "decision" not in out and "continue" not in out


def test_internal_error_exits_0_silently_and_logs_one_line(ws):
    (ws["project"] / ".agents/.engram/config.json").write_text("[1, 2", encoding="utf-8")
    out, proc = hook(ws, "claude", "session-start", start(ws))
    assert out is None and proc.stdout == ""
    log = (ws["project"] / ".agents/.engram/cache/hook.log").read_text().splitlines()
    assert len(log) == 1 and "claude session-start error" in log[0]


@pytest.mark.parametrize("payload", ["", "not json", "[1, 2]", '{"prompt": 3}'])
def test_malformed_payloads_are_harmless(ws, payload):
    out, proc = hook(ws, "claude", "user-prompt-submit", payload)
    assert proc.returncode == 0 and out is None


def test_no_workspace_means_no_output(ws, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out, _ = hook(ws, "claude", "session-start", {"session_id": "x", "cwd": str(elsewhere)})
    assert out is None


def test_unknown_host_or_event_is_not_fatal(ws):
    proc = subprocess.run(
        [*HOOK, "vim", "start"],
        input="{}",
        capture_output=True,
        text=True,
        env=ws["env"],
        timeout=60,
    )
    assert proc.returncode == 0 and proc.stdout == "" and "unknown host" in proc.stderr


# ---------------------------------------------------------------- links a repository may commit


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    v = tmp_path / "outside" / "bashrc"
    v.parent.mkdir()
    v.write_bytes(b"export PATH=/usr/bin\n" * 4000)  # past the log's size limit, too
    return v


@pytest.mark.parametrize("host", ["claude", "gemini"])
def test_a_linked_hook_log_is_never_written_and_the_hook_still_answers(ws, victim, host):
    cache = ws["project"] / ".agents/.engram/cache"
    cache.mkdir(exist_ok=True)
    (cache / "hook.log").symlink_to(victim)
    before = victim.read_bytes()
    out, _ = hook(ws, host, "session-start", start(ws))
    assert out and "hookSpecificOutput" in out  # answered as usual
    (ws["project"] / ".agents/.engram/config.json").write_text("[1, 2", encoding="utf-8")
    for event, payload in (("session-start", start(ws)), ("user-prompt-submit", prompt(ws, "x"))):
        out, proc = hook(ws, host, event, payload)  # fails inside: the log path is taken
        assert out is None and proc.stdout == ""
    assert victim.read_bytes() == before and (cache / "hook.log").is_symlink()
    (cache / "hook.log").unlink()
    hook(ws, host, "session-start", start(ws))
    assert "error" in (cache / "hook.log").read_text()


def test_a_linked_hook_cache_is_not_written_and_every_prompt_is_answered(ws, victim):
    cache = ws["project"] / ".agents/.engram/cache"
    cache.mkdir(exist_ok=True)
    (cache / "hook-state.json").symlink_to(victim)
    before = victim.read_bytes()
    for _ in range(2):  # nothing remembered, so nothing is "reused": each answer carries memory
        out, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, "prepare the release"))
        assert out and "release" in out["hookSpecificOutput"]["additionalContext"].lower()
    assert victim.read_bytes() == before


def test_a_linked_cache_folder_gets_no_log_and_no_state(ws, victim):
    root = ws["project"] / ".agents/.engram"
    shutil.rmtree(root / "cache", ignore_errors=True)
    (root / "cache").symlink_to(victim.parent, target_is_directory=True)
    names = sorted(p.name for p in victim.parent.iterdir())
    out, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, "prepare the release"))
    assert out and "hookSpecificOutput" in out
    (root / "config.json").write_text("[1, 2", encoding="utf-8")
    hook(ws, "claude", "session-start", start(ws))
    assert sorted(p.name for p in victim.parent.iterdir()) == names


def test_a_prompt_routes_without_earlier_hook_context_blocks() -> None:
    from engram.hooks.run import strip_hook_context

    prompt = "<hook_context>Engram memory (session start)\n- release rule\n</hook_context>\n\nHow do we release?"
    assert strip_hook_context(prompt) == "How do we release?"
    assert strip_hook_context("plain <b>prompt</b>") == "plain <b>prompt</b>"
    two = "<hook_context>a</hook_context> <hook_context>b</hook_context>fix the login bug"
    assert strip_hook_context(two) == "fix the login bug"


def _context(out: dict | None) -> str:
    return (out or {}).get("hookSpecificOutput", {}).get("additionalContext", "") if out else ""


def test_the_prompt_hook_stays_quiet_unless_it_is_sure(ws):
    from engram.hooks.run import POINTER

    for chit_chat in (
        "thanks, that worked!",
        "hello there",
        "Translate 'good morning' into Spanish",
    ):
        out, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, chit_chat, session=chit_chat))
        assert _context(out) == "", chit_chat
    # A prompt the memory covers, but not confidently: never a list of weak cards; at most
    # a one-line pointer of ~40 tokens that tells the model to search with its own words.
    for text in ("release", "what about the staging cluster and the release train"):
        out, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, text, session=text))
        context = _context(out)
        if "\n---\nid:" in context:  # confident bodies, and no card beside them
            assert " 0 cards, " in context.splitlines()[0], context.splitlines()[0]
        elif context:
            assert context.startswith(POINTER.split("{")[0]) and len(context) // 4 <= 40


def _prompt_contexts(ws, rel: str, memory: str, prompts: tuple[str, ...]) -> list[str]:
    """What the prompt hook injects for each prompt, once `memory` is written at `rel`."""
    from tests.conftest import ws_root

    (ws_root(ws["project"]) / rel).write_text(memory, encoding="utf-8")
    return [
        _context(hook(ws, "claude", "user-prompt-submit", prompt(ws, t, session=t))[0])
        for t in prompts
    ]


def test_one_word_a_prompt_shares_with_memory_injects_no_body(ws):
    """A memory whose body says "morning" and "continuity" is no answer to "good morning"
    or "continue"; a prompt naming two of its words is."""
    memory = (
        "---\nid: ehr-downtime\ntype: knowledge\ntags: [business-continuity, downtime]\n---\n\n"
        "# Record system downtime\n\nThe morning maintenance window stops the record "
        "system; continue on the paper forms and key them in after the downtime.\n"
    )
    prompts = ("continue", "good morning! ready when you are")
    for text, context in zip(
        prompts, _prompt_contexts(ws, "knowledge/downtime.md", memory, prompts), strict=True
    ):
        assert "id: ehr-downtime" not in context, text
    text = "the record system downtime: what do the paper forms need"
    out, _ = hook(ws, "claude", "user-prompt-submit", prompt(ws, text, session="d"))
    assert "id: ehr-downtime" in _context(out)


def test_a_prompt_sharing_one_word_with_memory_gets_not_even_a_pointer(ws):
    """A pointer asks the model to search memory; one word a prompt shares with a memory
    ("commit") is no reason to, so the hook says nothing at all."""
    memory = (
        "---\nid: git-commit-messages\ntype: rule\ntags: [git, commit]\n---\n\n"
        "# Commit messages\n\nWrite the subject in the imperative, under 72 characters, "
        "and name the ticket in the body.\n"
    )
    prompts = ("commit and push", "explain the difference between a mutex and a commit")
    assert _prompt_contexts(ws, "rules/commit-messages.md", memory, prompts) == ["", ""]
