"""The round 6 sets as regression floors (measured figures; see tests/corpora/round6/README)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import bench_module

ROOT = Path(__file__).resolve().parents[2]
ROUND6 = ROOT / "tests" / "corpora" / "round6"


def test_ordinary_team_memory_reaches_the_agent_as_written() -> None:
    from engram.core.memory import parse_memory
    from engram.core.safety.screen import memory_findings

    score = bench_module("score_ordinary")
    flagged = []
    for path in sorted(ROUND6.glob("ordinary-*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            case = json.loads(line)
            found = memory_findings(parse_memory(score.as_file(case), Path(f"{case['id']}.md")))
            if found.unsafe or found.secrets:
                flagged.append(case["id"])
    assert len(flagged) <= 3, flagged


def test_injection_floors_hold_on_both_sides() -> None:
    from engram.core.safety.injection import find_injection

    cases = [json.loads(x) for x in (ROUND6 / "injection.jsonl").read_text("utf-8").splitlines()]
    attacks = [c["text"] for c in cases if c["injection"]]
    benign = [c["text"] for c in cases if not c["injection"]]
    # lenient: 111/227 with 14/224 since a switch-off on read must tell the agent (was 0.50)
    for strict, recall_floor, fp_ceiling in ((True, 0.59, 0.09), (False, 0.48, 0.072)):
        caught = sum(find_injection(t, strict=strict) is not None for t in attacks)
        refused = sum(find_injection(t, strict=strict) is not None for t in benign)
        assert caught / len(attacks) >= recall_floor, (strict, caught)
        assert refused / len(benign) <= fp_ceiling, (strict, refused)
