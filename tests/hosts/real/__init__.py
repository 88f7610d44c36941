"""Helpers for the tests that drive the real host programs."""
