"""Model judges: the judge block (settings), prompt templates, verdicts, backends (an
OpenAI-compatible endpoint, replayed answers, the `llm` library), the same-family guard,
and the engine that asks, caches in the store and keeps every call. The checkers that use
them are in smevals/judges/checks.py."""
