"""Score redaction and injection refusal on labelled corpora, per category.

    python benchmarks/score_safety.py [CORPUS.jsonl ...]  [--misses]

A corpus line is either a secrets case (`"secret": true` with the `secrets` substrings
that must not survive `redact`, or `"secret": false`: the text must come out unchanged)
or an injection case (`"injection": true|false`: `find_injection` must refuse it or
let it pass). With no argument, both corpora under tests/corpora/ are scored. The
exit code is 1 when a corpus is below the bar (recall 0.98 / 0.90, ≤ 2% false positives).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = [ROOT / "tests/corpora/secrets.jsonl", ROOT / "tests/corpora/injection.jsonl"]
BARS = {"secrets": (0.98, 0.02), "injection": (0.90, 0.02)}


@dataclass
class Score:
    """Counts of one corpus: per category (positives caught, negatives kept) and misses."""

    kind: str
    pos: int = 0
    caught: int = 0
    neg: int = 0
    false_pos: int = 0
    by_cat: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    misses: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def recall(self) -> float:
        return self.caught / self.pos if self.pos else 1.0

    @property
    def fp_rate(self) -> float:
        return self.false_pos / self.neg if self.neg else 0.0

    def passes(self) -> bool:
        recall, fp = BARS[self.kind]
        return self.recall >= recall and self.fp_rate <= fp


def load(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def score_cases(cases: list[dict[str, Any]]) -> Score:
    """Score one corpus (its kind is read from the labels)."""
    from engram.core.safety.scan import find_injection, redact

    kind = "secrets" if "secret" in cases[0] else "injection"
    sc = Score(kind)
    for c in cases:
        cat = str(c.get("category", "-"))
        text = c["text"]
        if kind == "secrets":
            out = redact(text).text
            positive = bool(c["secret"])
            ok = all(s not in out for s in c.get("secrets", [])) if positive else out == text
            shown = out
        else:
            refusal = find_injection(text)
            positive = bool(c["injection"])
            ok = (refusal is not None) == positive
            shown = refusal.kind if refusal else "passed"
        cell = sc.by_cat[cat]
        cell[0] += 1
        cell[1] += ok
        if positive:
            sc.pos += 1
            sc.caught += ok
        else:
            sc.neg += 1
            sc.false_pos += not ok
        if not ok:
            sc.misses.append((str(c.get("id", "?")), cat, f"{text[:110]!r} -> {shown[:110]!r}"))
    return sc


def table(sc: Score, name: str) -> str:
    lines = [
        f"{name} ({sc.kind}): recall {sc.recall:.3f} ({sc.caught}/{sc.pos}), "
        f"false positives {sc.fp_rate:.3f} ({sc.false_pos}/{sc.neg}) "
        f"-> {'PASS' if sc.passes() else 'FAIL'}",
        f"  {'category':<22} {'right':>7} {'cases':>6} {'share':>7}",
    ]
    for cat in sorted(sc.by_cat):
        n, ok = sc.by_cat[cat]
        lines.append(f"  {cat:<22} {ok:>7} {n:>6} {ok / n:>7.2f}")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    show = "--misses" in argv
    paths = [Path(a) for a in argv if not a.startswith("--")] or DEFAULT
    failed = False
    for path in paths:
        sc = score_cases(load(path))
        print(table(sc, path.name))
        if show:
            for mid, cat, what in sc.misses:
                print(f"    miss {mid} [{cat}] {what}")
        print()
        failed |= not sc.passes()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main(sys.argv[1:]))
