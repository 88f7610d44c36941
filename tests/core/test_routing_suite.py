"""The labelled routing suite: the fixture is what it claims to be, and the router passes it.

Every suite holds floors (recall@8, forbidden bodies, empty-case precision, tokens) with
the router's thresholds and when left out of the choice of thresholds; the unseen suite
is only reported and held to a floor, never used to choose anything.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from engram.core.benchmark import leave_one_out, read_cases, run_routing_benchmark
from engram.core.memory import parse_memory
from engram.core.store.config import KEYS
from engram.core.store.files import MEMORY_DIRS
from engram.core.store.layout import Root
from engram.core.store.memoryfiles import load_memories

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


SUITES = ("routing_cases.json", "routing_cases_2.json", "routing_cases_3.json")
# New domains, never used to choose anything (each written without reading the router).
UNSEEN = ("routing_cases_4.json", "routing_cases_5.json", "routing_cases_6.json")
# Floors per suite with the router's thresholds, at the level measured when they were set
# (recall@8 over bodies and cards, share of cases with a forbidden body, empty-case
# precision, mean tokens per load). Raise them as the router improves; a floor is lowered
# only with the trade named beside it.
FLOORS = {
    # one stemmer (words.py): body recall +3.7 points here, one more empty case gets a body
    "routing_cases.json": {"recall": 0.97, "forbidden": 0.0, "empty": 0.75, "tokens": 300},
    "routing_cases_2.json": {"recall": 0.92, "forbidden": 0.02, "empty": 0.90, "tokens": 300},
    "routing_cases_3.json": {"recall": 0.85, "forbidden": 0.07, "empty": 0.85, "tokens": 320},
    "routing_cases_4.json": {"recall": 0.85, "forbidden": 0.06, "empty": 0.70, "tokens": 300},
    "routing_cases_5.json": {"recall": 0.83, "forbidden": 0.08, "empty": 0.75, "tokens": 300},
    # measured once unseen at a36ef26 (recall 0.835, forbidden 0.051, empty 0.72, 284 tokens)
    "routing_cases_6.json": {"recall": 0.83, "forbidden": 0.06, "empty": 0.72, "tokens": 300},
}
# Leave one suite out: thresholds chosen on the other two, figures of the one left out.
LOO_FLOORS = {
    "routing_cases.json": 0.97,
    "routing_cases_2.json": 0.91,
    "routing_cases_3.json": 0.85,
}
TARGETS = {"forbidden": 0.10, "empty": 0.70, "tokens": 600}


@pytest.fixture(scope="module")
def report() -> dict:
    return leave_one_out([FIXTURES / s for s in SUITES], [FIXTURES / u for u in UNSEEN]).data


def _check(name: str, f: dict, floor: dict) -> None:
    assert f["recall"] >= floor["recall"], (name, f)
    assert f["forbidden_bodies"] <= floor["forbidden"], (name, f)
    assert f["empty_precision"] is None or f["empty_precision"] >= floor["empty"], (name, f)
    assert f["tokens"] <= floor["tokens"], (name, f)


@pytest.mark.parametrize("suite", SUITES)
def test_each_suite_holds_its_floors_with_the_routers_thresholds(report: dict, suite: str) -> None:
    f = report["at_defaults"][str(FIXTURES / suite)]["figures"]
    _check(suite, f, FLOORS[suite])


@pytest.mark.parametrize("suite", SUITES)
def test_each_suite_left_out_reaches_the_targets(report: dict, suite: str) -> None:
    entry = next(s for s in report["suites"] if s["cases_file"] == str(FIXTURES / suite))
    floor = {"recall": LOO_FLOORS[suite], **TARGETS}
    _check(suite, entry["figures"], floor)


def test_the_routers_thresholds_are_the_choice_on_every_suite(report: dict) -> None:
    assert report["all_suites"] == report["defaults"]


@pytest.mark.parametrize("suite", UNSEEN)
def test_the_unseen_suites_hold_their_floors(report: dict, suite: str) -> None:
    entry = next(u for u in report["unseen"] if u["cases_file"] == str(FIXTURES / suite))
    _check(suite, entry["figures"], FLOORS[suite])


def test_nothing_applies_and_generic_tasks_load_no_body_in_the_first_suite() -> None:
    res = run_routing_benchmark(CASES)
    assert not res.data["forbidden_loaded"], "\n" + res.text
    for r in res.data["results"]:
        if r["name"].startswith("generic-"):  # generic memory words alone never route
            assert not r["bodies"] and len(r["loaded"]) <= 3, r
    assert res.data["tokens"]["max"] <= KEYS["load.budget_tokens"].default  # packs fit


# With the searches an agent wrote having seen only the task texts (tests/fixtures/agent-queries;
# fixed inputs, never edited to fit): floors at the level measured when they were set
# (recall@8 over bodies and cards, share of cases with a forbidden body, empty-case precision).
PLANNED_FLOORS = {
    "routing_cases.json": {"recall": 0.98, "forbidden": 0.0, "empty": 0.84},
    "routing_cases_2.json": {"recall": 0.99, "forbidden": 0.01, "empty": 0.99},
    "routing_cases_3.json": {"recall": 0.97, "forbidden": 0.02, "empty": 0.99},
    "routing_cases_4.json": {"recall": 0.98, "forbidden": 0.02, "empty": 0.90},
    "routing_cases_5.json": {"recall": 0.93, "forbidden": 0.06, "empty": 0.90},
    # measured once unseen at a36ef26: recall 0.973, forbidden 0.030, empty 0.76, 301 tokens
    "routing_cases_6.json": {"recall": 0.97, "forbidden": 0.031, "empty": 0.75},
}


def _queries(suite: str) -> Path:
    return FIXTURES / "agent-queries" / suite.replace(".json", ".queries.json")


@pytest.mark.parametrize("suite", sorted(PLANNED_FLOORS))
def test_the_host_models_searches_raise_recall_and_precision(suite: str) -> None:
    planned = run_routing_benchmark(FIXTURES / suite, queries_path=_queries(suite)).data
    alone = run_routing_benchmark(FIXTURES / suite).data["figures"]
    f, floor = planned["figures"], PLANNED_FLOORS[suite]
    assert f["recall"] >= floor["recall"] and f["recall"] >= alone["recall"], f
    assert f["forbidden_bodies"] <= floor["forbidden"], f
    assert f["forbidden_bodies"] <= alone["forbidden_bodies"], (f, alone)
    assert f["empty_precision"] >= floor["empty"], f
    assert f["tokens"] <= 400, f
    # planned retrieval shows a body only at the search threshold; the rest are cards
    sure = {g["id"] for r in planned["results"] for g in r["graded"] if g["confidence"] >= 0.8}
    assert {b for r in planned["results"] for b in r["bodies"]} <= sure


def test_the_search_body_threshold_is_the_choice_on_the_first_three_suites() -> None:
    report = leave_one_out(
        [FIXTURES / s for s in SUITES], queries=[_queries(s) for s in SUITES]
    ).data
    assert report["all_suites"] == report["defaults"] == {"body_at": 0.8, "card_at": 0.2}
    for entry in report[
        "suites"
    ]:  # each suite left out still meets what planned retrieval promises
        f = entry["figures"]
        assert f["recall"] >= 0.95 and f["forbidden_bodies"] <= 0.02 and f["tokens"] <= 400, f
