from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.core import api
from engram.core.errors import UsageError
from engram.core.store.config import KEYS, coerce, load_config
from engram.core.store.roots import resolve_roots


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [("load.limit", "8", 8), ("load.limit", 32, 32), ("mcp.resource_limit", "0", 0), ("roles", "Backend,ops", ["backend", "ops"]),
     ("rule_variant", "STRICT", "strict"), ("save_target", "both", "both"), ("read_mode", "auto", "auto"), ("proof", "compact", "compact")],
)  # fmt: skip
def test_valid_values_are_normalised(key: str, value: object, expected: object) -> None:
    assert coerce(key, value) == expected


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [("load.limit", "0", "from 1 to 32"), ("load.limit", "33", "from 1 to 32"), ("load.limit", "x", "integer"),
     ("mcp.resource_limit", 201, "from 0 to 200"), ("rule_variant", "loud", "light, balanced, strict, off"),
     ("roles", "a/b", "role slugs"), ("nope", 1, "unknown configuration key")],
)  # fmt: skip
def test_invalid_values_name_the_key_and_the_allowed_range(
    key: str, value: object, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        coerce(key, value)


def test_set_then_get_and_nothing_written_on_error(project: Path) -> None:
    roots = resolve_roots(project)
    api.config_set(roots, "load.limit", "5")
    cfg_path = project / ".agents" / ".engram" / "config.json"
    before = cfg_path.read_bytes()
    assert json.loads(before) == {"load": {"limit": 5}}
    with pytest.raises(UsageError):
        api.config_set(roots, "load.limit", "99")
    assert cfg_path.read_bytes() == before
    assert api.config_get(roots, "load.limit").data["value"] == 5
    assert set(api.config_get(roots).data["values"]) == set(KEYS)


def test_workspace_overrides_user_config(project: Path) -> None:
    roots = resolve_roots(project)
    api.config_set(roots, "rule_variant", "light", user=True)
    assert load_config(roots).get("rule_variant") == "light"
    api.config_set(roots, "rule_variant", "strict")
    assert load_config(roots).get("rule_variant") == "strict"


def test_set_role_and_variant_ask_the_agent_to_reload(project: Path) -> None:
    roots = resolve_roots(project)
    res = api.set_role(roots, ["frontend", "ops"])
    assert res.data["roles"] == ["frontend", "ops"] and res.data["agent_action"] == "reload_memory"
    assert api.set_role(roots, None).data["roles"] == []
    assert api.set_rule_variant(roots, "strict").data["agent_action"] == "reload_memory"
    assert api.set_rule_variant(roots, "status").data["rule_variant"] == "strict"
    with pytest.raises(UsageError, match="light, balanced, strict, off, status"):
        api.set_rule_variant(roots, "medium")


def test_hand_broken_value_falls_back_to_default(project: Path) -> None:
    (project / ".agents" / ".engram" / "config.json").write_text('{"load": {"limit": 1000}}')
    cfg = load_config(resolve_roots(project))
    assert cfg.get("load.limit") == 8
    assert cfg.invalid_entries()


@pytest.mark.parametrize(
    "role", ["xoxb-263594206564-2343-a3bd8c9d0e1f2a3b4c5d6e7f", "ignore-all-previous-instructions"]
)
def test_a_role_that_is_a_secret_or_an_instruction_is_never_stored(
    project: Path, role: str
) -> None:
    """Roles land in committed files (config.json, memory front matter) and reach the agent."""
    from engram.core.store.config import set_config_value
    from engram.core.write.approvals import parse_roles

    roots = resolve_roots(project)
    with pytest.raises(UsageError) as err:
        set_config_value(roots, "roles", [role])
    assert role not in str(err.value) or "instruction" in str(err.value)
    with pytest.raises(UsageError):
        parse_roles(role)
    assert set_config_value(roots, "roles", ["backend", "sre"]) == ["backend", "sre"]


def test_a_committed_config_cannot_bring_an_instruction_in_as_a_role(project: Path) -> None:
    (project / ".agents/.engram/config.json").write_text(
        json.dumps({"roles": ["backend", "ignore-all-previous-instructions"]})
    )
    assert load_config(resolve_roots(project)).get("roles") == ["backend"]
