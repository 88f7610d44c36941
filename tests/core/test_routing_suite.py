"""The labelled routing suite: the fixture is what it claims to be, and the router passes it.

The suite fails when must-load recall drops under 0.95 or any forbidden memory loads; the
failure message lists every problem case with what loaded instead.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engram.core.benchmark import MIN_RECALL, read_cases, run_routing_benchmark
from engram.core.config import KEYS
from engram.core.memory import parse_memory
from engram.core.roots import Root
from engram.core.store import MEMORY_DIRS, load_memories

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
CASES = FIXTURES / "routing_cases.json"
ROOT = FIXTURES / "routing_workspace" / ".agents" / ".engram"


@pytest.fixture(scope="module")
def memories() -> dict:
    mems, errors = load_memories(Root(ROOT, "workspace"), (*MEMORY_DIRS, "archive"))
    assert errors == []
    return {m.id: m for m in mems}


def test_the_workspace_is_large_varied_and_parseable(memories: dict) -> None:
    files = [p for p in ROOT.rglob("*.md")]
    assert len(files) >= 150 and len(memories) == len(files)
    types = Counter(m.type for m in memories.values())
    assert min(types[t] for t in ("rule", "skill", "knowledge")) >= 20
    topics = {m.id.split("-")[0] for m in memories.values()}
    assert len(topics) >= 15
    # depends_on chains resolve, and at least one goes two levels deep
    deps = {mid: m.depends_on for mid, m in memories.items() if m.depends_on}
    assert len(deps) >= 15 and all(d in memories for ds in deps.values() for d in ds)
    assert any(memories[d].depends_on for ds in deps.values() for d in ds)
    assert sum(1 for m in memories.values() if m.role) >= 10
    assert sum(1 for m in memories.values() if m.triggers) >= 20


def test_the_workspace_holds_hand_written_oddities(memories: dict) -> None:
    raw = {p.stem: p.read_bytes() for p in ROOT.rglob("*.md")}
    assert any(b"\r\n" in b for b in raw.values()), "a CRLF file"
    assert any(b.startswith(b"\xef\xbb\xbf") for b in raw.values()), "a file with a BOM"
    assert any(b"\ntype: workflow\n" in b for b in raw.values()), "the workflow alias"
    assert any(b"schema_version" not in b for b in raw.values()), "missing optional keys"
    for stem, data in raw.items():  # every file parses on its own, whatever its bytes
        assert parse_memory(data.decode("utf-8")).id == stem
    expired = [m for m in memories.values() if m.is_working and m.expired()]
    valid_notes = [m for m in memories.values() if m.is_working and not m.expired()]
    assert len(expired) >= 3 and valid_notes
    assert len(list((ROOT / "archive").glob("*.md"))) >= 3
    assert (ROOT / ".engramignore").read_text().count("draft-") == 1


def test_the_cases_cover_what_the_router_must_get_right(memories: dict) -> None:
    _, cases = read_cases(CASES)
    assert len(cases) >= 60
    assert all(i in memories for c in cases for i in (*c["must"], *c["must_not"]))
    expired = {mid for mid, m in memories.items() if m.is_working and m.expired()}
    archived = {p.stem for p in (ROOT / "archive").glob("*.md")}
    role_bound = {mid for mid, m in memories.items() if m.role}
    forbidden = {i for c in cases for i in c["must_not"]}
    assert expired <= forbidden and archived <= forbidden and "draft-graphql-gateway" in forbidden
    # a role-restricted memory is forbidden without its role and required with it
    with_role = {i for c in cases if c["roles"] for i in c["must"] if i in role_bound}
    without_role = {i for c in cases if not c["roles"] for i in c["must_not"] if i in role_bound}
    assert len(with_role & without_role) >= 5
    # cases that need a prerequisite the task does not mention
    needs_prereq = [
        c for c in cases if any(d in c["must"] for i in c["must"] for d in memories[i].depends_on)
    ]
    assert len(needs_prereq) >= 10
    generic = [c for c in cases if c["name"].startswith("generic-")]
    assert generic and all(not c["must"] and len(c["must_not"]) >= 10 for c in generic)
    assert len({c["task"] for c in cases}) >= len(cases) - 15  # pairs differ only in roles


def test_the_router_passes_the_routing_suite() -> None:
    res = run_routing_benchmark(CASES)
    d = res.data
    assert d["recall"] >= MIN_RECALL and not d["forbidden_loaded"], "\n" + res.text
    assert res.ok
    # generic memory words alone never route to everything
    for r in d["results"]:
        if r["name"].startswith("generic-"):
            assert len(r["loaded"]) <= 3, r
    assert d["tokens"]["max"] <= KEYS["load.budget_tokens"].default  # packs fit the budget


CASES_2 = FIXTURES / "routing_cases_2.json"


# Two more suites were written without looking at the router and are kept as held-out
# checks: their labels are never changed to fit. Lexical routing does not reach the first
# suite's bar there (paraphrases with no shared word, twins in another language or platform,
# strict labels), so these tests guard against regressions at the level measured when they
# were wired in; raise the bars as the router improves.
HELD_OUT = {
    # cases file: (min recall, max forbidden loads); measured 0.944 / 7 and 0.872 / 60
    "routing_cases_2.json": (0.92, 9),
    "routing_cases_3.json": (0.85, 66),
}


@pytest.mark.parametrize("cases", sorted(HELD_OUT))
def test_the_router_holds_its_level_on_the_held_out_suites(cases: str) -> None:
    """Independently written suites (a mobile app and data platform; an open-source developer
    tools company) check that the router generalises beyond the suite it was tuned on."""
    min_recall, max_forbidden = HELD_OUT[cases]
    res = run_routing_benchmark(FIXTURES / cases, min_recall=min_recall)
    d = res.data
    assert d["recall"] >= min_recall, "\n" + res.text
    assert len(d["forbidden_loaded"]) <= max_forbidden, "\n" + res.text
    for r in d["results"]:
        if r["name"].startswith("generic-"):
            assert len(r["loaded"]) <= 3, r
