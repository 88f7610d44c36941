"""What Engram manages inside a host's files, one small class per kind of edit.

Each target transforms the text of one file: `link` adds or refreshes Engram's bytes,
`unlink` removes exactly them, `inspect` reports what is there (for `link list` and
`doctor`). `rec` is the file's record in the link state: what Engram created (the file,
containers, a final newline) so that unlink can give back the identical bytes.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

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
    role: str = REGISTRATION
    label: str = "MCP registration"

    def _doc(self, text: str | None) -> JsonDoc:
        return JsonDoc(text or "")

    def _wanted(self, existing: dict) -> dict[str, Any]:
        """This release's entry, still carrying the options a person added to the old one."""
        ours = self.entry[self.options_key]
        kept = [o for o in person_options(self.command_of(existing)) if o not in ours]
        return {**self.entry, self.options_key: [*ours, *kept]} if kept else self.entry

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
        for k, v in self._wanted(existing).items():  # re-pin; keep what a person added
            doc.set((*self.keys, k), v)
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
        stale = any(existing.get(k) != v for k, v in self._wanted(existing).items())
        return Inspection(True, command=command, stale=stale, detail=dict(existing))


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
            command=first.split() if first else None,
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
        rec.pop("eol_added", None)
        if rec.get("created") and not new.strip():
            return None
        return new

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


def _toml_check(text: str) -> None:
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    try:
        tomlkit.parse(text)
    except TOMLKitError as exc:
        raise ConfigParseError(str(exc)) from exc


@dataclass
class TomlServerBlock(TextBlock):
    """Codex's `[mcp_servers.engram]` as a managed block in config.toml (style kept by tomlkit)."""

    style: BlockStyle = TOML
    role: str = REGISTRATION
    label: str = "MCP registration"
    validate: Callable[[str], None] | None = _toml_check

    def _kept_body(self, text: str | None) -> str:
        """This release's block, keeping server options a person added inside the old one."""
        import tomlkit
        from tomlkit.exceptions import TOMLKitError

        found = find_block(text, self.style) if text else None
        if found is None:
            return self.body
        try:
            old = tomlkit.parse(found.body).get("mcp_servers", {}).get("engram", {})
            ours = [str(a) for a in tomlkit.parse(self.body)["mcp_servers"]["engram"]["args"]]
            command = [str(old.get("command", "")), *[str(a) for a in old.get("args", [])]]
        except (TOMLKitError, AttributeError, TypeError):
            return self.body
        kept = [o for o in person_options(command) if o not in ours]
        if not kept:
            return self.body
        line = f"args = {json.dumps(ours)}\n"
        return self.body.replace(line, f"args = {json.dumps([*ours, *kept])}\n", 1)

    def _user_table(self, text: str) -> bool:
        import tomlkit

        outside = remove_block(text, self.style)
        servers = tomlkit.parse(outside).get("mcp_servers")
        return isinstance(servers, dict) and "engram" in servers

    def _refuse_inline(self, text: str) -> None:
        """An inline `mcp_servers = {…}` cannot be extended by a [mcp_servers.engram] table."""
        import tomlkit
        from tomlkit.items import InlineTable

        servers = tomlkit.parse(remove_block(text, self.style)).get("mcp_servers")
        if isinstance(servers, InlineTable):
            example = f"[mcp_servers.{next(iter(servers), 'name')}]"
            raise Conflict(
                f"{self.path} defines mcp_servers as an inline table, which TOML does not let "
                f"Engram extend; write each server as its own table (e.g. {example}), "
                "then link again"
            )

    def link(self, text: str | None, rec: dict, force: bool) -> str | None:
        if text is not None:
            _toml_check(text)
            self._refuse_inline(text)
            if self._user_table(text):
                if not force:
                    raise Conflict(
                        f"{self.path} already defines [mcp_servers.engram] outside Engram's "
                        "managed block; rerun with --force to replace it"
                    )
                import tomlkit

                doc = tomlkit.parse(text)
                del doc["mcp_servers"]["engram"]
                text = tomlkit.dumps(doc)
        return TextBlock.link(replace(self, body=self._kept_body(text)), text, rec, force)

    def inspect(self, text: str | None) -> Inspection:
        base = super().inspect(text)
        if not base.present or text is None:
            if text is not None and not base.present:
                with contextlib.suppress(Exception):  # an unparsable file is reported elsewhere
                    base.foreign = self._user_table(text)
            return base
        import tomlkit

        found = find_block(text, self.style)
        assert found is not None
        base.stale = found.body.replace("\r\n", "\n").rstrip("\n") != (
            self._kept_body(text).rstrip("\n")
        )
        server = tomlkit.parse(found.body).get("mcp_servers", {}).get("engram", {})
        base.command = [str(server.get("command", "")), *[str(a) for a in server.get("args", [])]]
        approval = server.get("tools", {}).get("engram_commit", {}).get("approval_mode")
        base.detail = {"approval_mode": approval}
        return base


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
            data = json.loads(self.check_path.read_text(encoding="utf-8"))
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
