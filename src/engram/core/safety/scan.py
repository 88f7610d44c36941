"""Safety scan for everything that may become memory: injection refusal and redaction.

Memory is read later by an agent that trusts it, so a line aimed at that reader
("ignore previous instructions", "you are now …", hidden characters) is refused, not
cleaned: the human should see the refusal and rephrase (`injection`). Secrets and
personal data are redacted instead (`[REDACTED:<kind>]`), because the rest of the memory
is still worth keeping (`secrets`). Both match normalised text (`normalise`).
"""

from __future__ import annotations

import re
from pathlib import Path

from engram.core.errors import SafetyError, UsageError
from engram.core.memory import ID_RE
from engram.core.safety.injection import Refusal, find_injection
from engram.core.safety.secrets import secret_spans

__all__ = [
    "Redaction",
    "Refusal",
    "UnsafeIdError",
    "check_id",
    "clean_names",
    "find_injection",
    "inside",
    "public_text",
    "redact",
    "refuse_injection",
    "scan_text",
    "screen_fields",
    "substance_problem",
]


def refuse_injection(text: str, where: str) -> None:
    """Raise SafetyError naming where and why when `text` reads like an injection."""
    r = find_injection(text)
    if r is None:
        return
    raise SafetyError(refusal_message(r, where), code="safety.injection")


def refusal_message(r: Refusal, where: str) -> str:
    """The refusal as a sentence: where, why, and what to do instead."""
    shown = redact(r.excerpt.strip()).text  # a refusal never repeats a secret it quotes
    excerpt = f' ("{shown}")' if shown else ""
    return (
        f"{where} refused: {r.kind}{excerpt}. Memory is read later by an agent, so text "
        "addressed to that agent (instructions to ignore rules, role play, system-prompt "
        "talk, exfiltration, hidden text) is not accepted; rephrase it as a plain fact, "
        "rule or workflow"
    )


# ---------------------------------------------------------------- redaction

_GENERIC_KINDS = frozenset(
    {"high-entropy-string", "secret", "secret-keyword", "secret-assignment", "phone", "password"}
)
_MARKER = re.compile(r"\[REDACTED:[a-z0-9-]+\]")


def _merge(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Overlapping spans become one; a specific kind (aws-access-key) beats a generic one."""

    def rank(kind: str, length: int) -> tuple[int, int]:
        return (0 if kind in _GENERIC_KINDS else 1, length)

    out: list[tuple[int, int, str, tuple[int, int]]] = []
    for s, e, k in sorted(spans, key=lambda x: (x[0], -(x[1] - x[0]))):
        if out and s < out[-1][1]:
            ps, pe, pk, prank = out[-1]
            if rank(k, e - s) > prank:
                pk, prank = k, rank(k, e - s)
            out[-1] = (ps, max(pe, e), pk, prank)
        else:
            out.append((s, e, k, rank(k, e - s)))
    return [(s, e, k) for s, e, k, _ in out]


def public_text(text: str) -> str:
    """A message for the person or the agent with any secret in it redacted: a refusal or
    an error that quotes what it was given must not repeat a token or a password."""
    return redact(text).text if text else text


def clean_names(names: list[str], source: str) -> list[str]:
    """The names (tags, globs) that are neither a secret nor a piece of one in `source`.

    Names are made from the text before it is screened (headings, the tools a line names,
    file globs); a name cut from a secret (`quetzal77`, one chunk of an AWS key) would keep
    the secret in front matter, the index and the pending file after the body is redacted."""

    secrets = [source[s:e].lower() for s, e, _ in secret_spans(source)] if source else []
    out = []
    for name in names:
        low = name.lower()
        if any(low in s for s in secrets) or redact(name).changed:
            continue
        out.append(name)
    return out


class Redaction:
    """A text with its secrets replaced, and the kind of each replacement.

    (A plain class: `dataclasses` would pull `inspect` onto the hooks' start-up path.)
    """

    __slots__ = ("kinds", "text")

    def __init__(self, text: str, kinds: list[str] | None = None) -> None:
        self.text = text
        self.kinds: list[str] = [] if kinds is None else kinds

    def __repr__(self) -> str:
        return f"Redaction(text={self.text!r}, kinds={self.kinds!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Redaction) and (self.text, self.kinds) == (other.text, other.kinds)

    __hash__ = None  # type: ignore[assignment]

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def redact(text: str, *, strict: bool = True) -> Redaction:
    """Replace secrets and personal data with `[REDACTED:<kind>]`; repeat until stable.

    `strict=False`: only the kinds a hand-written file loses on read (`LENIENT_KEPT_KINDS`).
    """

    kinds: list[str] = []
    for _ in range(3):
        markers = [m.span() for m in _MARKER.finditer(text)]
        spans = [
            sp
            for sp in _merge(secret_spans(text, strict=strict))
            # never re-redact our own markers
            if not any(ms <= sp[0] and sp[1] <= me for ms, me in markers)
            and "REDACTED:" not in text[sp[0] : sp[1]]
        ]
        if not spans:
            break
        parts: list[str] = []
        pos = 0
        for s, e, k in spans:
            parts.append(text[pos:s])
            parts.append(f"[REDACTED:{k}]")
            kinds.append(k)
            pos = e
        parts.append(text[pos:])
        text = "".join(parts)
    return Redaction(text, kinds)


def scan_text(text: str, where: str) -> Redaction:
    """Refuse injection-like text, then redact secrets; what may be previewed or written."""
    refuse_injection(text, where)
    red = redact(text)
    # Redaction can glue pieces into something new; check the result too.
    refuse_injection(red.text, where)
    return red


def screen_fields(fields: dict, where: str) -> str:
    """Why a candidate's other fields (tags, paths, source file, title) cannot be written,
    or ''. They land in front matter and reach the agent like TEXT does: an instruction
    refuses the candidate, a secret is redacted in place. File names and globs are read
    with their separators as spaces too (`ignore-all-previous-instructions.md`)."""
    for key, value in list(fields.items()):
        if isinstance(value, dict):
            problem = screen_fields(value, where)
            if problem:
                return problem
            continue
        items = value if isinstance(value, list) else [value]
        out = []
        for item in items:
            if not isinstance(item, str):
                out.append(item)
                continue
            spaced = re.sub(r"[-_/.*]+", " ", item)
            hit = find_injection(item) or find_injection(spaced)
            if hit is not None:
                return f"{where} {key.upper()} refused: {hit.kind}"
            out.append(redact(item).text)
        fields[key] = out if isinstance(value, list) else out[0]
    return ""


_MARKUP_NOISE = re.compile(
    r"<[^>\n]*>|!?\[([^\]\n]*)\]\([^)\n]*\)|&[#\w]+;|[*_`~#>|=\-\[\](){}:;,.!?\"'/\\]+"
)


def substance_problem(text: str) -> str | None:
    """Why `text` holds nothing worth remembering (only a secret, only markup, empty)."""
    if not text.strip():
        return "it is empty"
    without = _MARKER.sub(" ", text)
    if _MARKER.search(text) and not re.search(r"\w", _MARKUP_NOISE.sub(r" \1 ", without)):
        return "it is only a secret (nothing is left once it is redacted)"
    if not re.search(r"\w", _MARKUP_NOISE.sub(r" \1 ", text)):
        return "it is only markup or punctuation, with no words"
    return None


# ---------------------------------------------------------------- ids and paths


class UnsafeIdError(SafetyError, UsageError):
    """An id that is not a slug: refused for safety, and a usage error (exit code 2)."""


def check_id(mid: str, what: str = "id") -> str:
    """A memory id must be a slug; anything else (../, /, spaces) is refused."""
    if not isinstance(mid, str) or not ID_RE.match(mid):
        raise UnsafeIdError(
            f"{what} {mid!r} is not a memory id: use lowercase letters, digits and '-' "
            "(starting and ending with a letter or digit, at most 80 characters)",
            code="safety.id",
        )
    return mid


def inside(root: Path, path: Path) -> Path:
    """`path`, resolved, if it stays inside `root`; otherwise a SafetyError."""
    r = root.resolve()
    p = (root / path).resolve() if not path.is_absolute() else path.resolve()
    if p != r and r not in p.parents:
        raise SafetyError(f"path {path} leaves the memory root {root}", code="safety.path")
    return p
