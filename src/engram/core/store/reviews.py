"""A person's reviews of flagged memory files: "I read this file; show it as I wrote it".

The read path withholds or redacts a hand-written file whose text the screen flags. A
person who has read it has the last word, for themselves: `engram verify --accept FILE`
(or the review page) records that this exact version of this file was reviewed. The
record lives in the user's own Engram folder, beside the signing key, never in a memory
root: a clone cannot ship an acceptance, another user (or another checkout) screens the
file again, and any change to the file makes it a new version that is screened again.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path

from filelock import FileLock

from engram.core.store.layout import replace_private_file, user_config_dir

REVIEWS_FILE = "reviewed-files.json"
MAX_REVIEWS = 5000  # the oldest records go first; a person re-accepts a file if needed


def review_key(file_path: Path, content_hash: str) -> str:
    """The record's key: the file's real path and its content hash, hashed together."""
    where = os.path.realpath(file_path)
    return hashlib.sha256(f"{where}\0{content_hash}".encode()).hexdigest()


def _path() -> Path:
    return user_config_dir() / REVIEWS_FILE


def read_reviews() -> dict[str, dict[str, str]]:
    """key -> {path, hash, at}; an unreadable or foreign-shaped file counts as no reviews."""
    try:
        data = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, dict)}


_CACHE: dict[str, object] = {}


def is_reviewed(file_path: Path, content_hash: str) -> bool:
    """Whether this user accepted exactly this version of this file (read once per process
    and per change of the record file, so a load pays nothing when no file is flagged)."""
    if not content_hash:
        return False
    try:
        stamp = _path().stat().st_mtime_ns
    except OSError:
        return False
    if _CACHE.get("stamp") != stamp:
        _CACHE["stamp"] = stamp
        _CACHE["keys"] = frozenset(read_reviews())
    keys = _CACHE.get("keys")
    return isinstance(keys, frozenset) and review_key(file_path, content_hash) in keys


def record_reviews(files: list[tuple[Path, str]]) -> None:
    """Record (file, content hash) pairs as reviewed by this user; atomic, under a lock."""
    if not files:
        return
    path = _path()
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path.with_name(f".{path.name}.lock")), timeout=10):
        reviews = read_reviews()
        at = time.strftime("%Y-%m-%dT%H:%M:%S")
        for file_path, content_hash in files:
            key = review_key(file_path, content_hash)
            reviews.pop(key, None)  # re-accepting moves it to the newest end
            reviews[key] = {"path": os.path.realpath(file_path), "hash": content_hash, "at": at}
        kept = dict(list(reviews.items())[-MAX_REVIEWS:])
        replace_private_file(path, json.dumps({"version": 1, "files": kept}, indent=1))
        _CACHE.clear()
