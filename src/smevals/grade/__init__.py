"""Grading Runs: checker programs, grader versions, grade semantics, which Grade counts."""
