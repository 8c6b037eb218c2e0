"""ai-eval-forge compatibility: read its case files, score them with smevals' built-in
checkers (`smevals score`), compare two result files (`smevals score --compare`), and turn a
case file into an Eval with recorded Runs (`smevals import ai-eval-forge`)."""

from smevals.cases.casefile import Case, ForgeInputError, parse_cases, read_cases
from smevals.cases.scoring import score_cases

__all__ = ["Case", "ForgeInputError", "parse_cases", "read_cases", "score_cases"]
