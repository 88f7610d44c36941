"""Cold wall time of `engram hook claude …` at 1,000 memories (target: median ≤ 150 ms).

Each run is a new process, as a host starts it on every prompt. The first call builds the
index; the figures that matter are the medians of the calls after it:

    python benchmarks/bench_hook.py [--n 1000] [--runs 15]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

PROMPTS = [
    "fix the invoice proration rounding bug",
    "add a retry to the payout reconciler",
    "document the session store timeout",
    "refactor the oauth token issuer",
    "why does the tax engine reject this rate",
]


def engram_cmd() -> list[str]:
    script = Path(sys.executable).with_name("engram")
    if script.exists():
        return [str(script)]
    found = shutil.which("engram")
    return [found] if found else [sys.executable, "-m", "engram.cli.main"]


def one(cmd: list[str], event: str, payload: dict, env: dict, cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*cmd, "hook", "claude", event],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        check=True,
    )
    return (time.perf_counter() - t0) * 1000, proc.stdout


def main() -> int:
    from generate import generate_workspace

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "project"
        project.mkdir()
        generate_workspace(project, args.n, seed=0)
        env = {**os.environ, "HOME": tmp, "ENGRAM_HOME": str(Path(tmp) / "engram-home")}
        env.pop("ENGRAM_GLOBAL_DIR", None)
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # installed packages run from cached bytecode
        cmd = engram_cmd()
        base = {"session_id": "bench", "cwd": str(project), "transcript_path": "/dev/null"}
        first, _ = one(cmd, "session-start", {**base, "source": "startup"}, env, project)
        one(cmd, "session-start", {**base, "source": "startup"}, env, project)  # bytecode written
        rows = {}
        for mode in ("always", "auto"):
            (project / ".agents/.engram/config.json").write_text(json.dumps({"read_mode": mode}))
            times = []
            for i in range(args.runs):
                prompt = PROMPTS[i % len(PROMPTS)] if mode == "always" else PROMPTS[0]
                ms, _ = one(cmd, "user-prompt-submit", {**base, "prompt": prompt}, env, project)
                times.append(ms)
            rows[mode] = times
        start_times = [
            one(cmd, "session-start", {**base, "source": "startup"}, env, project)[0]
            for _ in range(args.runs)
        ]
    print(
        f"memories: {args.n}; runs per figure: {args.runs}; command: {' '.join(cmd)} hook claude …"
    )
    print(f"first call (builds the index):            {first:7.1f} ms")
    print(f"session-start, median:                    {statistics.median(start_times):7.1f} ms")
    print(
        f"user-prompt-submit, read_mode always:     {statistics.median(rows['always']):7.1f} ms median, {max(rows['always']):.1f} ms max"
    )
    print(
        f"user-prompt-submit, read_mode auto (reused): {statistics.median(rows['auto'][1:]):7.1f} ms median"
    )
    worst = max(statistics.median(start_times), statistics.median(rows["always"]))
    print(f"target ≤ 150 ms median: {'met' if worst <= 150 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
