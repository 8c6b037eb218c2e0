"""xml_valid (the original smevals): well-formed XML, with entity declarations refused.

Parsing is checkers/xmlsafe.py's: expat with handlers that reject any `<!ENTITY`
declaration and any external entity, and with parameter-entity parsing off, so no
entity is ever expanded (the defusedxml rule) whatever the expat version.
"""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

from smevals.checkers.base import Checker, CheckInput, CheckResult, checker
from smevals.checkers.inputs import read_bytes
from smevals.checkers.xmlsafe import Entities, parse

CHECKERS: dict[str, Checker] = {}


def xml_problem(data: bytes) -> str | None:
    """None when `data` is well-formed XML without entity declarations, else why not."""
    try:
        parse(data)
    except Entities:
        return "XML entity declarations are not allowed (smevals never expands entities)"
    except expat.ExpatError as exc:
        return f"XML parse error: {exc}"
    return None


@checker(
    CHECKERS,
    "xml_valid",
    "The file (workspace first, then the Run directory), or the output, is well-formed XML.",
    reads="text",
)
def xml_valid(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    if "file" in opts:
        label, data = opts["file"], read_bytes(inp, opts["file"])
    else:
        label, data = "output.txt", inp.output.encode("utf-8", "surrogatepass")
    problem = xml_problem(data)
    if problem is None:
        return CheckResult(ok=True)
    return CheckResult(ok=False, notes=problem if label == "output.txt" else f"{problem} ({label})")
