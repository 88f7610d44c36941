"""Speed of `engram verify` on generated workspaces, first run and second run.

For each size, with the installed executable as a new process:

- first `engram verify --json`: every memory file read, parsed and screened (no stored
  findings yet; a fresh user folder, as on a new machine);
- second `engram verify --json`: nothing changed, so stored findings are reused;
- the interpreter floor `python3 -c pass`, measured the same way, beside them.

Targets (issue #19): verify at 10,000 memories ≤ 10 s; a second verify about as cheap as a
walk over the files.

    python benchmarks/bench_verify.py [--sizes 1000,10000] [--runs 3] [--out benchmarks/out]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from generate import generate_workspace
from measure import LAST, floor_cmd, measure


def bench_size(size: int, runs: int, exe: str, tmp: Path) -> dict[str, Any]:
    project = generate_workspace(tmp / f"ws-{size}", size, 0)
    first: list[float] = []
    first_cpu: list[float] = []
    second: list[float] = []
    second_cpu: list[float] = []
    floor: list[float] = []
    for i in range(runs):
        home = tmp / f"home-{size}-{i}"  # a new user: no stored findings, no reviews
        env = {**os.environ, "ENGRAM_HOME": str(home)}
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        cache = project / ".agents" / ".engram" / ".cache"
        shutil.rmtree(cache, ignore_errors=True)
        for samples, cpu in ((first, first_cpu), (second, second_cpu)):
            wall, _, out = measure([exe, "verify", "--json"], cwd=project, env=env)
            samples.append(wall)
            cpu.append(LAST["cpu_ms"])
            json.loads(out)  # the report is whole
        measure(floor_cmd(), cwd=project, env=env)
        floor.append(LAST["cpu_ms"])
    med = statistics.median
    return {
        "size": size,
        "first_verify_s": round(med(first) / 1000, 2),
        "first_verify_cpu_s": round(med(first_cpu) / 1000, 2),
        "second_verify_s": round(med(second) / 1000, 2),
        "second_verify_cpu_s": round(med(second_cpu) / 1000, 2),
        "floor_cpu_ms": round(med(floor), 1),
        "first_ms_per_memory": round(med(first_cpu) / size, 3),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    args = p.parse_args(argv)
    exe = shutil.which("engram")
    if not exe:
        sys.exit("bench_verify: the `engram` executable is not on PATH (install the package)")
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            results.append(bench_size(size, args.runs, exe, Path(tmp)))
            r = results[-1]
            print(
                f"{r['size']:>6} memories: first verify {r['first_verify_s']} s "
                f"(CPU {r['first_verify_cpu_s']} s, {r['first_ms_per_memory']} ms per memory), "
                f"second {r['second_verify_s']} s (CPU {r['second_verify_cpu_s']} s); "
                f"floor {r['floor_cpu_ms']} ms CPU",
                flush=True,
            )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_verify.json").write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
