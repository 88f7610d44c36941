"""`engram`: argument parsing and dispatch. The work lives in one module per command group.

`engram hook` and a plain `engram load` skip argparse (hosts run them on every prompt);
every other command, and any `load` the fast reader does not recognise in full, goes
through the full parser in `engram.cli.parser`.
"""

from __future__ import annotations

import sys

# `typing` is not imported here: this module runs before `_short_lived` turns the cyclic
# collector off, and everything after that imports faster.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from types import SimpleNamespace


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argparse parser for `command` (every command when None or unknown)."""
    from engram.cli.parser import build_parser as build

    return build(command)


def _workspace_prefix(args_list: list[str]) -> tuple[str | None, list[str]]:
    """(DIR, the rest) for a command line that starts with `-C DIR` or `--workspace DIR`."""
    if args_list[:1] in (["-C"], ["--workspace"]) and len(args_list) > 2:
        return args_list[1], args_list[2:]
    return None, args_list


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # this process is the command
        return _short_lived(sys.argv[1:])
    return _main(list(argv))


def _short_lived(args_list: list[str]) -> int:
    """Run a command as its own process. `load` and `hook` (run by hosts on every prompt)
    collect no cyclic garbage while they run and freeze what is left before the exit, so
    that the interpreter's final collection does not walk every object of the imported
    modules: together a few milliseconds of a cold load. Everything is still flushed,
    closed and finalised as usual."""
    _, rest = _workspace_prefix(args_list)
    if args_list[:1] != ["hook"] and rest[:1] != ["load"]:
        return _main(args_list)
    import gc

    gc.disable()
    try:
        return _main(args_list)
    finally:
        gc.freeze()


def _main(args_list: list[str]) -> int:
    if args_list[:1] == ["hook"]:  # hot path: hosts run this on every prompt
        from engram.hooks.run import run_hook_command

        return run_hook_command(args_list[1:])
    workspace, rest = _workspace_prefix(args_list)
    args = None
    if rest[:1] == ["load"]:  # hot path: the plain forms skip argparse, the rest falls through
        from engram.cli.read import fast_load_args

        args = fast_load_args(rest[1:], workspace)
    if args is None:
        command = next((a for a in rest if not a.startswith("-")), None)
        parser = build_parser(command)
        args = parser.parse_args(args_list)
        if not getattr(args, "func", None):
            parser.print_help()
            return 2
    return _run(args)


def _run(args: argparse.Namespace | SimpleNamespace) -> int:
    from engram.core.errors import EngramError

    try:
        from engram.core.api import check_cli_args

        check_cli_args(args)  # a stray byte or control character: one clear line, no traceback
        return int(args.func(args) or 0)
    except BrokenPipeError:
        return 0
    except EngramError as exc:
        from engram.core.api import public_text

        message = public_text(exc.message)
        if getattr(args, "json", False):  # scripts get the envelope too, with ok=false
            import json

            from engram.core.results import error_result

            print(json.dumps(error_result(exc.code, message).envelope(), indent=2))
        from engram.cli.colour import paint
        from engram.cli.common import tilde

        print(f"engram: {paint('error:', 'error', sys.stderr)} {tilde(message)}", file=sys.stderr)
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
