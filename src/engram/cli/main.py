"""`engram`: argument parsing and dispatch. The work lives in one module per command group."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

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
    from engram import __version__

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


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["hook"]:  # hot path: hosts run this on every prompt
        from engram.hooks.run import run_hook_command

        return run_hook_command(args_list[1:])
    command = next((a for a in args_list if not a.startswith("-")), None)
    if args_list[:1] in (["-C"], ["--workspace"]) and len(args_list) > 2:
        command = next((a for a in args_list[2:] if not a.startswith("-")), None)
    parser = build_parser(command)
    args = parser.parse_args(args_list)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    from engram.core.errors import EngramError

    try:
        from engram.core.inputs import check_cli_args

        check_cli_args(args)  # a stray byte or control character: one clear line, no traceback
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0
    except EngramError as exc:
        if getattr(args, "json", False):  # scripts get the envelope too, with ok=false
            import json

            from engram.core.results import error_result

            print(json.dumps(error_result(exc.code, exc.message).envelope(), indent=2))
        from engram.cli.colour import paint
        from engram.cli.common import tilde

        print(
            f"engram: {paint('error:', 'error', sys.stderr)} {tilde(exc.message)}", file=sys.stderr
        )
        return exc.exit_code
    except OSError as exc:  # permissions, full disk, a folder where a file should be
        where = f": {exc.filename}" if exc.filename else ""
        print(f"engram: error: {exc.strerror or exc}{where}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("engram: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
