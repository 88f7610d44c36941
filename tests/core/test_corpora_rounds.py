"""The fresh sets of earlier rounds as regression floors (each measured once unseen, then
tuned on and kept; see tests/corpora/roundN/README.md). A floor only says "no worse than
the figure recorded when the set was folded in"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NamedTuple

import pytest

from engram.core.memory import parse_memory
from engram.core.safety.injection import find_injection
from engram.core.safety.scan import redact
from engram.core.safety.screen import memory_findings
from tests.conftest import bench_module

CORPORA = Path(__file__).resolve().parents[2] / "tests" / "corpora"


class Floors(NamedTuple):
    flagged: int  # ordinary memories withheld or redacted on read, at most
    leaked: int  # secrets left in the text by the write-side redaction, at most
    altered: int  # look-alikes changed, at most
    strict: tuple[float, float]  # what an agent proposes: (recall at least, benign refused at most)
    lenient: tuple[float, float]  # a hand-written file on read: the same


FLOORS = {
    # Lenient recall was lowered once, on purpose: on read, a switch-off of a safety control
    # counts only where it tells the agent ("the assistant should turn it off"), and hiding
    # from the person only where that person is named nearby; a team's own "disable root SSH
    # login" loads as written (round 12 unseen: 9/347 ordinary memories flagged → 1/347).
    # Ordinary, leaked and altered: the figures after round 12 was tuned on (c148991).
    # Leaked and altered: the figures after round 15 was tuned on.
    # round 7: 3/340, 21/170, 3/28; strict 120/185 with 4/184; lenient 89/185 with 1/184
    "round7": Floors(3, 21, 3, (0.64, 0.025), (0.48, 0.012)),
    # round 8: 2/336, 22/214, 2/40; strict 167/214 with 9/174; lenient 106/214 with 6/174
    "round8": Floors(2, 22, 2, (0.77, 0.055), (0.49, 0.041)),
    # round 9: 0/335, 19/355, 1/59; strict 138/232 with 13/188; lenient 109/232 with 4/188
    "round9": Floors(0, 19, 1, (0.59, 0.075), (0.46, 0.048)),
    # round 11: 1/332, 24/379, 0/60; strict 91/205 with 11/183; lenient 67/205 with 3/183
    "round11": Floors(1, 24, 0, (0.44, 0.061), (0.32, 0.022)),
    # round 12: 1/347, 9/356, 0/59; strict 72/207 with 15/193; lenient 50/207 with 1/193
    "round12": Floors(1, 9, 0, (0.34, 0.078), (0.24, 0.006)),
    # round 13: 1/332, 67/468, 6/70; strict 59/203 with 17/190; lenient 30/203 with 3/190
    "round13": Floors(1, 67, 6, (0.29, 0.09), (0.14, 0.016)),
    # round 14 (unseen at 53c5f5d and again at a36ef26: 2/321, 64/398, 2/52), after tuning:
    # 2/321, 16/398, 1/52; strict 62/183 with 9/186; lenient 29/183 with 0/186
    "round14": Floors(2, 16, 1, (0.33, 0.049), (0.15, 0.0)),
    # round 15 (unseen at 8ee2e31: 0/332, 48/373, 9/60), after tuning:
    # 0/332, 21/373, 1/60; strict 59/175 with 10/174; lenient 34/175 with 0/174
    "round15": Floors(0, 21, 1, (0.33, 0.058), (0.19, 0.0)),
}


def _cases(round_: str, name: str) -> list[dict]:
    lines = (CORPORA / round_ / name).read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


@pytest.mark.parametrize("round_", sorted(FLOORS))
def test_ordinary_team_memory_reaches_the_agent_as_written(round_: str) -> None:
    score = bench_module("score_ordinary")
    flagged = []
    for case in _cases(round_, "ordinary.jsonl"):
        found = memory_findings(parse_memory(score.as_file(case), Path(f"{case['id']}.md")))
        if found.unsafe or found.secrets:
            flagged.append(case["id"])
    assert len(flagged) <= FLOORS[round_].flagged, flagged


@pytest.mark.parametrize("round_", sorted(FLOORS))
def test_secret_floors(round_: str) -> None:
    cases = _cases(round_, "secrets.jsonl")
    leaked = [c["id"] for c in cases if c["secret"] and any(
        s in redact(c["text"]).text for s in c["secrets"])]  # fmt: skip
    altered = [c["id"] for c in cases if not c["secret"] and redact(c["text"]).text != c["text"]]
    assert len(leaked) <= FLOORS[round_].leaked, leaked
    assert len(altered) <= FLOORS[round_].altered, altered


@pytest.mark.parametrize("round_", sorted(FLOORS))
def test_injection_floors_hold_on_both_sides(round_: str) -> None:
    cases = _cases(round_, "injection.jsonl")
    attacks = [c["text"] for c in cases if c["injection"]]
    benign = [c["text"] for c in cases if not c["injection"]]
    for strict in (True, False):
        caught = sum(find_injection(t, strict=strict) is not None for t in attacks)
        refused = sum(find_injection(t, strict=strict) is not None for t in benign)
        floor, ceiling = FLOORS[round_].strict if strict else FLOORS[round_].lenient
        assert caught / len(attacks) >= floor, (strict, caught)
        assert refused / len(benign) <= ceiling, (strict, refused)
