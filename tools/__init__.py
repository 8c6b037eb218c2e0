"""Helpers the tests and benchmarks share (a fake OpenAI-compatible server, picture files,
processes found by their command line) and the mypy plugin of record keys."""
