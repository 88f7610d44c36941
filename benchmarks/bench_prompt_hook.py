"""Raw prompts through the prompt hook, per routing suite: how often an unrelated prompt gets
nothing, how many must-load memories arrive as bodies, misleading bodies, tokens.

    ENGRAM_HOME=$(mktemp -d) python benchmarks/bench_prompt_hook.py tests/fixtures/routing_cases*.json
"""

import json
import shutil
import sys
import tempfile
from pathlib import Path

from engram.core.store.index import forget_open_indexes
from engram.hooks.run import respond

res = {}
for suite in sys.argv[1:]:
    d = json.loads(Path(suite).read_text(encoding="utf-8"))
    ws = Path(suite).parent / d["workspace"]
    tmp = Path(tempfile.mkdtemp()) / "w"
    shutil.copytree(ws, tmp)
    empty = quiet = 0
    must = hit = 0
    bodies = mis = 0
    toks = []
    for i, c in enumerate(d["cases"]):
        if c.get("roles"):
            continue
        out = respond(
            "claude",
            "user-prompt-submit",
            {"prompt": c["task"], "cwd": str(tmp), "session_id": f"s{i}"},
        )
        text = (out or {}).get("hookSpecificOutput", {}).get("additionalContext", "") if out else ""
        toks.append(len(text) // 4)
        if not c["must"]:
            empty += 1
            quiet += not text
        else:
            must += len(c["must"])
            hit += sum(f"id: {m}\n" in text for m in c["must"])
        shown = [ln[4:] for ln in text.splitlines() if ln.startswith("id: ")]
        bodies += len(shown)
        mis += sum(s in c.get("must_not", []) for s in shown)
    forget_open_indexes()
    print(
        f"{Path(suite).name}: unrelated prompts silent {quiet}/{empty} = {quiet / max(empty, 1):.2f}; "
        f"must as bodies {hit}/{must} = {hit / max(must, 1):.2f}; misleading bodies {mis}/{max(bodies, 1)} = {mis / max(bodies, 1):.3f}; mean tokens {sum(toks) / len(toks):.0f}"
    )
