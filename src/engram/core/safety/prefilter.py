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

import re
from functools import lru_cache
from re import _compiler as sre_compiler  # type: ignore[attr-defined]
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser as sre_parse  # type: ignore[attr-defined]

# Literals shorter than three letters are not worth a check (two Latin letters occur in
# any text), except outside ASCII, where two letters are a word ("密码", "無視").
_MIN_LITERAL = 3


def _long_enough(group: frozenset[str]) -> bool:
    return all(len(lit) >= _MIN_LITERAL or (len(lit) == 2 and not lit.isascii()) for lit in group)


_MAX_GROUPS = 3  # the most selective groups of a pattern; more cost more than they save

# Letters the engine treats as one under IGNORECASE although `str.lower` keeps them apart
# (the dotted capital I, the long s, final sigma, Greek symbol variants, old Cyrillic
# forms): each is folded to one representative before any comparison.
_SAME_LETTERS = (
    "iı", "sſ", "µμ", "ιͅι", "ΐΐ", "ΰΰ", "βϐ", "εϵ", "θϑ", "κϰ", "πϖ", "ρϱ", "σς",
    "φϕ", "вᲀ", "дᲁ", "оᲂ", "сᲃ", "тᲄᲅ", "ъᲆ", "ѣᲇ", "ꙋᲈ", "ṡẛ", "ﬅﬆ",
)  # fmt: skip
_FOLD = str.maketrans({ch: group[0] for group in _SAME_LETTERS for ch in group[1:]})


def fold(text: str) -> str:
    """`text` in the case folding both sides of a keyword check use."""
    return text.replace("İ", "i").lower().translate(_FOLD)


Groups = tuple[frozenset[str], ...]


def required_literals(pattern: str, flags: int = 0) -> Groups:
    """Groups of folded literals of which every match of `pattern` holds at least one
    from each group; the most selective first. Empty when nothing is required."""
    try:
        return _groups_of(sre_parse.parse(pattern, flags))
    except (re.error, RecursionError):
        return ()


def compile_with_keywords(pattern: str, flags: int = 0) -> tuple[re.Pattern[str], Groups]:
    """The compiled pattern and its required literals, from one parse of `pattern` (the
    parse is most of what compiling costs, and a process compiles hundreds of these)."""
    try:
        tree = sre_parse.parse(pattern, flags)
        groups = _groups_of(tree)
        return sre_compiler.compile(tree, flags), groups
    except Exception:
        return re.compile(pattern, flags), required_literals(pattern, flags)


def _groups_of(tree: object) -> Groups:
    groups = [g for g in _sequence(list(tree)) if _long_enough(g)]  # type: ignore[call-overload]
    groups.sort(key=lambda g: (-min(map(len, g)), len(g)))
    return tuple(groups[:_MAX_GROUPS])


def _sequence(items: list) -> list[frozenset[str]]:
    """The required groups of a sequence of parsed items: a run of literal characters is
    one required string; a required sub-part adds its own groups."""
    groups: list[frozenset[str]] = []
    run: list[str] = []

    def flush() -> None:
        if run:
            groups.append(frozenset({fold("".join(run))}))
            run.clear()

    for op, av in items:
        if op is sre.LITERAL:
            run.append(chr(av))
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
        else:  # a class, any character, a negative look-around, a back-reference …
            flush()
    flush()
    return groups


def _branch(alternatives: list) -> frozenset[str] | None:
    """One group for an alternation: the best group of each alternative, joined; None when
    some alternative requires nothing (it can match text without any keyword)."""
    chosen: set[str] = set()
    for alt in alternatives:
        groups = [g for g in _sequence(list(alt)) if _long_enough(g)]
        if not groups:
            return None
        chosen |= max(groups, key=lambda g: (min(map(len, g)), -len(g)))
    return frozenset(chosen)


def _key(literal: str) -> str:
    """The window of a text a literal's presence shows in: its first three letters (two,
    outside ASCII)."""
    return literal[:3]


class TextProfile:
    """What the keyword checks need of one text, computed once: its folded form and the
    set of its three-letter windows (and two-letter ones, outside ASCII)."""

    __slots__ = ("folded", "grams")

    def __init__(self, text: str) -> None:
        f = self.folded = fold(text)
        grams = {f[i : i + 3] for i in range(len(f) - 2)}
        if not f.isascii():
            grams.update(f[i : i + 2] for i in range(len(f) - 1))
        self.grams = grams


@lru_cache(maxsize=512)
def profile(text: str) -> TextProfile:
    return TextProfile(text)


class Keywords:
    """A compiled keyword check: each group indexed by the first three letters of its
    literals, so most texts are ruled out by one set intersection per group."""

    __slots__ = ("_groups", "groups")

    def __init__(self, groups: Groups) -> None:
        self.groups = groups
        indexed = []
        for group in groups:
            by_gram: dict[str, list[str]] = {}
            for lit in group:
                by_gram.setdefault(_key(lit), []).append(lit)
            indexed.append((frozenset(by_gram), {k: tuple(v) for k, v in by_gram.items()}))
        self._groups = tuple(indexed)

    def __bool__(self) -> bool:
        return bool(self._groups)

    def may_match(self, text: str) -> bool:
        """False only when `text` lacks every literal of some required group."""
        p = profile(text)
        for grams, by_gram in self._groups:
            if grams.isdisjoint(p.grams):
                return False
            f = p.folded
            if not any(lit in f for g in grams & p.grams for lit in by_gram[g]):
                return False
        return True


class KeywordIndex:
    """Which of many patterns a text may match, decided in one pass over the text's windows
    rather than one check per pattern: each pattern is filed under the windows of its most
    selective group."""

    __slots__ = ("_always", "_by_gram", "_checks")

    def __init__(self, patterns: list[Keywords]) -> None:
        """`patterns`: the keyword check of each pattern, in order."""
        self._always: set[int] = set()
        self._by_gram: dict[str, set[int]] = {}
        self._checks = patterns
        for i, keywords in enumerate(patterns):
            groups = keywords.groups
            if not groups:
                self._always.add(i)
            for lit in groups[0] if groups else ():
                self._by_gram.setdefault(_key(lit), set()).add(i)

    def candidates(self, text: str) -> set[int]:
        """Indexes of the patterns that may match `text` (every pattern without keywords)."""
        p = profile(text)
        filed: set[int] = set()
        for gram in p.grams.intersection(self._by_gram):
            filed |= self._by_gram[gram]
        checks = self._checks
        return self._always | {i for i in filed if checks[i].may_match(text)}
