"""promptfoo's `regex` assertion is `new RegExp(value).test(output)` in JavaScript; the import
writes the pattern for RE2 (smevals/importers/pf_regex.py). Each row's verdict is the one
node 20 gave (`new RegExp(pattern).test(text)`), recorded when the table was written."""

from __future__ import annotations

import re

import pytest

from smevals.checkers.regex import compile_re2
from smevals.importers.pf_regex import js_to_re2

# (JavaScript pattern, text, what JavaScript's RegExp.test says)
NODE = [
    ("^[LS]\\w+$", "Lima", True),
    ("^[LS]\\w+$", "Santiago\n", False),
    ("^[LS]\\w+$", "lima", False),
    ("^[LS]\\w+$", "Lima!", False),
    ("a.b", "a\nb", False),
    ("a.b", "a\rb", False),
    ("a.b", "a\u2028b", False),
    ("a.b", "axb", True),
    ("a.b", "a\u00e9b", True),
    ("^\\s+$", "\u00a0", True),
    ("^\\s+$", " \t", True),
    ("^\\s+$", "\u2003", True),
    ("^\\s+$", "\ufeff", True),
    ("^\\s+$", "x", False),
    ("\\bcat\\b", "a cat!", True),
    ("\\bcat\\b", "concat", False),
    ("\\bcat\\b", "cat", True),
    ("colou?r", "color", True),
    ("colou?r", "colour", True),
    ("colou?r", "colr", False),
    ("\\d{2,3}x{", "12x{", True),
    ("\\d{2,3}x{", "1x{", False),
    ("\\d{2,3}x{", "123x", False),
    ("[^]", "\n", True),
    ("[^]", "", False),
    ("[]", "a", False),
    ("[]", "", False),
    ("[a-c-e]", "-", True),
    ("[a-c-e]", "d", False),
    ("[a-c-e]", "e", True),
    ("[a-c-e]", "b", True),
    ("(?<year>\\d{4})-\\d\\d", "2024-01", True),
    ("(?<year>\\d{4})-\\d\\d", "24-01", False),
    ("\\u00e9t\\u00e9", "\u00e9t\u00e9", True),
    ("\\u00e9t\\u00e9", "ete", False),
    ("\\x41\\cJ", "A\n", True),
    ("\\x41\\cJ", "A", False),
    ("end$", "the end", True),
    ("end$", "the end\n", False),
    ("end$", "ending", False),
    ("^(yes|no)\\.?$", "yes", True),
    ("^(yes|no)\\.?$", "no.", True),
    ("^(yes|no)\\.?$", "maybe", False),
    ("^(yes|no)\\.?$", "yes!", False),
    ("\\D\\W\\S", "a!b", True),
    ("\\D\\W\\S", "1!b", False),
    ("\\D\\W\\S", "a b", True),
    ("[\\d\\s]+", "12 34", True),
    ("[\\d\\s]+", "abc", False),
    ("\\/path\\/", "a/path/b", True),
    ("\\/path\\/", "path", False),
    ("\\$\\d+\\.\\d{2}", "$12.50", True),
    ("\\$\\d+\\.\\d{2}", "12.50", False),
    ("x*?y+?", "y", True),
    ("x*?y+?", "xxy", True),
    ("x*?y+?", "x", False),
    ("[\\b]", "\b", True),
    ("[\\b]", "b", False),
]


@pytest.mark.parametrize(("pattern", "text", "verdict"), NODE)
def test_the_re2_pattern_matches_what_javascript_matches(pattern: str, text: str,
                                                         verdict: bool) -> None:
    assert (compile_re2(js_to_re2(pattern)).search(text) is not None) is verdict


@pytest.mark.parametrize(("pattern", "why"), [
    ("(?=a)b", "lookaround"),
    ("(?<!a)b", "lookaround"),
    ("(a)\\1", "backreference"),
    ("(?<n>a)\\k<n>", "backreference"),
    ("\\ud800", "lone surrogate"),
    ("a{1001}", "above {1000}"),
    ("(a", "unclosed"),
    ("a)", "unmatched"),
    ("[a", "unclosed '['"),
    ("[z-a]", "out of order"),
    ("[\\D]", "inside a character class"),
])
def test_what_re2_cannot_run_is_named(pattern: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        js_to_re2(pattern)
