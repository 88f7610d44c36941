"""Text from outside: command-line arguments, stdin, MCP tool arguments.

Three kinds of input reach Engram from outside: command-line arguments and stdin, MCP tool
arguments (JSON strings may hold lone surrogates such as "\\ud800"), and memory files on
disk. This module checks the first two: printable UTF-8 text, with the field named on
error (memory files are checked where they are read, `store.memoryfiles`).
"""

from __future__ import annotations

import re
from typing import Any

from engram.core.errors import UsageError

# C0 and C1 control characters other than tab, line feed and carriage return.
_CONTROL = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f"


BAD_FILE_CHAR = re.compile(f"[{_CONTROL}]")


_BAD_ARG_CHAR = f"[{_CONTROL}\ud800-\udfff]"  # compiled on first use (`re` keeps it)


_CHAR_NAMES = {0x00: "a NUL character", 0x1B: "an ESC character", 0x7F: "a DEL character"}


PRINTABLE_HINT = "printable UTF-8 text (tabs and line breaks are allowed)"


def describe_char(ch: str) -> str:
    cp = ord(ch)
    if 0xDC80 <= cp <= 0xDCFF:  # how Python carries an undecodable byte of argv or a file name
        return f"a byte that is not UTF-8 (0x{cp - 0xDC00:02X})"
    if 0xD800 <= cp <= 0xDFFF:
        return f"a lone surrogate U+{cp:04X} (half of a UTF-16 pair, not a character)"
    return _CHAR_NAMES.get(cp, f"a control character U+{cp:04X}")


def text_problem(text: str) -> str | None:
    """What makes `text` unusable as memory text ('contains a NUL character at position 3')."""
    if text.isprintable():  # the common case, decided without the pattern
        return None
    m = re.search(_BAD_ARG_CHAR, text)
    if m is None:
        return None
    return f"contains {describe_char(m.group())} at position {m.start()}"


def name_problem(name: str) -> str | None:
    """What makes `name` unusable as a memory file's name, which Engram shows in every
    notice about the file: any character that is not printable, line breaks and tabs
    included (a name with a line break can forge a line of output)."""
    if name.isprintable():
        return None
    at, ch = next((i, c) for i, c in enumerate(name) if not c.isprintable())
    if ch in _LINE_CHARS:
        what = _LINE_CHARS[ch]
    elif re.fullmatch(_BAD_ARG_CHAR, ch):  # a control character, an undecodable byte
        what = describe_char(ch)
    else:
        what = f"the invisible or format character U+{ord(ch):04X}"
    return f"contains {what} at position {at}"


_LINE_CHARS = {"\t": "a tab", "\n": "a line feed", "\r": "a carriage return"}


def printable(text: str) -> str:
    """`text` with every character `check_text` refuses replaced by U+FFFD (for routing a prompt)."""
    return text if text.isprintable() else re.sub(_BAD_ARG_CHAR, "\ufffd", text)


def check_text(value: str, field: str, what: str = "memory text") -> str:
    """`value` unchanged when it is printable text; a UsageError naming `field` otherwise."""
    problem = text_problem(value)
    if problem:
        raise UsageError(f"{field}: {problem}; {what} must be {PRINTABLE_HINT}")
    return value


def check_strings(value: Any, field: str, what: str = "Engram input") -> None:
    """Check every string inside a JSON-like value (MCP arguments), naming where it sits."""
    if isinstance(value, str):
        check_text(value, field, what)
    elif isinstance(value, dict):
        for key, item in value.items():
            check_text(str(key), f"{field} (a key)", what)
            check_strings(item, f"{field}.{key}", what)
    elif isinstance(value, list | tuple):
        for n, item in enumerate(value):
            check_strings(item, f"{field}[{n}]", what)


# Command-line arguments that name files or folders: a path may hold any byte but NUL, and
# Python carries its undecodable bytes as surrogates that the OS turns back into the bytes.
PATH_ARGUMENTS = frozenset({"workspace", "file", "global_path", "cases", "accept", "value"})


def check_cli_args(args: object) -> None:
    """Refuse command-line text that is not printable UTF-8, naming the argument."""
    for name, value in vars(args).items():
        if name in PATH_ARGUMENTS or name == "func":
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str):
                check_text(item, name.replace("_", "-"), "command-line text")


def decode_input(raw: bytes, field: str, what: str = "memory text") -> str:
    """Bytes from stdin or a file as text; a clear error for non-UTF-8 or control bytes."""
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(
            f"{field}: is not valid UTF-8 (byte 0x{raw[exc.start]:02X} at position {exc.start}); "
            f"{what} must be {PRINTABLE_HINT}"
        ) from exc
    return check_text(text, field, what)
