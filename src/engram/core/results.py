"""The one result contract shared by the CLI (--json), the MCP server and the hooks."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

CONTRACT_VERSION = "1.0"


@dataclass
class Diagnostic:
    """Something the caller should know that is not the answer itself."""

    level: str  # "info" | "warning" | "error"
    code: str  # stable, dotted: "index.rebuilt", "memory.parse_error", ...
    message: str
    path: str | None = None

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"level": self.level, "code": self.code, "message": self.message}
        if self.path is not None:
            d["path"] = self.path
        return d


@dataclass
class Result:
    """Human text plus the machine envelope; every core operation returns one."""

    text: str
    data: dict[str, Any] = field(default_factory=dict)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    ok: bool = True

    def envelope(self) -> dict[str, Any]:
        return {
            "contract_version": CONTRACT_VERSION,
            "ok": self.ok,
            "data": self.data,
            "diagnostics": [d.as_dict() for d in self.diagnostics],
        }

    def warn(self, code: str, message: str, path: str | None = None) -> None:
        self.diagnostics.append(Diagnostic("warning", code, message, path))

    def info(self, code: str, message: str, path: str | None = None) -> None:
        self.diagnostics.append(Diagnostic("info", code, message, path))


def error_result(code: str, message: str) -> Result:
    """The envelope for a failed operation (ok=false, one error diagnostic)."""
    return Result(
        text=f"error: {message}", ok=False, diagnostics=[Diagnostic("error", code, message)]
    )
