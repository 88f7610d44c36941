"""`engram verify`: compare memory files with hashes.json, and accept reviewed changes."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from engram.core.errors import ContainmentError, UsageError
from engram.core.memory import Memory, MemoryParseError
from engram.core.results import Diagnostic, Result
from engram.core.safety.screen import (
    decode_findings,
    many_memory_findings,
    map_screening,
    memory_findings,
    shown_file_name,
)
from engram.core.store.bounded import BadFileError
from engram.core.store.files import (
    LAYOUT_DIRS,
    MANAGED_DIRS,
    MEMORY_DIRS,
    atomic_write,
    batch_reads,
    file_hash,
    file_stat,
    link_findings,
    read_bytes,
    read_json,
    root_lock,
    scan_files,
)
from engram.core.store.index import open_index
from engram.core.store.journal import recover_interrupted
from engram.core.store.layout import Root, Roots
from engram.core.store.manifest import current_hashes, read_manifest, write_manifest
from engram.core.store.memoryfiles import (
    bad_names,
    file_limits,
    memory_from_bytes,
    read_memory_file,
    too_large,
)
from engram.core.store.reviews import is_reviewed, record_reviews
from engram.core.store.userkey import user_signing_key

LAST_VERIFY_FILE = "last-verify.json"
SCREENED_FILE = "screened.json"  # file hash -> stored findings, signed with the user's key


def check_root(root: Root) -> dict[str, Any]:
    manifest = read_manifest(root)
    key = user_signing_key()
    stored = _read_screened(root, key)
    facts = _file_facts(root, stored.files, stored.entries)
    managed = {rel for rel in facts if _folder(rel) in MANAGED_DIRS}
    current = {rel: f.digest for rel, f in facts.items() if rel in managed}
    invalid = [
        {"path": rel, "reason": f.error[0], "code": f.error[1]}
        for rel, f in facts.items()
        if rel in managed and f.error is not None
    ]
    content = content_report(root, facts, stored, key)
    return {
        "scope": root.scope,
        "path": str(root.path),
        "modified": sorted(r for r in current if r in manifest and manifest[r] != current[r]),
        "missing": sorted(r for r in manifest if r not in current),
        "unmanaged": sorted(r for r in current if r not in manifest),
        "invalid": invalid,
        **content,
        "links": link_report(root),
    }


class FileFacts(NamedTuple):
    """What verify knows of one file version: its hash and whether it parses."""

    stamp: tuple[int, int, int]  # (mtime_ns, ctime_ns, size) when it was read
    digest: str
    error: tuple[str, str] | None  # (reason, code) when it does not parse
    flag: str | None = None  # its findings (`Findings.encode`), when screened by this run

    def encode(self) -> list[Any]:
        return [*self.stamp, self.digest, *(self.error or ("", ""))]

    @classmethod
    def decode(cls, raw: Any) -> FileFacts | None:
        if not (isinstance(raw, list) and len(raw) == 6):
            return None
        mtime, ctime, size, digest, reason, code = raw
        if not all(isinstance(x, int) for x in (mtime, ctime, size)):
            return None
        if not all(isinstance(x, str) for x in (digest, reason, code)):
            return None
        return cls((mtime, ctime, size), digest, (reason, code) if reason else None)


def _file_facts(
    root: Root, known: dict[str, FileFacts], screened: dict[str, str]
) -> dict[str, FileFacts]:
    """Hash and parse status of every memory file, and the findings of each file version
    not screened before; a file whose stat is unchanged since a verify this user signed is
    not read again (a second verify is a walk over the stats). New versions are parsed
    and screened together, in worker processes when there are many."""
    limit = file_limits(root).file_bytes
    out: dict[str, FileFacts] = {}
    changed: list[tuple[str, Path, tuple[int, int, int]]] = []
    new: list[tuple[str, tuple[int, int, int], str]] = []

    def jobs() -> Iterator[tuple[Root, str, bytes, bool]]:
        """Each changed file, read as the workers ask for more (reading and screening
        overlap)."""
        for rel, path, stamp in changed:
            try:
                raw = read_bytes(root, path, limit)
            except BadFileError as exc:  # it grew past the limit since the walk
                out[rel] = FileFacts(stamp, f"unread:{stamp[2]}", (str(exc), "memory.too_large"))
                continue
            except OSError:
                del out[rel]  # gone or unreadable since the walk
                continue
            digest = file_hash(raw)
            out[rel] = FileFacts(stamp, digest, None)  # completed below
            new.append((rel, stamp, digest))
            yield root, rel, raw, _folder(rel) in MEMORY_DIRS and digest not in screened

    with batch_reads():
        for fs in scan_files(root, LAYOUT_DIRS):
            stamp = (fs.mtime_ns, fs.ctime_ns, fs.size)
            cached = known.get(fs.rel)
            if cached is not None and cached.stamp == stamp:
                out[fs.rel] = cached
                continue
            if fs.size > limit:  # never read; its size stands in for its hash
                reason = str(too_large(fs.size, limit))
                out[fs.rel] = FileFacts(stamp, f"unread:{fs.size}", (reason, "memory.too_large"))
                continue
            out[fs.rel] = FileFacts(stamp, "", None)  # keeps the walk's order; read below
            changed.append((fs.rel, fs.path, stamp))
        found = map_screening(_parse_and_screen, jobs(), count=len(changed))
    for (rel, stamp, digest), (error, flag) in zip(new, found, strict=True):
        out[rel] = FileFacts(stamp, digest, error, flag)
    return out


def _parse_and_screen(
    job: tuple[Root, str, bytes, bool],
) -> tuple[tuple[str, str] | None, str | None]:
    """(parse error, None) or (None, findings) of one file version; findings only for a
    memory a load would show (`screen`)."""
    root, rel, raw, screen = job
    try:
        mem = memory_from_bytes(root, rel, raw)
    except MemoryParseError as exc:
        return (str(exc), exc.code or ""), None
    return None, (memory_findings(mem).encode() if screen else None)


def link_report(root: Root) -> list[dict[str, str]]:
    """Symbolic links in the root (never followed, never loaded), each with its stable code."""

    return [{"path": f.rel, "code": f.code, "reason": f.message} for f in link_findings(root)]


FLAG_HINT = {
    "memory.unsafe": "it is withheld from the agent",
    "memory.secret": "it is redacted before the agent sees it",
}


def _accept_hint(rel: str) -> str:
    if shown_file_name(rel) != rel:
        return "rename the file: its name reads like an instruction aimed at the agent"
    return (
        f"once you have read it, keep it as written (for you) with `engram verify --accept {rel}`"
    )


class Screened(NamedTuple):
    """What this user's last verify stored: findings per file version, facts per file."""

    entries: dict[str, str]  # file hash -> encoded findings
    files: dict[str, FileFacts]  # path -> what it was when read


def _screened_mac(key: bytes, entries: dict[str, str], files: dict[str, Any]) -> str:
    body = json.dumps([entries, files], sort_keys=True, separators=(",", ":")).encode("utf-8")
    return hmac.new(key, b"screened\0" + body, hashlib.sha256).hexdigest()


def _read_screened(root: Root, key: bytes | None) -> Screened:
    """Stored findings and file facts; only ones this user's key signed (a clone may ship
    the cache folder, and a forged 'clean' must not hide a flagged file from verify)."""
    empty = Screened({}, {})
    if key is None:
        return empty
    try:
        data = read_json(root, root.cache_dir / SCREENED_FILE)
    except (OSError, ValueError):
        return empty
    if not isinstance(data, dict) or not isinstance(data.get("entries"), dict):
        return empty
    entries = {k: v for k, v in data["entries"].items() if isinstance(v, str)}
    raw_files = data.get("files") if isinstance(data.get("files"), dict) else {}
    mac = data.get("mac")
    if not isinstance(mac, str) or not hmac.compare_digest(
        mac, _screened_mac(key, entries, raw_files)
    ):
        return empty
    files = {}
    for rel, raw in raw_files.items():
        facts = FileFacts.decode(raw)
        if facts is not None:
            files[rel] = facts
    return Screened(entries, files)


def _write_screened(
    root: Root, key: bytes | None, entries: dict[str, str], files: dict[str, FileFacts]
) -> None:
    if key is None:
        return
    encoded = {rel: f.encode() for rel, f in files.items()}
    with contextlib.suppress(OSError):
        atomic_write(
            root.cache_dir / SCREENED_FILE,
            json.dumps(
                {"entries": entries, "files": encoded, "mac": _screened_mac(key, entries, encoded)}
            ),
            root=root,
        )


def _folder(rel: str) -> str:
    return rel.split("/", 1)[0]


def content_report(
    root: Root, facts: dict[str, FileFacts], stored: Screened, key: bytes | None
) -> dict[str, list[dict[str, str]]]:
    """Loaded memories whose text is withheld (reads like an instruction) or holds secrets.

    Files on disk may come from anywhere (a clone, a hand edit), so verify names each one
    with a stable code, as the read path treats it. A file this user accepted as written
    (`engram verify --accept FILE`) is listed under `reviewed`, not as a problem. Findings
    are stored per file version, so a second verify screens only what changed.
    """

    flagged: list[dict[str, str]] = [
        {
            "path": shown,
            "code": "memory.bad_name",
            "reason": f"is never loaded: its {problem}; rename it to printable UTF-8",
        }
        for shown, problem in bad_names(root, MEMORY_DIRS)
    ]
    reviewed: list[dict[str, str]] = []
    seen: dict[str, str] = {}
    # the memory files of the walk `_file_facts` made (in its order), those that parse
    files = [rel for rel, f in facts.items() if _folder(rel) in MEMORY_DIRS and f.error is None]
    screened = {f.digest: f.flag for f in facts.values() if f.flag is not None}
    todo: dict[str, Memory] = {}  # versions whose stat was known but findings were not
    for rel in files:
        known = facts[rel]
        if known.digest in stored.entries or known.digest in screened or known.digest in todo:
            continue
        try:
            todo[known.digest], _ = read_memory_file(root, rel)
        except (MemoryParseError, OSError):
            continue
    screened |= {
        digest: found.encode()
        for digest, found in zip(todo, many_memory_findings(list(todo.values())), strict=True)
    }
    for rel in files:
        digest = facts[rel].digest
        if digest in stored.entries:
            flag = stored.entries[digest]
        elif digest in screened:
            flag = screened[digest]
        else:
            continue  # unreadable since the walk
        seen[digest] = flag
        found = decode_findings(flag)
        if not (found.unsafe or found.secrets):
            continue
        if is_reviewed(root.path / rel, digest):
            reviewed.append({"path": rel, "code": "memory.reviewed",
                             "reason": "was read and kept as written by you; it loads as written"})  # fmt: skip
            continue
        if found.unsafe:
            what = found.unsafe.replace(": ", " reads like an instruction aimed at the agent: ", 1)
            flagged.append(
                {
                    "path": rel,
                    "code": "memory.unsafe",
                    "reason": f"{what}; {FLAG_HINT['memory.unsafe']}; rewrite it, or "
                    + _accept_hint(rel),
                }
            )
        if found.secrets:
            flagged.append(
                {
                    "path": rel,
                    "code": "memory.secret",
                    "reason": "holds what looks like a secret or personal data "
                    f"({', '.join(found.secrets)}); {FLAG_HINT['memory.secret']}; "
                    f"remove it, or {_accept_hint(rel)}",
                }
            )
    if seen != stored.entries or facts != stored.files:
        _write_screened(root, key, seen, facts)
    return {"flagged": flagged, "reviewed": reviewed}


def _resolve_accept_path(roots: Roots, raw: str) -> tuple[Root, str]:
    if ".." in Path(raw).parts:
        raise UsageError(f"{raw}: '..' is not allowed in a path to accept (name a file in a root)")
    p = Path(raw)
    candidates = [p if p.is_absolute() else Path.cwd() / p]
    for cand in candidates:
        cand = cand.resolve()
        for root in roots.all:
            try:
                rel = cand.relative_to(root.path.resolve()).as_posix()
            except ValueError:
                continue
            return root, rel
    for root in roots.all:
        rel = raw.strip("/")
        try:  # the store's own walk: no folder or file on the way may be a link
            file_stat(root, root.path / rel)
        except ContainmentError as exc:
            raise UsageError(
                f"{raw} is or passes through a symbolic link: Engram never reads or records a "
                f"linked memory file ({exc.message}); replace the link with the file itself "
                "(or remove it), then accept it"
            ) from exc
        except OSError:
            pass  # absent (a missing file may still be recorded) or unreadable: decided below
        if (root.path / rel).is_file() or rel in read_manifest(root):
            return root, rel
        for sub in MANAGED_DIRS:
            if (root.path / sub / f"{raw}.md").is_file():
                return root, f"{sub}/{raw}.md"
    raise UsageError(
        f"{raw}: not a memory file or id in any root (give a path like rules/x.md, a file path, or an id)"
    )


def _accept(roots: Roots, paths: list[str] | None) -> list[str]:
    accepted: list[str] = []
    if paths is None:
        for root in roots.all:
            with root_lock(root):
                current = current_hashes(root)
                old = read_manifest(root)
                if current != old:
                    write_manifest(root, current)
                accepted += [
                    f"{root.scope}:{r}"
                    for r in sorted(set(current) | set(old))
                    if current.get(r) != old.get(r)
                ]
        return accepted
    targets = [_resolve_accept_path(roots, p) for p in paths]  # validate all before writing
    for root in {t[0] for t in targets}:
        with root_lock(root):
            files = read_manifest(root)
            current = current_hashes(root)
            for troot, rel in targets:
                if troot != root:
                    continue
                if rel in current:
                    files[rel] = current[rel]
                else:
                    files.pop(rel, None)
                accepted.append(f"{root.scope}:{rel}")
            write_manifest(root, files)
    # A file named here was read by this person: its flagged text loads as written for
    # them (this version only; the record is theirs, outside the repository).
    record_reviews(_named_versions(targets))
    return accepted


def _named_versions(targets: list[tuple[Root, str]]) -> list[tuple[Path, str]]:
    out = []
    for root, rel in targets:
        try:
            _, raw = read_memory_file(root, rel)
        except (MemoryParseError, OSError):
            continue  # absent or unreadable: nothing to show as written
        out.append((root.path / rel, file_hash(raw)))
    return out


def duplicate_ids(roots: Roots) -> list[list[dict[str, str]]]:
    """Per root, the files that give an id another file of the same root has: a load shows
    one of them under that id, so a second file can stand in for a memory people trust."""
    try:
        index = open_index(roots, refresh=False)
        if index.conn.execute("SELECT 1 FROM memories LIMIT 1").fetchone() is None:
            return [[] for _ in roots.all]  # no index yet: building one is a load's work
        index.refresh()  # only what changed since the last load is read again
        rows = index.conn.execute(
            "SELECT scope, id, group_concat(rel, char(0)) FROM memories GROUP BY scope, id "
            "HAVING count(*) > 1"
        ).fetchall()
    except (sqlite3.Error, OSError):
        return [[] for _ in roots.all]
    by_scope: dict[str, list[dict[str, str]]] = {}
    for scope, mid, rels in rows:
        files = sorted(rels.split("\0"))
        for rel in files:
            others = ", ".join(shown_file_name(o) for o in files if o != rel)
            by_scope.setdefault(scope, []).append(
                {
                    "path": rel,
                    "code": "memory.duplicate_id",
                    "reason": f"gives the id {mid!r}, which {others} also gives; a load shows one "
                    "of them under that id: give each memory its own id",
                }
            )
    return [by_scope.get(r.scope, []) for r in roots.all]


def verify_roots(
    roots: Roots, *, accept: list[str] | None = None, accept_all: bool = False
) -> Result:
    roots.primary  # noqa: B018 - clear error when no root exists

    repaired = recover_interrupted(roots)  # a commit killed half-way is finished first
    accepted: list[str] = []
    if accept_all or accept:
        accepted = _accept(roots, None if accept_all else accept)
    reports = [check_root(r) for r in roots.all]
    for r, dupes in zip(reports, duplicate_ids(roots), strict=True):
        r["flagged"].extend(dupes)
    problems = sum(
        len(r["modified"])
        + len(r["missing"])
        + len(r["unmanaged"])
        + len(r["invalid"])
        + len(r["links"])
        + len(r["flagged"])
        for r in reports
    )
    lines: list[str] = []
    finished = [r for r in repaired if r in ("workspace", "global")]  # else: what was set aside
    if finished:
        lines.append("Finished an interrupted commit in: " + ", ".join(finished))
    lines.extend(r for r in repaired if r not in finished)
    if accepted:
        lines.append(f"Accepted {len(accepted)} file(s): " + ", ".join(accepted))
    if accept_all and any(r["flagged"] for r in reports):
        lines.append(
            "Flagged files are kept as written only when you name them, one by one, after "
            "reading them: `engram verify --accept FILE` (the hashes of all files were recorded)."
        )
    for r in reports:  # a file whose name reads like an instruction is not named
        for kind in ("modified", "missing", "unmanaged"):
            r[kind] = [shown_file_name(rel) for rel in r[kind]]
        for entry in (*r["invalid"], *r["flagged"], *r["reviewed"]):
            entry["path"] = shown_file_name(entry["path"])
    for r in reports:
        head = f"{r['scope']} root {r['path']}:"
        issues = []
        for kind in ("modified", "missing", "unmanaged"):
            for rel in r[kind]:
                issues.append(f"  {kind}: {rel}")
        for bad in r["invalid"]:
            issues.append(f"  invalid: {bad['path']}: {bad['reason']}")
        for bad in r["links"]:
            issues.append(f"  {bad['code']}: {bad['reason']}")
        for bad in r["flagged"]:
            issues.append(f"  {bad['code']}: {bad['path']} {bad['reason']}")
        lines.append(head + (" ok" if not issues else ""))
        lines.extend(issues)
        lines.extend(f"  reviewed: {g['path']} {g['reason']}" for g in r["reviewed"])
    if problems:
        lines.extend(_summary(reports, problems))
    result = Result(text="\n".join(lines), ok=problems == 0)
    result.data = {
        "ok": problems == 0,
        "problems": problems,
        "accepted": accepted,
        "roots": reports,
    }
    for r in reports:
        for kind in ("modified", "missing", "unmanaged"):
            for rel in r[kind]:
                result.warn(f"manifest.{kind}", f"{r['scope']}: {rel} is {kind}", rel)
        for bad in r["invalid"]:
            result.diagnostics.append(
                Diagnostic(
                    "error",
                    bad.get("code") or "memory.parse_error",
                    f"{r['scope']}: {bad['path']}: {bad['reason']}",
                    bad["path"],
                )
            )
        for bad in r["flagged"]:
            result.warn(bad["code"], f"{r['scope']}: {bad['path']} {bad['reason']}", bad["path"])
        for bad in r["links"]:
            result.warn(bad["code"], f"{r['scope']}: {bad['reason']}", bad["path"])
    _remember(roots, result)
    return result


def _summary(reports: list[dict[str, Any]], problems: int) -> list[str]:
    """What to do about the problems: a file that cannot be read is fixed by editing it
    (recording its hash would not make it readable); the others are reviewed and accepted."""
    invalid = sum(len(r["invalid"]) for r in reports)
    links = sum(len(r["links"]) for r in reports)
    if links and links == problems:  # a link is removed or replaced, never recorded
        return [f"{problems} problem(s): the links and special files named above are never "
                "followed or read; remove them or replace each with the real file or folder, "
                "then run `engram verify` again."]  # fmt: skip
    if not invalid:
        return [
            f"{problems} problem(s). Review the files, then record them with "
            "`engram verify --accept [PATH…]`."
        ]
    both = {(r["scope"], b["path"]) for r in reports for b in r["invalid"]}
    others = problems - invalid
    others -= sum(1 for r in reports for rel in r["unmanaged"] if (r["scope"], rel) in both)
    out = [
        f"{problems} problem(s). {invalid} file(s) cannot be read, for the reason on its "
        "line: edit the file to fix it (a memory starts with a front matter between '---' "
        "lines naming at least `id:` (a slug) and `type:` (rule, skill or knowledge); see "
        '"What a memory looks like" in the README), or move it out of the memory folder; '
        "then run `engram verify` again "
        "(`--accept` only records hashes, it cannot make a file readable)."
    ]
    if others > 0:
        out.append(
            "Review the other files, then record them with `engram verify --accept [PATH…]`."
        )
    return out


def _remember(roots: Roots, result: Result) -> None:
    with contextlib.suppress(OSError):
        atomic_write(
            roots.primary.cache_dir / LAST_VERIFY_FILE,
            json.dumps(
                {
                    "at": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "ok": result.ok,
                    "problems": result.data["problems"],
                }
            ),
            root=roots.primary,
        )


def last_verify(roots: Roots) -> dict[str, Any] | None:
    try:
        found = read_json(roots.primary, roots.primary.cache_dir / LAST_VERIFY_FILE)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None
