"""Test counts from what a test command left: a JUnit XML report, or else pytest's or
unittest's summary in its output. Each gives the tests passed, the tests counted (skipped
and expected failures left out) and the names of the failing ones.

The JUnit report is parsed with the standard library's XML parser after refusing a DTD
and, in any encoding, an entity declaration (checkers/xmlsafe.py): with none there is no
entity to expand (no "billion laughs") and nothing external to fetch, and the report is
read only up to JUNIT_LIMIT bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

JUNIT_LIMIT = 16 * 1024 * 1024
MAX_NAMES = 50


class ReportError(ValueError):
    """A JUnit report that cannot be used (the message says why)."""


@dataclass
class Counts:
    passed: int = 0
    total: int = 0
    failing: list[str] = field(default_factory=list)
    source: str = ""              # junit, pytest or unittest
    skipped: int = 0              # tests that ran but skipped (or failed as expected)

    @property
    def score(self) -> float | None:
        return self.passed / self.total if self.total else None

    @property
    def ran(self) -> int:
        """Every test the run reached, skipped ones included."""
        return self.total + self.skipped


def from_junit(data: bytes) -> Counts:
    """Counts from a JUnit XML report; ReportError when it is not one."""
    import xml.etree.ElementTree as ET
    from xml.parsers import expat

    from smevals.checkers.xmlsafe import Entities, parse

    refused = "has a DTD or an entity declaration, which smevals refuses"
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        raise ReportError(refused)
    try:
        parse(data)             # in any encoding (UTF-16 hides the bytes looked for above)
    except Entities:
        raise ReportError(refused) from None
    except expat.ExpatError:
        pass                    # said below
    try:
        root = ET.fromstring(data)
    except (ET.ParseError, ValueError) as exc:     # ValueError: an encoding expat cannot read
        raise ReportError(f"is not well-formed XML ({exc})") from None
    if root.tag not in ("testsuites", "testsuite"):
        raise ReportError(f"is not a JUnit report (its root is <{root.tag}>, not <testsuites> "
                          "or <testsuite>)")
    out = Counts(source="junit")
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        if "skipped" in kinds:
            out.skipped += 1
            continue
        out.total += 1
        if kinds & {"failure", "error"}:
            cls, name = case.get("classname", ""), case.get("name", "?")
            out.failing.append(f"{cls}.{name}" if cls else name)
        else:
            out.passed += 1
    return out


_PYTEST_LINE = re.compile(r"^=*\s*((?:\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|"
                          r"deselected|warnings?|rerun)(?:, )?)+)\s+in [\d.]+s", re.MULTILINE)
_PYTEST_PART = re.compile(r"(\d+) (\w+)")
_PYTEST_FAILED = re.compile(r"^(?:FAILED|ERROR) (\S+)", re.MULTILINE)
_UNITTEST_RAN = re.compile(r"^Ran (\d+) tests? in [\d.]+s\s*\n\s*\n(OK|FAILED)(?: \(([^)]*)\))?",
                           re.MULTILINE)
_UNITTEST_FAILED = re.compile(r"^(?:FAIL|ERROR): (\S+) \(([^)]*)\)", re.MULTILINE)


def from_output(text: str) -> Counts | None:
    """Counts from pytest's or unittest's summary in `text` (the last one), else None."""
    found = _PYTEST_LINE.findall(text)
    if found:
        parts = {word.rstrip("s") if word != "passed" else word: int(n)
                 for n, word in _PYTEST_PART.findall(found[-1])}
        failed = parts.get("failed", 0) + parts.get("error", 0)
        passed = parts.get("passed", 0) + parts.get("xpassed", 0)
        return Counts(passed, passed + failed, _names(_PYTEST_FAILED.findall(text)), "pytest",
                      parts.get("skipped", 0) + parts.get("xfailed", 0))
    ran = _UNITTEST_RAN.findall(text)
    if ran:
        count, _verdict, extra = ran[-1]
        parts = {key.strip(): int(value) for key, value in
                 re.findall(r"([a-z ]+)=(\d+)", extra)}
        total = int(count) - parts.get("skipped", 0) - parts.get("expected failures", 0)
        failed = parts.get("failures", 0) + parts.get("errors", 0)
        names = [f"{where}.{name}" if not where.endswith(name) else where
                 for name, where in _UNITTEST_FAILED.findall(text)]
        return Counts(max(total - failed, 0), max(total, 0), _names(names), "unittest",
                      int(count) - max(total, 0))
    return None


_COLLECTED = re.compile(r"^=*\s*(\d+) tests? collected", re.MULTILINE)
_COLLECTED_HEAD = re.compile(r"^collected (\d+) items?", re.MULTILINE)
_PER_FILE = re.compile(r"^\S[^\n]*?: (\d+)$", re.MULTILINE)
_NONE_COLLECTED = re.compile(r"^=*\s*no tests collected", re.MULTILINE)


def collected_by_pytest(text: str) -> int | None:
    """How many tests `pytest --collect-only` found, from what it printed at any verbosity
    (`3 tests collected in 0.1s`, `collected 3 items`, or `-qq`'s `test_x.py: 3` lines);
    None when it does not say."""
    for pattern in (_COLLECTED, _COLLECTED_HEAD):
        found = pattern.findall(text)
        if found:
            return int(found[-1])
    if _NONE_COLLECTED.search(text):
        return 0
    per_file = _PER_FILE.findall(text)
    return sum(int(n) for n in per_file) if per_file else None


def _names(names: list[str]) -> list[str]:
    unique = list(dict.fromkeys(names))
    return unique[:MAX_NAMES] + ([f"... and {len(unique) - MAX_NAMES} more"]
                                 if len(unique) > MAX_NAMES else [])
