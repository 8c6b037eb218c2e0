"""Helpers the tests and benchmarks share (a fake OpenAI-compatible server, picture files)
and the mypy plugin of record keys."""
