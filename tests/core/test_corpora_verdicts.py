"""The labelled verdict corpus: accuracy ≥ 0.95 and not one lost fact.

The corpus (tests/corpora/verdicts.jsonl) is written by someone who does not read the
verdict code; the scorer lives in benchmarks/score_verdicts.py so that any corpus file
can be scored from the command line too.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "corpora" / "verdicts.jsonl"
SCORER = REPO / "benchmarks" / "score_verdicts.py"


def _scorer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("score_verdicts", SCORER)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["score_verdicts"] = module
    spec.loader.exec_module(module)
    return module


sv = _scorer()


def _case(
    cid: str,
    existing: list[tuple[str, str, str]],
    ctype: str,
    text: str,
    expected: str,
    target: str | None = None,
) -> dict:
    return {
        "id": cid,
        "category": "unit",
        "existing": [{"id": i, "type": t, "text": x} for i, t, x in existing],
        "candidate": {"type": ctype, "text": text},
        "expected": expected,
        "target": target,
    }


@pytest.mark.skipif(not CORPUS.exists(), reason="the verdict corpus is not in this checkout")
def test_verdict_corpus_accuracy_and_no_lost_fact() -> None:
    cases = sv.load_cases(CORPUS)
    assert len(cases) >= 150
    score = sv.score(cases)
    lost = [f"{o.case['id']}: expected {o.case['expected']}, got {o.got}" for o in score.lost]
    assert not lost, "lost facts:\n" + "\n".join(lost)
    assert score.accuracy >= sv.MIN_ACCURACY, sv.report(score)
    # Distinct facts on a shared template are the case that lost data before: all of them.
    ok, n = score.by_category().get("distinct_template", (0, 0))
    assert n == 0 or ok == n, sv.report(score)


def test_scorer_counts_a_replaced_fact_as_lost_and_a_possible_duplicate_as_right() -> None:
    svc1 = ("svc-1-port", "knowledge", "The billing service listens on port 8443.")
    cases = [
        # An update judged as one: right, not lost.
        _case(
            "u",
            [svc1],
            "knowledge",
            "The billing service now listens on port 9443.",
            "UPDATE",
            "svc-1-port",
        ),
        # Labelled ADD, but the verdict replaces the memory: a lost fact.
        _case("l", [svc1], "knowledge", "The billing service now listens on port 9443.", "ADD"),
        # A rewording: DUPLICATE is right as ADD with the possible duplicate named.
        _case(
            "d",
            [("pr", "rule", "Run the full pytest suite before opening a pull request.")],
            "rule",
            "Run the whole pytest suite before you open a PR.",
            "DUPLICATE",
            "pr",
        ),
        # Labelled ADD, judged NOOP: the fact would be dropped, so lost too.
        _case("n", [svc1], "knowledge", "The billing service listens on port 8443.", "ADD"),
    ]
    score = sv.score(cases)
    by_id = {o.case["id"]: o for o in score.outcomes}
    assert by_id["u"].correct and not by_id["u"].lost
    assert by_id["l"].lost and not by_id["l"].correct
    assert by_id["d"].correct and "possible duplicate of pr" in by_id["d"].got
    assert by_id["n"].lost
    assert score.accuracy == 0.5
    text = sv.report(score)
    assert "Lost facts:" in text and "l [unit] expected ADD, got UPDATE svc-1-port" in text


def test_scorer_command_prints_categories_and_exits_1_on_a_lost_fact(tmp_path: Path) -> None:
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(
        json.dumps(
            _case(
                "x", [("a", "rule", "Always sign commits.")], "rule", "Never sign commits.", "ADD"
            )
        )
        + "\n",
        encoding="utf-8",
    )
    p = subprocess.run(
        [sys.executable, str(SCORER), str(corpus)], capture_output=True, text=True, cwd=REPO
    )
    assert p.returncode == 1
    assert "unit" in p.stdout and "lost facts: 1" in p.stdout
    p = subprocess.run(
        [sys.executable, str(SCORER), str(corpus), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    data = json.loads(p.stdout)
    assert data["lost_facts"][0]["got"] == "SUPERSEDE a"


def test_scorer_names_a_bad_corpus_line(tmp_path: Path) -> None:
    corpus = tmp_path / "bad.jsonl"
    corpus.write_text('{"id": "a"}\nnot json\n', encoding="utf-8")
    with pytest.raises(sv.CorpusError, match=r"bad.jsonl:1: missing existing, candidate"):
        sv.load_cases(corpus)
    corpus.write_text("not json\n", encoding="utf-8")
    p = subprocess.run(
        [sys.executable, str(SCORER), str(corpus)], capture_output=True, text=True, cwd=REPO
    )
    assert p.returncode == 2 and "bad.jsonl:1: not JSON" in p.stderr and "Traceback" not in p.stderr
