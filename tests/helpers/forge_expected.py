"""ai-eval-forge's case file of every check type and the verdicts and scores it reaches."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "cases" / "data"


EXPECTED = [
    ("exact-pass", True, 1.0, [("exact", True, 1.0, 1.0, "equal")]),
    ("exact-json", False, 0.0, [("exact", False, 0.0, 1.0, "not equal")]),
    ("contains-partial", True, 0.6667, [("contains", True, 0.6667, 0.6, "2/3 substrings found")]),
    ("contains-case", False, 0.0, [("contains", False, 0.0, 1.0, "0/1 substrings found")]),
    ("regex-flags", True, 0.5, [("regex", True, 1.0, 1.0, "matched"),
                                ("regex", False, 0.0, 1.0, "no match")]),
    ("regex-multiline", True, 1.0, [("regex", True, 1.0, 1.0, "matched")]),
    ("token-f1-default", True, 0.6667, [("token_f1", True, 0.6667, 0.65, "token_f1=0.6667")]),
    ("token-f1-explicit", False, 0.5714, [("token_f1", False, 0.5714, 1.0, "token_f1=0.5714")]),
    ("json-valid", True, 1.0, [("json_valid", True, 1.0, 1.0, "valid JSON")]),
    ("json-invalid", False, 0.0, [("json_valid", False, 0.0, 1.0, "not valid JSON")]),
    ("json-field", True, 1.0, [("json_field", True, 1.0, 1.0, 'user.name="Alice"'),
                               ("json_field", True, 1.0, 1.0, 'user.roles.-1="dev"'),
                               ("json_field", True, 1.0, 1.0, 'user..name="Alice"')]),
    ("json-field-wrong", False, 0.0, [("json_field", False, 0.0, 1.0, "count=3")]),
    ("citations", True, 0.6667, [("citation_coverage", True, 0.6667, 0.6,
                                  "citation_coverage=0.6667")]),
    ("citations-override", True, 0.5, [("citation_coverage", True, 0.5, 0.5,
                                        "citation_coverage=0.5")]),
    ("none-required", False, 0.5, [("exact", True, 1.0, 1.0, "equal"),
                                   ("exact", False, 0.0, 1.0, "not equal")]),
    ("actual-object", True, 1.0, [("json_field", True, 1.0, 1.0, "a=1"),
                                  ("exact", True, 1.0, 1.0, "equal")]),
    ("meta-case", True, 1.0, [("token_f1", True, 1.0, 0.65, "token_f1=1.0")]),
    ("case-17", True, 1.0, [("token_f1", True, 1.0, 0.65, "token_f1=1.0")]),
]
