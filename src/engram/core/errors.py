"""Errors that carry what a user needs: what was wrong and what is allowed."""

from __future__ import annotations


class EngramError(Exception):
    """A failure a user can act on. `code` is stable; `exit_code` follows the CLI rules."""

    exit_code = 1
    code = "engram.error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        if code:
            self.code = code


class UsageError(EngramError):
    """Bad arguments or values from the caller (exit code 2)."""

    exit_code = 2
    code = "usage"


class NotFoundError(EngramError):
    """A memory, root or proposal that does not exist."""

    code = "not_found"


class ApprovalError(EngramError):
    """A token or proposal that cannot be committed (expired, reused, tampered, declined)."""

    code = "approval"


class SafetyError(EngramError):
    """Input refused by the safety scan (injection-like text, unsafe id or path)."""

    code = "safety"


class ContainmentError(SafetyError, OSError):
    """A path in a memory root that is a symbolic link, leaves the root, or is not a plain file.

    It is also an OSError, so code that already treats an unreadable cache or state file as
    absent keeps doing so; code that does not gets one clear line instead of a traceback.
    """

    code = "file.symlink"
