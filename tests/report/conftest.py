"""The fixtures of the report, diff and log tests (tests/helpers/golden.py): `qa`, `repo`
and `golden`."""

from tests.helpers.golden import golden, qa, repo

__all__ = ["golden", "qa", "repo"]
