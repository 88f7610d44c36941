"""Words: the one tokenizer, stemmer and set of word tables that routing, the index, candidates
and verdicts share, so that "is `deploy` the same word as `deployment`?" has one answer.

- `tokenize` splits on what SQLite's FTS5 `unicode61` tokenizer splits on (anything but
  letters and digits, so `_` too) and keeps whole Unicode words: "déploiement" stays one
  word, accents and all, so an explanation shows what the person typed.
- `stem` is Snowball (Porter 2 for English) over the word with its diacritics removed, as
  FTS5's `remove_diacritics 2` removes them. The index stores these stems (`index_terms`)
  under a plain `unicode61` tokenizer, and queries are stemmed here too, so the index and
  Python compare the same strings.
- One table of function words per language, one of chat words a task carries but no memory
  is about, one of generic words about work itself; one table of related words (a task word
  → the words memories use for it) and one of same words (spellings of one idea, which
  verdicts treat as equal).

The stemmer is PyStemmer, the Snowball project's C extension: about 1 ms to import, so the
prompt hook can afford it.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

_WORD = re.compile(r"[^\W_]+")
_CONTRACTION = re.compile(r"(?<=[^\W\d_])(?:n't|'s|'re|'ll|'ve|'d|'m)\b")


def tokenize(text: str) -> list[str]:
    """Lowercase whole words; contractions lose their tail ("where's" → "where", "don't" → "do")."""
    text = text.lower().replace("\u2019", "'").replace("can't", "can").replace("won't", "will")
    return _WORD.findall(_CONTRACTION.sub("", text).replace("'", ""))


@lru_cache(maxsize=32768)
def fold(word: str) -> str:
    """The word without diacritics ("données" → "donnees"), as FTS5's unicode61 folds it."""
    if word.isascii():
        return word
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch)).casefold()


@lru_cache(maxsize=8)
def _stemmer(language: str):  # type: ignore[no-untyped-def]
    import Stemmer

    return Stemmer.Stemmer(language)


@lru_cache(maxsize=65536)
def stem(word: str, language: str = "english") -> str:
    """The Snowball stem of a lowercase word, diacritics removed (short words stay whole)."""
    word = fold(word)
    if len(word) <= 3 or not word.isalpha():
        return word
    return _stemmer(language).stemWord(word)


@lru_cache(maxsize=32768)
def word_stems(text: str) -> frozenset[str]:
    """Stems of a title, tag or phrase (cached: the same strings come back on every load)."""
    return frozenset(stem(w) for w in tokenize(text))


def index_terms(text: str) -> str:
    """What the index stores for a text: its stems, one per word, in order."""
    return " ".join(stem(w) for w in tokenize(text))


def match_phrase(text: str) -> str:
    """An FTS5 phrase query for the words of `text`, stemmed as the index stores them."""
    return '"' + index_terms(text) + '"'


# Function words: they say how, never what. One set per language developers write in.
FUNCTION_WORDS: dict[str, frozenset[str]] = {
    "english": frozenset(
        """a an the and or but if then else when while of to in on at by for with from into
        onto over under about as is are was were be been being it its this that these those
        there here we you they he she i me my our your their them us do does did done has have
        had having can could should would will shall may might must not no never always all
        any each every some such so than too very just also only own same both few more most
        other again once before after above below up down out off further what which who whom
        whose why how where use uses using used make makes made get gets got set sets run runs
        via per""".split()
    ),
    "spanish": frozenset(
        """el la los las un una unos unas de del al y o en con por para que se es son su sus
        lo como más pero sin sobre entre este esta estos estas ese esa muy ya también cada
        todo todos""".split()
    ),
    "french": frozenset(
        """le la les un une des du de et ou dans avec pour par que qui sur est sont au aux ce
        cette ces son sa ses il elle nous vous leur leurs être plus tout tous toute toutes
        chaque afin ne""".split()
    ),
    "german": frozenset(
        """der die das den dem des ein eine einer eines einem einen und oder in im mit für
        von zu zum zur auf ist sind bei aus um an am als auch wie wird werden jede jeder
        jedes alle""".split()
    ),
    "portuguese": frozenset(
        """o a os as um uma uns umas do da dos das no na nos nas em com por para que é são
        seu sua""".split()
    ),
}
ALL_FUNCTION_WORDS = frozenset().union(*FUNCTION_WORDS.values())

# What a task says around its subject ("hey, can you quickly look at … thanks").
CHAT_WORDS = frozenset(
    """
    able across actually ask asap asked awesome because best better between bit came cant
    can't cheers come comes cool correct correctly difference doing dont don't during entire
    etc ever everyone everything few first gave give gives go goes going gonna good got great
    happen happened happens hers hey hi him his hows i'm im instead isn itself ive keep keeps
    kept kind last later less let let's lets lgtm lot lots looked looking looks many much
    need needs new next nice nor now ok okay one ours people perfect please properly put puts
    putting quickly really right said say says seem seems somebody someone something soon
    sort sounds still stuff sure take takes tell thank thanks thing things through thx today
    tomorrow tonight took tried try trying two ty until urgent versus vs wait waiting want
    wants way we're went whats wheres whole within without won't worked works yesterday yet
    yours
    """.split()
)

# Words about Engram or about work in general: they never admit a memory on their own.
GENERIC_WORDS = frozenset(
    """
    add added adding agent agents app application bug bugs change changed changes changing check
    code codebase context do doc done engram file files find fix fixed fixes fixing help info
    information know knowledge like load loading look made make memories memory note notes
    problem problems project projects recall remember repo repository rule rules save see show
    skill skills stuff system task tasks tell thing update updated updating use used using work
    workflow workflows working write writing
    """.split()
)

# Related words: a word of a task → the words memories use for the same thing (the task is
# widened with them, at a lower weight).
RELATED_WORDS: dict[str, tuple[str, ...]] = {
    "db": ("database",), "database": ("db",), "databases": ("db",),
    "auth": ("authentication", "authorization", "login"), "login": ("auth", "signin"),
    "authentication": ("auth",), "signin": ("login",), "k8s": ("kubernetes",), "kubernetes": ("k8s",),
    "deploy": ("deployment",), "deployment": ("deploy",), "pr": ("pull",), "docs": ("documentation",),
    "documentation": ("docs",), "config": ("configuration",), "configuration": ("config",),
    "env": ("environment",), "environment": ("env",), "perf": ("performance",),
    "performance": ("perf", "latency"), "i18n": ("translation", "localization"),
    "translation": ("i18n",), "translations": ("i18n",), "localization": ("i18n",), "l10n": ("i18n",),
    "ui": ("frontend",), "frontend": ("ui",), "js": ("javascript",), "ts": ("typescript",),
    "deps": ("dependencies",), "dependency": ("deps",), "dependencies": ("deps",),
    "credential": ("secret",), "credentials": ("secret",), "secret": ("credentials",),
    "secrets": ("credentials",), "password": ("secret", "credentials"), "passwords": ("secret",),
    "endpoint": ("api",), "endpoints": ("api",), "changelog": ("release",), "ship": ("release",),
    "shipping": ("release",), "crash": ("error",), "logs": ("logging",),
    "logging": ("logs",), "metrics": ("monitoring",), "monitoring": ("metrics",),
    "pipeline": ("ci",), "ci": ("pipeline",), "flaky": ("retry",), "schema": ("migration",),
    "migrations": ("schema",), "payment": ("billing",), "billing": ("payment",),
    "invoice": ("billing",), "invoices": ("billing",), "cache": ("caching",), "caching": ("cache",),
    "rollback": ("revert",), "revert": ("rollback",), "slow": ("performance", "latency"),
    "latency": ("performance",), "translate": ("i18n", "translation"), "locale": ("i18n",),
    "a11y": ("accessibility",), "accessibility": ("a11y",), "permission": ("access", "role"),
    "permissions": ("access", "role"), "rerun": ("backfill",), "reprocess": ("backfill",),
    "subgraph": ("graphql",), "outage": ("incident",), "incident": ("outage",),
    "vulnerability": ("security", "cve"), "cve": ("security", "vulnerability"),
    "upgrade": ("update", "bump"), "bump": ("upgrade",), "typo": ("spelling",),
    "certificate": ("signing",), "cert": ("certificate",), "signing": ("certificate",),
}  # fmt: skip
# Two-word phrases developers use for one idea → words memories use for it.
RELATED_PHRASES: dict[tuple[str, ...], tuple[str, ...]] = {
    ("screen", "reader"): ("accessibility", "a11y", "voiceover", "talkback"),
    ("api", "key"): ("secret", "credentials"),
    ("access", "token"): ("secret", "credentials"),
    ("feature", "flag"): ("toggle",),
    ("pull", "request"): ("review",),
    ("code", "review"): ("review",),
    ("on", "call"): ("oncall", "incident"),
    ("dark", "mode"): ("theme",),
}

STOPWORDS = ALL_FUNCTION_WORDS | CHAT_WORDS  # what a task's terms leave out

# Same words: spellings of one idea, which verdicts compare as one (the first names the group).
SAME_WORDS: tuple[tuple[str, ...], ...] = (
    ("full", "whole", "entire", "complete"),
    ("pr", "mr"),
    ("repo", "repository", "repositories"),
    ("db", "database"),
    ("config", "configuration", "configure", "settings"),
    ("env", "environment"),
    ("doc", "docs", "documentation"),
    ("dep", "deps", "dependency", "dependencies"),
    ("k8s", "kubernetes"),
    ("auth", "authentication", "login", "signin"),
    ("start", "begin", "launch"),
    ("run", "execute", "invoke"),
    ("remove", "delete", "erase"),
    ("big", "large", "huge"),
    ("small", "tiny", "little"),
    ("fast", "quick", "rapid"),
    ("error", "failure"),
    ("check", "verify", "validate"),
    ("create", "open"),
    ("fetch", "download"),
    ("lint", "linter", "linting"),
    ("test", "tests", "testing"),
    ("js", "javascript"),
    ("ts", "typescript"),
    ("dir", "directory", "folder"),
    ("app", "application"),
    ("secret", "credential", "credentials"),
    ("func", "function"),
    ("arg", "argument"),
    ("param", "parameter"),
    ("var", "variable"),
    ("prod", "production"),
    ("dev", "development"),
    ("deploy", "deployment"),
    ("hash", "sha", "digest"),
    ("image", "img"),
    ("alt", "alternative"),
    ("attribute", "attr"),
    ("pii", "personal"),
    ("log", "logs", "logging"),
    ("below", "under", "less", "fewer"),
    ("above", "over", "more"),
    ("day", "daily"),
    ("week", "weekly"),
    ("month", "monthly"),
)
