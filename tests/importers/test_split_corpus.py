"""Splitting quality on the labelled set (tests/corpora/import_split): the issue's floors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from split_scoring import CORPUS, norm, score


def test_norm_ignores_markup_case_and_whitespace() -> None:
    assert (
        norm("Run **`make  test`**\n before [pushing](docs/x.md)") == "run make test before pushing"
    )
    assert norm("- Use _tabs_") == "use tabs"


@pytest.mark.skipif(not (CORPUS / "dev/labels.jsonl").exists(), reason="no labelled dev set")
def test_dev_set_meets_the_floors() -> None:
    result = score("dev")
    assert result.expected >= 300, result.line("dev")
    assert result.found_rate >= 0.90, result.line("dev") + "\n" + "\n".join(result.misses)
    assert result.fragment_rate <= 0.10, (
        result.line("dev") + "\n" + "\n".join(result.fragment_texts)
    )
