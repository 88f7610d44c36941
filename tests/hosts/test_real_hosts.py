"""Engram's registrations as the real host programs read them (Claude Code, Codex, Gemini
CLI, OpenCode, installed from npm by `.ci/run`; skipped with a reason when absent).

Each test is one person on a fresh machine: a temporary HOME and project, a PATH without
the virtualenv. It links with the installed `engram`, does the step the README gives for
that host (approve, trust), asks the host itself whether the `engram` server is seen and
connected, and unlinks, after which the files Engram touched are byte for byte as before.
Host listings run in a private network namespace when the machine allows it (no network).
Model turns go to a scripted server on 127.0.0.1 (tests/hosts/real/fake_model.py).
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from engram.hosts.base import installed_script
from tests.hosts.real import codex_app, fake_model
from tests.hosts.real.sandbox import Sandbox, notes, program, restored, skip_reason, touched

SERVER = str(installed_script("engram-mcp"))


def host_program(host: str) -> Path:
    found = program(host)
    if found is None:
        pytest.skip(skip_reason(host))
    return found


@pytest.fixture
def box(tmp_path: Path) -> Sandbox:
    sandbox = Sandbox.create(tmp_path)
    sandbox.ok("init")
    return sandbox


# --- Claude Code -----------------------------------------------------------------------------


def approve_claude_project(box: Sandbox) -> None:
    """What approving the project's server in Claude Code records (README: run `claude`, approve).

    The approval dialog is interactive; its answer is stored by Claude Code in `~/.claude.json`
    as the project's trust and `enabledMcpjsonServers`, which is what this writes.
    """
    state = box.home / ".claude.json"
    data = json.loads(state.read_text(encoding="utf-8")) if state.exists() else {}
    project = data.setdefault("projects", {}).setdefault(str(box.project), {})
    project.update({"hasTrustDialogAccepted": True, "enabledMcpjsonServers": ["engram"]})
    state.write_text(json.dumps(data, indent=2), encoding="utf-8")


def claude_status(box: Sandbox, claude: Path) -> tuple[str, str]:
    listed = box.run([str(claude), "mcp", "list"])
    got = box.run([str(claude), "mcp", "get", "engram"])
    assert listed.returncode == 0, listed.stderr
    assert got.returncode == 0, got.stderr
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("engram:"))
    return line, got.stdout


def test_claude_workspace_pending_then_connected_and_unlink_restores(box: Sandbox) -> None:
    claude = host_program("claude")
    box.write("CLAUDE.md", "# Project notes\n\nUse pnpm, not npm.")
    box.write(".claude/settings.json", '{\n    "permissions": {"allow": ["Bash(npm test)"]}\n}\n')
    before = box.project_files()

    linked = box.link("claude")
    assert linked["command"] == [SERVER]
    assert any("pending approval" in n and str(box.project) in n for n in notes(linked))
    line, detail = claude_status(box, claude)
    assert "Pending approval" in line, line  # the note tells the truth

    approve_claude_project(box)
    assert notes(box.link("claude")) == []  # link no longer asks for the step
    line, detail = claude_status(box, claude)
    assert "Connected" in line and "Failed" not in line, line
    assert "Status: ✔ Connected" in detail, detail
    assert f"Command: {SERVER}" in detail
    assert "Project config" in detail

    box.ok("unlink", "claude")
    # Claude Code keeps the person's approval in its own settings.local.json.
    restored(before, box.project_files(), {".claude/settings.local.json"})
    assert "engram" not in box.run([str(claude), "mcp", "list"]).stdout


def test_claude_global_printed_command_connects_and_unlink_restores(box: Sandbox) -> None:
    claude = host_program("claude")
    box.write(".claude/settings.json", '{\r\n  "model": "opus"\r\n}\r\n', base=box.home)
    box.write(".claude/CLAUDE.md", "Answer in English.\n", base=box.home)

    own = [".claude/CLAUDE.md", ".claude/settings.json"]
    before = box.files(box.home, own)

    linked = box.link("claude", "--global")
    assert touched(linked) == own
    printed = [c for c in linked["changes"] if c["action"] == "print"]
    assert len(printed) == 1 and printed[0]["message"].startswith("run: claude mcp add")
    add = shlex.split(printed[0]["message"].removeprefix("run: "))
    assert add[-1] == SERVER
    # The person runs the printed command (the user registration lives in Claude's own file).
    done = box.run([str(claude), *add[1:]])
    assert done.returncode == 0, done.stderr

    line, detail = claude_status(box, claude)
    assert "Connected" in line, line
    assert "Scope: User config" in detail and "Status: ✔ Connected" in detail, detail
    # Engram sees the registration the person made (it reads ~/.claude.json, never writes it).
    links = json.loads(box.ok("link", "list", "--json"))["data"]["links"]
    ours = [i for ln in links if ln["host"] == "claude" for i in ln["items"]]
    assert {"role": "registration", "command": [SERVER]}.items() <= next(
        i for i in ours if i["role"] == "registration"
    ).items()

    unlinked = json.loads(box.ok("unlink", "claude", "--global", "--json"))["data"]
    removal = [c["message"] for c in unlinked["changes"] if c["action"] == "print"]
    assert removal and "claude mcp remove --scope user engram" in removal[0]
    box.run([str(claude), *shlex.split(removal[0].removeprefix("run: "))[1:]])
    assert box.files(box.home, own) == before
    assert "engram" not in box.run([str(claude), "mcp", "list"]).stdout


def claude_turn(box: Sandbox, claude: Path, prompt: str, debug: Path) -> tuple[list, list]:
    """One `claude -p` turn against the scripted model: (stream events, model requests)."""

    def script(request: fake_model.Request) -> list[fake_model.Event]:
        name = (request.body or {}).get("model", "claude")
        return fake_model.messages_text(f"msg_{len(model.requests)}", name, "Done.")

    with fake_model.serve(script) as model:
        env = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-offline-test"}
        argv = [str(claude), "-p", "--output-format", "stream-json", "--verbose"]
        argv += ["--include-hook-events", "--debug-file", str(debug), prompt]
        done = box.run(argv, offline=False, env=env)
        requests = model.model_requests("/v1/messages")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    return events, requests


def test_claude_hooks_run_validate_and_reach_the_model(box: Sandbox, tmp_path: Path) -> None:
    claude = host_program("claude")
    box.ok("save", "rule", "Release with make release after tagging the version", "-f")
    box.ok("set-read", "always")  # the prompt hook answers on every prompt, not only on change
    box.link("claude")
    approve_claude_project(box)
    prompt = "How do we release?"
    debug = tmp_path / "claude-debug.log"

    events, requests = claude_turn(box, claude, prompt, debug)

    responses = {e["hook_event"]: e for e in events if e.get("subtype") == "hook_response"}
    for event in ("SessionStart", "UserPromptSubmit"):
        answer = responses[event]
        assert answer["exit_code"] == 0 and answer["outcome"] == "success", answer
        output = json.loads(answer["stdout"])  # the hook's answer is JSON of the host's shape
        assert output["hookSpecificOutput"]["hookEventName"] == event
        assert output["hookSpecificOutput"]["additionalContext"].startswith("Engram memory")
    log = debug.read_text(encoding="utf-8")
    assert log.count("Successfully parsed and validated hook JSON output") >= 2
    assert "engram hook claude session-start] finished with status 0" in log
    assert "engram hook claude user-prompt-submit] finished with status 0" in log
    init = next(e for e in events if e.get("subtype") == "init")
    assert {"name": "engram", "status": "connected", "source": "project"} in init["mcp_servers"]
    assert "mcp__engram__engram_commit" in init["tools"]

    sent = json.dumps([r.body for r in requests])
    assert "SessionStart hook additional context: Engram memory for session start" in sent
    assert f'UserPromptSubmit hook additional context: Engram memory for \\"{prompt}\\"' in sent
    assert sent.count("Release with make release after tagging the version") >= 2


def test_claude_asks_before_engram_commit_even_when_the_tools_are_allowed(box: Sandbox) -> None:
    claude = host_program("claude")
    box.link("claude", "--no-hooks")
    approve_claude_project(box)
    rules = box.project / ".agents" / ".engram" / "rules"

    def call(tool: str, arguments: dict) -> list:
        name = f"mcp__engram__engram_{tool}"
        return fake_model.messages_tool_use(f"msg_{tool}", "claude-sonnet-4-5", name, arguments)

    def say(text: str) -> list:
        return fake_model.messages_text("msg_text", "claude-sonnet-4-5", text)

    # The person allowed both tools and skips permission prompts: engram_save runs unasked,
    # engram_commit (requiresUserInteraction, R-APP-6) still needs a person, and `-p` has none.
    allow = ["--allowedTools", "mcp__engram__engram_save", "mcp__engram__engram_commit"]
    with fake_model.serve(save_then_commit(say, call)) as model:
        env = {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-offline-test"}
        env["IS_SANDBOX"] = "1"  # lets --dangerously-skip-permissions run as root in CI
        argv = [str(claude), "-p", "Save the linter rule.", "--output-format", "stream-json"]
        argv += ["--verbose", "--dangerously-skip-permissions", *allow]
        done = box.run(argv, offline=False, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    results = {
        c["tool_use_id"]: c
        for e in events
        if e.get("type") == "user"
        for c in e["message"]["content"]
        if isinstance(c, dict) and c.get("type") == "tool_result"
    }
    assert not results["toolu_msg_save"].get("is_error"), results  # an allowed tool does run
    assert results["toolu_msg_commit"]["is_error"] is True, results
    assert "requires permission" in json.dumps(results["toolu_msg_commit"])
    assert not any(rules.glob("*.md"))


# --- Codex -----------------------------------------------------------------------------------


def trust_codex_project(box: Sandbox) -> None:
    """README: add `[projects."<path>"] trust_level = "trusted"` to ~/.codex/config.toml."""
    config = box.home / ".codex" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    text = config.read_text(encoding="utf-8") if config.exists() else ""
    text += f'\n[projects.{json.dumps(str(box.project))}]\ntrust_level = "trusted"\n'
    config.write_text(text, encoding="utf-8")


def codex_provider(url: str) -> list[str]:
    """`-c` overrides pointing Codex at the scripted Responses API server."""
    provider = (
        f'{{name = "offline", base_url = "{url}/v1", wire_api = "responses", '
        "request_max_retries = 0, stream_max_retries = 0}"
    )
    return [
        "-c",
        'model_provider="offline"',
        "-c",
        'model="offline-model"',
        "-c",
        f"model_providers.offline={provider}",
    ]


def codex_model(calls: list[tuple[str, dict]]) -> fake_model.Script:
    """A model that calls each engram tool of `calls` in turn, then ends with a message."""
    step = iter(calls)
    count = [0]

    def script(request: fake_model.Request) -> list[fake_model.Event]:
        count[0] += 1
        rid = f"resp_{count[0]}"
        nxt = next(step, None)
        if nxt is None:
            return fake_model.responses_message(rid, "Done.")
        name, arguments = nxt
        events = fake_model.responses_function_call(rid, f"call_{rid}", name, arguments)
        events[1]["item"]["namespace"] = "mcp__engram"  # Codex groups a server's tools
        return events

    return script


def codex_exec(
    box: Sandbox, codex: Path, calls: list[tuple[str, dict]], prompt: str = "Go."
) -> tuple[list[dict], list[fake_model.Request]]:
    """`codex exec --json` whose model calls each engram tool of `calls` in turn, then ends."""
    with fake_model.serve(codex_model(calls)) as model:
        # --strict-config: Codex refuses a config.toml with a field it does not know.
        argv = [str(codex), "exec", "--json", "--strict-config", "--skip-git-repo-check"]
        argv += codex_provider(model.url)
        done = box.run([*argv, prompt], offline=False, env={"OPENAI_API_KEY": "sk-offline"})
        requests = model.model_requests("/responses")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    return events, requests


def engram_tools_offered(requests: list[fake_model.Request]) -> set[str]:
    """The engram tools Codex offered its model: listed only after the server started."""
    assert requests, "Codex sent nothing to the model"
    for tool in requests[0].body.get("tools", []):
        if tool.get("type") == "namespace" and tool.get("name") == "mcp__engram":
            return {t["name"] for t in tool.get("tools", [])}
    return set()


def codex_listing(box: Sandbox, codex: Path) -> tuple[str, dict | None]:
    listed = box.run([str(codex), "mcp", "list"])
    got = box.run([str(codex), "mcp", "get", "engram", "--json"])
    assert listed.returncode == 0, listed.stderr
    return listed.stdout, json.loads(got.stdout) if got.returncode == 0 else None


def test_codex_workspace_needs_trust_then_connects_and_unlink_restores(box: Sandbox) -> None:
    codex = host_program("codex")
    box.write("AGENTS.md", "# Agents\n\n- Keep PRs small.\n")
    box.write(".codex/config.toml", '# project settings\nmodel_reasoning_effort = "low"\n')
    box.write(".codex/config.toml", '# my Codex settings\nmodel = "gpt-5"  # fast\n', base=box.home)
    before = box.project_files()

    linked = box.link("codex")
    assert any("trusted project" in n and str(box.project) in n for n in notes(linked))
    listing, detail = codex_listing(box, codex)
    assert "engram" not in listing and detail is None  # untrusted: Codex ignores the file

    trust_codex_project(box)
    assert notes(box.link("codex")) == []
    listing, detail = codex_listing(box, codex)
    row = next(ln for ln in listing.splitlines() if ln.startswith("engram "))
    assert "enabled" in row, listing
    assert detail is not None and detail["enabled"] is True
    assert detail["transport"] == {**detail["transport"], "command": SERVER, "args": []}
    # Codex's own health check: the config loads and every MCP server command resolves.
    doctor = box.run([str(codex), "doctor", "--json"])
    checks = json.loads(doctor.stdout)["checks"]
    assert checks["config.load"]["status"] == "ok", checks["config.load"]
    assert checks["mcp.config"]["status"] == "ok", checks["mcp.config"]
    assert checks["mcp.config"]["details"]["stdio servers"] == "1"
    # `codex mcp list` does not start servers: a model turn does, and lists their tools.
    _, requests = codex_exec(box, codex, [])
    assert {"engram_commit", "engram_load", "engram_save"} <= engram_tools_offered(requests)

    box.ok("unlink", "codex")
    assert box.project_files() == before


def test_codex_global_connects_and_unlink_restores(box: Sandbox) -> None:
    codex = host_program("codex")
    user = '# my Codex settings\nmodel = "gpt-5"  # fast\n\n[mcp_servers.docs]\nenabled = false\n'
    box.write(".codex/config.toml", user + 'command = "docs-server"\n', base=box.home)
    linked = box.link("codex", "--global")
    assert notes(linked) == []
    before = {".codex/config.toml": (user + 'command = "docs-server"\n').encode()}
    _, detail = codex_listing(box, codex)
    assert detail is not None and detail["enabled"] and detail["transport"]["command"] == SERVER
    _, requests = codex_exec(box, codex, [])
    assert "engram_commit" in engram_tools_offered(requests)

    box.ok("unlink", "codex", "--global")
    assert box.files(box.home, [".codex/config.toml"]) == before
    assert box.files(box.home, ["AGENTS.md"]) == {"AGENTS.md": None}


def test_codex_asks_before_engram_commit_and_approve_would_not(box: Sandbox) -> None:
    codex = host_program("codex")
    trust_codex_project(box)
    box.link("codex")
    config = box.project / ".codex" / "config.toml"
    assert 'approval_mode = "prompt"' in config.read_text(encoding="utf-8")
    proposal = json.loads(
        box.ok("save", "rule", "Run the linter before every push", "--propose", "--json")
    )
    token = proposal["data"]["approval_token"]
    rules = box.project / ".agents" / ".engram" / "rules"
    call = ("engram_commit", {"approval_token": token, "approve": "all"})

    events, requests = codex_exec(box, codex, [call], prompt="Save the linter rule.")
    tool_calls = [e["item"] for e in events if e.get("item", {}).get("type") == "mcp_tool_call"]
    final = [c for c in tool_calls if c["tool"] == "engram_commit" and c["status"] != "in_progress"]
    assert len(final) == 1, tool_calls
    # `exec` has no person to ask, so a call that needs approval is refused, never run.
    assert final[0]["status"] == "failed" and final[0]["result"] is None
    assert "requires approval" in final[0]["error"]["message"]
    outputs = [
        i for r in requests for i in r.body["input"] if i.get("type") == "function_call_output"
    ]
    assert outputs and "requires approval" in json.dumps(outputs[-1])
    assert not any(rules.glob("*.md"))  # nothing written

    # What Codex stores for "allow and don't ask again": the same call now runs unasked.
    config.write_text(
        config.read_text(encoding="utf-8").replace(
            'approval_mode = "prompt"', 'approval_mode = "approve"'
        ),
        encoding="utf-8",
    )
    doctor = json.loads(box.engram("doctor", "--json").stdout)
    assert "host.codex_commit_preapproved" in json.dumps(doctor["diagnostics"])
    events, _ = codex_exec(box, codex, [call], prompt="Save the linter rule.")
    done = [
        e["item"]
        for e in events
        if e.get("item", {}).get("type") == "mcp_tool_call" and e["item"]["status"] == "completed"
    ]
    assert done and "Saved 1 memory" in json.dumps(done[0]["result"])
    assert [p.name for p in rules.glob("*.md")] == ["run-linter-before-every-push.md"]


def codex_app_turn(
    box: Sandbox, codex: Path, calls: list[tuple[str, dict]], answer: dict
) -> codex_app.Turn:
    """One turn through `codex app-server`, the person answering every request with `answer`."""
    with fake_model.serve(codex_model(calls)) as model:
        argv = [str(codex), "app-server", *codex_provider(model.url)]
        env = {**box.env, "OPENAI_API_KEY": "sk-offline"}
        with open(box.home / "codex-app.log", "a") as log:
            return codex_app.run_turn(
                argv, cwd=box.project, env=env, prompt="Save the rule.", answer=answer, stderr=log
            )


def test_codex_app_server_asks_the_person_before_engram_commit(box: Sandbox) -> None:
    codex = host_program("codex")
    trust_codex_project(box)
    box.link("codex")
    proposal = json.loads(
        box.ok("save", "rule", "Never push to main directly", "--propose", "--json")
    )
    call = (
        "engram_commit",
        {"approval_token": proposal["data"]["approval_token"], "approve": "all"},
    )
    rules = box.project / ".agents" / ".engram" / "rules"

    declined = codex_app_turn(box, codex, [call], {"action": "decline"})
    asks = [r for r in declined.requests if r["method"] == "mcpServer/elicitation/request"]
    assert len(asks) == 1, declined.requests
    meta = asks[0]["params"]["_meta"]
    assert asks[0]["params"]["serverName"] == "engram"
    assert meta["codex_approval_kind"] == "mcp_tool_call" and meta["tool_name"] == "engram_commit"
    [item] = [i for i in declined.items("mcpToolCall") if i["tool"] == "engram_commit"]
    assert item["status"] == "failed" and item["result"] is None
    assert "rejected" in item["error"]["message"]
    assert not any(rules.glob("*.md"))

    # The person says yes to the same call: now (and only now) the memory is written.
    accepted = codex_app_turn(box, codex, [call], {"action": "accept"})
    assert [r["method"] for r in accepted.requests] == ["mcpServer/elicitation/request"]
    [item] = [i for i in accepted.items("mcpToolCall") if i["tool"] == "engram_commit"]
    assert item["status"] == "completed" and "Saved 1 memory" in json.dumps(item["result"])
    assert [p.name for p in rules.glob("*.md")] == ["never-push-main-directly.md"]


# --- Gemini CLI ------------------------------------------------------------------------------


def trust_gemini_folder(box: Sandbox) -> None:
    """What choosing "Trust folder" in Gemini CLI records in ~/.gemini/trustedFolders.json."""
    rules = box.home / ".gemini" / "trustedFolders.json"
    rules.parent.mkdir(parents=True, exist_ok=True)
    rules.write_text(json.dumps({str(box.project): "TRUST_FOLDER"}), encoding="utf-8")


def gemini_row(box: Sandbox, gemini: Path) -> str:
    listed = box.run([str(gemini), "mcp", "list"])
    assert listed.returncode == 0, listed.stderr
    # Gemini CLI prints the listing on stderr, and validates settings.json (hooks included)
    # against its schema first.
    assert "Invalid configuration" not in listed.stdout + listed.stderr, listed.stderr
    lines = (listed.stdout + listed.stderr).splitlines()
    return next((ln for ln in lines if "engram:" in ln), "")


def test_gemini_workspace_needs_trust_then_connects_and_unlink_restores(box: Sandbox) -> None:
    gemini = host_program("gemini")
    box.write(".gemini/settings.json", '{\n\t"ui": {"theme": "Dracula"},\n\t"mcpServers": {}\n}\n')
    box.write("GEMINI.md", "Answer briefly.\n")
    before = box.project_files()

    linked = box.link("gemini")
    assert any("untrusted folders" in n and str(box.project) in n for n in notes(linked))
    assert gemini_row(box, gemini).endswith("Disabled")  # the note tells the truth

    trust_gemini_folder(box)
    assert notes(box.link("gemini")) == []
    row = gemini_row(box, gemini)
    assert row.startswith("✓ engram:") and row.endswith("Connected"), row
    assert SERVER in row

    box.ok("unlink", "gemini")
    assert box.project_files() == before
    assert gemini_row(box, gemini) == ""


def test_gemini_global_connects_in_a_trusted_project_and_unlink_restores(box: Sandbox) -> None:
    gemini = host_program("gemini")
    box.write(".gemini/settings.json", '{\n  "general": {"vimMode": true}\n}', base=box.home)
    box.write(".gemini/GEMINI.md", "Always answer in English.\n", base=box.home)
    linked = box.link("gemini", "--global")
    assert touched(linked) == [".gemini/GEMINI.md", ".gemini/settings.json"]
    assert any("trust" in n for n in notes(linked))

    trust_gemini_folder(box)
    row = gemini_row(box, gemini)
    assert row.endswith("Connected"), row

    box.ok("unlink", "gemini", "--global")
    assert box.files(box.home, [".gemini/settings.json", ".gemini/GEMINI.md"]) == {
        ".gemini/settings.json": b'{\n  "general": {"vimMode": true}\n}',
        ".gemini/GEMINI.md": b"Always answer in English.\n",
    }


# --- OpenCode --------------------------------------------------------------------------------


def opencode_row(box: Sandbox, opencode: Path) -> str:
    listed = box.run([str(opencode), "mcp", "list"])
    assert listed.returncode == 0, listed.stderr
    lines = listed.stdout.splitlines()
    return next((ln.strip("│● ") for ln in lines if " engram" in ln), "")


def opencode_resolved_entry(box: Sandbox, opencode: Path) -> object:
    """`mcp.engram` as OpenCode resolved it: keys outside its schema would be dropped."""
    shown = box.run([str(opencode), "debug", "config"])
    assert shown.returncode == 0, shown.stderr
    return json.loads(shown.stdout).get("mcp", {}).get("engram")


ENTRY = {"type": "local", "command": [SERVER], "enabled": True}


def test_opencode_workspace_connects_and_unlink_restores(box: Sandbox) -> None:
    opencode = host_program("opencode")
    box.write(
        "opencode.jsonc",
        '{\n  "$schema": "https://opencode.ai/config.json",\n  // my settings\n'
        '  "autoupdate": false,\n}\n',
    )
    box.write("AGENTS.md", "# Agents\n")
    before = box.project_files()

    linked = box.link("opencode")
    assert touched(linked) == ["AGENTS.md", "opencode.jsonc"] and notes(linked) == []
    assert opencode_resolved_entry(box, opencode) == ENTRY
    row = opencode_row(box, opencode)
    assert re.match(r"✓ engram\s+connected", row), row

    box.ok("unlink", "opencode")
    assert box.project_files() == before
    assert opencode_row(box, opencode) == ""


def test_opencode_global_connects_and_unlink_restores(box: Sandbox) -> None:
    opencode = host_program("opencode")
    # What OpenCode writes on its first run, so the person's file exists before the link.
    opencode_row(box, opencode)
    user = box.home / ".config" / "opencode"
    before = box.files(user, ["opencode.jsonc", "opencode.json", "AGENTS.md"])
    linked = box.link("opencode", "--global")
    assert notes(linked) == []
    assert opencode_resolved_entry(box, opencode) == ENTRY
    row = opencode_row(box, opencode)
    assert re.match(r"✓ engram\s+connected", row), row

    box.ok("unlink", "opencode", "--global")
    assert box.files(user, ["opencode.jsonc", "opencode.json", "AGENTS.md"]) == before


def save_then_commit(say: Callable[..., list], call: Callable[..., list]) -> fake_model.Script:
    """A model that proposes a rule with engram_save, then commits it with the token it was
    given, then ends: what a model that does not wait for the person would do. `call(name,
    arguments)` and `say(text)` build the events of the host's wire format; requests without
    tools (a title, a summary) get a plain answer."""
    step = [0]

    def script(request: fake_model.Request) -> list[fake_model.Event]:
        if not (request.body or {}).get("tools"):
            return say("Title")
        step[0] += 1
        if step[0] == 1:
            return call("save", {"type": "rule", "text": "Run the linter before every push"})
        token = fake_model.last_approval_token(request)
        if step[0] == 2 and token:
            return call("commit", {"approval_token": token, "approve": "all"})
        return say("Done.")

    return script


def opencode_turn(box: Sandbox, opencode: Path, *flags: str) -> list[dict]:
    """`opencode run --format json` against the scripted model: the tool-use events."""

    def call(tool: str, arguments: dict) -> list:
        name = f"engram_engram_{tool}"
        return fake_model.messages_tool_use(f"msg_{tool}", "claude-sonnet-4-5", name, arguments)

    def say(text: str) -> list:
        return fake_model.messages_text("msg_text", "claude-sonnet-4-5", text)

    with fake_model.serve(save_then_commit(say, call)) as model:
        # The provider comes in through OpenCode's inline config, so the files stay as linked.
        provider = {"options": {"baseURL": f"{model.url}/v1", "apiKey": "sk-ant-offline"}}
        inline = {"provider": {"anthropic": provider}, "model": "anthropic/claude-sonnet-4-5"}
        env = {"OPENCODE_CONFIG_CONTENT": json.dumps(inline)}
        argv = [str(opencode), "run", "--format", "json", *flags, "Save the linter rule."]
        done = box.run(argv, offline=False, env=env)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    events = [json.loads(ln) for ln in done.stdout.splitlines() if ln.startswith("{")]
    return [e["part"] for e in events if e.get("type") == "tool_use"]


def test_opencode_asks_before_engram_commit_and_allow_would_not(box: Sandbox) -> None:
    opencode = host_program("opencode")
    linked = box.link("opencode")
    config = box.project / "opencode.json"
    assert json.loads(config.read_text(encoding="utf-8"))["permission"] == {
        "engram_engram_commit": "ask"
    }
    assert "host.opencode_commit_preapproved" not in box.engram("doctor", "--json").stdout
    rules = box.project / ".agents" / ".engram" / "rules"

    used = opencode_turn(box, opencode)
    assert [u["tool"] for u in used] == ["engram_engram_save", "engram_engram_commit"], used
    assert used[0]["state"]["status"] == "completed"
    # `run` has no person to ask: the call that needs a yes is refused, never run.
    assert used[1]["state"]["status"] == "error", used[1]
    assert not any(rules.glob("*.md"))

    # A later rule that allows the call (in the person's own user config): OpenCode runs it
    # unasked, so doctor warns, and upgrade puts Engram's rule last again.
    box.write(
        ".config/opencode/opencode.json", '{"permission": {"engram_*": "allow"}}', base=box.home
    )
    user_allowed = json.loads(box.engram("doctor", "--json").stdout)["diagnostics"]
    assert not [d for d in user_allowed if d["code"] == "host.opencode_commit_preapproved"]
    text = config.read_text(encoding="utf-8")
    config.write_text(
        text.replace('"engram_engram_commit": "ask"', '"engram_engram_commit": "allow"')
    )
    doctor = json.loads(box.engram("doctor", "--json").stdout)["diagnostics"]
    assert [d["code"] for d in doctor if d["code"] == "host.opencode_commit_preapproved"]
    used = opencode_turn(box, opencode)
    assert used[-1]["tool"] == "engram_engram_commit" and used[-1]["state"]["status"] == "completed"
    assert [p.name for p in rules.glob("*.md")] == ["run-linter-before-every-push.md"]

    box.ok("upgrade")
    assert json.loads(config.read_text(encoding="utf-8"))["permission"] == {
        "engram_engram_commit": "ask"
    }
    assert "host.opencode_commit_preapproved" not in box.engram("doctor", "--json").stdout
    assert linked["written"]


def gemini_turn(box: Sandbox, gemini: Path, prompt: str) -> tuple[str, list]:
    """One `gemini -p --debug` turn against the scripted model: (debug output, requests)."""

    def script(request: fake_model.Request) -> list[fake_model.Event]:
        answer = fake_model.gemini_text("Done.")
        if ":streamGenerateContent" in request.path:
            return answer
        return [{"type": "json", "body": answer[0]}]  # generateContent, not streamed

    # The person's user settings: an API key login and no usage statistics.
    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    settings["privacy"] = {"usageStatisticsEnabled": False}
    box.write(".gemini/settings.json", json.dumps(settings), base=box.home)
    with fake_model.serve(script) as model:
        env = {"GEMINI_API_KEY": "offline-test", "GOOGLE_GEMINI_BASE_URL": model.url}
        # A fixed model: "auto" would first ask a router model and retry it for minutes.
        argv = [str(gemini), "-p", prompt, "-m", "gemini-2.5-flash", "--debug"]
        done = box.run(argv, offline=False, env=env)
        requests = model.model_requests(":streamGenerateContent")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return done.stdout + done.stderr, requests


def gemini_commit_turn(box: Sandbox, gemini: Path) -> tuple[set[str], list[dict]]:
    """`gemini -p` whose model proposes then commits: (engram tools offered, responses)."""
    offered: set[str] = set()

    def call(tool: str, arguments: dict) -> list:
        return fake_model.gemini_function_call(f"mcp_engram_engram_{tool}", arguments)

    inner = save_then_commit(fake_model.gemini_text, call)

    def script(request: fake_model.Request) -> list[fake_model.Event]:
        for tool in (request.body or {}).get("tools", []):
            offered.update(d["name"] for d in tool.get("functionDeclarations", []))
        if ":streamGenerateContent" not in request.path:
            return [{"type": "json", "body": fake_model.gemini_text("Title")[0]}]
        return inner(request)

    settings = {"security": {"auth": {"selectedType": "gemini-api-key"}}}
    settings["privacy"] = {"usageStatisticsEnabled": False}
    box.write(".gemini/settings.json", json.dumps(settings), base=box.home)
    with fake_model.serve(script) as model:
        env = {"GEMINI_API_KEY": "offline-test", "GOOGLE_GEMINI_BASE_URL": model.url}
        argv = [str(gemini), "-p", "Save the linter rule.", "-m", "gemini-2.5-flash"]
        done = box.run(argv, offline=False, env=env)
        requests = model.model_requests(":streamGenerateContent")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    responses = [
        part["functionResponse"]
        for r in requests
        for content in r.body.get("contents", [])
        for part in content.get("parts", [])
        if "functionResponse" in part
    ]
    return {n for n in offered if "engram" in n}, responses


def test_gemini_never_runs_engram_commit_unasked_and_trust_would(box: Sandbox) -> None:
    gemini = host_program("gemini")
    box.link("gemini", "--no-hooks")
    trust_gemini_folder(box)
    rules = box.project / ".agents" / ".engram" / "rules"

    # Without a person to confirm, Gemini CLI (0.61) offers its model no MCP tool at all.
    offered, responses = gemini_commit_turn(box, gemini)
    assert "mcp_engram_engram_commit" not in offered
    assert not any("Saved" in json.dumps(r) for r in responses)
    assert not any(rules.glob("*.md"))

    # `trust: true` on the server skips confirmation: the same turn writes, and doctor says so.
    settings = box.project / ".gemini" / "settings.json"
    data = json.loads(settings.read_text(encoding="utf-8"))
    data["mcpServers"]["engram"]["trust"] = True
    settings.write_text(json.dumps(data), encoding="utf-8")
    assert "host.gemini_trust" in box.engram("doctor", "--json").stdout
    offered, responses = gemini_commit_turn(box, gemini)
    assert "mcp_engram_engram_commit" in offered
    assert [p.name for p in rules.glob("*.md")] == ["run-linter-before-every-push.md"]


def hook_contexts(requests: list[fake_model.Request]) -> list[str]:
    """The `<hook_context>` blocks Gemini CLI put in the person's message to the model."""
    texts = [
        part.get("text", "")
        for request in requests
        for content in request.body.get("contents", [])
        for part in content.get("parts", [])
    ]
    return [
        m for text in texts for m in re.findall(r"<hook_context>(.*?)</hook_context>", text, re.S)
    ]


def test_gemini_hooks_run_and_reach_the_model(box: Sandbox) -> None:
    gemini = host_program("gemini")
    box.ok("save", "rule", "Release with make release after tagging the version", "-f")
    box.ok("set-read", "always")
    box.link("gemini")
    trust_gemini_folder(box)  # Gemini CLI runs a project's hooks only in a trusted folder

    log, requests = gemini_turn(box, gemini, "How do we release?")

    assert "Invalid configuration" not in log
    assert "Hook execution for SessionStart: 1 hooks executed successfully" in log
    assert "Hook execution for BeforeAgent: 1 hooks executed successfully" in log
    contexts = hook_contexts(requests)
    assert any(c.startswith("Engram memory for session start") for c in contexts), contexts
    assert any(c.startswith('Engram memory for "') for c in contexts), contexts
    assert all("Release with make release after tagging the version" in c for c in contexts)


def test_gemini_prompt_hook_routes_on_the_person_prompt(box: Sandbox) -> None:
    gemini = host_program("gemini")
    box.ok("save", "rule", "Release with make release after tagging the version", "-f")
    box.ok("set-read", "always")
    box.link("gemini")
    trust_gemini_folder(box)

    _, requests = gemini_turn(box, gemini, "How do we release?")

    prompt_packs = [c for c in hook_contexts(requests) if c.startswith('Engram memory for "')]
    assert prompt_packs and all(
        c.startswith('Engram memory for "How do we release?"') for c in prompt_packs
    ), prompt_packs
