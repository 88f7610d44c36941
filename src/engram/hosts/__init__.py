"""Hosts Engram can wire up: one module per host, one registry (imported only when needed)."""

from __future__ import annotations

import importlib
from types import ModuleType

HOSTS: dict[str, str] = {
    "claude": "engram.hosts.claude",
    "codex": "engram.hosts.codex",
    "gemini": "engram.hosts.gemini",
    "antigravity": "engram.hosts.antigravity",
    "cursor": "engram.hosts.cursor",
    "opencode": "engram.hosts.opencode",
    "windsurf": "engram.hosts.windsurf",
}


def get_host(name: str) -> ModuleType:
    """The host module for `name`; raises UsageError naming the known hosts."""
    if name not in HOSTS:
        from engram.core.errors import UsageError

        raise UsageError(f"unknown host {name!r}; known hosts: {', '.join(HOSTS)}, all")
    return importlib.import_module(HOSTS[name])
