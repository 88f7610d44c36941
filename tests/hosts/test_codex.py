"""Codex: the commit approval as Codex applies it (R-APP-7), a registration that survives
Codex rewriting its own config.toml, and the project scope of a trusted project."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
import tomlkit

from engram.hosts import codex, ops
from engram.hosts.doctor import host_findings

from .conftest import SERVER, old_scope

PATH_AT_START = os.environ.get("PATH", "")  # before the env fixture empties PATH
# ENGRAM_TEST_CODEX names the Codex program (as `.ci/run` exports it), or is set to any
# other value to use the `codex` on PATH.
_ASKED = os.environ.get("ENGRAM_TEST_CODEX", "")
REAL_CODEX = (
    (_ASKED if os.path.isfile(_ASKED) else shutil.which("codex", path=PATH_AT_START))
    if _ASKED
    else None
)
USER = '# my Codex settings\nmodel = "gpt-5"  # fast\n\n[mcp_servers.docs]\ncommand = "docs-server"\nargs = ["--port", "3000"]\n'


def glob_scope():
    return ops.resolve_scope(None, global_=True)


def codes(env) -> set[str]:
    return {d.code for d in host_findings(env["project"])[0]}


def config_of(env):
    return env["home"] / ".codex" / "config.toml"


def write_user_config(env, text: str = USER):
    config = config_of(env)
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(text, encoding="utf-8")
    return config


def test_block_parses_and_asks_for_every_commit(env):
    config = write_user_config(env, '# mine\nmodel = "gpt-5"\n')
    assert ops.run("link", ["codex"], glob_scope()).ok
    data = tomlkit.parse(config.read_text())
    assert data["model"] == "gpt-5"
    server = data["mcp_servers"]["engram"]
    assert server["command"] == SERVER and server["args"] == []
    # "approve" would be pre-approved in Codex; "prompt" asks the human on every call
    assert server["tools"]["engram_commit"]["approval_mode"] == "prompt"
    assert config.read_text().startswith('# mine\nmodel = "gpt-5"\n')
    assert not codes(env) & {"host.codex_commit_preapproved", "host.codex_approval"}


def test_the_server_is_passed_the_variables_that_place_the_users_folder(env, monkeypatch):
    # Codex gives a server only HOME, PATH and a few more: without `env_vars` an
    # ENGRAM_HOME or XDG_CONFIG_HOME set by the person would not reach engram-mcp, which
    # would then check approvals against another key and refuse every one.
    monkeypatch.setenv("XDG_CONFIG_HOME", str(env["home"] / "xdg"))
    monkeypatch.delenv("ENGRAM_GLOBAL_DIR", raising=False)
    config = write_user_config(env, "")
    assert ops.run("link", ["codex"], glob_scope()).ok
    server = tomlkit.parse(config.read_text())["mcp_servers"]["engram"]
    assert list(server["env_vars"]) == ["ENGRAM_HOME", "XDG_CONFIG_HOME"]
    assert str(env["home"]) not in config.read_text()  # names only, never values

    for name in ("ENGRAM_HOME", "XDG_CONFIG_HOME"):
        monkeypatch.delenv(name)
    assert "env_vars" not in codex.server_block(glob_scope())


@pytest.mark.parametrize(
    ("edit", "where"),
    [
        (lambda t: t.replace('approval_mode = "prompt"', 'approval_mode = "approve"'), "tool"),
        (
            lambda t: t.replace(
                "[mcp_servers.engram]\n",
                '[mcp_servers.engram]\ndefault_tools_approval_mode = "approve"\n',
            ).replace('approval_mode = "prompt"\n', ""),
            "server",
        ),
    ],
)
def test_preapproved_commit_is_a_warning_and_upgrade_fixes_it(env, edit, where):
    config = write_user_config(env)
    assert ops.run("link", ["codex"], glob_scope()).ok
    config.write_text(edit(config.read_text()))
    found = [
        d for d in host_findings(env["project"])[0] if d.code == "host.codex_commit_preapproved"
    ]
    assert len(found) == 1 and found[0].level == "warning" and "pre-approved" in found[0].message
    upgraded = ops.run("upgrade", ["codex"], glob_scope())
    assert upgraded.ok, upgraded.text
    server = tomlkit.parse(config.read_text())["mcp_servers"]["engram"]
    assert server["tools"]["engram_commit"]["approval_mode"] == "prompt"
    assert "host.codex_commit_preapproved" not in codes(env)
    assert config.read_text().startswith(USER)  # nothing of the person's changed


def test_preapproval_codex_stored_after_rewriting_the_file_is_fixed_in_place(env):
    """Codex stores `approve` ("allow and don't ask again") by rewriting config.toml, which
    drops Engram's markers: upgrade edits the table where Codex left it, nothing else."""
    rewritten = USER + (
        f'\n[mcp_servers.engram]\ncommand = "{SERVER}"\n\n'
        '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "approve"\n\n'
        '[mcp_servers.other]\ncommand = "foo"\nargs = ["bar"]\n# <<< engram:end <<<\n'
    )
    config = write_user_config(env, rewritten)
    assert "host.codex_commit_preapproved" in codes(env)
    assert ops.run("upgrade", ["codex"], glob_scope()).ok
    assert config.read_text() == rewritten.replace('"approve"', '"prompt"').replace(
        "# <<< engram:end <<<\n", ""
    )
    assert "host.codex_commit_preapproved" not in codes(env)


def codex_rewrite(text: str) -> str:
    """What `codex mcp add other -- foo bar` (Codex 0.171) does to config.toml: it re-serialises
    the `mcp_servers` tables, dropping the comment lines in front of each table header (so
    Engram's begin marker) and empty `args`, and appends the new server; a comment after the
    last table (Engram's end marker) stays at the end."""
    import re

    head, sep, tail = text.partition("\n[mcp_servers.")
    body = sep + tail
    trailing = re.search(r"((?:#[^\n]*\n)+)\Z", body)
    end_comment = trailing.group(1) if trailing else ""
    body = body[: len(body) - len(end_comment)]
    tables = re.split(r"\n(?=\[)", body.strip("\n"))
    kept = []
    for table in tables:
        lines = [ln for ln in table.splitlines() if not ln.startswith("#") and ln != "args = []"]
        kept.append("\n".join(ln for ln in lines if ln.strip()))
    kept.append('[mcp_servers.other]\ncommand = "foo"\nargs = ["bar"]')
    return head.rstrip("\n") + "\n\n" + "\n\n".join(kept) + "\n" + end_comment


def _run_codex_add(env, real: bool) -> None:
    """The real `codex mcp add other -- foo bar`, or the faithful simulation above."""
    if real:
        subprocess.run(
            [REAL_CODEX, "mcp", "add", "other", "--", "foo", "bar"],
            env={**os.environ, "PATH": PATH_AT_START, "HOME": str(env["home"])},
            check=True,
            capture_output=True,
            timeout=120,
        )
        return
    config = config_of(env)
    config.write_text(codex_rewrite(config.read_text()))


WITH_REAL_CODEX = pytest.param(
    True,
    id="real-codex",
    marks=pytest.mark.skipif(
        REAL_CODEX is None,
        reason="set ENGRAM_TEST_CODEX to the Codex program (or to 1 with `codex` on PATH)",
    ),
)


def test_simulated_rewrite_matches_what_codex_0_171_wrote():
    linked = USER + (
        '\n# >>> engram:begin hosts="codex" >>>\n# Engram memory server\n'
        '[mcp_servers.engram]\ncommand = "engram-mcp"\nargs = []\n\n# comment\n'
        '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "approve"\n'
        "# <<< engram:end <<<\n"
    )
    assert codex_rewrite(linked) == USER + (
        '\n[mcp_servers.engram]\ncommand = "engram-mcp"\n\n'
        '[mcp_servers.engram.tools.engram_commit]\napproval_mode = "approve"\n\n'
        '[mcp_servers.other]\ncommand = "foo"\nargs = ["bar"]\n# <<< engram:end <<<\n'
    )  # byte for byte what `codex mcp add other -- foo bar` produced from this file


@pytest.mark.parametrize("real", [pytest.param(False, id="simulated"), WITH_REAL_CODEX])
def test_registration_survives_codex_rewriting_its_file(env, real):
    write_user_config(env)
    scope = glob_scope()
    assert ops.run("link", ["codex"], scope).ok
    _run_codex_add(env, real)
    rewritten = config_of(env).read_text()
    assert "engram:begin" not in rewritten and "[mcp_servers.engram]" in rewritten
    listed = ops.list_links(env["project"]).data["links"]
    assert {k: v for k, v in listed[0].items() if k != "items"} == {
        "host": "codex",
        "scope": "global",
    }
    assert any(i["role"] == "registration" and i["command"] == [SERVER] for i in listed[0]["items"])
    relinked = ops.run("link", ["codex"], old_scope(scope))  # re-pin (to another command)
    assert relinked.ok, relinked.text
    server = tomlkit.parse(config_of(env).read_text())["mcp_servers"]
    assert server["engram"]["command"] == "uvx" and "other" in server
    assert ops.run("link", ["codex"], scope).ok
    after_link = config_of(env).read_text()
    assert tomlkit.parse(after_link)["mcp_servers"]["engram"]["command"] == SERVER
    unlinked = ops.run("unlink", ["codex"], scope)
    assert unlinked.ok and any(c["action"] == "update" for c in unlinked.data["changes"])
    left = config_of(env).read_text()
    # the file as Codex left it, without Engram's tables or its stray end marker
    assert left == USER + '\n[mcp_servers.other]\ncommand = "foo"\nargs = ["bar"]\n'
    assert ops.list_links(env["project"]).data["links"] == []


def test_codex_home_is_honoured(env, tmp_path, monkeypatch):
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    assert ops.run("link", ["codex"], glob_scope()).ok
    assert (tmp_path / "codex-home" / "config.toml").exists()


def test_user_table_needs_force_and_invalid_toml_is_left_alone(env):
    config = write_user_config(env, '[mcp_servers.engram]\ncommand = "mine"\n')
    scope = glob_scope()
    result = ops.run("link", ["codex"], scope)
    assert not result.ok and "--force" in result.text
    assert config.read_text() == '[mcp_servers.engram]\ncommand = "mine"\n'
    assert not (env["home"] / ".codex" / "AGENTS.md").exists()  # a failed link writes nothing
    assert ops.run("unlink", ["codex"], scope).ok
    assert config.read_text() == '[mcp_servers.engram]\ncommand = "mine"\n'
    assert ops.run("link", ["codex"], scope, force=True).ok
    assert tomlkit.parse(config.read_text())["mcp_servers"]["engram"]["command"] == SERVER
    config.write_text("[[broken", encoding="utf-8")
    assert not ops.run("link", ["codex"], scope).ok
    assert config.read_text() == "[[broken"


def test_workspace_scope_writes_the_project_config_and_says_it_needs_trust(env):
    scope = ops.resolve_scope(env["project"], global_=False)
    result = ops.run("link", ["codex"], scope)
    assert result.ok, result.text
    project_config = env["project"] / ".codex" / "config.toml"
    server = tomlkit.parse(project_config.read_text())["mcp_servers"]["engram"]
    assert server["tools"]["engram_commit"]["approval_mode"] == "prompt"
    notes = [c["message"] for c in result.data["changes"] if c["action"] == "note"]
    assert len(notes) == 1 and "trusted project" in notes[0]
    assert f'[projects."{env["project"]}"]' in notes[0]
    assert "host.codex_project_untrusted" in codes(env)
    write_user_config(env, f'[projects."{env["project"]}"]\ntrust_level = "trusted"\n')
    assert codex.project_trust(scope) == "trusted"
    assert "host.codex_project_untrusted" not in codes(env)
    assert "note" not in {c["action"] for c in ops.run("link", ["codex"], scope).data["changes"]}
    assert ops.run("unlink", ["codex"], scope).ok
    assert not (env["project"] / ".codex").exists()


@pytest.mark.parametrize("host", ["windsurf", "antigravity"])
def test_workspace_registration_is_skipped_with_a_reason(env, host):
    result = ops.run("link", [host], ops.resolve_scope(env["project"], global_=False))
    skipped = [c for c in result.data["changes"] if c["action"] == "skip"]
    assert len(skipped) == 1 and "--global" in skipped[0]["message"]


def test_shared_agents_md_block_stays_until_the_last_host_unlinks(env):
    scope = ops.resolve_scope(env["project"], global_=False)
    ops.run("link", ["codex", "opencode"], scope)
    agents = env["project"] / "AGENTS.md"
    assert 'hosts="codex,opencode"' in agents.read_text()
    ops.run("unlink", ["codex"], scope)
    assert 'hosts="opencode"' in agents.read_text()
    ops.run("unlink", ["opencode"], scope)
    assert not agents.exists()


def test_R_INS_5_upgrade_keeps_no_elicitation_in_the_block(env):
    """A person who needs --no-elicitation adds it to the block; re-pinning keeps it."""
    config = config_of(env)
    scope = glob_scope()
    assert ops.run("link", ["codex"], old_scope(scope)).ok
    text = config.read_text()
    config.write_text(text.replace('"engram-mcp"]', '"engram-mcp", "--no-elicitation"]'))
    for action in ("link", "upgrade"):
        assert ops.run(action, ["codex"], scope).ok
        server = tomlkit.parse(config.read_text())["mcp_servers"]["engram"]
        assert server["command"] == SERVER and server["args"] == ["--no-elicitation"]
    assert "host.outdated" not in codes(env)


def test_inline_mcp_servers_table_is_explained_and_left_alone(env):
    """`mcp_servers = {…}` cannot take a [mcp_servers.engram] table: say so, touch nothing."""
    mine = 'model = "o3"\nmcp_servers = { docs = { command = "docs-server" } }\n'
    config = write_user_config(env, mine)
    for force in (False, True):
        result = ops.run("link", ["codex"], glob_scope(), force=force)
        assert not result.ok
        assert "inline table" in result.text and "[mcp_servers.docs]" in result.text, result.text
        assert "not valid" not in result.text
        assert config.read_text(encoding="utf-8") == mine


def test_a_hand_added_engram_server_gets_the_commit_prompt_on_link(env):
    """`codex mcp add engram -- engram-mcp` writes no approval table: doctor says so and a
    link adds `approval_mode = "prompt"` in place, keeping the tables around it."""
    added = (
        USER + f'\n[mcp_servers.engram]\ncommand = "{SERVER}"\n\n[mcp_servers.z]\ncommand = "z"\n'
    )
    config = write_user_config(env, added)
    assert "host.codex_approval" in codes(env)
    assert ops.run("link", ["codex"], glob_scope()).ok
    assert config.read_text() == added.replace(
        "\n\n[mcp_servers.z]",
        '\n\n[mcp_servers.engram.tools.engram_commit]\napproval_mode = "prompt"\n\n[mcp_servers.z]',
    )
    assert not codes(env) & {"host.codex_approval", "host.codex_commit_preapproved"}


def test_a_stray_end_marker_left_by_codex_does_not_confuse_a_new_link(env):
    """After Codex dropped Engram's table (`codex mcp remove engram`), only the end marker
    is left: link writes a fresh block and drops the stray line; unlink gives the rest back."""
    left_by_codex = USER + '\n[mcp_servers.other]\ncommand = "foo"\n# <<< engram:end <<<\n'
    config = write_user_config(env, left_by_codex)
    assert ops.list_links(env["project"]).data["links"] == []
    assert ops.run("link", ["codex"], glob_scope()).ok
    text = config.read_text()
    assert text.count("engram:end") == 1 and text.index("engram:begin") < text.index("engram:end")
    assert ops.run("unlink", ["codex"], glob_scope()).ok
    assert config.read_text() == USER + '\n[mcp_servers.other]\ncommand = "foo"\n'
