"""One tokenizer and one stemmer for the index, routing and verdicts."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

from engram.core.store.index import SCHEMA
from engram.core.words import fold, index_terms, match_phrase, stem, tokenize, word_stems


def test_non_ascii_words_stay_whole() -> None:
    assert tokenize("Déploiement des données: naïve café_au_lait, ÜBER-größe") == [
        "déploiement", "des", "données", "naïve", "café", "au", "lait", "über", "größe"
    ]  # fmt: skip
    assert tokenize("where's the API? don't") == ["where", "the", "api", "do"]
    assert fold("données") == "donnees" and fold("naïve") == "naive"


def test_one_answer_to_is_deploy_the_same_word_as_deployment() -> None:
    assert stem("deploy") == stem("deployment") == stem("deploying") == stem("deployed")
    assert stem("migration") == stem("migrations")
    assert stem("données") == stem("donnees")  # accents never split a word in two
    assert word_stems("Deploying migrations") == {stem("deploy"), stem("migration")}


def test_the_index_holds_the_stems_python_compares() -> None:
    conn = sqlite3.connect(":memory:")
    conn.executescript(SCHEMA)
    text = "Deployments of the données pipeline, retried nightly"
    conn.execute(
        "INSERT INTO fts(rowid, title, tags, triggers, body) VALUES (1, ?, '', '', '')",
        (index_terms(text),),
    )
    conn.execute("CREATE VIRTUAL TABLE vocab USING fts5vocab(fts, 'row')")
    vocab = {t for (t,) in conn.execute("SELECT term FROM vocab")}
    assert vocab == {stem(w) for w in tokenize(text)}
    for query in ("deploy", "deploying", "donnees", "DONNÉES", "retry"):
        hits = conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (match_phrase(query),))
        assert hits.fetchall() == [(1,)], query


def test_explain_shows_whole_words_for_a_non_ascii_task(tmp_path) -> None:
    env = {"HOME": str(tmp_path), "ENGRAM_HOME": str(tmp_path / "eh"), "PATH": "/usr/bin:/bin"}
    run = [sys.executable, "-m", "engram.cli.main"]
    (tmp_path / "ws").mkdir()
    subprocess.run([*run, "init"], cwd=tmp_path / "ws", env=env, check=True, capture_output=True)
    subprocess.run(
        [*run, "save", "-f", "knowledge", "Le déploiement des données se fait chaque nuit."],
        cwd=tmp_path / "ws", env=env, check=True, capture_output=True,
    )  # fmt: skip
    out = subprocess.run(
        [*run, "load", "--explain", "déploiement données"],
        cwd=tmp_path / "ws", env=env, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    assert "terms: déploiement, données" in out
    assert "matched: données, déploiement" in out or "matched: déploiement, données" in out
