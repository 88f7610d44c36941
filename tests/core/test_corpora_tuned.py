"""The held-out corpora as regression floors: each was written, without reading the code, after
the previous one had been used for tuning (tests/corpora/README.md says which were seen).

The bar of the issue (recall 0.98 / 0.90, ≤ 2% false positives, verdict accuracy 0.95) is
asserted on the main corpora (test_corpora_safety.py, test_corpora_verdicts.py); here every
verdict corpus must lose no fact, and each figure must stay at least where it was measured.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "tests" / "corpora"
HELD_OUT = ("tuned", "tuned2", "tuned3", "tuned4", "tuned5")
# (recall floor, false-positive ceiling) per held-out safety corpus, as measured.
SAFETY_FLOORS = {
    ("tuned", "secrets"): (1.0, 0.0),
    ("tuned", "injection"): (1.0, 0.0),
    ("tuned2", "secrets"): (1.0, 0.0),
    ("tuned2", "injection"): (1.0, 0.0),
    ("tuned3", "secrets"): (1.0, 0.0),
    ("tuned3", "injection"): (1.0, 0.0),
    ("tuned4", "secrets"): (1.0, 0.0),
    ("tuned4", "injection"): (0.99, 0.0),
    ("tuned5", "secrets"): (0.97, 0.04),
    ("tuned5", "injection"): (0.90, 0.009),
}
VERDICT_FLOORS = {
    "tuned": 0.74,
    "tuned2": 0.92,
    "tuned3": 0.81,
    "tuned4": 0.88,
    "tuned5": 0.85,
}


def _module(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, ROOT / "benchmarks" / f"{name}.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(("folder", "kind"), sorted(SAFETY_FLOORS))
def test_held_out_safety_corpus_holds_its_floor(folder: str, kind: str) -> None:
    path = CORPORA / folder / f"{kind}.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is not in this checkout")
    scorer = _module("score_safety")
    score = scorer.score_cases(scorer.load(path))
    recall, fp = SAFETY_FLOORS[(folder, kind)]
    misses = "\n".join(f"  {i} [{c}] {w}" for i, c, w in score.misses)
    assert score.recall >= recall, f"{folder}/{kind}: recall {score.recall:.3f}\n{misses}"
    assert score.fp_rate <= fp + 1e-9, f"{folder}/{kind}: fp {score.fp_rate:.3f}\n{misses}"


@pytest.mark.parametrize("folder", HELD_OUT)
def test_held_out_verdicts_lose_no_fact(folder: str) -> None:
    path = CORPORA / folder / "verdicts.jsonl"
    if not path.is_file():
        pytest.skip(f"{path} is not in this checkout")
    sv = _module("score_verdicts")
    score = sv.score(sv.load_cases(path))
    lost = [f"{o.case['id']}: expected {o.case['expected']}, got {o.got}" for o in score.lost]
    assert not lost, "lost facts:\n" + "\n".join(lost)
    assert score.accuracy >= VERDICT_FLOORS[folder], sv.report(score)
