"""The stored analyses of the screen's patterns are in step with the code: each one is what
the analysis finds in the pattern today, and no pattern of the screen is missing."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from engram.core.safety import prefilter
from engram.core.safety.normalise import LazyPattern

# In a fresh interpreter: the patterns Engram itself builds, none of the tests'.
_EXERCISE = """
import json
from engram.core.safety import prefilter
from engram.core.safety.refresh_needs import exercise
print(json.dumps({k: prefilter.needs_to_json(v) for k, v in exercise().items()}))
"""


def test_the_stored_analyses_are_those_of_todays_code_and_patterns() -> None:
    data = json.loads(prefilter.STORED_NEEDS.read_text(encoding="utf-8"))
    hint = "run `python -m engram.core.safety.refresh_needs`"
    assert data["version"] == prefilter.analysis_version(), hint
    out = subprocess.run(
        [sys.executable, "-c", _EXERCISE], capture_output=True, text=True, check=True
    ).stdout
    found = {k: prefilter.needs_from_json(v) for k, v in json.loads(out).items()}
    stored = {k: prefilter.needs_from_json(v) for k, v in data["needs"].items()}
    assert len(found) > 400
    missing = sorted(set(found) - set(stored))
    assert not missing, (hint, missing[:5])
    wrong = [k for k, needs in found.items() if stored[k] != needs]
    assert not wrong, (hint, wrong[:5])


def test_a_pattern_with_a_stored_analysis_compiles_only_for_text_that_may_match(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pattern = r"\bengram-stored-needs-(?P<n>\d+)\b"
    prefilter.stored_needs(pattern)  # loads the file
    stored = dict(prefilter._stored or {})
    stored[prefilter.needs_key(pattern, 0)] = prefilter.needs_to_json(prefilter.analyse(pattern))
    monkeypatch.setattr(prefilter, "_stored", stored)
    rx = LazyPattern(pattern)
    assert rx.search("nothing to see here") is None
    assert rx._rx is None  # answered from its keywords, not compiled
    m = rx.search("see engram-stored-needs-42 now")
    assert m is not None and m.group("n") == "42" and rx._rx is not None
    assert rx.sub("x", "engram-stored-needs-7 and engram-stored-needs-8") == "x and x"
