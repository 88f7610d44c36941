"""Safety: what keeps text aimed at the agent, and secrets, out of what the agent reads.

`scan` checks text that may become memory (injection refusal, redaction, ids and paths);
`screen` checks every field of a memory before it is shown; `injection`, `intent`,
`secrets` and `normalise` are the families they use. The package itself imports nothing,
so the read path pays for a check only when it runs one.
"""
