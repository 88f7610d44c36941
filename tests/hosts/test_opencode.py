"""OpenCode: the permission rule that makes OpenCode ask before engram_commit, kept the last
matching rule (OpenCode's last matching rule wins), checked by doctor across the user's and the
project's files, restored by upgrade, and removed byte for byte by unlink."""

from __future__ import annotations

import json

import pytest

from engram.hosts import opencode, ops
from engram.hosts.doctor import host_findings
from engram.hosts.targets import JsonGate

TOOL = "engram_engram_commit"


def scope_of(env):
    return ops.resolve_scope(env["project"], global_=False)


def preapproved(env) -> list[str]:
    return [
        d.message
        for d in host_findings(env["project"])[0]
        if d.code == "host.opencode_commit_preapproved"
    ]


def gate() -> JsonGate:
    return JsonGate(None, ("permission",), TOOL)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("before", "after", "restored"),
    [
        ('{"theme": "x"}', {"theme": "x", "permission": {TOOL: "ask"}}, True),
        ('{\n  "permission": "allow"\n}\n', {"permission": {"*": "allow", TOOL: "ask"}}, True),
        (
            '{"permission": {"engram_*": "allow", "bash": "ask"}}',
            {"permission": {"engram_*": "allow", "bash": "ask", TOOL: "ask"}},
            True,
        ),
        # a person's allow for the tool itself is set back to ask, and moved last
        (
            '{"permission": {"engram_engram_commit": "allow", "*": "allow"}}',
            {"permission": {"*": "allow", TOOL: "ask"}},
            False,
        ),
        # a stricter choice of the person stays
        ('{"permission": {"engram_engram_commit": "deny"}}', {"permission": {TOOL: "deny"}}, True),
    ],
)
def test_link_makes_the_rule_the_last_ask(before: str, after: dict, restored: bool) -> None:
    rec: dict = {}
    linked = gate().link(before, rec, force=False)
    assert json.loads(linked) == after
    # unlink gives back the person's bytes wherever Engram only added its rule
    assert (gate().unlink(linked, rec) == before) is restored


def test_unlink_leaves_a_value_the_person_changed() -> None:
    rec: dict = {}
    linked = gate().link('{"a": 1}', rec, force=False)
    changed = linked.replace('"ask"', '"deny"')
    assert gate().unlink(changed, rec) == changed


def test_inspect_reports_a_rule_that_is_not_last_as_stale() -> None:
    seen = gate().inspect(json.dumps({"permission": {TOOL: "ask", "*": "allow"}}))
    assert seen.present and seen.stale
    assert not gate().inspect('{"permission": {}}').present


def test_link_writes_the_gate_and_doctor_is_quiet(env) -> None:
    assert ops.run("link", ["opencode"], scope_of(env)).ok
    config = json.loads((env["project"] / "opencode.json").read_text(encoding="utf-8"))
    assert config["permission"] == {TOOL: "ask"}
    assert preapproved(env) == []


def test_doctor_flags_a_missing_rule_and_upgrade_restores_it(env) -> None:
    ops.run("link", ["opencode"], scope_of(env))
    path = env["project"] / "opencode.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    del data["permission"]
    path.write_text(json.dumps(data, indent=2), encoding="utf-8")
    [message] = preapproved(env)
    assert "no rule" in message and "engram upgrade" in message
    assert ops.run("upgrade", ["opencode"], scope_of(env)).ok
    assert json.loads(path.read_text(encoding="utf-8"))["permission"] == {TOOL: "ask"}
    assert preapproved(env) == []


@pytest.mark.parametrize(
    ("user", "project_extra", "agent", "flagged"),
    [
        (None, {}, None, False),
        ({"permission": "allow"}, {}, None, False),  # the project's rule comes later
        (None, {"engram_*": "allow"}, None, True),  # a later project rule allows it
        (None, {"*": "allow"}, None, True),
        (None, {"engram_engram_c?mmit": "deny"}, None, False),
        (None, {}, {"build": {"permission": {"engram_*": "allow"}}}, True),
        (None, {}, {"plan": {"permission": {"edit": "deny"}}}, False),
    ],
)
def test_commit_action_follows_opencode_order(env, user, project_extra, agent, flagged) -> None:
    ops.run("link", ["opencode"], scope_of(env))
    path = env["project"] / "opencode.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    data["permission"].update(project_extra)
    if agent:
        data["agent"] = agent
    path.write_text(json.dumps(data), encoding="utf-8")
    if user is not None:
        folder = env["home"] / ".config" / "opencode"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "opencode.json").write_text(json.dumps(user), encoding="utf-8")
    assert bool(preapproved(env)) is flagged


def test_global_link_is_checked_against_the_project_in_view(env) -> None:
    glob = ops.resolve_scope(None, global_=True)
    assert ops.run("link", ["opencode"], glob).ok
    user = env["home"] / ".config" / "opencode" / "opencode.jsonc"
    assert json.loads(user.read_text(encoding="utf-8"))["permission"] == {TOOL: "ask"}
    assert preapproved(env) == []
    (env["project"] / "opencode.json").write_text('{"permission": {"*": "allow"}}')
    [message] = preapproved(env)
    assert "opencode.json" in message
    action, _ = opencode.commit_action(glob, None)
    assert action == opencode.ASK
