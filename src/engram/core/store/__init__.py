"""The store: roots, memory files, the link-refusing file primitives, integrity,
the search index and configuration. Everything else reads and writes memory through it."""
