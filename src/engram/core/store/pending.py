"""`pending-approvals.json`: the proposals waiting for a person, under their token's hash.

Only a hash of each token is stored, with the frozen proposal, a MAC made with the token
(an edited candidate fails the check) and a signature made with the user's own key, bound
to the token hash (an entry a clone ships or someone adds by hand is refused). The file
stays bounded: expired entries go, at most MAX_WAITING proposals wait at once and
MAX_MARKERS used or declined tokens are remembered until they expire.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from engram.core.errors import ContainmentError
from engram.core.store.files import atomic_write, read_json
from engram.core.store.layout import Root, replace_private_file, user_config_dir
from engram.core.store.userkey import user_signing_key

PENDING_SCHEMA = 1


MAX_WAITING = 24  # proposals waiting for approval at once (each up to 50 candidates)


MAX_MARKERS = 256  # used/declined tokens remembered until their expiry


def now() -> float:
    """Wall-clock seconds; one place so that expiry can be tested."""
    return time.time()


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def canonical(payload: dict[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def proposal_mac(token: str, payload: dict[str, Any]) -> str:
    return hmac.new(token.encode("utf-8"), canonical(payload), hashlib.sha256).hexdigest()


def user_mac(key: str, entry: dict[str, Any]) -> str | None:
    """The entry signed with this user's key, bound to its token hash: an entry a clone
    ships or a person adds by hand (signed only with a token of its own) never commits."""
    secret = user_signing_key()
    if secret is None:
        return None
    body = {k: v for k, v in entry.items() if k != "user_mac"}
    return hmac.new(secret, key.encode() + b"\0" + canonical(body), hashlib.sha256).hexdigest()


def signed_by_you(key: str, entry: dict[str, Any]) -> bool:
    """Whether this user's key signed the pending entry under token hash `key`."""
    expected = user_mac(key, entry)
    given = entry.get("user_mac")
    return expected is not None and isinstance(given, str) and hmac.compare_digest(given, expected)


def read_pending(root: Root) -> dict[str, Any]:
    try:
        data = read_json(root, root.pending_path)
    except FileNotFoundError:
        return {}
    except ContainmentError:
        raise  # a linked pending file is named, not silently replaced
    except (OSError, ValueError):
        return {}  # a broken pending file only loses pending proposals; it is rewritten
    entries = data.get("entries") if isinstance(data, dict) else None
    return entries if isinstance(entries, dict) else {}


def write_pending(root: Root, entries: dict[str, Any]) -> None:
    payload = {"schema_version": PENDING_SCHEMA, "entries": entries}
    atomic_write(root.pending_path, json.dumps(payload, indent=2, sort_keys=True) + "\n", root=root)


def expiry(entry: Any) -> float:
    value = entry.get("expires_at", 0) if isinstance(entry, dict) else 0
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


def prune(entries: dict[str, Any], at: float) -> bool:
    """Drop expired and malformed entries, then keep the file bounded (R-APP-5).

    A used or declined token needs only its expiry (to say "already used" or why it was
    declined until the token would have expired; after that its shape alone refuses it),
    so markers are small. At most MAX_WAITING proposals wait at once, and at most
    MAX_MARKERS markers are kept: the oldest go first. A dropped proposal's token is then
    "unknown" (never accepted), so single use holds and the file's cost stays constant.
    """
    dropped = [k for k, v in entries.items() if not isinstance(v, dict) or expiry(v) <= at]
    for k in dropped:
        del entries[k]
    waiting = sorted(
        (k for k, v in entries.items() if v.get("status") == "pending"),
        key=lambda k: expiry(entries[k]),
    )
    markers = sorted(
        (k for k, v in entries.items() if v.get("status") != "pending"),
        key=lambda k: expiry(entries[k]),
    )
    over = waiting[: max(0, len(waiting) - MAX_WAITING)]
    over += markers[: max(0, len(markers) - MAX_MARKERS)]
    for k in over:
        del entries[k]
    return bool(dropped or over)


def iso_time(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# The tokens this user has spent or declined, in their own Engram folder: the pending file
# lives in the workspace, where a copy of it put back would bring a token back to life.
ENDED_FILE = "ended-tokens.json"


def _ended_path() -> Path:
    return user_config_dir() / ENDED_FILE


def ended_tokens() -> dict[str, dict[str, Any]]:
    """token hash → how this user ended it ({status, reason, expires_at})."""
    try:
        data = json.loads(_ended_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    return {k: v for k, v in data.items() if isinstance(k, str) and isinstance(v, dict)}


def record_ended(key: str, status: str, expires_at: int, reason: str = "") -> None:
    """Remember, for this user, that the token with hash `key` was used or declined (kept
    until it would have expired anyway). Best effort: the pending file still says so."""
    path = _ended_path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(path.with_name(f".{path.name}.lock")), timeout=10):
            at = now()
            data = {
                k: v
                for k, v in ended_tokens().items()
                if isinstance(v.get("expires_at"), int) and v["expires_at"] > at
            }
            data[key] = {"status": status, "reason": reason[:300], "expires_at": int(expires_at)}
            replace_private_file(path, json.dumps(data))
    except (OSError, Timeout):
        pass


def spend_token(root: Root, key: str, expires_at: int) -> None:
    """Mark the token with hash `key` used (idempotent). Call under the root's lock.

    The commit calls this only once its files are durable (see `engram.core.write.commit`),
    so a process killed before that leaves the token working.
    """
    entries = read_pending(root)
    prune(entries, now())
    record_ended(key, "used", int(expires_at))
    if int(expires_at) > now():
        entries[key] = {"status": "used", "expires_at": int(expires_at)}
    else:
        entries.pop(key, None)  # its expiry alone refuses it now
    write_pending(root, entries)
