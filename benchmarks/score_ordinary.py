"""How much ordinary team memory the read-side screen withholds or redacts.

    python benchmarks/score_ordinary.py FILE.jsonl [...] [--misses]

Each line is one hand-written memory: {"id", "type", "title", "body", "tags", "category"}.
It is written as a person would write the file, parsed as Engram parses it, and screened
as a load screens a file nobody reviewed. The figure is the share of memories that would
not reach the agent as written (withheld, or any field redacted).
"""

from __future__ import annotations

import json
import sys
import time
from collections import Counter
from pathlib import Path

from engram.core.memory import parse_memory
from engram.core.safety.screen import memory_findings


def as_file(case: dict) -> str:
    tags = ", ".join(json.dumps(t, ensure_ascii=False) for t in case.get("tags") or [])
    body = case["body"].strip()
    if not body.lstrip().startswith("#"):
        body = f"# {case['title']}\n\n## Content\n\n{body}"
    return (
        f"---\nschema_version: 3\nid: {case['id']}\ntype: {case['type']}\n"
        f"tags: [{tags}]\n---\n\n{body}\n"
    )


def main(argv: list[str]) -> int:
    paths = [Path(a) for a in argv if not a.startswith("--")]
    misses = "--misses" in argv
    total = flagged = 0
    by_cat: Counter[str] = Counter()
    spent = 0.0
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            case = json.loads(line)
            mem = parse_memory(as_file(case), Path(f"{case['id']}.md"))
            start = time.perf_counter()
            found = memory_findings(mem)
            spent += time.perf_counter() - start
            total += 1
            if found.unsafe or found.secrets:
                flagged += 1
                by_cat[str(case.get("category", "-"))] += 1
                if misses:
                    why = found.unsafe or ", ".join(found.secrets)
                    print(f"  {case['id']} [{case.get('category')}]: {why}")
    rate = flagged / total if total else 0.0
    print(
        f"{total} ordinary memories: {flagged} withheld or redacted ({rate:.1%}); "
        f"screen {spent * 1000 / max(total, 1):.2f} ms per memory"
    )
    if by_cat:
        print("  by category: " + ", ".join(f"{k} {v}" for k, v in by_cat.most_common()))
    return 0 if rate <= 0.005 else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
