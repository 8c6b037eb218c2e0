"""Authoring files (eval, task, config, grader): load, validate, and typed records."""
