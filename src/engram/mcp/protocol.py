"""MCP wire rules as data: the two eras, version negotiation, fields per version, error codes.

Nothing here does I/O. The server asks these functions which era a message belongs to and
which fields a negotiated version knows, so the rules live in one readable place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

JSONRPC = "2.0"

# Handshake ("legacy") versions, oldest first; `initialize` echoes one of these.
LEGACY_VERSIONS: tuple[str, ...] = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_LEGACY = LEGACY_VERSIONS[-1]
# Stateless versions served per request through the `_meta` envelope.
MODERN_VERSIONS: tuple[str, ...] = ("2026-07-28",)

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

# JSON-RPC and MCP error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_ERROR = -32000  # JSON-RPC implementation-defined; used only by bare legacy tool methods
RESOURCE_NOT_FOUND_LEGACY = -32002
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Feature -> first protocol version that defines it (dates compare as strings). A legacy
# answer carries only what its negotiated version knows.
SINCE: dict[str, str] = {
    "tool_annotations": "2025-03-26",
    "tool_title": "2025-06-18",
    "tool_meta": "2025-06-18",
    "output_schema": "2025-06-18",
    "structured_content": "2025-06-18",
    "resource_title": "2025-06-18",
    "elicitation": "2025-06-18",
    "elicitation_mode": "2025-11-25",
}
# JSON-RPC batches (arrays on one line) are a requirement of 2025-03-26 only; the server
# accepts them in every legacy version, as plain JSON-RPC 2.0 allows.

# Caching hints on modern list results and `resources/read`: (ttlMs, cacheScope).
# Tools and prompts are fixed for the life of a process; memory changes at any time and
# belongs to one person, so resources are never reused and never shared.
CACHE_HINTS: dict[str, tuple[int, str]] = {
    "server/discover": (3_600_000, "public"),
    "tools/list": (3_600_000, "public"),
    "prompts/list": (3_600_000, "public"),
    "resources/list": (0, "private"),
    "resources/templates/list": (3_600_000, "public"),
    "resources/read": (0, "private"),
}

# Methods the stateless era serves; anything else (ping, initialize, bare tool names,
# logging/setLevel, ...) answers METHOD_NOT_FOUND there.
MODERN_METHODS = frozenset(
    {
        "server/discover",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "prompts/list",
        "prompts/get",
    }
)


class RpcError(Exception):
    """A JSON-RPC error answer: code, message and optional data."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def as_dict(self) -> dict[str, Any]:
        err: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            err["data"] = self.data
        return err


@dataclass(frozen=True)
class Era:
    """How one message is served: its protocol version and the client's capabilities."""

    version: str
    modern: bool
    capabilities: dict[str, Any] = field(default_factory=dict)

    def has(self, feature: str) -> bool:
        return self.version >= SINCE[feature]

    def form_elicitation(self) -> bool:
        """Whether the client declared form elicitation (an empty object means form)."""
        if not self.has("elicitation"):
            return False
        eli = self.capabilities.get("elicitation")
        if not isinstance(eli, dict):
            return False
        if not eli or self.version < SINCE["elicitation_mode"]:
            return True
        return isinstance(eli.get("form"), dict) or "url" not in eli


def negotiate(requested: Any) -> str:
    """Legacy handshake: echo a known legacy version, else offer the newest one (R-PROTO-1)."""
    if isinstance(requested, str) and requested in LEGACY_VERSIONS:
        return requested
    return LATEST_LEGACY


def is_modern(params: Any) -> bool:
    """A request is modern only if `params._meta` holds the protocol-version key."""
    if not isinstance(params, dict):
        return False
    meta = params.get("_meta")
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def modern_era(params: dict[str, Any]) -> Era:
    """Validate the per-request envelope (R-PROTO-3, R-PROTO-5) and return its era."""
    meta = params["_meta"]
    if META_CLIENT_CAPABILITIES not in meta:
        raise RpcError(
            INVALID_PARAMS,
            f"missing params._meta[{META_CLIENT_CAPABILITIES!r}]: every request that carries "
            f"{META_PROTOCOL_VERSION!r} must also declare its client capabilities (use {{}} for none)",
        )
    caps = meta[META_CLIENT_CAPABILITIES]
    if not isinstance(caps, dict):
        raise RpcError(
            INVALID_PARAMS, f"params._meta[{META_CLIENT_CAPABILITIES!r}] must be an object"
        )
    version = meta[META_PROTOCOL_VERSION]
    if not isinstance(version, str):
        raise RpcError(INVALID_PARAMS, f"params._meta[{META_PROTOCOL_VERSION!r}] must be a string")
    if version not in MODERN_VERSIONS:
        raise RpcError(
            UNSUPPORTED_PROTOCOL_VERSION,
            "Unsupported protocol version",
            {"supported": list(MODERN_VERSIONS), "requested": version},
        )
    return Era(version, True, caps)


def valid_id(value: Any) -> bool:
    """Request ids are strings or integers, never null, booleans, floats or objects."""
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))
