"""Configuration keys, defaults and validation (workspace config.json over user config)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, NamedTuple

from engram.core.errors import EngramError, UsageError
from engram.core.memory import FRONT_MATTER_BYTES, MEMORY_FILE_BYTES
from engram.core.store.layout import Roots, user_config_path
from engram.core.store.roots import read_json_object, read_user_config

SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9-]{0,79}$")


class Key(NamedTuple):
    name: str
    default: Any
    kind: str  # "int" | "enum" | "roles" | "path"
    allowed: tuple[Any, ...] = ()
    lo: int = 0
    hi: int = 0
    help: str = ""

    def describe_allowed(self) -> str:
        if self.kind == "int":
            return f"an integer from {self.lo} to {self.hi}"
        if self.kind == "enum":
            return "one of " + ", ".join(self.allowed)
        if self.kind == "roles":
            return "a list of role slugs ([a-z0-9-]; comma-separated on the command line), or empty"
        return "a folder path"


KEYS: dict[str, Key] = {
    k.name: k
    for k in (
        Key("load.limit", 8, "int", lo=1, hi=32, help="memories per load"),
        Key("load.budget_tokens", 1500, "int", lo=100, hi=100_000, help="token budget of a load"),
        Key("load.working_ttl_days", 7, "int", lo=1, hi=365, help="days a working note lives"),
        Key(
            "hook.max_bodies",
            3,
            "int",
            lo=0,
            hi=32,
            help="confident bodies a prompt hook may inject (the rest are cards)",
        ),
        Key(
            "mcp.resource_limit",
            20,
            "int",
            lo=0,
            hi=200,
            help="most-used memories in resources/list",
        ),
        Key(
            "limits.memory_file_bytes",
            MEMORY_FILE_BYTES,
            "int",
            lo=4096,
            hi=16 * 1024 * 1024,
            help="largest memory file Engram reads; larger files are skipped and reported",
        ),
        Key(
            "limits.front_matter_bytes",
            FRONT_MATTER_BYTES,
            "int",
            lo=1024,
            hi=1024 * 1024,
            help="largest front matter of a memory file",
        ),
        Key("roles", [], "roles", help="active roles"),
        Key("rule_variant", "balanced", "enum", ("light", "balanced", "strict", "off")),
        Key("save_target", "workspace", "enum", ("workspace", "global", "both")),
        Key("read_mode", "auto", "enum", ("startup", "auto", "always", "manual", "off")),
        Key("proof", "off", "enum", ("off", "compact")),
        Key("global_path", None, "path", help="global root (user configuration only)"),
    )
}


def unknown_key(name: str) -> UsageError:
    return UsageError(f"unknown configuration key {name!r}; known keys: {', '.join(KEYS)}")


def coerce(name: str, value: Any) -> Any:
    """Validate (and parse CLI strings for) one key; raises UsageError naming key and range."""
    key = KEYS.get(name)
    if key is None:
        raise unknown_key(name)
    bad = UsageError(f"invalid value {value!r} for {name}: expected {key.describe_allowed()}")
    if key.kind == "int":
        if isinstance(value, bool):
            raise bad
        if isinstance(value, str):
            if not re.fullmatch(r"[+-]?\d+", value.strip()):
                raise bad
            value = int(value)
        if not isinstance(value, int) or not key.lo <= value <= key.hi:
            raise bad
        return value
    if key.kind == "enum":
        if not isinstance(value, str) or value.strip().lower() not in key.allowed:
            raise bad
        return value.strip().lower()
    if key.kind == "roles":
        if isinstance(value, str):
            value = [v.strip().lower() for v in value.split(",") if v.strip()]
        if not isinstance(value, list) or not all(
            isinstance(v, str) and SLUG_RE.match(v) for v in value
        ):
            raise bad
        return sorted(dict.fromkeys(value))
    if not isinstance(value, str) or not value.strip():
        raise bad
    return value


def _get_nested(data: dict, dotted: str) -> Any:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _set_nested(data: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = data
    for part in parts[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    if value is None:
        node.pop(parts[-1], None)
    else:
        node[parts[-1]] = value


class Config:
    """Effective settings: workspace file, then user file, then defaults."""

    def __init__(self, layers: list[dict]) -> None:
        self.layers = layers

    def get(self, name: str) -> Any:
        if name not in KEYS:
            raise unknown_key(name)
        for layer in self.layers:
            raw = _get_nested(layer, name)
            if raw is not None:
                try:
                    value = coerce(name, raw)
                except UsageError:
                    continue  # an invalid hand edit falls back; `doctor` reports it
                if KEYS[name].kind == "roles":  # a committed config.json comes with a clone
                    value = [r for r in value if not (_long_role(r) and role_problem(r))]
                return value
        default = KEYS[name].default
        return list(default) if isinstance(default, list) else default

    def invalid_entries(self) -> list[str]:
        out = []
        for layer in self.layers:
            for name in KEYS:
                raw = _get_nested(layer, name)
                if raw is not None:
                    try:
                        coerce(name, raw)
                    except UsageError as exc:
                        out.append(exc.message)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {name: self.get(name) for name in KEYS}


def load_config(roots: Roots) -> Config:
    layers: list[dict] = []
    if roots.workspace is not None:
        layers.append(read_json_object(roots.workspace.config_path, roots.workspace))
    layers.append(read_user_config())
    return Config(layers)


def config_file_for(roots: Roots, user: bool) -> Path:
    if user:
        return user_config_path()
    if roots.workspace is None:
        raise EngramError(
            "no workspace found; run `engram init` first, or use --user", code="root.missing"
        )
    return roots.workspace.config_path


def _long_role(role: str) -> bool:
    """Roles are short names (backend, sre, data-eng); only a long one can hide a sentence or
    a token, so only those are screened when the configuration is read (hooks stay cheap)."""
    return len(role) > 20 or role.count("-") >= 3


def role_problem(role: str) -> str:
    """Why a role name cannot be stored, or '': it is written into committed files (memory
    front matter, config.json) and shown to the agent, so it is screened like memory text."""
    from engram.core.safety.scan import find_injection, redact

    if redact(role).text != role:
        return "a role looks like a secret or personal data (it is not repeated here)"
    if find_injection(role.replace("-", " ")) is not None:
        return f"role {role!r} reads like an instruction to the agent"
    return ""


def screen_roles(roles: list[str]) -> list[str]:
    """`roles`, or a UsageError naming the first that cannot be stored (see role_problem)."""
    for role in roles:
        problem = role_problem(role)
        if problem:
            raise UsageError(f"{problem}; a role is a short name such as backend or sre")
    return roles


def set_config_value(roots: Roots, name: str, value: Any, *, user: bool = False) -> Any:
    """Validate, then atomically rewrite one config file with the key changed."""
    from engram.core.store.files import atomic_write

    value = coerce(name, value) if value is not None else None
    if value is not None and KEYS[name].kind == "roles":
        screen_roles(value)
    if name == "global_path" and not user:
        raise UsageError(
            "global_path is a user setting; use `engram config set --user global_path PATH`"
        )
    path = config_file_for(roots, user)
    root = None if user else roots.workspace  # the user's own folder may be a link they made
    data = read_json_object(path, root)
    _set_nested(data, name, value)
    if root is None:
        path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, indent=2, sort_keys=True) + "\n", root=root)
    return value
