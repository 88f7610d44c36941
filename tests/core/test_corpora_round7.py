"""The round 7 sets as regression floors (figures measured once, unseen, then kept; see
tests/corpora/round7/README.md). A floor only says "no worse than when it was first run"."""

from __future__ import annotations

import json
from pathlib import Path

from engram.core.memory import parse_memory
from engram.core.safety.injection import find_injection
from engram.core.safety.scan import redact
from engram.core.safety.screen import memory_findings
from tests.conftest import bench_module

ROOT = Path(__file__).resolve().parents[2]
ROUND7 = ROOT / "tests" / "corpora" / "round7"


def _cases(name: str) -> list[dict]:
    lines = (ROUND7 / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def test_ordinary_team_memory_reaches_the_agent_as_written() -> None:
    score = bench_module("score_ordinary")
    flagged = []
    for case in _cases("ordinary.jsonl"):
        found = memory_findings(parse_memory(score.as_file(case), Path(f"{case['id']}.md")))
        if found.unsafe or found.secrets:
            flagged.append(case["id"])
    assert len(flagged) <= 4, flagged  # 4 of 340 when first run


def test_secret_floors() -> None:
    cases = _cases("secrets.jsonl")
    leaked = [c["id"] for c in cases if c["secret"] and any(
        s in redact(c["text"]).text for s in c["secrets"])]  # fmt: skip
    altered = [c["id"] for c in cases if not c["secret"] and redact(c["text"]).text != c["text"]]
    assert len(leaked) <= 37, leaked  # 37 of 170 now (the write-side redaction)
    assert len(altered) <= 7, altered  # 7 of 28


def test_injection_floors_hold_on_both_sides() -> None:
    cases = _cases("injection.jsonl")
    attacks = [c["text"] for c in cases if c["injection"]]
    benign = [c["text"] for c in cases if not c["injection"]]
    for strict in (True, False):
        caught = sum(find_injection(t, strict=strict) is not None for t in attacks)
        refused = sum(find_injection(t, strict=strict) is not None for t in benign)
        floor, ceiling = (0.62, 0.04) if strict else (0.51, 0.023)
        assert caught / len(attacks) >= floor, (strict, caught)
        assert refused / len(benign) <= ceiling, (strict, refused)
