"""What a user pays for one command: wall time and peak RSS of a fresh process.

A benchmark process that has generated a workspace is large, and a child forked from it
reports the parent's pages in its peak RSS (`ru_maxrss` keeps the high-water mark across
`exec`). So every command is started by a small launcher: it forks and execs the command,
times it from fork to exit, and reads the child's peak RSS, which is then the command's own
(or the launcher's ~9 MB, whichever is larger). The interpreter floor (`python3 -c pass`)
is measured the same way, side by side, so figures can be read as multiples of it. CPU
time (user + system) is reported too: on a busy machine it varies far less than wall time.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

LAUNCHER = r"""
import json, os, resource, sys, time
argv = json.loads(sys.argv[1])
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status = os.waitpid(pid, 0)
ms = (time.perf_counter() - start) * 1000
use = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (use.ru_utime + use.ru_stime) * 1000
report = {"ms": ms, "cpu_ms": cpu, "rss_mb": use.ru_maxrss / 1024}
sys.stderr.write(json.dumps({**report, "code": os.waitstatus_to_exitcode(status)}))
"""


def measure(
    cmd: list[str], *, cwd: Path, env: dict[str, str], stdin: str = ""
) -> tuple[float, float, str]:
    """(wall ms, peak RSS MB, stdout) of `cmd` as a fresh process; exits on failure.

    The CPU time of the last call is kept in `LAST["cpu_ms"]`."""
    proc = subprocess.run(
        [sys.executable, "-c", LAUNCHER, json.dumps(cmd)],
        input=stdin,
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )
    try:
        report = json.loads(proc.stderr.strip().splitlines()[-1])
    except (ValueError, IndexError):
        sys.exit(f"measure: no report from the launcher for {' '.join(cmd)}: {proc.stderr}")
    if report["code"] != 0:
        sys.exit(f"measure: {' '.join(cmd)} exited {report['code']}")
    LAST["cpu_ms"] = report["cpu_ms"]
    return report["ms"], report["rss_mb"], proc.stdout


LAST: dict[str, float] = {"cpu_ms": 0.0}


def floor_cmd() -> list[str]:
    """The interpreter floor: the Python that runs `engram`, doing nothing."""
    return [sys.executable, "-c", "pass"]
