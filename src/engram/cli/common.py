"""Shared CLI helpers: resolving roots from -C, printing a Result as text or JSON."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from engram.core.api import require_roots, resolve_roots
from engram.core.errors import UsageError

if TYPE_CHECKING:  # argparse is not imported on the fast `load` path
    import argparse

    from engram.core.api import Roots
    from engram.core.results import Result


def start_dir(args: argparse.Namespace) -> Path | None:
    ws = getattr(args, "workspace", None)
    if ws:
        p = Path(ws)
        if not p.is_dir():
            raise UsageError(f"-C {ws}: not a folder")
        return p
    return None


def roots_from(args: argparse.Namespace, *, require: bool = True) -> Roots:
    return require_roots(start_dir(args)) if require else resolve_roots(start_dir(args))


def add_json_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the result envelope as JSON")


def emit(result: Result, args: argparse.Namespace, *, exit_nonzero_when_not_ok: bool = True) -> int:
    """Print text (and warnings on stderr) or the JSON envelope; return the exit code."""
    if getattr(args, "json", False):
        import json

        sys.stdout.write(json.dumps(result.envelope(), indent=2, ensure_ascii=False) + "\n")
    else:
        if result.text:
            sys.stdout.write(tilde(result.text.rstrip("\n")) + "\n")
        for d in result.diagnostics:
            if d.level in ("warning", "error"):
                from engram.cli.colour import paint  # only when there is a diagnostic

                label = paint(f"{d.level}:", d.level, sys.stderr)
                print(f"engram: {label} {tilde(d.message)}", file=sys.stderr)
    return 0 if (result.ok or not exit_nonzero_when_not_ok) else 1


def tilde(text: str) -> str:
    """Paths under the home folder as `~/…` in text for people (JSON keeps absolute paths)."""
    import os
    import re

    home = os.path.expanduser("~").rstrip("/")
    if len(home) < 2 or home not in text:
        return text
    return re.sub(re.escape(home) + r"(?=/|$|[\s'\",;:)\]])", "~", text, flags=re.M)
