"""Hosts Engram can wire up: one module per host, one registry (imported only when needed)."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Protocol

from engram.core.errors import UsageError

if TYPE_CHECKING:
    from engram.hosts.base import Scope
    from engram.hosts.targets import Target

HOSTS: dict[str, str] = {
    "claude": "engram.hosts.claude",
    "codex": "engram.hosts.codex",
    "gemini": "engram.hosts.gemini",
    "antigravity": "engram.hosts.antigravity",
    "cursor": "engram.hosts.cursor",
    "opencode": "engram.hosts.opencode",
    "windsurf": "engram.hosts.windsurf",
}


class Host(Protocol):
    """What a host module provides (module-level names, as in pre-commit's languages):
    its `NAME`, a human `TITLE`, and the files (or printed commands) Engram manages for
    that host in one scope."""

    NAME: str
    TITLE: str

    def targets(self, scope: Scope) -> list[Target]: ...


def get_host(name: str) -> ModuleType:
    """The host module for `name`; raises UsageError naming the known hosts."""
    if name not in HOSTS:
        raise UsageError(f"unknown host {name!r}; known hosts: {', '.join(HOSTS)}, all")
    return importlib.import_module(HOSTS[name])
