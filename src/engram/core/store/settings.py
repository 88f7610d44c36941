"""Reading and changing configuration values (config get/set, set-role, set-rule-variant)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engram.core.errors import UsageError
from engram.core.results import Result
from engram.core.store.config import KEYS, load_config, set_config_value, unknown_key
from engram.core.store.layout import Roots

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
        raise unknown_key(key)
    if key == "global_path" and isinstance(value, str) and value.strip():
        # Stored absolute: a relative path would mean another folder from every directory.
        value = str(Path(value.strip()).expanduser().resolve())
    stored = set_config_value(roots, key, value, user=user)
    where = "user" if user else "workspace"
    result = Result(
        text=f"{key} = {json.dumps(stored)} ({where} configuration)",
        data={"key": key, "value": stored, "file": where},
    )
    if key == "global_path" and not Path(stored).is_dir():
        result.warn(
            "config.global_root_missing",
            f"{stored} does not exist yet; create it with `engram init --global-path {stored}`",
        )
    if key == "save_target" and stored != "workspace" and roots.global_ is None:
        result.warn(
            "config.global_root_missing",
            f"save_target {stored} writes to the global memory root, and there is none yet: "
            "set ENGRAM_GLOBAL_DIR or run `engram init --global-path PATH`; until then saves fail",
        )
    return result


def _user_scope(roots: Roots) -> bool:
    """Without a workspace, the active roles and rule variant are the user's settings."""
    return roots.workspace is None


def set_roles(roots: Roots, roles: list[str] | None) -> Result:
    user = _user_scope(roots)
    stored = set_config_value(roots, "roles", list(roles or []), user=user)
    text = f"Active roles: {', '.join(stored)}" if stored else "Active roles cleared."
    text += f" ({'user' if user else 'workspace'} configuration)"
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
    user = _user_scope(roots)
    stored = set_config_value(roots, "rule_variant", mode, user=user)
    where = "user" if user else "workspace"
    return Result(
        text=f"Rule variant: {stored} ({where} configuration)\n{RELOAD_NOTE}",
        data={
            "rule_variant": stored,
            "agent_action": "reload_memory",
            "agent_action_text": RELOAD_NOTE,
        },
    )
