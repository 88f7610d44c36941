"""The per-user key that signs what Engram leaves in a workspace to act on later (commit
journals, pending proposals, import pointer backups): a cloned repository can ship those
files, never this key, which lives in the user's own Engram folder."""

from __future__ import annotations

import os

from engram.core.store.layout import user_config_dir

KEY_FILE = "journal.key"  # in the user's Engram folder, never in a memory root


def user_signing_key() -> bytes | None:
    """The key (created on first use; None if it cannot be). The key file
    appears whole or not at all (written aside, then linked into place), so a process
    killed while making it, or one reading it meanwhile, never sees an empty key.
    """
    path = user_config_dir() / KEY_FILE
    for _ in range(3):
        try:
            key = bytes.fromhex(path.read_text(encoding="ascii").strip())
            if len(key) == 32:
                return key
            path.unlink()  # a key an older release left half-written: never a valid signer
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            try:
                path.unlink()
            except OSError:
                return None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            aside = path.with_name(f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}")
            fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w", encoding="ascii") as fh:
                fh.write(os.urandom(32).hex() + "\n")  # the kernel's CSPRNG, as `secrets` uses
                fh.flush()
                os.fsync(fh.fileno())
            try:
                os.link(aside, path)  # fails if another process made it first: read that one
            except FileExistsError:
                pass
            finally:
                os.unlink(aside)
        except OSError:
            return None
    return None
