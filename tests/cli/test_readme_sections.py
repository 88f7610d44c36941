"""The README's "How approval works" and "Reading memory" say what the commands do."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
ENGRAM = Path(sys.executable).with_name("engram")


def section(title: str) -> str:
    m = re.search(rf"^{re.escape(title)}\n(.*?)(?=^## )", README, re.M | re.S)
    assert m, f"README.md has no {title!r} section"
    return m.group(1)


def test_note_is_documented_as_going_through_approval_with_its_prompt() -> None:
    import engram.cli.write as write

    text = section("## How approval works")
    para = text[text.index('`engram note "…"') :]
    assert "records" not in para.split("`engram promote")[0]
    assert "approval" in para and "Save this note? [y/N]" in para
    assert "Save this note? [y/N]" in Path(write.__file__).read_text(encoding="utf-8")


def test_keep_and_pending_are_documented_as_they_are_spelled() -> None:
    text = section("## How approval works")
    for phrase in ("K 3", "A 1,2 K 3", "engram commit TOKEN --keep 3", "engram pending",
                   "engram pending --decline N", "--propose"):  # fmt: skip
        assert phrase in text, phrase
    for args in (["commit", "--help"], ["pending", "--help"]):
        p = subprocess.run([str(ENGRAM), *args], capture_output=True, text=True, timeout=60)
        assert p.returncode == 0 and ("--keep" in p.stdout or "--decline" in p.stdout)


def test_reading_memory_documents_path_and_branch_and_who_reads_git() -> None:
    text = section("## Reading memory")
    block = re.search(r"```bash\n(.*?)```", text, re.S)
    assert block and "--path" in block.group(1) and "--branch" in block.group(1)
    assert "repeat" in text and "`engram load` does **not** read git" in text
    p = subprocess.run([str(ENGRAM), "load", "--help"], capture_output=True, text=True, timeout=60)
    assert "--path PATH" in p.stdout and "--branch BRANCH" in p.stdout
