"""Accuracy of write-path verdicts on a labelled corpus, and every lost fact.

Each line of the corpus (JSON Lines) is one case::

    {"id", "category", "existing": [{"id", "type", "text"}, …],
     "candidate": {"type", "text"}, "expected": "ADD|UPDATE|SUPERSEDE|NOOP|DUPLICATE",
     "target": id | null}

The existing entries become memories as a commit writes them, the candidate goes through
`verdicts.judge`, and the verdict is scored:

- DUPLICATE is right when the verdict is an ADD whose possible duplicate is the target,
  or a NOOP of the target; every other expectation must match kind and target.
- A *lost fact* is an expected ADD or DUPLICATE judged UPDATE/SUPERSEDE, or an expected
  ADD judged NOOP: saving it would replace or drop a fact the person meant to keep.

    python benchmarks/score_verdicts.py tests/corpora/verdicts.jsonl [--json] [--all]

Prints accuracy per category, the lost facts and the other misses; exits 1 when accuracy
is under --min-accuracy (0.95) or any fact is lost.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KINDS = ("ADD", "UPDATE", "SUPERSEDE", "NOOP", "DUPLICATE")
MIN_ACCURACY = 0.95


class CorpusError(ValueError):
    """A corpus line that is not a case (says which line and what is wrong)."""


@dataclass
class Outcome:
    case: dict[str, Any]
    got: str  # the verdict line, with the possible duplicate when there is one
    correct: bool
    lost: bool
    flagged: bool = False  # an expected ADD shown as a possible duplicate (a commit defers it)


@dataclass
class Score:
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return sum(o.correct for o in self.outcomes) / len(self.outcomes) if self.outcomes else 0.0

    @property
    def flagged(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.flagged]

    @property
    def lost(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.lost]

    def by_category(self) -> dict[str, tuple[int, int]]:
        out: dict[str, list[int]] = defaultdict(lambda: [0, 0])
        for o in self.outcomes:
            out[o.case["category"]][0] += o.correct
            out[o.case["category"]][1] += 1
        return {k: (v[0], v[1]) for k, v in sorted(out.items())}


def load_cases(path: Path) -> list[dict[str, Any]]:
    """The cases of a JSON Lines corpus; CorpusError names the first bad line."""
    cases: list[dict[str, Any]] = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as exc:
            raise CorpusError(f"{path}:{n}: not JSON ({exc.msg})") from None
        missing = [k for k in ("id", "existing", "candidate", "expected") if k not in case]
        if missing:
            raise CorpusError(f"{path}:{n}: missing {', '.join(missing)}")
        if case["expected"] not in KINDS:
            raise CorpusError(
                f"{path}:{n}: expected {case['expected']!r}; allowed: {', '.join(KINDS)}"
            )
        case.setdefault("category", "uncategorised")
        cases.append(case)
    return cases


def judge_case(case: dict[str, Any]) -> Any:
    """The judgement of one case, with existing entries built as a commit writes them."""
    from engram.core.memory import Memory
    from engram.core.write.candidates import content_of, make_candidate, title_of
    from engram.core.write.commit import rule_variants
    from engram.core.write.verdicts import judge, sort_existing

    existing = []
    for e in case["existing"]:
        m = Memory(
            id=e["id"], type=e["type"], title=title_of(e["text"]), content=content_of(e["text"])
        )
        if e["type"] == "rule":
            m.variants = rule_variants(e["text"])
        existing.append(m)
    c = case["candidate"]
    fields = {"type": c["type"], "text": c["text"]}
    if c.get("update"):
        fields["update"] = c["update"]
    return judge(make_candidate(**fields), sort_existing(existing))


def score_case(case: dict[str, Any]) -> Outcome:
    j = judge_case(case)
    v = j.verdict
    expected, target = case["expected"], case.get("target") or ""
    if expected == "DUPLICATE":
        correct = (v.kind == "ADD" and j.possible_duplicate == target) or (
            v.kind == "NOOP" and v.target == target
        )
    elif expected == "ADD":
        correct = v.kind == "ADD"
    else:
        correct = v.kind == expected and v.target == target
    lost = (expected in ("ADD", "DUPLICATE") and v.kind in ("UPDATE", "SUPERSEDE")) or (
        expected == "ADD" and v.kind == "NOOP"
    )
    got = v.line() + (f" (possible duplicate of {j.possible_duplicate})" if j.possible_duplicate
                      else "")  # fmt: skip
    flagged = expected == "ADD" and bool(j.possible_duplicate)
    return Outcome(case, got, correct, lost, flagged)


def score(cases: list[dict[str, Any]]) -> Score:
    return Score([score_case(c) for c in cases])


def _expected(case: dict[str, Any]) -> str:
    t = case.get("target")
    return f"{case['expected']} {t}" if t else case["expected"]


def report(s: Score, *, show_all: bool = False) -> str:
    adds = sum(o.case["expected"] == "ADD" for o in s.outcomes)
    lines = [f"verdict accuracy {s.accuracy:.3f} on {len(s.outcomes)} cases; "
             f"lost facts: {len(s.lost)}; new facts held as possible duplicates: "
             f"{len(s.flagged)} of {adds}", ""]  # fmt: skip
    lines.append(f"{'category':<20} {'correct':>8} {'cases':>6} {'accuracy':>9}")
    for cat, (ok, n) in s.by_category().items():
        lines.append(f"{cat:<20} {ok:>8} {n:>6} {ok / n:>9.3f}")
    if s.lost:
        lines += ["", "Lost facts:"]
        lines += [f"  {o.case['id']} [{o.case['category']}] expected {_expected(o.case)}, "
                  f"got {o.got}: {o.case['candidate']['text']}" for o in s.lost]  # fmt: skip
    misses = [o for o in s.outcomes if not o.correct and not o.lost]
    if misses:
        lines += ["", "Other misses:"]
        for o in misses:
            lines.append(
                f"  {o.case['id']} [{o.case['category']}] expected {_expected(o.case)}, got {o.got}"
            )
            if show_all:
                for e in o.case["existing"]:
                    lines.append(f"      existing {e['id']} ({e['type']}): {e['text']}")
                c = o.case["candidate"]
                lines.append(f"      candidate ({c['type']}): {c['text']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("corpus", type=Path, help="a verdicts corpus (JSON Lines)")
    p.add_argument("--min-accuracy", type=float, default=MIN_ACCURACY)
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.add_argument("--all", action="store_true", help="show the texts of every miss")
    args = p.parse_args(argv)
    try:
        cases = load_cases(args.corpus)
    except (OSError, CorpusError) as exc:
        print(f"score_verdicts: {exc}", file=sys.stderr)
        return 2
    s = score(cases)
    if args.json:
        print(json.dumps({
            "accuracy": round(s.accuracy, 4),
            "cases": len(s.outcomes),
            "categories": {k: {"correct": a, "cases": b} for k, (a, b) in s.by_category().items()},
            "possible_duplicates_on_add": [o.case["id"] for o in s.flagged],
            "lost_facts": [{"id": o.case["id"], "expected": _expected(o.case), "got": o.got}
                           for o in s.lost],
        }, indent=2))  # fmt: skip
    else:
        print(report(s, show_all=args.all))
    return 0 if s.accuracy >= args.min_accuracy and not s.lost else 1


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:  # `| head`: the reader has seen enough
        sys.exit(0)
