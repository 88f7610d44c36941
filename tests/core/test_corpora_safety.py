"""The safety corpora as a gate: redaction and injection refusal measured per category.

The corpora under tests/corpora/ were labelled by someone who did not read the detection
code. A secret case counts as caught only if none of its `secrets` substrings survives
`redact`; an ordinary text must come out unchanged or pass the injection check.
Run with `-s` to see the per-category table (benchmarks/score_safety.py prints the same).
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPORA = ROOT / "tests" / "corpora"


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "score_safety", ROOT / "benchmarks/score_safety.py"
    )
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up there
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize(
    ("name", "recall", "fp"), [("secrets.jsonl", 0.98, 0.02), ("injection.jsonl", 0.90, 0.02)]
)
def test_corpus_meets_the_bar(name: str, recall: float, fp: float) -> None:
    path = CORPORA / name
    if not path.is_file():
        pytest.skip(f"{name} is not in tests/corpora")
    scorer = _scorer()
    cases = scorer.load(path)
    assert len(cases) >= 300
    score = scorer.score_cases(cases)
    print("\n" + scorer.table(score, name))
    misses = "\n".join(f"  {i} [{c}] {w}" for i, c, w in score.misses)
    assert score.pos >= 150 and score.neg >= 150
    assert score.recall >= recall, f"recall {score.recall:.3f} < {recall}:\n{misses}"
    assert score.fp_rate <= fp, f"false positives {score.fp_rate:.3f} > {fp}:\n{misses}"
