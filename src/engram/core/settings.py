"""Reading and changing configuration values (config get/set, set-role, set-rule-variant)."""

from __future__ import annotations

import json
from typing import Any

from engram.core.config import KEYS, load_config, set_config_value
from engram.core.errors import UsageError
from engram.core.results import Result
from engram.core.roots import Roots

RELOAD_NOTE = "Reload memory (engram_load / engram load) so the change takes effect."


def get_setting(roots: Roots, key: str | None) -> Result:
    cfg = load_config(roots)
    if key is None:
        values = cfg.as_dict()
        text = "\n".join(f"{k} = {json.dumps(v)}" for k, v in values.items())
        return Result(text=text, data={"values": values})
    value = cfg.get(key)
    return Result(
        text=json.dumps(value) if not isinstance(value, str) else value,
        data={"key": key, "value": value},
    )


def set_setting(roots: Roots, key: str, value: Any, *, user: bool = False) -> Result:
    if key not in KEYS:
        from engram.core.config import unknown_key

        raise unknown_key(key)
    stored = set_config_value(roots, key, value, user=user)
    where = "user" if user else "workspace"
    return Result(
        text=f"{key} = {json.dumps(stored)} ({where} configuration)",
        data={"key": key, "value": stored, "file": where},
    )


def set_roles(roots: Roots, roles: list[str] | None) -> Result:
    stored = set_config_value(roots, "roles", list(roles or []))
    text = f"Active roles: {', '.join(stored)}" if stored else "Active roles cleared."
    return Result(
        text=f"{text}\n{RELOAD_NOTE}",
        data={"roles": stored, "agent_action": "reload_memory", "agent_action_text": RELOAD_NOTE},
    )


def set_variant(roots: Roots, mode: str) -> Result:
    mode = (mode or "").strip().lower()
    if mode == "status":
        current = load_config(roots).get("rule_variant")
        return Result(text=f"Rule variant: {current}", data={"rule_variant": current})
    if mode not in KEYS["rule_variant"].allowed:
        raise UsageError(
            f"invalid rule variant {mode!r}: expected one of light, balanced, strict, off, status"
        )
    stored = set_config_value(roots, "rule_variant", mode)
    return Result(
        text=f"Rule variant: {stored}\n{RELOAD_NOTE}",
        data={
            "rule_variant": stored,
            "agent_action": "reload_memory",
            "agent_action_text": RELOAD_NOTE,
        },
    )
