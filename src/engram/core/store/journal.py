"""The commit journal: one record of every file a commit changes, written before any of
them, so that a crash at any moment leaves memory as it was or as it was meant to be.

Check everything → write the journal (before and after states of each file, the token's
hash: the commit point) → apply → spend the token → drop the journal. The next command
finds a leftover journal and finishes it (`recover_root`), or puts back what it wrote.
A cloned repository controls everything under `.agents/.engram/`, `cache/` included, so
a journal is applied only when it is signed with the user's own key, which lives in the
user's Engram folder (`user_signing_key`).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from engram.core.errors import EngramError
from engram.core.results import Result
from engram.core.store import files as store
from engram.core.store.bounded import parse_json
from engram.core.store.files import file_hash, locked, remove_file
from engram.core.store.layout import (
    ARCHIVE_DIR,
    CACHE_DIR,
    MANIFEST_FILE,
    PENDING_FILE,
    TYPE_DIRS,
    WORKING_DIR,
    Root,
    Roots,
)
from engram.core.store.pending import spend_token
from engram.core.store.userkey import user_signing_key

JOURNAL_FILE = "commit-journal.json"


JOURNAL_VERSION = 2


SET_ASIDE_PREFIX = "commit-journal.failed-"


MANAGED_PREFIXES = tuple(f"{d}/" for d in (*TYPE_DIRS.values(), ARCHIVE_DIR))


WRITABLE_DIRS = (*TYPE_DIRS.values(), ARCHIVE_DIR, WORKING_DIR)


FileChanges = dict[str, str | None]  # rel path -> new text (None removes the file)


class _Conflict(Exception):
    """A file is neither in its recorded "before" nor "after" state."""


@dataclass
class Recovery:
    """What finishing (or setting aside) an interrupted commit did, for the person."""

    scope: str
    finished: bool
    token_key: str | None = None
    outcome: dict[str, Any] | None = None
    message: str = ""


def _journal_path(root: Root) -> Path:
    return root.cache_dir / JOURNAL_FILE


def _rel_path(rel: str) -> Path:
    p = PurePosixPath(rel)
    if rel == MANIFEST_FILE:
        return Path(rel)
    if p.is_absolute() or ".." in p.parts or len(p.parts) != 2 or p.parts[0] not in WRITABLE_DIRS:
        raise EngramError(f"refusing to write outside the memory layout: {rel}", code="safety.path")
    return Path(*p.parts)


def _target(root: Root, rel: str) -> Path:
    """The path of `rel` in `root` (only the memory layout's own files)."""
    return root.path / _rel_path(rel)


def current_bytes(root: Root, rel: str) -> bytes | None:
    """The bytes of `rel` now (None if absent), reached without following a link."""

    try:
        return store.read_bytes(root, _target(root, rel))
    except FileNotFoundError:
        return None


def _put(root: Root, rel: str, data: bytes | None) -> None:
    """Write or remove `rel`, reached without following a link (never what one points to)."""

    path = _target(root, rel)
    if data is None:
        store.remove_file(root, path)
        return
    store.atomic_write(path, data, root=root)


def _enc(data: bytes | None) -> str | None:
    # surrogateescape keeps any bytes (a hand-written file need not be UTF-8) exactly.
    return None if data is None else data.decode("utf-8", "surrogateescape")


def _dec(text: Any) -> bytes | None:
    if text is None:
        return None
    if not isinstance(text, str):
        raise ValueError("a journal file state is not text")
    return text.encode("utf-8", "surrogateescape")


def _manifest_text(files: dict[str, str]) -> str:
    payload = {"schema_version": 1, "algorithm": "sha256", "files": dict(sorted(files.items()))}
    return json.dumps(payload, indent=2) + "\n"


def _root_plan(root: Root, changes: FileChanges) -> dict[str, dict[str, str | None]]:
    """Before/after of every file one root's commit touches, hashes.json included.

    Everything that could refuse the commit is checked here, before the journal exists.
    """

    files: dict[str, dict[str, str | None]] = {}
    digests: dict[str, str | None] = {}
    for rel, text in changes.items():
        if rel == MANIFEST_FILE:
            raise EngramError("refusing to write hashes.json directly", code="safety.path")
        if text is None:
            after = None
        else:
            try:
                after = text.encode("utf-8")
            except UnicodeEncodeError as exc:
                raise EngramError(
                    f"{root.scope}:{rel}: the text holds a character that is not valid Unicode "
                    f"(position {exc.start})",
                    code="input.encoding",
                ) from exc
        before = current_bytes(root, rel)
        if rel.startswith(MANAGED_PREFIXES):
            digests[rel] = None if after is None else file_hash(after)
        if before != after:
            files[rel] = {"before": _enc(before), "after": _enc(after)}
    if digests:
        raw = current_bytes(root, MANIFEST_FILE)
        try:
            data = json.loads(raw.decode("utf-8")) if raw is not None else {}
        except (UnicodeDecodeError, ValueError) as exc:
            raise EngramError(
                f"{root.path / MANIFEST_FILE} is not valid JSON ({exc}); fix it or run "
                "`engram verify --accept`, then commit again",
                code="manifest.invalid",
            ) from exc
        known = data.get("files", {}) if isinstance(data, dict) else {}
        manifest = {str(k): str(v) for k, v in known.items()} if isinstance(known, dict) else {}
        for rel, digest in digests.items():
            if digest is None:
                manifest.pop(rel, None)
            else:
                manifest[rel] = digest
        after_m = _manifest_text(manifest).encode("utf-8")
        if after_m != raw:
            files[MANIFEST_FILE] = {"before": _enc(raw), "after": _enc(after_m)}
    return files


def _journal_mac(key: bytes, doc: dict[str, Any]) -> str:
    import hashlib
    import hmac

    body = {k: v for k, v in doc.items() if k != "mac"}
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hmac.new(key, canonical.encode("ascii"), hashlib.sha256).hexdigest()


def _write_journal(root: Root, doc: dict[str, Any]) -> None:
    key = user_signing_key()
    signed = {**doc, "mac": _journal_mac(key, doc)} if key else doc
    store.atomic_write(_journal_path(root), json.dumps(signed, sort_keys=True), root=root)


class _Unsigned(ValueError):
    """A journal without a valid signature of this user: never applied, only set aside."""


def _remove_journal(root: Root) -> None:
    store.remove_file(root, _journal_path(root))  # a linked cache/ is refused, not followed


def _ordered(files: dict[str, Any], backward: bool = False) -> list[str]:
    """Writes first, removals next, the manifest last (reversed to roll back)."""
    order = sorted(
        files,
        key=lambda rel: (rel == MANIFEST_FILE, files[rel].get("after") is None, rel),
    )
    return order[::-1] if backward else order


def _doc_roots(doc: dict[str, Any]) -> list[tuple[Root, dict[str, Any]]]:
    out = []
    for entry in doc.get("roots") or []:
        files = entry["files"]
        if not isinstance(files, dict):
            raise ValueError("journal files are not a mapping")
        out.append((Root(Path(entry["path"]), str(entry["scope"])), files))
    return out


def _check_states(root: Root, files: dict[str, Any]) -> None:
    for rel in files:
        cur = current_bytes(root, rel)
        if cur not in (_dec(files[rel].get("before")), _dec(files[rel].get("after"))):
            raise _Conflict(f"{root.scope}:{rel} was changed since the commit began")


def _forward(root: Root, files: dict[str, Any]) -> None:
    for rel in _ordered(files):
        before, after = _dec(files[rel].get("before")), _dec(files[rel].get("after"))
        cur = current_bytes(root, rel)
        if cur == after:
            continue
        if cur != before:
            raise _Conflict(f"{root.scope}:{rel} was changed since the commit began")
        _put(root, rel, after)


def _roll_forward(home: Root, doc: dict[str, Any]) -> None:
    """Steps 3 and 4: bring every file to its "after" state, then spend the token."""

    parts = _doc_roots(doc)
    for root, files in parts:  # all or nothing: refuse before touching a single file
        _check_states(root, files)
    for root, files in parts:
        if root.path == home.path or not files:
            continue
        _write_journal(root, {"version": JOURNAL_VERSION, "token": None,
                              "roots": [{"path": str(root.path), "scope": root.scope,
                                         "files": files}]})  # fmt: skip
        _forward(root, files)
        _remove_journal(root)
    for root, files in parts:
        if root.path == home.path:
            _forward(root, files)
    token = doc.get("token")
    if isinstance(token, dict):
        spend_token(home, str(token["key"]), int(token["expires_at"]))
    _remove_journal(home)


def _roll_back(home: Root, doc: dict[str, Any]) -> list[str]:
    """Bring every file that is in its "after" state back; returns the files left as they are."""
    left: list[str] = []
    for root, files in reversed(_doc_roots(doc)):
        for rel in _ordered(files, backward=True):
            before, after = _dec(files[rel].get("before")), _dec(files[rel].get("after"))
            try:
                cur = current_bytes(root, rel)
                if cur == before:
                    continue
                if cur != after:
                    left.append(f"{root.scope}:{rel}")
                    continue
                _put(root, rel, before)
            except (OSError, EngramError):
                left.append(f"{root.scope}:{rel}")
        if root.path != home.path:
            with contextlib.suppress(OSError):
                _remove_journal(root)
    return left


def _set_aside(root: Root) -> str:
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%f")
    aside = root.cache_dir / f"{SET_ASIDE_PREFIX}{stamp}.json"
    try:
        os.replace(_journal_path(root), aside)
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(_journal_path(root))
        return "(it could not be kept)"
    return f"cache/{aside.name}"


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}"
    return str(exc)


def apply_journaled(
    home: Root,
    changes: dict[Root, FileChanges] | FileChanges,
    *,
    token: tuple[str, int] | None = None,
    outcome: dict[str, Any] | None = None,
) -> None:
    """Steps 1–4 of the module docstring. Call under the lock of every root involved.

    `changes` maps roots to their file changes (a plain mapping means `home`'s own);
    `token` is (token hash, expiry) of the approval being spent. On failure the commit
    is undone and the error says so: the files are as before and the token still works.
    """
    by_root = changes if all(isinstance(k, Root) for k in changes) else {home: changes}
    spent = "; the approval token still works" if token else ""
    try:
        parts = [
            {"path": str(r.path), "scope": r.scope, "files": _root_plan(r, c)}
            for r, c in by_root.items()  # type: ignore[union-attr]
            if c
        ]
    except OSError as exc:
        raise EngramError(
            f"the commit cannot be written ({_why(exc)}); nothing was changed{spent}",
            code="commit.failed",
        ) from exc
    except EngramError as exc:
        exc.message = f"{exc.message}; nothing was changed{spent}"
        exc.args = (exc.message,)
        raise
    parts = [p for p in parts if p["files"]]
    if not parts and token is None:
        return
    doc = {"version": JOURNAL_VERSION, "home": str(home.path), "roots": parts,
           "token": {"key": token[0], "expires_at": int(token[1])} if token else None,
           "outcome": outcome}  # fmt: skip
    try:
        _write_journal(home, doc)
    except OSError as exc:
        _remove_journal(home)
        raise EngramError(
            f"the commit could not be started ({_why(exc)}); nothing was changed{spent}",
            code="commit.failed",
        ) from exc
    try:
        _roll_forward(home, doc)
    except (OSError, EngramError, _Conflict) as exc:
        left = _roll_back(home, doc)
        if left:
            raise EngramError(
                f"the commit failed ({_why(exc)}) and could not be fully undone "
                f"({', '.join(left)}); the next Engram command finishes or sets it aside",
                code="commit.interrupted",
            ) from exc
        _remove_journal(home)
        raise EngramError(
            f"the commit failed ({_why(exc)}); nothing was changed{spent}", code="commit.failed"
        ) from exc


def _read_journal(root: Root) -> dict[str, Any] | None:
    try:
        raw = store.read_bytes(root, _journal_path(root))  # never through a link
    except FileNotFoundError:
        return None
    import hmac

    doc = parse_json(raw, _journal_path(root))
    if not isinstance(doc, dict):
        raise ValueError("the journal is not an object")
    key = user_signing_key()
    mac = doc.get("mac")
    if (
        key is None
        or not isinstance(mac, str)
        or not hmac.compare_digest(mac, _journal_mac(key, doc))
    ):
        raise _Unsigned(
            "it carries no valid signature of this user, so Engram did not write it here "
            "(a cloned repository can ship one); it was not applied"
        )
    if doc.get("version") != JOURNAL_VERSION:
        raise ValueError(f"journal version {doc.get('version')!r} is not {JOURNAL_VERSION}")
    return doc


def recover_root(root: Root, allowed: list[Root] | None = None) -> Recovery | None:
    """Finish (or undo and set aside) an interrupted commit of `root`. Call under lock.

    `allowed` are the roots whose locks the caller holds; a journal that names another
    root is not finished here.
    """
    try:
        doc = _read_journal(root)
    except (OSError, ValueError, UnicodeDecodeError, EngramError) as exc:
        aside = _set_aside(root)
        return Recovery(
            root.scope, False,
            message=f"{root.scope}: an interrupted commit's journal could not be read ({exc}); "
            f"it was set aside as {aside} and nothing was changed",
        )  # fmt: skip
    if doc is None:
        return None
    token = doc.get("token") if isinstance(doc.get("token"), dict) else None
    key = str(token["key"]) if token else None
    try:
        held = {str(r.path) for r in (allowed or [root])}
        foreign = [r.path for r, _ in _doc_roots(doc) if str(r.path) not in held]
        if foreign:
            raise _Conflict(f"it also writes to {foreign[0]}, which is not a root here")
        _roll_forward(root, doc)
    except (OSError, EngramError, _Conflict, KeyError, TypeError, ValueError) as exc:
        try:
            left = _roll_back(root, doc)
        except (KeyError, TypeError, ValueError):
            left = ["(the journal is malformed)"]
        aside = _set_aside(root)
        undone = (
            "it was undone" if not left else f"it was undone except {', '.join(left)} (left as is)"
        )
        tail = "; its approval token still works" if key else ""
        return Recovery(
            root.scope, False, key,
            message=f"{root.scope}: an interrupted commit could not be finished ({_why(exc)}); "
            f"{undone}, and its journal was set aside as {aside}{tail}",
        )  # fmt: skip
    outcome = doc.get("outcome") if isinstance(doc.get("outcome"), dict) else None
    return Recovery(root.scope, True, key, outcome, f"{root.scope}: finished an interrupted commit")


_TEMP_RE = re.compile(r"^\.(?P<name>.+)\.[A-Za-z0-9_]+\.tmp$")


_LOCKED_NAMES = {"": (MANIFEST_FILE, PENDING_FILE), CACHE_DIR: (JOURNAL_FILE,)}


def _stale_temps(root: Root) -> list[Path]:
    """Temp files of names only ever written under the write lock.

    Memory files, hashes.json, pending-approvals.json and the journal are written under
    that lock, so while the caller holds it such a temp file's owner was killed inside
    `atomic_write`.
    """
    out: list[Path] = []
    for sub in ("", CACHE_DIR, *WRITABLE_DIRS):
        folder = root.path / sub if sub else root.path
        try:
            names = [e.name for e in os.scandir(folder) if e.is_file(follow_symlinks=False)]
        except OSError:
            continue
        for name in names:
            m = _TEMP_RE.match(name)
            target = m.group("name") if m else ""
            if target and (
                target in _LOCKED_NAMES.get(sub, ())
                or (sub in WRITABLE_DIRS and target.endswith(".md"))
            ):
                out.append(folder / name)
    return out


def _sweep_temps(root: Root) -> None:
    """Remove what a killed write left behind. Call under the root's lock."""

    for path in _stale_temps(root):
        with contextlib.suppress(OSError):
            remove_file(root, path)  # never in a linked folder


def recover_all(roots: Roots, held: list[Root] | None = None) -> list[Recovery]:
    """Recover every root of `roots` whose journal exists (the caller holds the locks)."""
    out = []
    for root in roots.all:
        _sweep_temps(root)
        rec = recover_root(root, held or roots.all)
        if rec is not None:
            out.append(rec)
    return out


def recover_interrupted(roots: Roots) -> list[str]:
    """Finish any commit a killed process left half-applied; returns what was done, per root.

    With nothing to finish no lock is taken, so `verify` still works on a read-only root.
    """
    if not any(_journal_path(r).exists() or _stale_temps(r) for r in roots.all):
        return []
    with locked(roots.all):
        return [rec.scope if rec.finished else rec.message for rec in recover_all(roots)]


def recovery_notes(result: Result, recoveries: list[Recovery]) -> None:
    for rec in recoveries:
        if rec.finished:
            result.info("commit.recovered", rec.message)
        else:
            result.warn("commit.set_aside", rec.message)
