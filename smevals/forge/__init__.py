"""Kept for Evals imported before 0.2: their `graders/forge-case` imports
`smevals.forge.program`. The code lives in `smevals.cases`."""
