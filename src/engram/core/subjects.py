"""What a memory text is *about*: its named entities, its values and its subject words.

Verdicts must never replace one fact by another that merely shares a sentence template
("Service svc-1 … port 8001" is not "Service svc-2 … port 8002"). So a text is read as
an ordered list of *units*: typed entities (identifiers, paths, URLs, hosts, code spans,
quoted strings, capitalised names, environment names; numbers, versions and addresses
as *values*) and stemmed content words, with polarity and change markers kept aside.
Two texts are then compared by aligning their units: what they share is the subject,
what differs is either a changed value (an update), a changed name (a different fact)
or a reworded phrase (a possible duplicate).

Deterministic and dependency-light: the English Snowball stemmer is imported lazily,
only when a verdict is computed (the write path, never a hook).
"""

from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache
from typing import NamedTuple

from engram.core.candidates import STOPWORDS

# Kinds of unit. Values change while the subject stays; names pick the subject.
VALUE_KINDS = frozenset({"number", "version", "address"})
NAME_KINDS = frozenset(
    {"code", "url", "email", "quoted", "path", "dotted", "ident", "flag", "name", "env"}
)

NEGATIONS = frozenset(
    """not no never don't dont doesn't doesnt isn't isnt aren't arent shouldn't shouldnt
    mustn't mustnt cannot can't cant won't wont avoid avoids stop without disable disabled
    forbid forbidden forbids disallow disallowed nor none neither""".split()
)
ANTONYMS = (
    ("always", "never"),
    ("enable", "disable"),
    ("enabled", "disabled"),
    ("allow", "forbid"),
    ("allow", "deny"),
    ("allowed", "forbidden"),
    ("required", "optional"),
    ("mandatory", "optional"),
    ("true", "false"),
    ("sync", "async"),
    ("on", "off"),
)
ANTONYM_WORDS = frozenset(w for pair in ANTONYMS for w in pair)
# "Replaces what was said before": the candidate is about the same rule, reversed.
REPLACE_RE = re.compile(
    r"\b(?:instead\s+of|no\s+longer|rather\s+than|replaces?|replaced\s+by|deprecated|anymore|"
    r"not\s+any\s*more|from\s+now\s+on|in\s+favou?r\s+of)\b",
    re.IGNORECASE,
)
# "The value changed": the candidate states a new value for the same subject.
CHANGE_RE = re.compile(
    r"\b(?:now|currently|changed|moved|switched|migrated|renamed|bumped|upgraded|"
    r"downgraded|raised|lowered|increased|decreased|reduced|as\s+of|from\s+\S+\s+to|"
    r"has\s+been\s+(?:changed|moved|set)|was\s+changed|these\s+days|nowadays)\b",
    re.IGNORECASE,
)
# Words that carry no subject: change and replacement markers, fillers.
MARKER_WORDS = frozenset(
    """now currently nowadays changed moved switched migrated renamed bumped upgraded
    downgraded instead rather longer anymore replace replaces replaced deprecated favour
    favor""".split()
)
FILLER_WORDS = frozenset(
    """please make sure ensure remember important importantly note that's thats it's
    its really actually basically always every everything everyone whenever one ones
    also just prior etc e.g i.e ok okay like need needs needed""".split()
)
ENV_NAMES = frozenset(
    """staging stage production prod dev development qa uat preprod pre-prod sandbox
    canary demo""".split()
)
# Developer synonyms: each word maps to one canonical stem (applied after stemming).
_SYNONYM_GROUPS = (
    ("full", "whole", "entire", "complete"),
    ("pr", "mr"),
    ("repo", "repository"),
    ("db", "database"),
    ("config", "configuration", "configure", "settings"),
    ("env", "environment"),
    ("doc", "docs", "documentation"),
    ("dep", "deps", "dependency", "dependencies"),
    ("k8s", "kubernetes"),
    ("auth", "authentication", "login", "signin"),
    ("start", "begin", "launch"),
    ("run", "execute", "invoke"),
    ("remove", "delete", "drop", "erase"),
    ("big", "large", "huge"),
    ("small", "tiny", "little"),
    ("fast", "quick", "rapid"),
    ("error", "failure"),
    ("fix", "repair"),
    ("check", "verify", "validate"),
    ("create", "open", "raise", "file"),
    ("push", "upload"),
    ("fetch", "download", "pull"),
    ("lint", "linter", "linting"),
    ("test", "tests", "testing"),
    ("show", "display"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("py", "python"),
    ("msg", "message"),
    ("dir", "directory", "folder"),
    ("app", "application"),
    ("ci", "pipeline"),
    ("secret", "credential", "credentials"),
    ("user", "users"),
    ("func", "function"),
    ("arg", "argument"),
    ("param", "parameter"),
    ("var", "variable"),
    ("prod", "production"),
    ("dev", "development"),
)
# Two-word phrases that stand for one word.
PHRASES = {
    ("pull", "request"): "pr",
    ("merge", "request"): "pr",
    ("code", "review"): "review",
    ("check", "in"): "commit",
    ("set", "up"): "setup",
    ("sign", "in"): "auth",
    ("log", "in"): "auth",
    ("end", "to"): "e2e",
}

_TOKEN = re.compile(
    r"(?P<code>`[^`\n]+`)"
    r"|(?P<url>\b[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>\"'`]+)"
    r"|(?P<email>\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<quoted>\"[^\"\n]{1,120}\"|“[^”\n]{1,120}”|(?<![\w'])'[^'\n]{1,120}'(?![\w']))"
    r"|(?P<address>\b\d{1,3}(?:\.\d{1,3}){3}(?:/\d{1,2})?(?::\d+)?\b)"
    r"|(?P<path>(?:~|\.{1,2})?/?(?:[\w.@+*-]+/)+[\w.@+*-]*|~|(?<![\w/])/[\w.@+-]+)"
    r"|(?P<version>\b[vV]?\d+(?:\.(?:\d+|x|\*))+(?:[-+][0-9A-Za-z.]+)?\b)"
    r"|(?P<dotted>\b[\w-]+(?:\.[\w-]+)+\b)"
    r"|(?P<flag>(?<![\w-])--?[a-zA-Z][\w-]*)"
    r"|(?P<number>#?\b\d+(?:[.,]\d+)*(?:[a-zA-Z%]{1,4}\b)?%?)"
    r"|(?P<word>[\w][\w'’-]*)"
)
_SENTENCE_END = re.compile(r"[.!?:;]\s*$|^\s*$|^\s*[-*+]\s*$|\n\s*$")
_CAMEL = re.compile(r"[a-z][A-Z]|[A-Z]{2,}[a-z]")
_SQUASH = re.compile(r"[^a-z0-9]+")


class Unit(NamedTuple):
    """One comparable piece of a text."""

    kind: str  # "word" or one of VALUE_KINDS / NAME_KINDS
    key: str  # canonical form (synonyms folded) used for alignment
    raw: str  # the stem or entity as written (lowercase), for exact comparison
    shown: str  # the text as written, for explanations


class Profile(NamedTuple):
    """Everything a comparison needs from one text."""

    units: tuple[Unit, ...]
    keys: tuple[str, ...]
    keyset: frozenset[str]
    raw_sorted: tuple[str, ...]
    mentions: frozenset[str]  # squashed words, bigrams, trigrams and entities
    negated: bool
    flags: frozenset[str]  # antonym words present
    replaces: bool
    changes: bool
    normal: str


@lru_cache(maxsize=1)
def _stemmer():  # type: ignore[no-untyped-def]
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=32768)
def stem(word: str) -> str:
    """The Snowball (Porter 2) stem of a lowercase word."""
    if len(word) <= 3 or not word.isalpha():
        return word
    return _stemmer().stemWord(word)


@lru_cache(maxsize=1)
def _synonyms() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in _SYNONYM_GROUPS:
        canon = stem(group[0])
        for w in group:
            out[w] = canon
            out[stem(w)] = canon
    return out


def canonical(word_stem: str) -> str:
    return _synonyms().get(word_stem, word_stem)


def squash(text: str) -> str:
    return _SQUASH.sub("", text.lower())


def _word_kind(tok: str, sentence_start: bool) -> str:
    bare = tok.strip("'’-")
    if not bare:
        return ""
    lower = bare.lower()
    if lower in ENV_NAMES:
        return "env"
    if any(ch.isdigit() for ch in bare) and any(ch.isalpha() for ch in bare):
        return "ident"
    if "_" in bare or (_CAMEL.search(bare) and not bare[0].isupper()):
        return "ident"
    if len(bare) >= 2 and bare.isupper() and bare.isalpha():
        return "name"  # an acronym: API, AWS, JSON
    if bare[0].isupper() and (not sentence_start or _CAMEL.search(bare)):
        return "name"
    return "word"


def _entity_key(kind: str, text: str) -> str:
    t = text.lower().strip()
    if kind in ("code", "quoted"):
        t = t.strip("`\"'“”").strip()
    if kind in ("url", "path", "dotted", "email"):
        t = t.rstrip(".,;:)!?")
    if kind == "number":
        t = t.lstrip("#").replace(",", "")
    if kind == "version":
        t = t.lstrip("v")
    return t


def _words_of(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def analyse(text: str) -> Profile:
    """Units, polarity and markers of one text (pure: same text, same profile)."""
    return _analyse(text)


@lru_cache(maxsize=8192)
def _analyse(text: str) -> Profile:
    text = text.replace("’", "'")
    units: list[Unit] = []
    negations = 0
    flags: set[str] = set()
    pending_name: list[str] = []

    def flush_name() -> None:
        if pending_name:
            shown = " ".join(pending_name)
            lower = shown.lower()
            units.append(Unit("name", canonical(lower), lower, shown))
            pending_name.clear()

    words_seen: list[str] = []
    last_end = 0
    for m in _TOKEN.finditer(text):
        if pending_name and text[last_end : m.start()].strip():
            flush_name()  # names join across spaces only ("GitHub Actions", not "CI; Go")
        last_end = m.end()
        kind = m.lastgroup or "word"
        tok = m.group()
        start = _SENTENCE_END.search(text[max(0, m.start() - 3) : m.start()]) is not None
        start = start or m.start() == 0 or not text[: m.start()].strip()
        if kind == "word":
            lower = tok.lower().strip("'-")
            words_seen.extend(_words_of(lower))
            if lower in NEGATIONS or lower.endswith("n't"):
                negations += 1
                flush_name()
                continue
            if lower in ANTONYM_WORDS:
                flags.add(lower)
                flush_name()
                continue
            wk = _word_kind(tok, start)
            if wk == "name":
                if lower in STOPWORDS or lower in FILLER_WORDS:
                    flush_name()
                    continue
                pending_name.append(tok.strip("'-"))
                continue
            flush_name()
            if wk in ("env", "ident"):
                units.append(Unit(wk, canonical(lower), lower, tok))
                continue
            for part in lower.split("-"):
                part = part.replace("'", "")
                if (
                    len(part) < 2
                    or part in STOPWORDS
                    or part in MARKER_WORDS
                    or part in FILLER_WORDS
                ):
                    continue
                s = stem(part)
                units.append(Unit("word", canonical(s), s, part))
            continue
        flush_name()
        words_seen.extend(_words_of(tok))
        key = _entity_key(kind, tok)
        if not key:
            continue
        if kind == "path" and "/" in key.strip("/") and "." not in key and key[0] not in "/~.":
            # "read/write", "CI/CD": words joined by a slash, not a file path.
            parts = [p for p in key.split("/") if p]
            if all(p.isalpha() and len(p) <= 12 for p in parts) and len(parts) <= 3:
                for p in parts:
                    if p not in STOPWORDS:
                        s = stem(p)
                        units.append(Unit("word", canonical(s), s, p))
                continue
        units.append(Unit(kind, key, key, tok))
    flush_name()
    units = _fold_phrases(units)
    keys = tuple(u.key for u in units)
    mentions: set[str] = {squash(u.raw) for u in units} | {u.key for u in units}
    mentions |= {squash(u.shown) for u in units}
    for n in (1, 2, 3):
        for i in range(len(words_seen) - n + 1):
            mentions.add("".join(words_seen[i : i + n]))
    normal = " ".join(_words_of(text))
    return Profile(
        units=tuple(units),
        keys=keys,
        keyset=frozenset(keys),
        raw_sorted=tuple(sorted(u.raw for u in units)),
        mentions=frozenset(mentions),
        negated=negations % 2 == 1,
        flags=frozenset(flags),
        replaces=bool(REPLACE_RE.search(text)),
        changes=bool(CHANGE_RE.search(text)),
        normal=normal,
    )


def _fold_phrases(units: list[Unit]) -> list[Unit]:
    out: list[Unit] = []
    i = 0
    while i < len(units):
        u = units[i]
        if i + 1 < len(units) and u.kind == "word" and units[i + 1].kind == "word":
            pair = (u.shown, units[i + 1].shown)
            canon = PHRASES.get(pair)
            if canon:
                out.append(Unit("word", canonical(canon), canon, f"{pair[0]} {pair[1]}"))
                i += 2
                continue
        out.append(u)
        i += 1
    return out


def mentioned(u: Unit, other: Profile) -> bool:
    """Whether `other` names the same thing as unit `u` (case, dashes and spaces aside)."""
    if u.key in other.keyset:
        return True
    return squash(u.raw) in other.mentions or squash(u.shown) in other.mentions


class Relation(NamedTuple):
    """How a candidate relates to one memory."""

    kind: str  # same | paraphrase | update | contradiction | replaces | different
    score: float  # similarity of the two unit lists, 0..1
    certain: bool  # clearly about the same fact (a forced save may replace)
    why: str  # a short explanation for the preview


def similarity(a: Profile, b: Profile) -> float:
    """Jaccard overlap of canonical units: cheap, order-free (related lists, pre-filter)."""
    if not a.keyset or not b.keyset:
        return 0.0
    return len(a.keyset & b.keyset) / len(a.keyset | b.keyset)


def opposite(a: Profile, b: Profile) -> bool:
    if a.negated != b.negated:
        return True
    return any(
        (x in a.flags and y in b.flags and x not in b.flags)
        or (y in a.flags and x in b.flags and y not in b.flags)
        for x, y in ANTONYMS
    )


def _close(a: str, b: str) -> bool:
    """Two words of one family that the stemmer kept apart (lint/linter, config/configs)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 4 and long_.startswith(short) and len(long_) - len(short) <= 3


def relate(cand: Profile, mem: Profile) -> Relation:
    """How `cand` relates to `mem`: the kind of change, and how sure that is."""
    if cand.normal and cand.normal == mem.normal:
        return Relation("same", 1.0, True, "same text")
    jac = similarity(cand, mem)
    same_polarity = not opposite(cand, mem)
    if cand.units and cand.raw_sorted == mem.raw_sorted and same_polarity:
        return Relation("same", 1.0, True, "same words")

    # Names and values each side has that the other does not mention.
    names_c = [u for u in cand.units if u.kind in NAME_KINDS and not mentioned(u, mem)]
    names_m = [u for u in mem.units if u.kind in NAME_KINDS and not mentioned(u, cand)]
    vals_c = {u.key for u in cand.units if u.kind in VALUE_KINDS} - {
        u.key for u in mem.units if u.kind in VALUE_KINDS
    }
    vals_m = {u.key for u in mem.units if u.kind in VALUE_KINDS} - {
        u.key for u in cand.units if u.kind in VALUE_KINDS
    }

    sm = SequenceMatcher(None, mem.keys, cand.keys, autojunk=False)
    common_flags = len(cand.flags & mem.flags)  # "required" in both is shared subject
    shared = sum(b.size for b in sm.get_matching_blocks()) + common_flags
    total = len(mem.keys) + len(cand.keys) + 2 * common_flags
    ratio = 2 * shared / total if total else 0.0
    regions = [op for op in sm.get_opcodes() if op[0] != "equal"]
    # Word pairs of one family count as equal inside a replaced region.
    real_regions = []
    for tag, i1, i2, j1, j2 in regions:
        left = list(mem.units[i1:i2])
        right = list(cand.units[j1:j2])
        if (
            tag == "replace"
            and len(left) == len(right)
            and all(
                a.kind == b.kind == "word" and _close(a.key, b.key)
                for a, b in zip(left, right, strict=True)
            )
        ):
            shared += len(left)
            continue
        real_regions.append((tag, left, right, i2 == len(mem.keys) and j2 == len(cand.keys)))
    ratio = 2 * shared / total if total else 0.0
    score = max(jac, ratio)

    if not real_regions and same_polarity:
        if cand.changes or cand.replaces:
            return Relation("update", score, False, "same words with a change marker")
        return Relation("paraphrase", score, False, "same subject in other words")

    name_conflict = bool(names_c) and bool(names_m)
    value_conflict = bool(vals_c) and bool(vals_m)

    if not same_polarity:
        if not name_conflict and not value_conflict and score >= 0.5:
            sure = score >= 0.75 and not names_c and not names_m
            return Relation("contradiction", score, sure, "says the opposite")
        return Relation("different", score, False, _why_different(names_c, names_m))

    if name_conflict:
        if len(real_regions) == 1 and cand.changes and ratio >= 0.5 and shared >= 2:
            return Relation("update", score, False, _changed(names_m, names_c))
        return Relation("different", score, False, _why_different(names_c, names_m))
    if names_c or names_m:
        # One side names something the other does not: a more specific or another fact.
        if cand.replaces and not mem.replaces and score >= 0.35:
            return Relation("replaces", score, False, "says it replaces this")
        return Relation("different", score, False, _why_different(names_c, names_m))

    value_only = all(
        tag == "replace"
        and all(u.kind in VALUE_KINDS for u in left)
        and all(u.kind in VALUE_KINDS for u in right)
        for tag, left, right, _ in real_regions
    )
    if value_conflict:
        if value_only and shared >= 2 and ratio >= 0.5:
            sure = len(real_regions) == 1 and ratio >= 0.6
            vm = ", ".join(sorted(vals_m))
            vc = ", ".join(sorted(vals_c))
            return Relation("update", score, sure, f"value {vm} → {vc}")
        if cand.changes and len(real_regions) <= 2 and shared >= 2 and ratio >= 0.5:
            return Relation("update", score, False, "changed value")
        return Relation("different", score, False, "other values")
    if vals_c or vals_m:
        return Relation("different", score, False, "other values")

    if cand.replaces and not mem.replaces and score >= 0.35:
        return Relation("replaces", score, False, "says it replaces this")
    replaced = [r for r in real_regions if r[0] == "replace"]
    if (
        len(real_regions) == 1
        and replaced
        and shared >= 2
        and ratio >= 0.5
        and len(replaced[0][1]) <= 2
        and len(replaced[0][2]) <= 2
        and (cand.changes or replaced[0][3])
    ):
        old = " ".join(u.shown for u in replaced[0][1])
        new = " ".join(u.shown for u in replaced[0][2])
        return Relation("update", score, False, f"{old} → {new}")
    if not replaced and score >= 0.5:
        return Relation("paraphrase", score, False, "same subject, more or fewer words")
    if ratio >= 0.6 and all(len(r[1]) <= 1 and len(r[2]) <= 1 for r in real_regions):
        return Relation("paraphrase", score, False, "same subject in other words")
    return Relation("different", score, False, "other subject")


def _show(units: list[Unit]) -> str:
    return ", ".join(dict.fromkeys(u.shown for u in units))


def _why_different(names_c: list[Unit], names_m: list[Unit]) -> str:
    if names_c and names_m:
        return f"names {_show(names_c)}, not {_show(names_m)}"
    if names_c:
        return f"also names {_show(names_c)}"
    if names_m:
        return f"does not name {_show(names_m)}"
    return "other subject"


def _changed(old: list[Unit], new: list[Unit]) -> str:
    return f"{_show(old)} → {_show(new)}"
