"""The full `engram` argument parser: argparse with one-line errors and did-you-mean hints.

Kept apart from `engram.cli.main` so that the commands a host runs on every prompt
(`engram load`, `engram hook`) start without importing argparse or building the parser.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence

from engram import __version__

# command -> module under engram.cli that registers it (imported only when needed)
COMMANDS: dict[str, str] = {
    "init": "init",
    "inject": "init",
    "load": "read",
    "route": "read",
    "search": "read",
    "rebuild-index": "read",
    "benchmark": "benchmark",
    "verify": "verify",
    "status": "status",
    "config": "config",
    "set-role": "config",
    "set-rule-variant": "config",
    "save": "write",
    "save-session": "write",
    "ss": "write",
    "commit": "write",
    "archive": "write",
    "note": "write",
    "promote": "write",
    "enrich": "enrich",
    "pending": "pending",
    "import": "import_",
    "link": "link",
    "unlink": "link",
    "upgrade": "link",
    "doctor": "doctor",
    "hook": "hook",
    "set-read": "hook",
    "set-proof": "hook",
    "ui": "ui",
}


class Formatter(argparse.HelpFormatter):
    """Help text at the terminal's width, measured once (argparse asks on every argument)."""

    width: int | None = None

    def __init__(
        self,
        prog: str,
        indent_increment: int = 2,
        max_help_position: int = 24,
        width: int | None = None,
    ) -> None:
        if width is None:
            if Formatter.width is None:
                import shutil

                Formatter.width = max(shutil.get_terminal_size().columns - 2, 40)
            width = Formatter.width
        super().__init__(prog, indent_increment, max_help_position, width)


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors and exit code 2."""

    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        kwargs.setdefault("formatter_class", Formatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {with_suggestion(message)} (see `{self.prog} --help`)\n")


def with_suggestion(message: str) -> str:
    """An argparse invalid-choice message with "did you mean 'load'?" when a choice is close.

    A mistyped command is named as such; the list of every command is left to --help.
    """
    import re

    m = re.search(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if not m:
        return message
    import difflib

    choices = re.findall(r"'([^']*)'", m.group(3))
    close = difflib.get_close_matches(m.group(2).lower(), choices, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    if m.group(1) == "COMMAND":
        return f"unknown command {m.group(2)!r}{hint}"
    return f"{message}{hint}"


def _available_modules(names: Sequence[str]) -> list:
    mods = []
    for name in dict.fromkeys(names):
        try:
            mods.append(importlib.import_module(f"engram.cli.{name}"))
        except ModuleNotFoundError as exc:
            if exc.name != f"engram.cli.{name}":
                raise
    return mods


def build_parser(command: str | None = None) -> Parser:
    parser = Parser(
        prog="engram", description="Human-owned, file-first memory for AI coding agents."
    )
    parser.add_argument("--version", action="version", version=f"engram {__version__}")
    parser.add_argument("-C", "--workspace", metavar="DIR", help="run as if started in DIR")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    modules = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for mod in _available_modules(modules):
        mod.register(sub)
    return parser
