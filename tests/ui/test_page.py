"""The page itself: memory text only ever reaches the DOM as text, and the script parses."""

from __future__ import annotations

import re
import shutil
import subprocess
from importlib import resources
from pathlib import Path

import pytest

PAGE = resources.files("engram.ui").joinpath("static/index.html").read_text("utf-8")
SCRIPT = PAGE.split('<script nonce="{{NONCE}}">', 1)[1].split("</script>", 1)[0]


def test_the_script_never_parses_strings_as_html_or_code() -> None:
    for sink in (
        "innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(",
        "new Function", "setTimeout(\"", "srcdoc", "javascript:", "createContextualFragment",
    ):  # fmt: skip
        assert sink not in SCRIPT, sink


def test_attributes_are_set_by_name_never_as_event_handlers_from_data() -> None:
    # el() sets attributes with setAttribute; an "on…" attribute from data would run code
    calls = re.findall(r"el\(\"\w+\", \{([^}]*)\}", SCRIPT)
    assert calls
    for attrs in calls:
        assert not re.search(r"(^|[,\s])\"?on[a-z]+\"?\s*:", attrs), attrs


def test_the_page_has_one_script_and_one_style_each_with_the_nonce() -> None:
    assert PAGE.count("<script") == 1 and PAGE.count("<style") == 1
    assert '<script nonce="{{NONCE}}">' in PAGE and '<style nonce="{{NONCE}}">' in PAGE


@pytest.mark.skipif(
    shutil.which("node") is None, reason="node is not installed to check the script"
)
def test_the_script_parses(tmp_path: Path) -> None:
    js = tmp_path / "page.js"
    js.write_text(SCRIPT, encoding="utf-8")
    p = subprocess.run(["node", "--check", str(js)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
