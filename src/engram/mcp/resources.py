"""Memories as MCP resources: `engram://index`, `engram://memory/{id}` and the most-used list."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from engram.core import api
from engram.core.api import load_config, require_roots, resolve_roots
from engram.core.errors import EngramError
from engram.mcp.protocol import INVALID_PARAMS, RESOURCE_NOT_FOUND_LEGACY, Era, RpcError

INDEX_URI = "engram://index"
MEMORY_PREFIX = "engram://memory/"
MEMORY_TEMPLATE = MEMORY_PREFIX + "{id}"
# The memory id grammar (slugs); anything else, such as `../x`, is not a memory.
_ID_RE = re.compile(r"[a-z0-9][a-z0-9-]{0,79}")

Core = Callable[..., Any]


def _index_entry(era: Era) -> dict[str, Any]:
    entry: dict[str, Any] = {"uri": INDEX_URI, "name": "index"}
    if era.has("resource_title"):
        entry["title"] = "Engram memory index"
    entry["description"] = "One-line cards (id, type, title) of every memory visible here."
    entry["mimeType"] = "text/plain"
    return entry


def list_resources(era: Era, core: Core) -> list[dict[str, Any]]:
    """The index plus up to `mcp.resource_limit` memories, most used first (R-WIRE-4).

    Memories never read yet fill the rest of the list after the used ones, so a new
    workspace shows its memories too (ordered by id; one entry per id, as the URI is by id).
    """

    out = [_index_entry(era)]
    try:
        roots = resolve_roots()
        if not roots.all:
            return out  # nothing to list yet; reading the index explains how to start
        limit = load_config(roots).get("mcp.resource_limit")
        used = core(api.most_used, roots, limit) if limit else []
        if limit and len(used) < limit:
            cards = core(api.index_cards, roots).data.get("cards", [])
            seen = {m["id"] for m in used}
            for card in sorted(cards, key=lambda c: c["id"]):
                if len(used) >= limit:
                    break
                if card["id"] not in seen:
                    seen.add(card["id"])
                    used.append({**card, "uses": 0})
    except EngramError:
        return out
    for m in used:
        entry: dict[str, Any] = {"uri": MEMORY_PREFIX + m["id"], "name": m["id"]}
        if era.has("resource_title") and m.get("title"):
            entry["title"] = m["title"]
        uses = m.get("uses", 0)
        used_text = f"used {uses} time{'s' if uses != 1 else ''}" if uses else "not used yet"
        entry["description"] = f"{m.get('type')} · {m.get('scope')} · {used_text}"
        entry["mimeType"] = "text/markdown"
        out.append(entry)
    return out


def list_templates(era: Era) -> list[dict[str, Any]]:
    entry: dict[str, Any] = {"uriTemplate": MEMORY_TEMPLATE, "name": "memory"}
    if era.has("resource_title"):
        entry["title"] = "One Engram memory"
    entry["description"] = (
        "One memory's body, as `engram load --id ID` prints it (counts as a retrieval)."
    )
    entry["mimeType"] = "text/markdown"
    return [entry]


def not_found(era: Era, uri: Any, why: str) -> RpcError:
    """Legacy eras use -32002, 2026-07-28 uses -32602; both carry the uri."""
    code = INVALID_PARAMS if era.modern else RESOURCE_NOT_FOUND_LEGACY
    return RpcError(code, f"Resource not found: {why}", {"uri": uri})


def read_resource(era: Era, uri: Any, core: Core) -> dict[str, Any]:
    """`resources/read` contents for one Engram URI; anything else is not found."""

    if not isinstance(uri, str):
        raise RpcError(INVALID_PARAMS, "resources/read needs params.uri, a string")
    if uri == INDEX_URI:
        mid = None
    elif uri.startswith(MEMORY_PREFIX) and _ID_RE.fullmatch(uri[len(MEMORY_PREFIX) :]):
        mid = uri[len(MEMORY_PREFIX) :]
    else:
        raise not_found(
            era,
            uri,
            f"{uri!r} is not an Engram resource; use {INDEX_URI} or {MEMORY_TEMPLATE} "
            "where id is a memory id (a-z, 0-9, '-')",
        )
    try:
        roots = require_roots()
        result = core(api.index_cards, roots) if mid is None else core(api.read_memory, roots, mid)
    except EngramError as exc:
        raise not_found(era, uri, exc.message) from exc
    mime = "text/plain" if mid is None else "text/markdown"
    return {"contents": [{"uri": uri, "mimeType": mime, "text": result.text}]}
