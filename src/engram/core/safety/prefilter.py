"""A keyword prefilter derived from each pattern: a pattern runs only on text that holds
the words it cannot match without.

Widely used secret scanners prefilter by keyword before any expensive pattern; here the
keywords are not a second list to keep in step by hand but read out of the pattern itself
(`required_literals`): every match of `\\b(?:ignore|forget)\\s+previous\\s+rules` holds
one of "ignore"/"forget", "previous" and "rules", so a text without them cannot match and
the regular expression is not run. The filter never changes a verdict, only its cost: a
literal is required only when every path through the pattern holds it, and text and
literals are compared under the same case folding the regular expression engine uses.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]
from typing import Any, NamedTuple

import ahocorasick

_MAX_GROUPS = 4  # the most selective literal groups of a pattern; more cost more than they save
_MAX_VARIANTS = 16  # spellings a run of literals and small classes (`[sş]ifre`) expands to

# Letters the engine treats as one under IGNORECASE although `str.lower` keeps them apart
# (the dotted capital I, the long s, final sigma, Greek symbol variants, old Cyrillic
# forms): each is folded to one representative before any comparison.
_SAME_LETTERS = (
    "iı", "sſ", "µμ", "ιͅι", "ΐΐ", "ΰΰ", "βϐ", "εϵ", "θϑ", "κϰ", "πϖ", "ρϱ", "σς",
    "φϕ", "вᲀ", "дᲁ", "оᲂ", "сᲃ", "тᲄᲅ", "ъᲆ", "ѣᲇ", "ꙋᲈ", "ṡẛ", "ﬅﬆ",
)  # fmt: skip
# Every character `\s` matches, folded to a plain space: a match's start ("a\s+partir")
# is then spelled with one space, and positions stay where they were.
_SPACES = (
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005"
    "\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"
)  # (written out: deriving it from the engine costs 6 ms at import; a test checks it)
_FOLD = str.maketrans(
    {ch: group[0] for group in _SAME_LETTERS for ch in group[1:]}
    | {ch: " " for ch in _SPACES if ch != " "}
)


def fold(text: str) -> str:
    """`text` in the case folding both sides of a keyword check use."""
    return text.replace("İ", "i").lower().translate(_FOLD)


Groups = tuple[frozenset[str], ...]
Runs = tuple[tuple[str, int], ...]  # (character class, length) of runs every match holds


class Needs(NamedTuple):
    """What every match of a pattern holds: one literal of each group, and a run of that
    many consecutive characters of each class (`RUN_CLASSES`); and the folded literals one
    of which every match starts with (`starts`, None when a match may start otherwise)."""

    groups: Groups
    runs: Runs = ()
    starts: frozenset[str] | None = None


def required_literals(pattern: str, flags: int = 0) -> Groups:
    """Groups of folded literals of which every match of `pattern` holds at least one
    from each group; the most selective first. Empty when nothing is required."""
    return required(pattern, flags).groups


def required(pattern: str, flags: int = 0) -> Needs:
    """The literals and character runs every match of `pattern` holds."""
    needs = stored_needs(pattern, flags)
    if needs is None:
        needs = analysed[(pattern, flags)] = analyse(pattern, flags)
    return needs


def analyse(pattern: str, flags: int = 0) -> Needs:
    """`required`, worked out from the pattern itself (never read from the stored file)."""
    try:
        return _needs_of(sre_parse.parse(pattern, flags))
    except (re.error, RecursionError):
        return Needs(())


def compile_with_keywords(pattern: str, flags: int = 0) -> tuple[re.Pattern[str], Needs]:
    """The compiled pattern and what its matches hold, from one parse of `pattern` (the
    parse is most of what compiling costs, and a process compiles hundreds of these)."""
    needs = stored_needs(pattern, flags)
    if needs is not None:
        return re.compile(pattern, flags), needs
    try:
        tree = sre_parse.parse(pattern, flags)
        needs = analysed[(pattern, flags)] = _needs_of(tree)
        return sre_compiler.compile(tree, flags), needs
    except Exception:
        return re.compile(pattern, flags), required(pattern, flags)


# ---------------------------------------------------------------- stored analyses

# What `analyse` finds for the screen's own patterns, worked out once and shipped with the
# package (`python -m engram.core.safety.refresh_needs` writes it; a test checks it): a
# process then knows what a pattern needs without parsing it, and compiles it only when a
# text could match. The file holds answers for this analysis code and this Python only
# (`analysis_version`); for any other, or for a pattern it lacks, the answer is worked out.
STORED_NEEDS = Path(__file__).with_name("prefilter_needs.json")
analysed: dict[tuple[str, int], Needs] = {}  # what this process worked out itself
_stored: dict[str, Any] | None = None


def analysis_version() -> str:
    """A digest of the analysis code and the Python version whose parser it reads."""
    code = Path(__file__).read_bytes()
    return hashlib.blake2b(code + repr(sys.version_info[:2]).encode(), digest_size=10).hexdigest()


def needs_key(pattern: str, flags: int) -> str:
    digest = hashlib.blake2b(pattern.encode("utf-8", "surrogatepass"), digest_size=12)
    return f"{flags}:{digest.hexdigest()}"


def stored_needs(pattern: str, flags: int = 0) -> Needs | None:
    """The stored analysis of `pattern`, or None."""
    global _stored
    if _stored is None:
        try:
            data = json.loads(STORED_NEEDS.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        ok = isinstance(data, dict) and data.get("version") == analysis_version()
        _stored = data["needs"] if ok and isinstance(data.get("needs"), dict) else {}
    raw = _stored.get(needs_key(pattern, flags))
    return None if raw is None else needs_from_json(raw)


def needs_to_json(needs: Needs) -> dict[str, Any]:
    return {
        "groups": [sorted(g) for g in needs.groups],
        "runs": [list(r) for r in needs.runs],
        "starts": None if needs.starts is None else sorted(needs.starts),
    }


def needs_from_json(raw: dict[str, Any]) -> Needs:
    starts = raw.get("starts")
    return Needs(
        tuple(frozenset(g) for g in raw["groups"]),
        tuple((str(n), int(k)) for n, k in raw["runs"]),
        None if starts is None else frozenset(starts),
    )


def split_by_starts(pattern: str, flags: int = 0) -> list[tuple[re.Pattern[str], Needs]] | None:
    """A pattern without known starts whose alternation is mostly alternatives with known
    starts, as two patterns: those alternatives, and the others. A text matches the whole
    where it matches one of the two, so the whole's first match is at the first position
    either part finds (`LazyPattern.search`). None for a pattern with groups (a part would
    number them otherwise) or that no such split helps."""
    try:
        tree = sre_parse.parse(pattern, flags)
    except (re.error, RecursionError):
        return None
    if tree.state.groups > 1:  # a group of its own (the count includes the whole match)
        return None
    items = list(tree)
    at = next((i for i, (op, _) in enumerate(items) if op is sre.BRANCH), None)
    if at is None or _starts_of(items) is not None:
        return None
    before, after = items[:at], items[at + 1 :]
    known: list[list] = []
    other: list[list] = []
    for alt in items[at][1][1]:
        started = _starts_of([*before, (sre.BRANCH, (None, [alt])), *after]) is not None
        (known if started else other).append(alt)
    if not known or not other or len(other) * 4 > len(known):
        return None
    parts = []
    for alts in (known, other):
        data = [*before, (sre.BRANCH, (None, alts)), *after]
        sub = sre_parse.SubPattern(tree.state, data)
        parts.append((sre_compiler.compile(sub, flags), _needs_of(sub)))
    return parts


def _needs_of(tree: object) -> Needs:
    items = list(tree)  # type: ignore[call-overload]
    groups = [g for g in _sequence(items) if g and all(g)]
    groups.sort(key=lambda g: (-min(map(len, g)), len(g)))
    found = _sequence_shape(items).runs
    runs = [
        (n, found[n])
        for n, (_rx, _member, useful) in RUN_CLASSES.items()
        if found.get(n, 0) >= useful
    ]
    return Needs(tuple(groups[:_MAX_GROUPS]), tuple(runs[:2]), _starts_of(items))


def _sequence(items: list) -> list[frozenset[str]]:
    """The required groups of a sequence of parsed items: a run of literal characters (and
    of small classes, spelled out) is one required group; a required sub-part adds its own."""
    groups: list[frozenset[str]] = []
    run: list[str] = [""]

    def flush() -> None:
        if run != [""]:
            groups.append(frozenset(fold(r) for r in run))
        run[:] = [""]

    for op, av in items:
        chars = _small_class(op, av)
        if chars is not None and len(run) * len(chars) <= _MAX_VARIANTS:
            run[:] = [r + c for r in run for c in chars]
        elif op is sre.AT:
            continue  # zero-width: the literals on both sides stay adjacent
        elif op is sre.SUBPATTERN:
            flush()
            groups += _sequence(list(av[-1]))
        elif op is sre.ATOMIC_GROUP:
            flush()
            groups += _sequence(list(av))
        elif op is sre.BRANCH:
            flush()
            choice = _branch(av[1])
            if choice:
                groups.append(choice)
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
            flush()
            if av[0] >= 1:
                groups += _sequence(list(av[2]))
        elif op is sre.ASSERT:
            flush()
            groups += _sequence(list(av[1]))
        else:  # a large class, any character, a negative look-around, a back-reference …
            flush()
    flush()
    return groups


def _small_class(op: object, av: object) -> str | None:
    """The characters a literal or a class of a few listed characters matches, or None."""
    if op is sre.LITERAL:
        return chr(av)  # type: ignore[arg-type]
    if op is sre.IN and len(av) <= 4 and all(o is sre.LITERAL for o, _ in av):  # type: ignore[arg-type]
        return "".join(chr(v) for _, v in av)  # type: ignore[union-attr]
    return None


def _branch(alternatives: list) -> frozenset[str] | None:
    """One group for an alternation: the best group of each alternative, joined; None when
    some alternative requires nothing (it can match text without any keyword)."""
    chosen: set[str] = set()
    for alt in alternatives:
        groups = [g for g in _sequence(list(alt)) if g and all(g)]
        if not groups:
            return None
        chosen |= max(groups, key=lambda g: (min(map(len, g)), -len(g)))
    return frozenset(chosen)


# ---------------------------------------------------------------- where a match starts

_START_LEN = 5  # characters of a match's start read out of its pattern
_MAX_STARTS = 2048  # spellings of a start; a pattern with more is searched the usual way
_STOP = (None, None)  # the end of a repeated part: what follows it may be the part again


def _starts_of(items: list) -> frozenset[str] | None:
    """The folded literals (up to `_START_LEN` characters) one of which every match of the
    parsed `items` starts with; None when a match may start with any character or with a
    single ASCII one (too common to be worth a look-up).

    A pattern that opens with a look-behind or a word boundary before an alternation
    (`(?<![\\w-])(?:ignor\\w*|disregard\\w*|…)`) defeats the engine's own prefix scan: it
    tries every alternative at every position. Knowing where a match can start, a search
    tries it only there (`Keywords.search`)."""
    found: set[str] = set()

    def walk(seq: list, acc: str) -> bool:  # False once there are too many spellings
        for i, (op, av) in enumerate(seq):
            if len(acc) >= _START_LEN or op is None:
                found.add(acc)
                return len(found) <= _MAX_STARTS
            rest = seq[i + 1 :]
            chars = _small_class(op, av) or _space_class(op, av)
            if chars is not None:
                return all(walk(rest, acc + fold(c)) for c in chars)
            if op in (sre.AT, sre.ASSERT, sre.ASSERT_NOT):
                continue  # zero-width: the match starts with what follows
            if op is sre.SUBPATTERN:
                return walk([*av[-1], *rest], acc)
            if op is sre.ATOMIC_GROUP:
                return walk([*av, *rest], acc)
            if op is sre.BRANCH:
                return all(walk([*alt, *rest], acc) for alt in av[1])
            if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
                lo, hi, body = av
                if hi == 0:
                    continue
                if hi == 1:  # once or not at all: what follows is the rest
                    return walk([*body, *rest], acc) and (lo >= 1 or walk(rest, acc))
                return walk([*body, _STOP], acc) and (lo >= 1 or walk(rest, acc))
            found.add(acc)  # any other item may consume any character: the start ends here
            return len(found) <= _MAX_STARTS
        found.add(acc)
        return len(found) <= _MAX_STARTS

    try:
        complete = walk(items, "")
    except RecursionError:
        return None
    if not complete or any(not s or (len(s) == 1 and s.isascii()) for s in found):
        return None
    return frozenset(found)


def _space_class(op: object, av: object) -> str | None:
    """`\\s`, as folded: a space (`a\\s+partir` starts with "a" and a space)."""
    if op is sre.IN and av == [(sre.CATEGORY, sre.CATEGORY_SPACE)]:
        return " "
    return None


# ---------------------------------------------------------------- character runs

_HEX = frozenset("0123456789abcdef")
_ALNUM = frozenset("0123456789abcdefghijklmnopqrstuvwxyz")
_B64 = _ALNUM | frozenset("+/=_-")

# A class of characters whose longest run a text profile measures (on the folded text),
# how one folded character is tested for it (exactly as the regular expression decides),
# and the shortest required run worth a check. Shapes of secrets and identifiers (sixteen
# hex digits, a 32-character token, nine digits) rarely occur in ordinary prose.
RUN_CLASSES: dict[str, tuple[str, Callable[[str], bool], int]] = {
    "digit": (r"\d+", str.isdecimal, 5),
    "hex": (r"[0-9a-f]+", _HEX.__contains__, 8),
    "alnum": (r"[0-9a-z]+", _ALNUM.__contains__, 10),
    "base64": (r"[0-9a-z+/=_-]+", _B64.__contains__, 12),
    "word": (r"\w+", lambda c: c.isalnum() or c == "_", 12),
}
_LARGE_RANGE = 512  # a range wider than this is not tested character by character


_CLASS_NAMES = tuple(RUN_CLASSES)
_ALL_CLASSES = frozenset(_CLASS_NAMES)


@lru_cache(maxsize=4096)
def _classes_of(chars: str) -> frozenset[str]:
    """The run classes that hold every one of `chars`, folded."""
    folded = fold(chars)
    return frozenset(n for n in _CLASS_NAMES if all(map(RUN_CLASSES[n][1], folded)))


@lru_cache(maxsize=1024)
def _range_classes(lo: int, hi: int) -> frozenset[str]:
    if hi - lo > _LARGE_RANGE:
        return frozenset()
    return _classes_of("".join(map(chr, range(lo, hi + 1))))


def _member_classes(av: list) -> frozenset[str]:
    """The run classes that hold every character a class (`[...]`, `\\d`) matches."""
    inside = _ALL_CLASSES
    for o, v in av:
        if o is sre.LITERAL:
            inside &= _classes_of(chr(v))
        elif o is sre.RANGE:
            inside &= _range_classes(*v)
        elif o is sre.CATEGORY and v is sre.CATEGORY_DIGIT:
            inside &= {"digit", "word"}
        elif o is sre.CATEGORY and v is sre.CATEGORY_WORD:
            inside &= {"word"}
        else:  # a negated class, spaces, …
            return frozenset()
    return inside


class _Shape(NamedTuple):
    """Of a parsed item: the fewest characters it consumes, the run classes that hold all
    it can match, and the longest run of each class every match of it holds."""

    min_len: int
    within: frozenset[str]
    runs: dict[str, int]


_ZERO_WIDTH = _Shape(0, _ALL_CLASSES, {})
_OPAQUE = _Shape(0, frozenset(), {})


def _shape(op: object, av: Any) -> _Shape:
    if op is sre.LITERAL:
        return _Shape(1, _classes_of(chr(av)), {})
    if op is sre.IN:
        return _Shape(1, _member_classes(av), {})
    if op in (sre.NOT_LITERAL, sre.ANY):
        return _Shape(1, frozenset(), {})
    if op in (sre.AT, sre.ASSERT_NOT):
        return _ZERO_WIDTH
    if op is sre.ASSERT:  # what a look-around sees is in the text too; it consumes nothing
        return _Shape(0, _ALL_CLASSES, _sequence_shape(list(av[1])).runs)
    if op in (sre.MAX_REPEAT, sre.MIN_REPEAT, sre.POSSESSIVE_REPEAT):
        body = _sequence_shape(list(av[2]))
        return _Shape(av[0] * body.min_len, body.within, body.runs if av[0] >= 1 else {})
    if op is sre.SUBPATTERN:
        return _sequence_shape(list(av[-1]))
    if op is sre.ATOMIC_GROUP:
        return _sequence_shape(list(av))
    if op is sre.BRANCH:
        alts = [_sequence_shape(list(alt)) for alt in av[1]]
        within = frozenset.intersection(*(a.within for a in alts))
        runs = {n: min(a.runs.get(n, 0) for a in alts) for n in _CLASS_NAMES}
        return _Shape(min(a.min_len for a in alts), within, {n: k for n, k in runs.items() if k})
    return _OPAQUE  # a back-reference, …


def _sequence_shape(items: list) -> _Shape:
    """Items that match only characters of one class, next to each other, consume one run
    of it together; any other item ends the run."""
    total = 0
    within = _ALL_CLASSES
    best: dict[str, int] = {}
    current = dict.fromkeys(_CLASS_NAMES, 0)
    for op, av in items:
        sh = _shape(op, av)
        total += sh.min_len
        within = within & sh.within
        for n in _CLASS_NAMES:
            current[n] = current[n] + sh.min_len if n in sh.within else 0
            found = max(current[n], sh.runs.get(n, 0))
            if found > best.get(n, 0):
                best[n] = found
    return _Shape(total, within, best)


# ---------------------------------------------------------------- text profiles


class _Literals:
    """Every literal a keyword check asks about, found in a text in one pass (Aho-Corasick).
    Literals registered since the last build are tested one by one; the automaton is built
    again once those tests have cost about what a build costs, so compiling the screen
    pattern by pattern stays cheap and a warm screen tests none one by one."""

    def __init__(self) -> None:
        self.items: list[str] = []
        self._known: set[str] = set()
        self._automaton: Any = None
        self._built = 0
        self._tested = 0  # literals tested one by one since the last build

    def register(self, literals: frozenset[str]) -> None:
        for lit in literals:
            if len(lit) >= 2 and lit not in self._known:
                self._known.add(lit)
                self.items.append(lit)

    def find(self, folded: str) -> set[str]:
        items = self.items
        pending = len(items) - self._built
        self._tested += pending
        if pending and self._tested > 4 * len(items):  # a build costs ~ a few tests per literal
            automaton = ahocorasick.Automaton()
            for lit in items:
                automaton.add_word(lit, lit)
            automaton.make_automaton()
            self._automaton, self._built, self._tested = automaton, len(items), 0
        found = {lit for _, lit in self._automaton.iter(folded)} if self._built else set()
        found.update(lit for lit in items[self._built :] if lit in folded)
        return found


_LITERALS = _Literals()


class TextProfile:
    """What the keyword checks need of one text, computed once: its folded form, the
    registered literals it holds and, on demand, its longest run of each character class."""

    __slots__ = ("_runs", "checked", "folded", "present")

    def __init__(self, text: str) -> None:
        f = self.folded = fold(text)
        self.present = _LITERALS.find(f)
        self.checked = len(_LITERALS.items)
        self._runs: dict[str, int] = {}

    def catch_up(self) -> None:
        """Test the literals registered after this profile was made."""
        f, items = self.folded, _LITERALS.items
        self.present.update(lit for lit in items[self.checked :] if lit in f)
        self.checked = len(items)

    def run(self, name: str) -> int:
        """The longest run of class `name`, or 0 when none is as long as a check asks for."""
        found = self._runs.get(name)
        if found is None:
            found = self._runs[name] = max(map(len, _run_rx(name).findall(self.folded)), default=0)
        return found


@cache
def _run_rx(name: str) -> re.Pattern[str]:
    """Runs of the class at least as long as the shortest run a check requires: the many
    short ones (every word is a run of letters) are not even listed."""
    chars, _member, useful = RUN_CLASSES[name]
    return re.compile(f"{chars.removesuffix('+')}{{{useful},}}")


@lru_cache(maxsize=512)
def _profile(text: str) -> TextProfile:
    return TextProfile(text)


def profile(text: str) -> TextProfile:
    """The profile of `text`, kept per process, holding every literal registered so far."""
    p = _profile(text)
    if p.checked != len(_LITERALS.items):
        p.catch_up()
    return p


class Keywords:
    """A compiled keyword check: a text must hold one literal of each group (literals of
    one character are looked up in the text itself) and each required character run."""

    __slots__ = ("_checks", "_starts", "groups", "runs")

    def __init__(self, needs: Needs) -> None:
        groups = self.groups = needs.groups
        self.runs = needs.runs
        checks = []
        for group in groups:
            _LITERALS.register(group)
            long = frozenset(lit for lit in group if len(lit) >= 2)
            short = "".join(lit for lit in group if len(lit) < 2)
            checks.append((long, short))
        self._checks = tuple(checks)
        self._starts: Any = None
        if needs.starts:
            automaton = ahocorasick.Automaton()
            for lit in needs.starts:
                automaton.add_word(lit, len(lit) - 1)
            automaton.make_automaton()
            self._starts = automaton

    @property
    def knows_starts(self) -> bool:
        """Whether `starts` can say where a match may begin."""
        return self._starts is not None

    def starts(self, text: str) -> list[int]:
        """The positions, in order, where a match in `text` may begin (`knows_starts`).
        Folding keeps every character in its place, so positions in the folded text are
        positions in `text`."""
        return sorted({end - back for end, back in self._starts.iter(profile(text).folded)})

    def __bool__(self) -> bool:
        return bool(self._checks or self.runs)

    def may_match(self, text: str) -> bool:
        """False only when `text` lacks every literal of some group, or a required run."""
        p = profile(text)
        present = p.present
        for long, short in self._checks:
            if long.isdisjoint(present) and not (short and any(c in p.folded for c in short)):
                return False
        return all(p.run(name) >= length for name, length in self.runs)


class KeywordIndex:
    """Which of many patterns a text may match, decided in one pass over the literals the
    text holds rather than one check per pattern: each pattern is filed under the literals
    of its most selective group."""

    __slots__ = ("_always", "_by_literal", "_checks", "_long", "_short")

    def __init__(self, patterns: list[Keywords]) -> None:
        """`patterns`: the keyword check of each pattern, in order."""
        self._always: set[int] = set()
        self._by_literal: dict[str, set[int]] = {}
        self._checks = patterns
        for i, keywords in enumerate(patterns):
            groups = keywords.groups
            if not groups:
                self._always.add(i)
            for lit in groups[0] if groups else ():
                self._by_literal.setdefault(lit, set()).add(i)
        self._long = frozenset(lit for lit in self._by_literal if len(lit) >= 2)
        self._short = "".join(lit for lit in self._by_literal if len(lit) < 2)

    def candidates(self, text: str) -> set[int]:
        """Indexes of the patterns that may match `text`."""
        p = profile(text)
        filed: set[int] = set()
        by_literal = self._by_literal
        for lit in self._long & p.present:
            filed |= by_literal[lit]
        for c in self._short:
            if c in p.folded:
                filed |= by_literal[c]
        checks = self._checks
        return {i for i in self._always | filed if checks[i].may_match(text)}
