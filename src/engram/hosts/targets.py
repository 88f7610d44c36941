"""What Engram manages inside a host's files, one small class per kind of edit.

Each target transforms the text of one file: `link` adds or refreshes Engram's bytes,
`unlink` removes exactly them, `inspect` reports what is there (for `link list` and
`doctor`). `rec` is the file's record in the link state: what Engram created (the file,
containers, a final newline) so that unlink can give back the identical bytes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engram.core.api import parse_json, read_plain
from engram.hosts.base import Conflict, is_engram_hook, person_options, runs_engram_mcp
from engram.hosts.files import (
    MARKDOWN,
    TOML,
    BlockStyle,
    ConfigParseError,
    JsonDoc,
    find_block,
    remove_block,
    upsert_block,
)

REGISTRATION = "registration"
HOOKS = "hooks"
INSTRUCTIONS = "instructions"
GATE = "approval gate"
NOTE = "note"


@dataclass
class Inspection:
    present: bool = False
    foreign: bool = False  # an entry with Engram's name that Engram did not write
    command: list[str] | None = None
    stale: bool = False  # differs from what `link` would write now
    detail: dict[str, Any] = field(default_factory=dict)


def _key(path: tuple) -> str:
    return "/".join(str(p) for p in path)


def _split(command: str) -> list[str]:
    import shlex

    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _json_new(value: dict) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _prune(doc: JsonDoc, rec: dict) -> None:
    """Remove containers Engram created once they are empty (deepest first)."""
    kept = []
    for key in sorted(rec.get("containers", []), key=lambda k: -k.count("/")):
        path = tuple(int(p) if p.isdigit() else p for p in key.split("/"))
        if doc.get(path) in ({}, []):
            doc.remove(path, empty_inner=rec.get("inner", {}).get(key, ""))
        elif doc.node(path) is not None:
            kept.append(key)  # still holds something (another target's entry, or a person's)
    if kept:
        rec["containers"] = kept
    else:
        rec.pop("containers", None)


def _before_insert(doc: JsonDoc, rec: dict, keys: tuple) -> None:
    """Remember the text inside the deepest existing container if it is empty, so that
    removing Engram's entry later restores it exactly (`{ }` stays `{ }`)."""
    for depth in range(len(keys) - 1, -1, -1):
        node = doc.node(keys[:depth])
        if node is not None:
            if node.kind in ("object", "array") and node.value in ({}, []):
                rec.setdefault("inner", {})[_key(keys[:depth])] = doc.inner_text(keys[:depth])
            return


def _after_removal(new: str, rec: dict) -> str | None:
    """A text file once Engram's part is gone: a file Engram created and left empty goes."""
    rec.pop("eol_added", None)
    if rec.get("created") and not new.strip():
        return None
    return new


def _remember(rec: dict, created: list[tuple]) -> None:
    containers = rec.setdefault("containers", [])
    for c in created:
        if _key(c) not in containers:
            containers.append(_key(c))


def _hollow(value: Any) -> bool:
    """Only empty containers left (what remains of a file Engram created)."""
    if isinstance(value, dict):
        return all(_hollow(v) for v in value.values())
    if isinstance(value, list):
        return all(_hollow(v) for v in value)
    return False


def _finish(doc: JsonDoc, rec: dict) -> str | None:
    if rec.get("created") and _hollow(doc.value):
        return None
    return doc.dumps()


class Target:
    """The interface; subclasses are dataclasses that set `role`, `path` and `label`."""

    role: str
    path: Path | None
    label: str
    # `upgrade` applies it whenever the host is linked, even when it is missing (a gate)
    restore_on_upgrade = False

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        return text

    def unlink(self, text: str | None, rec: dict) -> str | None:
        return text

    def inspect(self, text: str | None) -> Inspection:
        return Inspection()

    def message(self) -> str:
        return ""


@dataclass
class JsonServer(Target):
    """An MCP server entry (`mcpServers.engram`, OpenCode's `mcp.engram`, …) in a JSON/JSONC file."""

    path: Path
    keys: tuple[str, ...]
    entry: dict[str, Any]
    command_of: Callable[[dict], list[str]] = lambda e: [e.get("command", ""), *e.get("args", [])]
    options_key: str = "args"  # the list that ends with engram-mcp's own options
    obsolete: tuple[str, ...] = ()  # keys the host's schema does not have (removed on re-pin)
    migrate: Callable[[dict, dict], dict[str, Any]] = lambda existing, wanted: {}
    role: str = REGISTRATION
    label: str = "MCP registration"

    def _doc(self, text: str | None) -> JsonDoc:
        return JsonDoc(text or "")

    def _wanted(self, existing: dict) -> dict[str, Any]:
        """This release's entry, still carrying the options a person added to the old one."""
        ours = self.entry[self.options_key]
        kept = [o for o in person_options(self.command_of(existing)) if o not in ours]
        wanted = {**self.entry, self.options_key: [*ours, *kept]} if kept else dict(self.entry)
        return {**wanted, **self.migrate(existing, wanted)}

    def _repin(self, doc: JsonDoc, existing: dict) -> None:
        for k, v in self._wanted(existing).items():  # re-pin; keep what a person added
            doc.set((*self.keys, k), v)
        for k in self.obsolete:
            doc.remove((*self.keys, k))

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        if text is None:
            rec["created"] = True
            nested: Any = self.entry
            for k in reversed(self.keys):
                nested = {k: nested}
            return _json_new(nested)
        doc = self._doc(text)
        existing = doc.get(self.keys)
        if existing is None:
            _before_insert(doc, rec, self.keys)
            _remember(rec, doc.set(self.keys, self.entry))
            return doc.dumps()
        ours = isinstance(existing, dict) and runs_engram_mcp(self.command_of(existing))
        if not ours:
            if not force:
                raise Conflict(
                    f"{self.path} already has an `{self.keys[-1]}` entry that does not run "
                    "engram-mcp; rerun with --force to replace it"
                )
            doc.replace(self.keys, self.entry)
            return doc.dumps()
        self._repin(doc, existing)
        return doc.dumps()

    def unlink(self, text: str | None, rec: dict) -> str | None:
        if text is None:
            return None
        doc = self._doc(text)
        existing = doc.get(self.keys)
        if existing is None:
            return text
        if not (isinstance(existing, dict) and runs_engram_mcp(self.command_of(existing))):
            return text  # somebody else's `engram` entry: never ours to remove
        parent = self.keys[:-1]
        doc.remove(self.keys, empty_inner=rec.get("inner", {}).get(_key(parent), ""))
        _prune(doc, rec)
        return _finish(doc, rec)

    def inspect(self, text: str | None) -> Inspection:
        if text is None:
            return Inspection()
        existing = self._doc(text).get(self.keys)
        if not isinstance(existing, dict):
            return Inspection(foreign=existing is not None)
        command = [str(c) for c in self.command_of(existing)]
        if not runs_engram_mcp(command):
            return Inspection(foreign=True, command=command)
        stale = any(existing.get(k) != v for k, v in self._wanted(existing).items()) or any(
            k in existing for k in self.obsolete
        )
        return Inspection(True, command=command, stale=stale, detail=dict(existing))


@dataclass
class JsonGate(Target):
    """A per-tool permission that makes a host ask before engram_commit (OpenCode's
    `permission.engram_engram_commit = "ask"`) in a host whose rules are evaluated in order,
    the last matching rule winning: Engram's entry is kept the last one of its object.

    A whole-object string (`"permission": "allow"`) becomes `{"*": "allow", <ours>}`, which
    the host reads the same way, and goes back to the string on unlink. A person's stricter
    value (`keep`, e.g. "deny") is left as it is.
    """

    path: Path
    keys: tuple[str, ...]  # the rules object, e.g. ("permission",)
    tool: str
    value: str = "ask"
    keep: tuple[str, ...] = ("deny",)
    role: str = GATE
    label: str = "approval before engram_commit"
    restore_on_upgrade = True

    def _rules(self, doc: JsonDoc) -> Any:
        return doc.get(self.keys)

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        doc = JsonDoc(text or "")
        if text is None:
            rec["created"] = True
        rules = self._rules(doc)
        if rules is None:
            _before_insert(doc, rec, (*self.keys, self.tool))
            _remember(rec, doc.set((*self.keys, self.tool), self.value))
            return doc.dumps()
        if isinstance(rules, str):
            rec["was_string"] = rules
            doc.replace(self.keys, {"*": rules, self.tool: self.value})
            return doc.dumps()
        if not isinstance(rules, dict):
            raise ConfigParseError(f"{_key(self.keys)} is neither an object nor a string")
        current = rules.get(self.tool)
        last = list(rules)[-1] == self.tool
        if current in self.keep or (current == self.value and last):
            return doc.dumps()
        doc.remove((*self.keys, self.tool))
        doc.set((*self.keys, self.tool), self.value)
        return doc.dumps()

    def unlink(self, text: str | None, rec: dict) -> str | None:
        if text is None:
            return None
        doc = JsonDoc(text)
        rules = self._rules(doc)
        if not isinstance(rules, dict) or rules.get(self.tool) != self.value:
            return text  # not Engram's value (a person changed it): theirs now
        was = rec.pop("was_string", None)
        if was is not None and rules == {"*": was, self.tool: self.value}:
            doc.replace(self.keys, was)
            return _finish(doc, rec)
        doc.remove(
            (*self.keys, self.tool), empty_inner=rec.get("inner", {}).get(_key(self.keys), "")
        )
        _prune(doc, rec)
        return _finish(doc, rec)

    def inspect(self, text: str | None) -> Inspection:
        if text is None:
            return Inspection()
        rules = self._rules(JsonDoc(text))
        if not isinstance(rules, dict) or self.tool not in rules:
            return Inspection(detail={"rules": rules})
        last = list(rules)[-1] == self.tool
        return Inspection(
            rules[self.tool] == self.value or rules[self.tool] in self.keep,
            stale=not last or rules[self.tool] not in (self.value, *self.keep),
            detail={"rules": rules},
        )


@dataclass
class JsonHooks(Target):
    """Command hooks in the nested shape shared by Claude Code, Gemini CLI and Codex:
    `hooks.<Event>[] = {matcher?, hooks: [{type: "command", command, ...}]}`."""

    path: Path
    host: str
    events: dict[str, str]  # host event name -> command
    extra: Callable[[str], dict[str, Any]] = lambda event: {}
    role: str = HOOKS
    label: str = "hooks"

    def _find(self, doc: JsonDoc, event: str) -> tuple[int, int] | None:
        groups = doc.get(("hooks", event))
        if not isinstance(groups, list):
            return None
        for gi, group in enumerate(groups):
            for hi, hook in enumerate(
                (group or {}).get("hooks", []) if isinstance(group, dict) else []
            ):
                if isinstance(hook, dict) and is_engram_hook(
                    str(hook.get("command", "")), self.host
                ):
                    return gi, hi
        return None

    def _hook(self, event: str, command: str) -> dict[str, Any]:
        return {"type": "command", "command": command, **self.extra(event)}

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        if text is None:
            rec["created"] = True
            hooks = {ev: [{"hooks": [self._hook(ev, cmd)]}] for ev, cmd in self.events.items()}
            return _json_new({"hooks": hooks})
        doc = JsonDoc(text)
        for event, command in self.events.items():
            found = self._find(doc, event)
            want = self._hook(event, command)
            if found is not None:
                gi, hi = found
                for k, v in want.items():
                    doc.set(("hooks", event, gi, "hooks", hi, k), v)  # type: ignore[arg-type]
                continue
            group = {"hooks": [want]}
            arr = doc.get(("hooks", event))
            if isinstance(arr, list):
                _before_insert(doc, rec, ("hooks", event, 0))
                doc.append(("hooks", event), group)
            elif arr is None:
                _before_insert(doc, rec, ("hooks", event))
                _remember(rec, [*doc.set(("hooks", event), [group]), ("hooks", event)])
            else:
                raise ConfigParseError(f"hooks.{event} in {self.path} is not a list")
        return doc.dumps()

    def unlink(self, text: str | None, rec: dict) -> str | None:
        if text is None:
            return None
        doc = JsonDoc(text)
        for event in self.events:
            found = self._find(doc, event)
            if found is None:
                continue
            gi, hi = found
            group = doc.get(("hooks", event, gi))
            inner = rec.get("inner", {})
            if len(group.get("hooks", [])) == 1:
                doc.remove(("hooks", event, gi), empty_inner=inner.get(_key(("hooks", event)), ""))
            else:
                doc.remove(("hooks", event, gi, "hooks", hi))
        _prune(doc, rec)
        return _finish(doc, rec)

    def inspect(self, text: str | None) -> Inspection:
        if text is None:
            return Inspection()
        doc = JsonDoc(text)
        found: dict[str, str] = {}
        for event in self.events:
            loc = self._find(doc, event)
            if loc is not None:
                found[event] = str(doc.get(("hooks", event, loc[0], "hooks", loc[1], "command")))
        stale = any(found.get(ev) != cmd for ev, cmd in self.events.items() if ev in found)
        missing = [ev for ev in self.events if ev not in found]
        first = next(iter(found.values()), None)
        return Inspection(
            bool(found),
            command=_split(first) if first else None,
            stale=stale or (bool(found) and bool(missing)),
            detail={"events": found, "missing": missing},
        )


@dataclass
class TextBlock(Target):
    """A delimited Engram block in a Markdown (or TOML) file a person may share with us.

    Several hosts can rely on one block (AGENTS.md serves Codex and OpenCode); the begin
    marker lists them and the block goes away with the last one.
    """

    path: Path
    host: str
    body: str
    style: BlockStyle = MARKDOWN
    role: str = INSTRUCTIONS
    label: str = "instructions"
    validate: Callable[[str], None] | None = None

    def _hosts(self, text: str) -> list[str]:
        found = find_block(text, self.style)
        if found is None:
            return []
        return [h for h in found.attrs.get("hosts", "").split(",") if h]

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        if text is None:
            rec["created"] = True
            text = ""
        if self.validate:
            self.validate(text)
        hosts = sorted({*self._hosts(text), self.host})
        new, added = upsert_block(text, self.style, self.body, {"hosts": ",".join(hosts)})
        if added:
            rec["eol_added"] = True
        if self.validate:
            self.validate(new)
        return new

    def unlink(self, text: str | None, rec: dict) -> str | None:
        if text is None or find_block(text, self.style) is None:
            return text
        hosts = [h for h in self._hosts(text) if h != self.host]
        if hosts:
            return upsert_block(text, self.style, self.body, {"hosts": ",".join(hosts)})[0]
        new = remove_block(text, self.style, added_final_newline=bool(rec.get("eol_added")))
        return _after_removal(new, rec)

    def inspect(self, text: str | None) -> Inspection:
        if text is None:
            return Inspection()
        found = find_block(text, self.style)
        if found is None or self.host not in self._hosts(text):
            return Inspection()
        body = found.body.replace("\r\n", "\n").rstrip("\n")
        return Inspection(
            True, stale=body != self.body.rstrip("\n"), detail={"hosts": self._hosts(text)}
        )


def toml_parse(text: str) -> Any:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        return tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigParseError(str(exc)) from exc
    except RecursionError:
        raise ConfigParseError("arrays or tables nested too deeply") from None


def _toml_check(text: str) -> None:
    toml_parse(text)


# Engram's TOML marker lines, wherever a host's rewrite left them (Codex keeps the end line
# as a comment of whichever table comes last and drops the begin line).
TOML_MARKER_RE = re.compile(
    r"^[ \t]*(?:" + re.escape(TOML.begin) + r"[^\n]*|" + re.escape(TOML.end) + r")[ \t]*\r?\n?",
    re.M,
)


def strip_toml_markers(text: str) -> str:
    return TOML_MARKER_RE.sub("", text)


def _cap_trailing_newlines(new: str, old: str) -> str:
    """Removing the last table leaves its leading blank line: end as the old text ended."""
    keep = len(old) - len(old.rstrip("\r\n"))
    body = new.rstrip("\r\n")
    return body + old[len(old) - keep :] if body else ""


def _server_command(table: Any) -> list[str]:
    if not isinstance(table, dict):
        return []
    args = table.get("args", [])
    return [str(table.get("command", "")), *[str(a) for a in args if isinstance(args, list)]]


@dataclass
class TomlServerBlock(TextBlock):
    """Codex's `[mcp_servers.engram]` in config.toml: a managed block as Engram writes it, and
    recognised by what it is (the `engram` table running engram-mcp) once Codex rewrote the
    file (`codex mcp add …` drops the begin marker and comments inside `mcp_servers`)."""

    style: BlockStyle = TOML
    role: str = REGISTRATION
    label: str = "MCP registration"
    validate: Callable[[str], None] | None = _toml_check

    # -- what is in the file

    def _block(self, text: str) -> Any:
        """The managed block, only when it still holds exactly Engram's table."""
        found = find_block(text, self.style)
        if found is None:
            return None
        try:
            body = toml_parse(found.body)
        except ConfigParseError:
            return None
        servers = body.get("mcp_servers")
        if (
            set(body) != {"mcp_servers"}
            or not isinstance(servers, dict)
            or set(servers) != {"engram"}
        ):
            return None
        return found

    @staticmethod
    def _table(doc: Any) -> Any:
        servers = doc.get("mcp_servers")
        return servers.get("engram") if isinstance(servers, dict) else None

    def _ours(self) -> tuple[str, list[str], str]:
        server = toml_parse(self.body)["mcp_servers"]["engram"]
        mode = server["tools"]["engram_commit"]["approval_mode"]
        return str(server["command"]), [str(a) for a in server["args"]], str(mode)

    def _kept_body(self, text: str | None) -> str:
        """This release's block, keeping server options a person added inside the old one."""
        found = self._block(text) if text else None
        if found is None:
            return self.body
        old = self._table(toml_parse(found.body))
        _, ours, _ = self._ours()
        kept = [o for o in person_options(_server_command(old)) if o not in ours]
        if not kept:
            return self.body
        line = f"args = {json.dumps(ours)}\n"
        return self.body.replace(line, f"args = {json.dumps([*ours, *kept])}\n", 1)

    def _refuse_inline(self, doc: Any) -> None:
        """An inline `mcp_servers = {…}` cannot be extended by a [mcp_servers.engram] table."""
        from tomlkit.items import InlineTable

        servers = doc.get("mcp_servers")
        if isinstance(servers, InlineTable):
            example = f"[mcp_servers.{next(iter(servers), 'name')}]"
            raise Conflict(
                f"{self.path} defines mcp_servers as an inline table, which TOML does not let "
                f"Engram extend; write each server as its own table (e.g. {example}), "
                "then link again"
            )

    # -- edits

    def _repin_in_place(self, text: str) -> str:
        """Re-pin Engram's table where the host left it; every other byte stays."""
        import tomlkit

        doc = toml_parse(text)
        table = self._table(doc)
        command, ours, mode = self._ours()
        kept = [o for o in person_options(_server_command(table)) if o not in ours]
        args = [*ours, *kept]
        if table.get("command") != command:
            table["command"] = command
        if (args or "args" in table) and list(table.get("args", [])) != args:
            table["args"] = args
        tools = table.get("tools")
        if not isinstance(tools, dict):
            tools = tomlkit.table(is_super_table=True)
            table.add("tools", tools)
        commit = tools.get("engram_commit")
        if not isinstance(commit, dict):
            commit = tomlkit.table()
            commit.add("approval_mode", mode)
            commit.add(tomlkit.nl())  # a blank line before the table that follows
            tools.add("engram_commit", commit)
        elif commit.get("approval_mode") != mode:
            commit["approval_mode"] = mode
        new = _cap_trailing_newlines(strip_toml_markers(tomlkit.dumps(doc)), text)
        _toml_check(new)
        return new

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        if text is None:
            return TextBlock.link(self, text, rec, force)
        doc = toml_parse(text)
        self._refuse_inline(doc)
        if self._block(text) is not None:
            return TextBlock.link(replace(self, body=self._kept_body(text)), text, rec, force)
        table = self._table(doc)
        if table is not None and runs_engram_mcp(_server_command(table)):
            return self._repin_in_place(text)
        if table is not None:
            if not force:
                raise Conflict(
                    f"{self.path} already defines [mcp_servers.engram] with a command that "
                    "does not run engram-mcp; rerun with --force to replace it"
                )
            del doc["mcp_servers"]["engram"]
            text = _cap_trailing_newlines(tomlkit_dumps(doc), text)
        return TextBlock.link(self, strip_toml_markers(text), rec, force)

    def unlink(self, text: str | None, rec: dict) -> str | None:
        if text is None:
            return None
        if self._block(text) is not None:
            return TextBlock.unlink(self, text, rec)
        doc = toml_parse(text)
        table = self._table(doc)
        if table is None or not runs_engram_mcp(_server_command(table)):
            return text  # somebody else's `engram` table (or none): never ours to remove
        del doc["mcp_servers"]["engram"]
        new = _cap_trailing_newlines(strip_toml_markers(tomlkit_dumps(doc)), text)
        _toml_check(new)
        return _after_removal(new, rec)

    def inspect(self, text: str | None) -> Inspection:
        if text is None:
            return Inspection()
        doc = toml_parse(text)
        table = self._table(doc)
        if table is None:
            return Inspection()
        command = _server_command(table)
        if not isinstance(table, dict) or not runs_engram_mcp(command):
            return Inspection(foreign=True, command=command)
        tools = table.get("tools")
        commit = tools.get("engram_commit") if isinstance(tools, dict) else None
        try:
            stale = self.link(text, {}, False) != text
        except (Conflict, ConfigParseError):
            stale = True
        return Inspection(
            True,
            command=command,
            stale=stale,
            detail={
                "approval_mode": commit.get("approval_mode") if isinstance(commit, dict) else None,
                "default_tools_approval_mode": table.get("default_tools_approval_mode"),
                "managed_block": self._block(text) is not None,
            },
        )


def tomlkit_dumps(doc: Any) -> str:
    import tomlkit

    return tomlkit.dumps(doc)


@dataclass
class GeneratedFile(Target):
    """A file Engram writes whole (a Cursor rule, a plugin manifest); `owned` recognises it."""

    path: Path
    content: str
    owned: Callable[[str], bool]
    role: str = INSTRUCTIONS
    label: str = "generated file"

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        if text is not None and not self.owned(text) and not force:
            raise Conflict(f"{self.path} exists and was not written by Engram; rerun with --force")
        if text is None:
            rec["created"] = True
        return self.content

    def unlink(self, text: str | None, rec: dict) -> str | None:
        if text is None or not self.owned(text):
            return text
        return None

    def inspect(self, text: str | None) -> Inspection:
        if text is None:
            return Inspection()
        if not self.owned(text):
            return Inspection(foreign=True)
        return Inspection(True, stale=text != self.content)


@dataclass
class Printed(Target):
    """A registration Engram cannot write (Claude Code's user scope): it prints the command."""

    command: str
    remove_command: str
    check_path: Path | None = None  # a file to read (never write) to see if it was run
    check_keys: tuple[str, ...] = ()
    role: str = REGISTRATION
    label: str = "MCP registration (printed)"
    path: Path | None = None

    def message(self) -> str:
        return self.command

    def inspect(self, text: str | None) -> Inspection:
        if self.check_path is None:
            return Inspection()
        try:
            data = parse_json(read_plain(self.check_path), self.check_path)
        except (OSError, ValueError):
            return Inspection()
        entry: Any = data
        for k in self.check_keys:
            entry = entry.get(k) if isinstance(entry, dict) else None
        if not isinstance(entry, dict):
            return Inspection()
        command = [str(entry.get("command", "")), *[str(a) for a in entry.get("args", [])]]
        if not runs_engram_mcp(command):
            return Inspection(foreign=True, command=command)
        return Inspection(True, command=command, detail=entry)


@dataclass
class Skipped(Target):
    """Something this host cannot have in this scope, with the reason (R-REG-2)."""

    reason: str
    role: str = REGISTRATION
    label: str = "skipped"
    path: Path | None = None

    def message(self) -> str:
        return self.reason


@dataclass
class Notice(Target):
    """A step the host asks of the person (trust a folder, approve a server), said on link.

    `text` reads the host's own state and returns None once the step is done.
    """

    text: Callable[[], str | None]
    role: str = NOTE
    label: str = "next step"
    path: Path | None = None

    def message(self) -> str:
        try:
            return self.text() or ""
        except (OSError, ValueError):
            return ""
