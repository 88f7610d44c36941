"""CPU time of the safety scan and code-span split on hostile bodies, against their size.

    python benchmarks/bench_hostile.py

A body made of runs that make regular expressions backtrack (backticks, unclosed tags,
comments, links, attributes) must cost time in proportion to its size: the figures double
when the size doubles. Memory files are capped at 256 KiB (`limits.memory_file_bytes`).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "src"))

from engram.core.safety.scan import find_injection, redact
from engram.core.safety.screen import split_code

SHAPES = {
    "backticks": "`",
    "open tags": "<a ",
    "open comments": "<!--",
    "open links": "[x](",
    "open attributes": '<x y="',
    "prose": "ship the build ",
    # shapes an attack tried on the read path (each was quadratic in one pattern)
    "user:pass@": "user:pass@",
    "percent escapes": "%41",
    "key=": "key=",
    "sk-": "sk-",
    "eyJ": "eyJ",
    "slashes": "/",
    "newlines": "\n",
    "percent 2": "%2",
}


def main() -> None:
    print(f"{'shape':<16}" + "".join(f"{k:>10} KB" for k in (32, 64, 128, 256)))
    for name, unit in SHAPES.items():
        row = []
        for kb in (32, 64, 128, 256):
            body = unit * (kb * 1024 // len(unit))
            start = time.process_time()
            split_code(body)
            find_injection(body)
            redact(body)
            row.append(time.process_time() - start)
        print(f"{name:<16}" + "".join(f"{t * 1000:>10.0f} ms" for t in row))


if __name__ == "__main__":
    main()
