"""What the Claude hook costs a user, side by side with a cold `engram load` and the
interpreter floor (`python3 -c pass`), at 100, 1,000 and 10,000 memories.

Each figure is a fresh process, as a host starts it on every prompt, started by a small
launcher so that neither the benchmark's own size nor its start-up is counted (see
`measure.py`). The workspace is a git repository with two changed files, so the hook pays
for reading its task signals as it does in a real project. Runs are interleaved (floor,
load, prompt hook, session-start hook) so that machine noise hits them alike.

Targets: the prompt hook ≤ cold load + 15 ms; a cold load at 1,000 memories ≤ 4 × floor.
Both are judged on CPU time (user + system of the process and the git it runs): on a
shared machine wall time also counts the waits for a core, CPU time does not.

    python benchmarks/bench_hook.py [--sizes 100,1000,10000] [--runs 15] [--no-git]
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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from measure import LAST, floor_cmd, measure

PROMPTS = [
    "fix the invoice proration rounding bug",
    "add a retry to the payout reconciler",
    "document the session store timeout",
    "refactor the oauth token issuer",
    "why does the tax engine reject this rate",
]
HOOK_MARGIN_MS, FLOOR_MULTIPLE = 15.0, 4.0


def engram_cmd() -> list[str]:
    script = Path(sys.executable).with_name("engram")
    if script.exists():
        return [str(script)]
    found = shutil.which("engram")
    return [found] if found else [sys.executable, "-m", "engram.cli.main"]


def _git_repo(project: Path) -> None:
    """A repository with history and two files changed, one of them staged."""
    env = {**os.environ, "GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.com",
           "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.com"}  # fmt: skip
    src = project / "src/billing"
    src.mkdir(parents=True, exist_ok=True)
    (src / "invoice.py").write_text("TOTAL = 1\n")
    (src / "proration.py").write_text("DAYS = 30\n")
    for args in (["init", "-q", "-b", "fix/invoice-proration"], ["add", "-A"],
                 ["commit", "-q", "-m", "start"]):  # fmt: skip
        subprocess.run(["git", *args], cwd=project, env=env, check=True, capture_output=True)
    (src / "invoice.py").write_text("TOTAL = 2\n")
    (src / "proration.py").write_text("DAYS = 31\n")
    subprocess.run(["git", "add", "src/billing/proration.py"], cwd=project, env=env, check=True)


def bench_size(size: int, runs: int, git: bool, tmp: Path) -> dict[str, float]:
    from generate import generate_workspace

    project = tmp / f"project-{size}"
    project.mkdir()
    generate_workspace(project, size, seed=0)
    if git:
        _git_repo(project)
    (project / ".agents/.engram/config.json").write_text(json.dumps({"read_mode": "always"}))
    env = {**os.environ, "HOME": str(tmp), "ENGRAM_HOME": str(tmp / "engram-home")}
    env.pop("ENGRAM_GLOBAL_DIR", None)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # installed packages run from cached bytecode
    cmd = engram_cmd()
    base = {"session_id": "bench", "cwd": str(project), "transcript_path": "/dev/null"}
    start_payload = json.dumps({**base, "source": "startup"})
    for _ in range(2):  # the first calls build the index and write bytecode
        measure([*cmd, "hook", "claude", "session-start"], cwd=project, env=env,
                stdin=start_payload)  # fmt: skip
        measure([*cmd, "load", PROMPTS[0]], cwd=project, env=env)
    samples: dict[str, list[float]] = {"floor": [], "load": [], "prompt": [], "start": []}
    rss: dict[str, list[float]] = {k: [] for k in samples}
    cpu: dict[str, list[float]] = {k: [] for k in samples}
    for i in range(runs):
        prompt = PROMPTS[i % len(PROMPTS)]
        calls = {
            "floor": (floor_cmd(), ""),
            "load": ([*cmd, "load", prompt], ""),
            "prompt": (
                [*cmd, "hook", "claude", "user-prompt-submit"],
                json.dumps({**base, "session_id": f"bench-{i}", "prompt": prompt}),
            ),
            "start": ([*cmd, "hook", "claude", "session-start"], start_payload),
        }
        for name, (argv, stdin) in calls.items():
            ms, mb, _ = measure(argv, cwd=project, env=env, stdin=stdin)
            samples[name].append(ms)
            rss[name].append(mb)
            cpu[name].append(LAST["cpu_ms"])
    out = {name: statistics.median(v) for name, v in samples.items()}
    out.update({f"{name}_rss": max(v) for name, v in rss.items()})
    out.update({f"{name}_cpu": statistics.median(v) for name, v in cpu.items()})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-git", action="store_true", help="a workspace outside git")
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp_name:
        for size in sizes:
            print(f"… {size:,} memories", file=sys.stderr, flush=True)
            rows.append((size, bench_size(size, args.runs, not args.no_git, Path(tmp_name))))
    print(f"runs per figure: {args.runs} (medians; peak RSS is the largest); "
          f"git repository with changed files: {'no' if args.no_git else 'yes'}")  # fmt: skip
    print(
        "| memories | `python3 -c pass` | cold `engram load` | load ÷ floor "
        "| prompt hook | hook − load | session-start hook | peak RSS load / hook |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for size, r in rows:
        print(
            f"| {size:,} | {r['floor']:.1f} ms | {r['load']:.1f} ms | {r['load'] / r['floor']:.1f}× "
            f"| {r['prompt']:.1f} ms | {r['prompt'] - r['load']:+.1f} ms | {r['start']:.1f} ms "
            f"| {r['load_rss']:.0f} / {r['prompt_rss']:.0f} MB |"
        )
    print("\nCPU time (user + system), medians: less sensitive to a busy machine")
    print("| memories | `python3 -c pass` | cold `engram load` | load ÷ floor | prompt hook "
          "| hook − load | session-start hook |\n|---:|---:|---:|---:|---:|---:|---:|")  # fmt: skip
    for size, r in rows:
        print(
            f"| {size:,} | {r['floor_cpu']:.1f} ms | {r['load_cpu']:.1f} ms "
            f"| {r['load_cpu'] / r['floor_cpu']:.1f}× | {r['prompt_cpu']:.1f} ms "
            f"| {r['prompt_cpu'] - r['load_cpu']:+.1f} ms | {r['start_cpu']:.1f} ms |"
        )
    print("\nVerdicts on CPU time (the machine may be shared; wall time in brackets):")
    for size, r in rows:
        extra = r["prompt_cpu"] - r["load_cpu"]
        hook_ok = extra <= HOOK_MARGIN_MS
        print(f"- {size:,}: prompt hook ≤ load + {HOOK_MARGIN_MS:g} ms: "
              f"{'met' if hook_ok else 'NOT met'} ({extra:+.1f} ms; wall "
              f"{r['prompt'] - r['load']:+.1f} ms)")  # fmt: skip
        if size == 1000:
            multiple = r["load_cpu"] / r["floor_cpu"]
            floor_ok = multiple <= FLOOR_MULTIPLE
            print(f"- 1,000: cold load ≤ {FLOOR_MULTIPLE:g} × floor: "
                  f"{'met' if floor_ok else 'NOT met'} ({multiple:.1f}×; wall "
                  f"{r['load'] / r['floor']:.1f}×)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
