"""Engram: human-owned, file-first memory for AI coding agents."""

__version__ = "0.1.0"
DISTRIBUTION = "engram-workspace-memory"
