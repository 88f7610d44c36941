"""The write path: candidates, their verdicts against existing memory, proposals with
single-use approval tokens, and the journaled commit that writes what a person approved."""
