"""Score the importer's splitting on the labelled set in `tests/corpora/import_split/`.

Each case is a folder of instruction files; `labels.jsonl` lists, per case, the memories a
person expects (`contains`: phrases the memory must hold, `type`, optional `paths`) and
`not_memories` (text that should not become a memory). Every case folder is imported as a
workspace, and:

- a labelled memory is *found* when one candidate from its file holds all its phrases
  (case, whitespace and Markdown markup ignored) and carries its `paths`;
- *one-to-one* recall pairs each candidate with at most one memory (the set's README:
  a candidate that swallows two memories counts for one of them);
- a candidate is a *fragment* when it holds all phrases of no labelled memory;
- a *merge* is a candidate holding several labelled memories;
- *type accuracy* is the share of found memories whose candidate has the labelled type;
- a *leak* is a candidate holding a line of an Engram managed block (never imported).

Run `python tests/importers/split_scoring.py dev` (or `tuned`) to print the figures and
the misses.
"""

from __future__ import annotations

import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).parents[1] / "corpora" / "import_split"


def norm(text: str) -> str:
    """Text without Markdown markup, case or whitespace differences."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links and images: their words
    text = re.sub(r"[`*_~]+|^\s*(?:#+|>|[-+]|\d+[.)])\s+", " ", text, flags=re.M)
    return " ".join(text.casefold().split())


@dataclass
class Score:
    expected: int = 0
    found: int = 0
    typed: int = 0
    candidates: int = 0
    fragments: int = 0
    merges: int = 0
    noise: int = 0  # candidates holding text labelled as not a memory
    paired: int = 0  # memories found one to one
    leaks: int = 0
    misses: list[str] = field(default_factory=list)
    fragment_texts: list[str] = field(default_factory=list)
    mistyped: list[str] = field(default_factory=list)
    merged: list[str] = field(default_factory=list)

    @property
    def found_rate(self) -> float:
        return self.found / self.expected if self.expected else 1.0

    @property
    def fragment_rate(self) -> float:
        return self.fragments / self.candidates if self.candidates else 0.0

    @property
    def type_accuracy(self) -> float:
        return self.typed / self.found if self.found else 1.0

    def line(self, name: str) -> str:
        return (
            f"{name}: {self.found}/{self.expected} found ({self.found_rate:.1%}), "
            f"{self.fragments}/{self.candidates} fragments ({self.fragment_rate:.1%}), "
            f"type accuracy {self.type_accuracy:.1%}, {self.merges} merges, "
            f"one-to-one {self.paired}/{self.expected} "
            f"({self.paired / max(self.expected, 1):.1%}), "
            f"{self.noise} candidates with non-memory text, {self.leaks} managed-block leaks"
        )


def labels(split: str) -> list[dict]:
    path = CORPUS / split / "labels.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def candidates_of(case_dir: Path) -> list[object]:
    """The pieces `engram import` would propose for this folder (every host's files)."""
    from engram.importers import Workspace, read_all

    return [p for r in read_all(Workspace(case_dir)) for p in r.pieces]


def _holds(cand_text: str, memory: dict) -> bool:
    return all(norm(ph) in cand_text for ph in memory["contains"])


def _pairs(hits_of: list[list[int]]) -> int:
    """The largest one-to-one pairing of memories with candidates (augmenting paths)."""
    owner: dict[int, int] = {}

    def take(k: int, seen: set[int]) -> bool:
        for i in hits_of[k]:
            if i not in seen:
                seen.add(i)
                if i not in owner or take(owner[i], seen):
                    owner[i] = k
                    return True
        return False

    return sum(1 for k in range(len(hits_of)) if take(k, set()))


def _managed_lines(case_dir: Path) -> list[str]:
    """The normalised text lines inside Engram managed blocks in the case's files."""
    out: list[str] = []
    for path in case_dir.rglob("*"):
        if not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for block in re.findall(r"<!-- engram:begin.*?<!-- engram:end -->", text, re.S):
            out += [n for line in block.split("\n")[1:-1] if len(n := norm(line)) > 12]
    return out


def score(split: str) -> Score:
    """Score every labelled case of `split` (`dev` or `tuned`)."""
    total = Score()
    for case in labels(split):
        pieces = candidates_of(CORPUS / split / case["case"])
        texts = [norm(p.text) for p in pieces]  # type: ignore[attr-defined]
        expected = case["expected"]
        total.expected += len(expected)
        total.candidates += len(pieces)
        held_by: list[list[int]] = [[] for _ in pieces]
        hits_of: list[list[int]] = []
        for k, memory in enumerate(expected):
            hits = [
                i
                for i, t in enumerate(texts)
                if _holds(t, memory)
                and pieces[i].source == memory["file"]  # type: ignore[attr-defined]
                and set(memory.get("paths") or []) <= set(pieces[i].paths)  # type: ignore[attr-defined]
            ]
            hits_of.append(hits)
            for i in hits:
                held_by[i].append(k)
            if not hits:
                total.misses.append(f"{case['case']}: {memory['contains']}")
                continue
            total.found += 1
            if any(pieces[i].type == memory["type"] for i in hits):  # type: ignore[attr-defined]
                total.typed += 1
            else:
                got = pieces[hits[0]].type  # type: ignore[attr-defined]
                total.mistyped.append(
                    f"{case['case']}: {memory['type']} as {got}: {memory['contains'][0]}"
                )
        total.paired += _pairs(hits_of)
        managed = _managed_lines(CORPUS / split / case["case"])
        total.leaks += sum(1 for t in texts if any(m in t for m in managed))
        for i, ks in enumerate(held_by):
            if not ks:
                total.fragments += 1
                total.fragment_texts.append(f"{case['case']}: {pieces[i].text[:110]}")  # type: ignore[attr-defined]
            elif len(ks) > 1:
                total.merges += 1
                total.merged.append(f"{case['case']}: {len(ks)} in {pieces[i].text[:100]}")  # type: ignore[attr-defined]
            if any(norm(n) in texts[i] for n in case.get("not_memories") or []):
                total.noise += 1
    return total


def main(argv: list[str]) -> int:
    split = argv[0] if argv else "dev"
    result = score(split)
    print(result.line(split))
    for title, items in (
        ("missed", result.misses),
        ("fragments", result.fragment_texts),
        ("mistyped", result.mistyped),
        ("merges", result.merged),
    ):
        if items and "-q" not in argv:
            print(f"\n{title}:")
            print("\n".join(f"  {x}" for x in items))
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).parents[2] / "src"))
    sys.exit(main(sys.argv[1:]))
