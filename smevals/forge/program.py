"""The `forge-case` grader program of Evals imported before 0.2 (see `smevals.cases.program`)."""

from smevals.cases.program import main

__all__ = ["main"]
