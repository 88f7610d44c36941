"""The one result contract shared by the CLI (--json), the MCP server and the hooks."""

from __future__ import annotations

from typing import Any

CONTRACT_VERSION = "1.0"


class Diagnostic:
    """Something the caller should know that is not the answer itself."""

    __slots__ = ("code", "level", "message", "path")

    def __init__(self, level: str, code: str, message: str, path: str | None = None) -> None:
        self.level = level  # "info" | "warning" | "error"
        self.code = code  # stable, dotted: "index.rebuilt", "memory.parse_error", ...
        self.message = message
        self.path = path

    def as_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"level": self.level, "code": self.code, "message": self.message}
        if self.path is not None:
            d["path"] = self.path
        return d

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Diagnostic) and self.as_dict() == other.as_dict()

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Diagnostic({self.level!r}, {self.code!r}, {self.message!r})"


class Result:
    """Human text plus the machine envelope; every core operation returns one.

    (Plain classes here and in the other read-path modules keep `dataclasses` and its
    `inspect` import off the hooks' start-up path.)
    """

    def __init__(
        self,
        text: str,
        data: dict[str, Any] | None = None,
        diagnostics: list[Diagnostic] | None = None,
        ok: bool = True,
    ) -> None:
        self.text = text
        self.data: dict[str, Any] = {} if data is None else data
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.ok = ok

    def __repr__(self) -> str:
        return f"Result(ok={self.ok!r}, text={self.text[:60]!r})"

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
