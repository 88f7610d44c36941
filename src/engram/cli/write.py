"""Write commands: save, save-session (ss), commit, archive, note, promote.

Parsing, the terminal approval prompt and printing only; every decision is made by
`engram.core.api` (the same functions the MCP tools call). The prompt never hangs a
host: without a terminal on stdin, a command that would ask refuses (exit 2) and
says to use --force (the human asked for it) or --propose (print the token for
`engram commit`).
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
from typing import Any

from engram.cli.colour import paint
from engram.cli.common import add_json_flag, emit, roots_from
from engram.core import api
from engram.core.api import (
    TYPE_ALIASES,
    TYPES,
    commit_choosing,
    decode_input,
    for_person,
    guess_type,
    normalise_type,
    parse_candidates,
)
from engram.core.errors import EngramError, UsageError
from engram.core.results import Result

SCOPE_CHOICES = ("workspace", "global", "both")
_SHORTCUT = re.compile(r"^(?:last\s+)?(\S+)(?:\s+sessions?)?$", re.IGNORECASE)
MAX_PROMPTS = 5
MAX_INPUT_CHARS = 200_000  # engram.core.write.candidates.MAX_INPUT_CHARS (not imported at start-up)
MAX_INPUT_BYTES = 4 * MAX_INPUT_CHARS  # UTF-8 needs at most 4 bytes a character


def positive_int(value: str) -> int:
    if not re.fullmatch(r"\+?\d+", value.strip()) or int(value) < 1:
        raise argparse.ArgumentTypeError(f"{value!r} is not a positive integer (1, 2, …)")
    return int(value)


def _common(p: argparse.ArgumentParser, *, scope: bool = True, ask: bool = True) -> None:
    if scope:
        p.add_argument(
            "--scope", choices=SCOPE_CHOICES, help="where to save (default: config save_target)"
        )
    if ask:
        p.add_argument(
            "--propose",
            action="store_true",
            help="only propose: print the preview and the approval token for `engram commit`",
        )
    add_json_flag(p)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("save", help="propose memories ([TYPE] TEXT [TYPE TEXT …]) for approval")
    p.add_argument(
        "words",
        nargs="+",
        metavar="[TYPE] TEXT [TYPE TEXT ...]",
        help="rule|skill|knowledge, then the text (quoted); several pairs make one proposal",
    )
    p.add_argument("--role", help="role(s) the memory applies to (comma-separated)")
    p.add_argument(
        "--trigger",
        action="append",
        metavar="PHRASE",
        help="a phrasing a teammate would type when the memory applies (repeat, up to 8; "
        "for several memories write `| TRIGGERS: a; b` after each text)",
    )
    p.add_argument("-f", "--force", action="store_true", help="write without asking")
    _common(p)
    p.set_defaults(func=run_save)

    for name in ("save-session",):
        p = sub.add_parser(
            name,
            aliases=["ss"],
            help="propose candidate lines from a session and ask for approval",
        )
        p.add_argument("--file", metavar="F", help="candidate lines (default: stdin; - = stdin)")
        p.add_argument("-f", "--force", action="store_true", help="write without asking")
        p.add_argument(
            "--query-level",
            type=positive_int,
            metavar="N",
            help="keep the candidates of the last N session blocks",
        )
        p.add_argument("shortcut", nargs="*", help=argparse.SUPPRESS)  # `ss -f last 50 sessions`
        _common(p)
        p.set_defaults(func=run_save_session)

    p = sub.add_parser("commit", help="write an approved proposal (hosts that run shell commands)")
    p.add_argument("token", help="the approval token of the proposal")
    p.add_argument("--approve", metavar="all|1,3", help="all, or candidate numbers from 1")
    for flag, what in DUPLICATE_FLAGS.items():
        p.add_argument(f"--{flag}", metavar="3[,4]", help=f"{what} (at a terminal only)")
    p.add_argument("--scope", choices=SCOPE_CHOICES, help="narrow the proposal's scope")
    add_json_flag(p)
    p.set_defaults(func=run_commit)

    p = sub.add_parser("archive", help="move a memory to archive/ (never deletes)")
    p.add_argument("id", help="memory id")
    p.add_argument("--reason", required=True, help="why it is archived")
    add_json_flag(p)
    p.set_defaults(func=run_archive)

    p = sub.add_parser("note", help="propose a working-tier task note (expires after a while)")
    p.add_argument("text", nargs="+", help="the note")
    p.add_argument("--objective", required=True, help="the task the note serves")
    p.add_argument("--type", default="knowledge", help="rule, skill or knowledge (default)")
    p.add_argument("-f", "--force", "-y", "--yes", action="store_true", help="write without asking")
    _common(p)
    p.set_defaults(func=run_note)

    p = sub.add_parser("promote", help="propose a working note as a durable memory")
    p.add_argument("id", help="working note id")
    p.add_argument("-f", "--force", action="store_true", help="write without asking")
    _common(p, scope=False)
    p.set_defaults(func=run_promote)


# ---------------------------------------------------------------- the terminal prompt


def interactive() -> bool:
    try:
        return bool(sys.stdin and sys.stdin.isatty())
    except (AttributeError, ValueError):
        return False


def _refuse_non_interactive(command: str) -> None:
    # The refusal is read by whatever ran the command, often an agent: it names the way
    # that keeps a person in the loop, never the one that skips them (`--force`).
    raise UsageError(
        f"{command} asks a person for approval, but stdin is not a terminal; run it in a "
        "terminal, or pass --propose to print a proposal for a person to approve"
    )


def _ask(prompt: str) -> str | None:
    sys.stdout.write(prompt)
    sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        print()  # end of input (Ctrl-D): the next message starts on its own line
        return None
    return line.strip()


DUPLICATE_FLAGS = {  # option → what it does to a possible duplicate; the choice it makes
    "keep": "keep these possible duplicates as new memories",
    "update": "update the memory each of these possible duplicates may repeat",
    "skip": "leave these possible duplicates out",
}
CHOICE_OF = {
    "keep": "new",
    "update": "update",
    "skip": "skip",
    "K": "new",
    "U": "update",
    "S": "skip",
}


def _commit(
    roots: object,
    proposal: Result,
    approve: str,
    args: argparse.Namespace,
    *,
    warnings_shown: bool = False,
    choices: dict[int, str] | None = None,
) -> int:
    """Commit a proposal and print the outcome; the proposal's warnings (redactions) come
    with it unless the person already saw them with the preview. `choices`: what the
    person at this terminal decided for possible duplicates (new, update or skip)."""

    token = proposal.data["approval_token"]
    if choices:
        committed = commit_choosing(roots, token, approve or "", choices)  # type: ignore[arg-type]
    else:
        committed = api.commit(roots, token, approve)  # type: ignore[arg-type]
    if not warnings_shown:
        committed.diagnostics[:0] = [d for d in proposal.diagnostics if d.level == "warning"]
    return emit(committed, args)


def print_proposal(result: Result, args: argparse.Namespace) -> int:
    """`--propose`: printed for a person with no prompt waiting, so the preview says how
    to approve from a shell (`engram commit`), not what to answer at a prompt."""

    result = for_person(result)
    token = result.data.get("approval_token", "")
    lines = result.text.split("\n")
    how = f"engram commit {token} --{{flag}} {{n}}"
    result.text = "\n".join(_with_keep_hints(lines, result, how))
    return emit(result, args)


def keepable(result: Result) -> list[int]:
    """Numbers of the candidates deferred as possible duplicates (a person may keep them)."""
    return [
        int(c["number"])
        for c in result.data.get("candidates") or []
        if str(c.get("deferred_reason") or "").startswith("possible duplicate of ")
    ]


def _with_keep_hints(lines: list[str], result: Result, how: str) -> list[str]:
    """Below each possible duplicate's "Will be deferred" line: how to keep, update or skip it.

    `how` names the way (`{key} {n}` at the prompt, `engram commit … --{flag} {n}`); the
    line is found from the proposal's data, never from the candidate's text.
    """
    numbers = set(keepable(result))
    if not numbers:
        return lines
    reasons = {
        int(c["number"]): f"   Will be deferred: {c['deferred_reason']}"
        for c in result.data.get("candidates") or []
        if int(c["number"]) in numbers
    }
    heads = [i for i, ln in enumerate(lines) if re.match(r"^\d+\. \[", ln)]
    out = list(lines)
    for i in reversed(heads):  # from the end, so earlier indexes stay valid
        n = int(lines[i].split(".", 1)[0])
        nxt = next((h for h in heads if h > i), len(lines))
        if n not in reasons:
            continue
        at = max((j for j in range(i, nxt) if lines[j] == reasons[n]), default=None)
        if at is not None:
            dup = reasons[n].split()[6].rstrip(";")
            out[at + 1 : at + 1] = [
                f"   Keep as new: {how.format(key='K', flag='keep', n=n)}   (writes it beside {dup})",
                f"   Update {dup}: {how.format(key='U', flag='update', n=n)}   (its revision kept)",
                f"   Skip: {how.format(key='S', flag='skip', n=n)}",
            ]
    return out


def _terminal_preview(result: Result) -> str:
    """The preview a person approves, with its warnings (what was redacted) below it."""
    keep = [
        ln
        for ln in result.text.splitlines()
        if not ln.startswith(("  Shell:", "  Agent:", "Approval token:", "  Terminal:"))
    ]

    keep = _with_keep_hints(keep, result, "answer {key} {n}")
    keep = ["\n".join(keep).rstrip()]
    label = paint("Warning:", "warning", sys.stdout)
    keep += [f"{label} {d.message}" for d in result.diagnostics if d.level == "warning"]
    return "\n".join(keep)


_NUMBERS = r"\d+(?:\s*,\s*\d+)*"
_ANSWER = re.compile(
    rf"^(?:A\s*(?P<approve>all|{_NUMBERS})?)?(?P<choices>(?:\s*[KUS]\s*{_NUMBERS})*)$",
    re.IGNORECASE,
)
_CHOICE = re.compile(rf"([KUS])\s*({_NUMBERS})", re.IGNORECASE)


def parse_answer(answer: str) -> tuple[str, dict[int, str]] | None:
    """`A`, `A 1,3`, `K 3`, `A 1,2 K 3 U 4 S 5` → (approve, choices); None otherwise.

    `approve` is "all", "1,3" or "" (only the chosen ones). K keeps a possible duplicate
    as new, U updates the memory it may repeat, S skips it; K and U count as approved.
    """
    m = _ANSWER.match(answer.strip())
    if not m or not answer.strip():
        return None
    choices: dict[int, str] = {}
    for key, numbers in _CHOICE.findall(m.group("choices")):
        for n in re.findall(r"\d+", numbers):
            if int(n) in choices:
                return None  # one answer per candidate
            choices[int(n)] = CHOICE_OF[key.upper()]
    if m.group("approve") and m.group("approve").lower() != "all":
        approve = ",".join(re.findall(r"\d+", m.group("approve")))
    else:
        approve = "all" if answer.strip()[:1].upper() == "A" else ""
    return approve, choices


_YES = ("y", "yes")
_NO = ("n", "no")


def prompt_loop(
    roots: object,
    result: Result,
    args: argparse.Namespace,
    revise: object | None = None,
    *,
    yes_no: bool = False,
) -> int:
    """Ask A / A 1,3 / B <note> / C (or y/N for a note) until the human decides.

    Ctrl-C declines the proposal on the way out, so no approvable token is left behind.
    """

    state = {"result": result}
    try:
        return _ask_until_decided(api, roots, state, args, revise, yes_no=yes_no)
    except KeyboardInterrupt:
        with contextlib.suppress(EngramError):
            api.decline(
                roots, state["result"].data["approval_token"], "interrupted in the terminal"
            )  # type: ignore[arg-type]
        print()
        raise


def _ask_until_decided(
    api: Any,
    roots: object,
    state: dict[str, Result],
    args: argparse.Namespace,
    revise: object | None,
    *,
    yes_no: bool,
) -> int:
    result = state["result"]
    print(_terminal_preview(result))
    for _ in range(MAX_PROMPTS * 4):
        token = result.data["approval_token"]
        count = len(result.data["candidates"])
        if yes_no:
            answer = _ask("Save this note? [y/N] ")
            if answer is not None and answer.lower() in (*_YES, "a"):
                return _commit(roots, result, "all", args, warnings_shown=True)
            api.decline(roots, token, "cancelled in the terminal")  # type: ignore[arg-type]
            print("Cancelled; nothing was saved.")
            return 0
        kept = keepable(result)
        keep_hint = (
            f", K/U/S {kept[0]} = keep as new, update or skip a possible duplicate" if kept else ""
        )
        answer = _ask(
            f"Approve? A (or y) = all, A 1,3 = some{keep_hint}, B <note> = revise, "
            "C (or n) = cancel: "
        )
        if answer is not None and answer.lower() in _YES:
            answer = "A"
        if answer is None or answer[:1].upper() == "C" or answer.lower() in _NO:
            api.decline(roots, token, "cancelled in the terminal")  # type: ignore[arg-type]
            print("Cancelled; nothing was saved.")
            return 0
        head, rest = answer[:1].upper(), answer[1:].strip()
        if head in ("A", "K", "U", "S"):
            parsed = parse_answer(answer)
            if parsed is None:
                print("Answer A, A 1,3, K 3, U 3, S 3 or A 1,2 K 3 (candidate numbers from 1).")
                continue
            approve, choices = parsed
            try:
                return _commit(roots, result, approve, args, warnings_shown=True, choices=choices)
            except UsageError as exc:
                print(f"engram: {exc.message}", file=sys.stderr)
                continue
        if head == "B":
            if not callable(revise):
                print("This proposal cannot be revised here; approve it (A) or cancel it (C).")
                continue
            if not rest:
                print("B needs a note: B <new text>, or B <n>: <new text> to revise candidate n.")
                continue
            print(f"Revision: {rest}")
            revised = revise(rest, count)
            if revised is None:
                continue
            api.decline(roots, token, "revised in the terminal; use the new proposal's token")  # type: ignore[arg-type]
            result = state["result"] = revised
            print(_terminal_preview(result))
            continue
        k = f", K/U/S {kept[0]} (keep, update or skip a possible duplicate)" if kept else ""
        print(f"Answer A (or y), A 1,3{k}, B <note> or C (or n).")
    api.decline(roots, result.data["approval_token"], "no answer in the terminal")  # type: ignore[arg-type]
    print("No valid answer; nothing was saved.")
    return 1


def _split_revision(note: str, count: int) -> tuple[int, str] | None:
    m = re.match(r"^(\d+)\s*[:.)-]\s*(.+)$", note)
    if m:
        n = int(m.group(1))
        if not 1 <= n <= count:
            print(f"There is no candidate {n} (1 to {count}).")
            return None
        return n, m.group(2).strip()
    if count == 1:
        return 1, note
    print(f"To revise, name the candidate: B <n>: <new text> (1 to {count}).")
    return None


# ---------------------------------------------------------------- commands


def _one_edit(a: str, b: str) -> bool:
    """True when `a` and `b` differ by one insertion, deletion, substitution or swap."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
        if len(diff) == 1:
            return True
        i = diff[0]
        return len(diff) == 2 and diff[1] == i + 1 and a[i] == b[i + 1] and a[i + 1] == b[i]
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    return any(long_[:i] + long_[i + 1 :] == short for i in range(len(long_)))


def _type_of(word: str) -> str | None:
    """The memory type a separate word names (`rule`, `Skills`, `workflow`), else None."""

    return normalise_type(word) if word.strip() and not any(c.isspace() for c in word) else None


def _near_type(word: str) -> str | None:
    """The type a lone word is one edit away from (`rulez` → rule), else None."""

    w = word.strip().lower()
    if len(w) < 3 or not w.isalpha() or _type_of(w) is not None:
        return None
    for name in (*TYPES, *TYPE_ALIASES):
        if _one_edit(w, name):
            return normalise_type(name)
    return None


def _near_type_error(word: str, suggestion: str, rest: str | None) -> UsageError:
    hint = (
        f'; to save the words as they are, name the type first: engram save knowledge "{word} {rest}"'
        if rest
        else ""
    )
    return UsageError(
        f"{word!r} is not a memory type; did you mean {suggestion!r}? "
        f"Types: rule, skill (alias workflow), knowledge{hint}"
    )


def split_save_words(words: list[str]) -> list[tuple[str | None, str]]:
    """`[TYPE] TEXT [TYPE TEXT …]` → (type or None, text) pairs; UsageError when ambiguous.

    Several pairs are read only when types and texts alternate exactly (the first type may
    be left out when the first text is quoted); otherwise the words after an optional
    type are one text, as typed without quotes. A lone word one edit away from a type is
    refused with a suggestion rather than saved as part of the text.
    """
    if not words:
        raise UsageError('nothing to save: engram save [TYPE] "TEXT"')
    if len(words) == 1 and _type_of(words[0]) is not None:
        raise UsageError(f'save needs a text after the type: engram save {words[0]} "…"')
    if len(words) >= 2:
        near = _near_type(words[0])
        if near is not None:
            raise _near_type_error(words[0], near, " ".join(words[1:]))
    start = 0 if _type_of(words[0]) is not None else 1
    if start == 1 and not any(c.isspace() for c in words[0].strip()):
        start = -1  # an unquoted first word: the words are one text
    if start >= 0 and len(words) - start >= (4 if start == 0 else 2):
        heads, texts = words[start::2], words[start + 1 :: 2]
        quoted = all(any(c.isspace() for c in t.strip()) for t in texts)
        for head in heads:  # `rule "…" knowlege "…"`: a near miss where a type belongs
            near = _near_type(head) if quoted else None
            if near is not None and all(_type_of(t) is None for t in texts):
                raise _near_type_error(head, near, None)
        if all(_type_of(h) is not None for h in heads) and all(_type_of(t) is None for t in texts):
            if len(heads) > len(texts):
                raise UsageError(
                    f"{heads[-1]!r} at the end has no text after it: [TYPE] TEXT [TYPE TEXT …]"
                )
            pairs: list[tuple[str | None, str]] = [(None, words[0])] if start == 1 else []
            pairs += [(_type_of(h), t) for h, t in zip(heads, texts, strict=True)]
            for n, (_, text) in enumerate(pairs, start=1):
                if not text.strip():
                    raise UsageError(f"memory {n} of {len(pairs)} has an empty text")
                if "\n" in text.strip():
                    raise UsageError(
                        f"memory {n} of {len(pairs)} spans several lines; give one line"
                    )
            return pairs
    if _type_of(words[0]) is not None:
        return [(_type_of(words[0]), " ".join(words[1:]))]
    return [(None, " ".join(words))]


def _pairs_as_lines(pairs: list[tuple[str | None, str]]) -> str:
    """Candidate lines for several memories (a text's own `| CONTEXT: …` fields still apply)."""

    lines = []
    for mtype, text in pairs:
        body = text.strip()
        if not body.lower().startswith("text:"):
            body = f"TEXT: {body}"
        lines.append(f"TYPE: {mtype or guess_type(text)} | {body}")
    return "\n".join(lines)


def _propose_save(
    roots: object, pairs: list[tuple[str | None, str]], args: argparse.Namespace
) -> Result:
    triggers = getattr(args, "trigger", None)
    if len(pairs) == 1:
        return api.save(
            roots,  # type: ignore[arg-type]
            pairs[0][0],
            pairs[0][1],
            scope=args.scope,
            role=args.role,
            triggers=triggers,
        )
    if triggers:
        raise UsageError(
            f"--trigger goes with one memory, and {len(pairs)} are given; write "
            "`| TRIGGERS: a; b` after the text of each memory instead"
        )
    return api.propose(
        roots,  # type: ignore[arg-type]
        _pairs_as_lines(pairs),
        kind="save",
        scope=args.scope,
        role=args.role,
    )


def run_save(args: argparse.Namespace) -> int:
    pairs = split_save_words(list(args.words))
    _check_can_ask(args, "engram save")
    roots = roots_from(args)
    result = _propose_save(roots, pairs, args)
    if args.propose:
        return print_proposal(result, args)
    if args.force:
        return _commit(roots, result, "all", args)

    def revise(note: str, count: int) -> Result | None:
        picked = _split_revision(note, count)
        if picked is None:
            return None
        n, text = picked
        cands = result.data["candidates"]
        kept = [(c["type"], t) for c, (_, t) in zip(cands, pairs, strict=False)]
        kept[n - 1] = (kept[n - 1][0], text)
        try:
            revised = _propose_save(roots, kept, args)
        except EngramError as exc:
            print(f"engram: {exc.message}", file=sys.stderr)
            return None
        pairs[:] = kept
        return revised

    return prompt_loop(roots, result, args, revise)


def read_candidates(args: argparse.Namespace) -> str:
    src = args.file
    try:
        if src and src != "-":
            with open(src, "rb") as fh:
                raw = fh.read(MAX_INPUT_BYTES + 1)
        else:
            if interactive():
                raise UsageError("no candidates: pass --file F, or pipe candidate lines on stdin")
            raw = (
                sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
                if hasattr(sys.stdin, "buffer")
                else sys.stdin.read(MAX_INPUT_BYTES + 1).encode()
            )
    except OSError as exc:
        raise UsageError(f"cannot read {src or 'stdin'}: {exc.strerror or exc}") from exc
    if len(raw) > MAX_INPUT_BYTES:
        raise UsageError(
            f"candidate input is larger than {MAX_INPUT_BYTES:,} bytes; at most "
            f"{MAX_INPUT_CHARS:,} characters are accepted (one short memory per line)"
        )

    return decode_input(raw, f"{'--file ' + src if src and src != '-' else 'stdin'}")


def _query_level(args: argparse.Namespace) -> int | None:
    level = args.query_level
    if args.shortcut:
        m = _SHORTCUT.match(" ".join(args.shortcut))
        if not m:
            raise UsageError(
                f"unexpected words {' '.join(args.shortcut)!r}; the shortcut is "
                "`ss -f last N sessions` (N a positive integer)"
            )
        try:
            n = positive_int(m.group(1))
        except argparse.ArgumentTypeError as exc:
            raise UsageError(f"query level: {exc}") from exc
        if level is not None and level != n:
            raise UsageError(f"--query-level {level} and 'last {n} sessions' disagree")
        level = n
    return level


def run_save_session(args: argparse.Namespace) -> int:
    level = _query_level(args)
    from_stdin = not args.file or args.file == "-"
    _check_can_ask(args, "engram save-session", stdin_busy=from_stdin)
    roots = roots_from(args)
    text = read_candidates(args)
    if args.force:
        return emit(api.save_session_force(roots, text, scope=args.scope, query_level=level), args)
    result = api.propose(roots, text, kind="save_session", scope=args.scope, query_level=level)
    if args.propose:
        return print_proposal(result, args)

    current = parse_candidates(text, query_level=level)  # revisions accumulate here

    def revise(note: str, count: int) -> Result | None:
        picked = _split_revision(note, count)
        if picked is None:
            return None
        if "|" in picked[1]:
            print("A revised text cannot contain '|'.")
            return None
        cands = [type(c).from_dict(c.as_dict()) for c in current]
        cands[picked[0] - 1].text = picked[1]
        lines = "\n".join(c.to_line() for c in cands)
        try:
            revised = api.propose(roots, lines, kind="save_session", scope=args.scope)
        except EngramError as exc:
            print(f"engram: {exc.message}", file=sys.stderr)
            return None
        current[:] = cands
        return revised

    return prompt_loop(roots, result, args, revise)


def run_commit(args: argparse.Namespace) -> int:
    given = [flag for flag in DUPLICATE_FLAGS if getattr(args, flag) is not None]
    if not given:
        if args.approve is None:
            raise UsageError(
                "commit needs --approve all|1,3 (or --keep/--update/--skip N for a "
                "possible duplicate)"
            )
        roots = roots_from(args)
        return emit(api.commit(roots, args.token, args.approve, scope=args.scope), args)
    if not interactive():
        # Deciding a possible duplicate writes past a duplicate review: a person, at a terminal.
        raise UsageError(
            f"--{given[0]} decides a possible duplicate, so it is for a person at a terminal, "
            f"and stdin is not one; run it in a terminal (or approve without --{given[0]})"
        )
    choices: dict[int, str] = {}
    for flag in given:
        for n in _numbers(getattr(args, flag), f"--{flag}"):
            if n in choices:
                raise UsageError(f"candidate {n} is given two choices; give it one")
            choices[n] = CHOICE_OF[flag]

    roots = roots_from(args)
    result = commit_choosing(roots, args.token, args.approve or "", choices, scope=args.scope)  # type: ignore[arg-type]
    return emit(result, args)


def _numbers(value: str, option: str) -> list[int]:
    parts = [p.strip() for p in value.split(",")]
    if not all(re.fullmatch(r"\d+", p) for p in parts):
        raise UsageError(
            f"{option} {value!r} is not valid; give candidate numbers from 1 (3 or 3,4)"
        )
    return [int(p) for p in parts]


def _check_can_ask(args: argparse.Namespace, command: str, *, stdin_busy: bool = False) -> None:
    """A command that will prompt needs a person at a terminal (stdin not used for input)."""
    if args.force and args.propose:
        raise UsageError("--force writes without asking and --propose only proposes; pick one")
    if args.force or args.propose:
        return
    if stdin_busy or not interactive():
        _refuse_non_interactive(command)
    if args.json:
        raise UsageError("--json needs --force or --propose (the prompt is for a person)")


def run_archive(args: argparse.Namespace) -> int:
    roots = roots_from(args)
    return emit(api.archive(roots, args.id, args.reason), args)


def run_note(args: argparse.Namespace) -> int:
    _check_can_ask(args, "engram note")
    roots = roots_from(args)
    result = api.propose_note(
        roots, " ".join(args.text), args.objective, mtype=args.type, scope=args.scope
    )
    if args.propose:
        return print_proposal(result, args)
    if args.force:
        return _commit(roots, result, "all", args)
    return prompt_loop(roots, result, args, yes_no=True)


def run_promote(args: argparse.Namespace) -> int:
    _check_can_ask(args, "engram promote")
    roots = roots_from(args)
    result = api.promote(roots, args.id)
    if args.propose:
        return print_proposal(result, args)
    if args.force:
        return _commit(roots, result, "all", args)
    return prompt_loop(roots, result, args)
