"""Evals from other tools' files: promptfoo configs, Inspect datasets, ai-eval-forge case
files (`smevals import ...`)."""
