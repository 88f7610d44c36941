"""The integrity manifest, `hashes.json`: the hash of every committed memory file as Engram
last wrote or a person last accepted it."""

from __future__ import annotations

import json

from engram.core.errors import ContainmentError, EngramError
from engram.core.store.files import (
    MANAGED_DIRS,
    atomic_write,
    batch_reads,
    file_hash,
    read_bytes,
    read_json,
    scan_files,
)
from engram.core.store.layout import Root
from engram.core.store.memoryfiles import file_limits


def read_manifest(root: Root) -> dict[str, str]:
    try:
        data = read_json(root, root.manifest_path)
    except FileNotFoundError:
        return {}
    except ContainmentError:
        raise
    except (OSError, ValueError) as exc:
        raise EngramError(
            f"{root.manifest_path} is not valid JSON ({exc}); fix it or run `engram verify --accept`",
            code="manifest.invalid",
        ) from exc
    files = data.get("files", {}) if isinstance(data, dict) else {}
    return {str(k): str(v) for k, v in files.items()} if isinstance(files, dict) else {}


def write_manifest(root: Root, files: dict[str, str]) -> None:
    payload = {"schema_version": 1, "algorithm": "sha256", "files": dict(sorted(files.items()))}
    atomic_write(root.manifest_path, json.dumps(payload, indent=2) + "\n", root=root)


def current_hashes(root: Root) -> dict[str, str]:
    limit = file_limits(
        root
    ).file_bytes  # a file over it is never read (nor loaded): its size stands in
    with batch_reads():
        return {
            fs.rel: file_hash(read_bytes(root, fs.path))
            if fs.size <= limit
            else f"unread:{fs.size}"
            for fs in scan_files(root, MANAGED_DIRS)
        }


def update_manifest(root: Root, changed: dict[str, str | None]) -> None:
    """Record new hashes (None removes an entry). Call under root_lock."""
    files = read_manifest(root)
    for rel, digest in changed.items():
        if digest is None:
            files.pop(rel, None)
        else:
            files[rel] = digest
    write_manifest(root, files)
