"""Import each real instruction file under tests/importers/fixtures/real and score it.

Per file: memories written (and the expected range), expected passages missing or
altered, navigation written as memory, memories shorter than a sentence, code spans
not kept byte for byte, and what a second import proposes. Approves everything, and
keeps every possible duplicate as new (the person's choice a big import needs).

    python tests/importers/real_scoring.py [NAME ...] [--show]

`tests/importers/test_real_files.py` holds every file to these figures.
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

from engram.core import api
from engram.core.memory import parse_memory
from engram.core.store.roots import create_layout, resolve_roots
from engram.importers.propose import ImportRequest, propose_import

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "real"
CODE_SPAN = re.compile(r"`[^`\n]+`")


def _flat(text: str) -> str:
    return " ".join(text.split())


def import_fixture(name: str, work: Path) -> dict:
    src = FIXTURES / name
    expected = json.loads((src / "expected.json").read_text())
    project = work / name
    shutil.copytree(src, project, ignore=shutil.ignore_patterns("expected.json"))
    (project / ".git").mkdir()
    create_layout(project / ".agents" / ".engram")
    roots = resolve_roots(project)
    req = ImportRequest(paths=[expected["file"]])
    rounds = 0
    while True:
        result = propose_import(roots, req)
        token = result.data.get("approval_token")
        if not token:
            break
        rounds += 1
        choices = {
            c["number"]: "new"
            for c in result.data["candidates"]
            if str(c.get("deferred_reason") or "").startswith("possible duplicate of ")
        }
        api.commit_choosing(roots, token, "all", choices)
        if rounds > 10:
            break
    again = propose_import(roots, req)
    mems = [
        parse_memory(p.read_text())
        for p in (project / ".agents/.engram").rglob("*.md")
        if "archive" not in p.parts
    ]
    contents = [_flat(m.content.replace("\n- ", "\n")) for m in mems]
    raw = [m.content for m in mems]
    joined = " \n ".join(contents)
    source = (project / expected["file"]).read_text()
    missing = []
    for v in expected["verbatim"]:
        want = _flat(v.removeprefix("JOINED:"))
        if want not in joined and want not in _flat(" ".join(raw)):
            missing.append(v)
    # navigation or a preamble made a memory of its own (a table's delimiter row inside the
    # table it belongs to is the table as written, not a memory)
    navigation = [
        n
        for n in expected["not_memories"]
        if any(c.startswith(_flat(n)) and len(c) < 1.5 * len(_flat(n)) + 20 for c in contents)
    ]
    short = [c for c in contents if len(c) < 25 or len(c.split()) < 4]
    spans_in_source = set(CODE_SPAN.findall(source))
    broken = [s for m in raw for s in CODE_SPAN.findall(m) if s not in spans_in_source]
    lo, hi = expected["memories"]
    return {
        "name": name,
        "memories": len(mems),
        "range": [lo, hi],
        "in_range": lo <= len(mems) <= hi,
        "rounds": rounds,
        "missing": missing,
        "navigation": navigation,
        "short": short,
        "broken_code": broken,
        "second_import_proposes": bool(again.data.get("approval_token")),
        "ids_numbered": [m.id for m in mems if re.search(r"-\d+$", m.id)],
    }


def main(argv: list[str]) -> int:
    show = "--show" in argv
    names = [a for a in argv if not a.startswith("--")] or sorted(
        p.name for p in FIXTURES.iterdir() if (p / "expected.json").is_file()
    )
    totals = {"files": 0, "in_range": 0, "missing": 0, "verbatim": 0, "short": 0, "broken": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            r = import_fixture(name, Path(tmp))
            exp = json.loads((FIXTURES / name / "expected.json").read_text())
            totals["files"] += 1
            totals["in_range"] += r["in_range"]
            totals["missing"] += len(r["missing"])
            totals["verbatim"] += len(exp["verbatim"])
            totals["short"] += len(r["short"])
            totals["broken"] += len(r["broken_code"])
            flag = "ok " if r["in_range"] and not r["missing"] and not r["broken_code"] else "BAD"
            print(
                f"{flag} {name:36} {r['memories']:4} in {r['range']} rounds={r['rounds']} "
                f"missing={len(r['missing'])}/{len(exp['verbatim'])} nav={len(r['navigation'])} "
                f"short={len(r['short'])} code={len(r['broken_code'])} "
                f"again={'yes' if r['second_import_proposes'] else 'no'} "
                f"numbered={len(r['ids_numbered'])}"
            )
            if show:
                for key in ("missing", "navigation", "short", "broken_code", "ids_numbered"):
                    for item in r[key]:
                        print(f"      {key}: {item[:160]!r}")
    print(json.dumps(totals))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
