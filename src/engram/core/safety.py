"""Safety scan for everything that may become memory: injection refusal and redaction.

Memory is read later by an agent that trusts it, so a line aimed at that reader
("ignore previous instructions", "you are now …", hidden characters) is refused, not
cleaned: the human should see the refusal and rephrase. Secrets and personal data are
redacted instead (`[REDACTED:<kind>]`), because the rest of the memory is still worth
keeping. Secret detection uses detect-secrets' maintained plugins, imported lazily
(they are slow to import), plus patterns for what those plugins do not cover.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from engram.core.errors import SafetyError, UsageError
from engram.core.memory import ID_RE

# ---------------------------------------------------------------- injection refusal

# Invisible or direction-changing characters: text that reads differently than it looks.
_HIDDEN_CHARS = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)

_I = re.IGNORECASE
_PREVIOUS = r"(?:all\s+|any\s+|the\s+|your\s+|my\s+|these\s+|those\s+)*(?:previous|prior|above|earlier|preceding|former|existing|original|system|other)"
_INSTR = r"(?:instructions?|rules?|prompts?|directives?|guidelines?|context|messages?|constraints?|guardrails?)"

# (class, pattern): each names why a line is refused.
INJECTION_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "override of earlier instructions",
        re.compile(
            rf"\b(?:ignore|disregard|forget|override|overrule|bypass|skip|drop|discard)\b[\s\w,'-]{{0,20}}?{_PREVIOUS}\s+{_INSTR}",
            _I,
        ),
    ),
    (
        "override of earlier instructions",
        re.compile(rf"\b(?:ignore|disregard|forget)\s+(?:all|everything|any)\s+{_INSTR}\b", _I),
    ),
    (
        "override of earlier instructions",
        re.compile(
            r"\b(?:new|updated|real|actual|true)\s+(?:system\s+)?instructions?\s*(?::|follow|are)",
            _I,
        ),
    ),
    (
        "role play aimed at the reader",
        re.compile(
            r"\byou\s+are\s+(?:now|no\s+longer)\b|\bfrom\s+now\s+on,?\s+you\b|"
            r"\b(?:act|behave|respond)\s+as\s+(?:if\s+you|an?\s+(?:unrestricted|unfiltered|evil|different))|"
            r"\bpretend\s+(?:to\s+be|you\s+are|that\s+you)\b|\brole-?\s?play\s+as\b|"
            r"\b(?:jailbreak|DAN\s+mode|developer\s+mode\s+enabled)\b",
            _I,
        ),
    ),
    (
        "system-prompt talk",
        re.compile(
            r"\bsystem\s*prompt\b|\bdeveloper\s+message\b|<\|?\s*(?:system|im_start|im_end|assistant)\b|"
            r"\[/?INST\]|<</?SYS>>|^\s*(?:system|assistant)\s*:",
            _I,
        ),
    ),
    (
        "exfiltration request",
        re.compile(
            r"\b(?:send|post|upload|exfiltrate|leak|forward|transmit|email|paste)\b[\w\s,'-]{0,40}?"
            r"(?:\b(?:secrets?|credentials?|passwords?|tokens?|api\s*keys?|"
            r"env(?:ironment)?\s*(?:variables?|vars)|ssh\s+keys?|private\s+keys?|cookies?)\b|"
            r"\.env\b)[\w\s,'.-]{0,40}?\b(?:to|at|into)\b|"
            r"\b(?:reveal|print|show|dump|output|disclose|repeat)\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|instructions|secrets|api\s*keys?|credentials)|"
            r"\bcurl\b[^|]{0,200}\|\s*(?:ba|z)?sh\b|\b(?:webhook\.site|requestbin|ngrok\.io|pipedream\.net)\b",
            _I,
        ),
    ),
    (
        "instruction to hide from or bypass the human",
        re.compile(
            r"\b(?:do\s+not|don't|never)\s+(?:tell|inform|show|mention\s+(?:this\s+)?to|ask)\s+(?:the\s+)?(?:user|human|developer|operator)\b|"
            r"\bwithout\s+(?:asking|telling|informing|the\s+(?:user|human)'?s?\s+(?:approval|consent|knowledge))|"
            r"\b(?:auto-?\s?approve|skip\s+(?:the\s+)?(?:approval|confirmation|review))\b|"
            r"\b(?:call|run|invoke)\s+engram_commit\b|\bmcp__engram__engram_commit\b",
            _I,
        ),
    ),
    (
        "hidden markup",
        re.compile(
            r"<!--|-->|<\s*(?:script|iframe|object|embed|style|meta|link)\b|"
            r"style\s*=\s*[\"'][^\"']*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0)|"
            r"\bon(?:load|error|click|mouseover)\s*=|javascript:|data:text/html",
            _I,
        ),
    ),
)


@dataclass(frozen=True)
class Refusal:
    kind: str
    excerpt: str


def find_injection(text: str) -> Refusal | None:
    """The first reason to refuse `text`, or None. Checks hidden characters first."""
    m = _HIDDEN_CHARS.search(text)
    if m:
        return Refusal(
            f"hidden character U+{ord(m.group()):04X} (zero-width, bidi control or tag "
            "characters make text read differently than it looks)",
            "",
        )
    import unicodedata

    folded = unicodedata.normalize("NFKC", text)
    for kind, rx in INJECTION_PATTERNS:
        m = rx.search(folded)
        if m:
            return Refusal(kind, m.group(0)[:60])
    return None


def refuse_injection(text: str, where: str) -> None:
    """Raise SafetyError naming where and why when `text` reads like an injection."""
    r = find_injection(text)
    if r is None:
        return
    excerpt = f' ("{r.excerpt.strip()}")' if r.excerpt.strip() else ""
    raise SafetyError(
        f"{where} refused: {r.kind}{excerpt}. Memory is read later by an agent, so text "
        "addressed to that agent (instructions to ignore rules, role play, system-prompt "
        "talk, exfiltration, hidden text) is not accepted; rephrase it as a plain fact, "
        "rule or workflow",
        code="safety.injection",
    )


# ---------------------------------------------------------------- redaction

_EXTRA_SECRET_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "private-key",
        re.compile(
            r"-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)",
            re.DOTALL,
        ),
    ),
    (
        "connection-string",
        re.compile(
            r"\b[a-z][a-z0-9+.-]{1,30}://[^\s:/@'\"<>]+:[^\s@/'\"<>]+@[^\s'\"<>]+", re.IGNORECASE
        ),
    ),
    (
        "connection-string",
        re.compile(
            r"\b(?:password|pwd)\s*=\s*[^;\s'\"]+(?=\s*(?:;|$))|"
            r"(?:Server|Data Source|Host)=[^;]+;[^\n]*?(?:Password|Pwd)=[^;\s]+",
            re.IGNORECASE,
        ),
    ),
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")),
    (
        "bearer-token",
        re.compile(
            r"\b(?:bearer|token|basic)\s+(?=[A-Za-z0-9._~+/=-]*\d)(?=[A-Za-z0-9._~+/=-]*[A-Za-z])"
            r"[A-Za-z0-9._~+/=-]{16,}",
            re.IGNORECASE,
        ),
    ),
    ("aws-access-key", re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA)[A-Z0-9]{16}\b")),
    (
        "aws-secret-key",
        re.compile(r"(?i:aws[_ -]?secret[_ -]?(?:access[_ -]?)?key)\W{0,4}[A-Za-z0-9/+=]{40}\b"),
    ),
    ("google-api-key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}\b")),
    ("github-token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})")),
    ("slack-token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}")),
    ("api-key", re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}")),
    ("api-key", re.compile(r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{20,}")),
    (
        "secret-assignment",
        re.compile(
            r"\b(?:password|passwd|passphrase|pwd|secret|api[_ -]?key|apikey|access[_ -]?key|"
            r"client[_ -]?secret|auth[_ -]?token|access[_ -]?token|private[_ -]?key)"
            r"\s*[:=]\s*[\"']?(?!\[REDACTED)[^\s\"',;]{4,}",
            re.IGNORECASE,
        ),
    ),
    (
        "secret-assignment",
        re.compile(
            r"\b(?:password|passwd|passphrase|pwd|secret|api[_ -]?key|apikey|access[_ -]?key|"
            r"client[_ -]?secret|auth[_ -]?token|access[_ -]?token|private[_ -]?key)"
            r"\s+(?:is|was|reads|equals)\s*[\"']?(?!\[REDACTED)"
            r"(?=[^\s\"',;]*[\d!@#$%^&*()_+=<>?~|\\/])[^\s\"',;]{4,}",
            re.IGNORECASE,
        ),
    ),
    (
        "email",
        re.compile(
            r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"
        ),
    ),
    ("card-number", re.compile(r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)")),
    (
        "phone",
        re.compile(
            r"(?<![\w.])(?:\+\d{1,3}[\s.-]?(?:\(\d{1,4}\)[\s.-]?)?|\(\d{1,4}\)[\s.-]?)"
            r"\d{1,4}(?:[\s.-]\d{2,4}){1,5}(?![\w.])|"
            r"(?<![\w.+(])\d{1,4}(?:[\s.-]\d{2,4}){2,5}(?![\w.])|"
            r"(?<![\w.])\+\d{8,15}(?![\w.])"
        ),
    ),
    ("iban", re.compile(r"\b[A-Z]{2}\d{2}(?:\s?[A-Z0-9]{4}){3,7}(?:\s?[A-Z0-9]{1,3})?\b")),
)

_ENTROPY_TOKEN = re.compile(r"[A-Za-z0-9+/=_-]{20,}")
_DATE_LIKE = re.compile(r"^\d{4}[-./]\d{2}[-./]\d{2}")


def _luhn_ok(digits: str) -> bool:
    total, alt = 0, False
    for ch in reversed(digits):
        d = int(ch)
        if alt:
            d *= 2
            if d > 9:
                d -= 9
        total += d
        alt = not alt
    return total % 10 == 0


def _slug_kind(secret_type: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-") or "secret"


@lru_cache(maxsize=1)
def _plugins() -> tuple[list, list, list]:
    """detect-secrets plugins: regex-based ones, the keyword one, the entropy ones."""
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector
    from detect_secrets.plugins.high_entropy_strings import HighEntropyStringsPlugin
    from detect_secrets.plugins.keyword import KeywordDetector

    regex, keyword, entropy = [], [], []
    for cls in get_mapping_from_secret_type_to_class().values():
        if issubclass(cls, RegexBasedDetector):
            regex.append(cls())
        elif issubclass(cls, KeywordDetector):
            keyword.append(cls())
        elif issubclass(cls, HighEntropyStringsPlugin):
            entropy.append(cls())
    return regex, keyword, entropy


def _secret_spans(line: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) for every secret detect-secrets or our patterns find in one line."""
    spans: list[tuple[int, int, str]] = []
    regex, keyword, entropy = _plugins()
    for plugin in regex:
        kind = _slug_kind(plugin.secret_type)
        for rx in plugin.denylist:
            for m in rx.finditer(line):
                if m.end() > m.start():
                    spans.append((m.start(), m.end(), kind))
    for plugin in keyword:
        values: set[str] = set()
        for fname in ("adhoc.md", "adhoc.yaml"):
            try:
                values.update(
                    str(s.secret_value)
                    for s in plugin.analyze_line(filename=fname, line=line, line_number=1)
                    if s.secret_value
                )
            except Exception:  # a plugin bug must not let a secret through: patterns follow
                continue
        for value in values:
            spans.extend(
                (m.start(), m.end(), "secret") for m in re.finditer(re.escape(value), line)
            )
    for m in _ENTROPY_TOKEN.finditer(line):
        word = m.group(0)
        if _DATE_LIKE.match(word) or not (re.search(r"\d", word) and re.search(r"[A-Za-z]", word)):
            continue
        for plugin in entropy:
            if not all(c in plugin.charset for c in word):
                continue
            if plugin.calculate_shannon_entropy(word) > plugin.entropy_limit:
                spans.append((m.start(), m.end(), "high-entropy-string"))
                break
    for kind, rx in _EXTRA_SECRET_PATTERNS:
        for m in rx.finditer(line):
            if kind == "card-number":
                digits = re.sub(r"\D", "", m.group(0))
                if not (13 <= len(digits) <= 19 and _luhn_ok(digits)):
                    continue
            if kind == "phone" and len(re.sub(r"\D", "", m.group(0))) < 8:
                continue
            if kind == "phone" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", m.group(0).strip()):
                continue
            spans.append((m.start(), m.end(), kind))
    return spans


_GENERIC_KINDS = frozenset(
    {"high-entropy-string", "secret", "secret-keyword", "secret-assignment", "phone"}
)


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


@dataclass
class Redaction:
    text: str
    kinds: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.kinds)


def redact(text: str) -> Redaction:
    """Replace secrets and personal data with `[REDACTED:<kind>]`; repeat until stable."""
    kinds: list[str] = []
    for _ in range(3):
        spans = _merge(_secret_spans(text))
        # Never re-redact our own markers.
        spans = [
            sp
            for sp in spans
            if not re.fullmatch(r"\[?REDACTED:[a-z0-9-]+\]?", text[sp[0] : sp[1]])
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
