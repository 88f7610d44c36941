"""The import summary adds up: files read through an @import are counted, and a deferred
candidate is counted within its type, not as one more."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

from engram.core.write.proposal import ProposedCandidate
from engram.core.write.verdicts import Verdict
from engram.importers.propose import _summary


def test_files_and_candidates_add_up() -> None:
    results = [SimpleNamespace(source="AGENTS.md", host="agents", problems=[])]
    fresh = [
        ProposedCandidate(1, "rule", "a", "A", "a", Verdict("ADD")),
        ProposedCandidate(
            2, "rule", "b", "B", "b", Verdict("ADD"), deferred_reason="possible duplicate of x"
        ),
    ]
    source_of = {1: "AGENTS.md", 2: "AGENTS.md", 3: "docs/testing.md"}
    dup = Counter({"AGENTS.md": 4, "docs/testing.md": 1})
    text = _summary(results, fresh, source_of, dup, Counter(), [], [])
    assert text.split("\n") == [
        "Read 2 instruction file(s):",
        "  AGENTS.md (agents): 2 rule (1 of these will be deferred), 4 already in memory",
        "  docs/testing.md (imported): 1 already in memory",
    ]
