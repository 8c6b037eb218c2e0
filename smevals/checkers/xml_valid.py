"""xml_valid (the original smevals): well-formed XML, with entity declarations refused.

Parsing uses the stdlib's expat directly with handlers that reject any `<!ENTITY`
declaration and any external entity, and with parameter-entity parsing off, so no
entity is ever expanded (the defusedxml rule) whatever the expat version.
"""

from __future__ import annotations

from typing import Any
from xml.parsers import expat

from smevals.checkers.base import Checker, CheckInput, CheckResult, checker
from smevals.checkers.inputs import read_bytes

CHECKERS: dict[str, Checker] = {}


class _Forbidden(Exception):
    pass


def _forbid(*_args: object) -> Any:
    raise _Forbidden()


def xml_problem(data: bytes) -> str | None:
    """None when `data` is well-formed XML without entity declarations, else why not."""
    parser = expat.ParserCreate()
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.EntityDeclHandler = _forbid
    parser.UnparsedEntityDeclHandler = _forbid
    parser.ExternalEntityRefHandler = _forbid
    try:
        parser.Parse(data, True)
    except _Forbidden:
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
