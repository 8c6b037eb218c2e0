"""One SVG/XML safety module (checkers/xmlsafe.py): every parse of untrusted XML refuses
entities the same way, whatever the document's encoding, and the two safe copies of an SVG
accept the same embedded images."""

from __future__ import annotations

import ast
import base64
import struct
import zlib
from pathlib import Path

import pytest

import smevals
from smevals.checkers import xmlsafe
from smevals.checkers.testcounts import ReportError, from_junit
from smevals.checkers.xml_valid import xml_problem

PACKAGE = Path(smevals.__file__).parent
SVG = 'xmlns="http://www.w3.org/2000/svg"'


def parsers(root: Path) -> list[str]:
    """Where a module other than checkers/xmlsafe.py makes an expat parser itself."""
    return [f"{path.relative_to(root).as_posix()}:{node.lineno}"
            for path in sorted(root.rglob("*.py"))
            if path.relative_to(root).as_posix() != "checkers/xmlsafe.py"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(node, ast.Attribute) and node.attr == "ParserCreate"]


def test_only_the_safety_module_makes_a_parser(tmp_path: Path) -> None:
    assert parsers(PACKAGE) == []
    (tmp_path / "mine.py").write_text("from xml.parsers import expat\np = expat.ParserCreate()\n")
    assert parsers(tmp_path) == ["mine.py:2"]


def test_an_entity_in_utf16_is_refused_in_a_junit_report() -> None:
    """The byte test for `<!ENTITY` misses a UTF-16 document; the parser does not."""
    doc = ('<?xml version="1.0" encoding="UTF-16"?>\n<!DOCTYPE l [<!ENTITY a "x">]>\n'
           '<testsuites><testsuite name="s"><testcase classname="c" name="&a;"/>'
           '</testsuite></testsuites>\n')
    with pytest.raises(ReportError) as refused:
        from_junit(doc.encode("utf-16"))
    assert str(refused.value) == "has a DTD or an entity declaration, which smevals refuses"
    plain = doc.replace('<!DOCTYPE l [<!ENTITY a "x">]>\n', "").replace("&a;", "t")
    assert from_junit(plain.encode("utf-16")).passed == 1


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16"])
def test_every_reader_refuses_entities_in_any_encoding(encoding: str) -> None:
    doc = (f'<?xml version="1.0" encoding="{encoding.upper()}"?>\n'
           f'<!DOCTYPE svg [<!ENTITY a "aa">]><svg {SVG}>&a;</svg>').encode(encoding)
    assert xml_problem(doc) == \
        "XML entity declarations are not allowed (smevals never expands entities)"
    with pytest.raises(xmlsafe.SvgProblem, match="entity declarations are not allowed"):
        xmlsafe.clean(doc)
    with pytest.raises(xmlsafe.Refused, match="declares or refers to XML entities"):
        xmlsafe.sanitise(doc)


def png(width: int, height: int) -> bytes:
    head = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    chunk = b"IHDR" + head
    return (b"\x89PNG\r\n\x1a\n" + struct.pack(">I", len(head)) + chunk +
            struct.pack(">I", zlib.crc32(chunk)))


def test_both_copies_take_the_same_embedded_images() -> None:
    """An image's label must say what its bytes are, as the site already asked: a PNG
    labelled text/plain was rendered before."""
    data = base64.b64encode(png(2, 2)).decode()
    good = f"data:image/png;base64,{data}"
    for href in (good, f"DATA:IMAGE/PNG;base64,{data}"):
        svg = f'<svg {SVG}><image href="{href}"/></svg>'.encode()
        assert xmlsafe.clean(svg).left_out == []
        assert href.encode() in xmlsafe.sanitise(svg)
    for href in (f"data:text/plain;base64,{data}", f"data:image/png;base64,{data}!",
                 "data:image/png;base64," + base64.b64encode(png(0, 5)).decode(),
                 "data:image/png;base64," + base64.b64encode(png(6000, 6000)).decode()):
        svg = f'<svg {SVG}><image href="{href}"/></svg>'.encode()
        assert xmlsafe.clean(svg).left_out == [href[:120]]
        assert b"<image" not in xmlsafe.sanitise(svg)


def test_an_encoding_expat_cannot_read_is_a_reason_not_a_crash() -> None:
    doc = b"\xfe\xff" + '<?xml version="1.0" encoding="UTF-16-BE"?><a/>'.encode("utf-16-be")
    assert xml_problem(doc) == "XML parse error: multi-byte encodings are not supported"
    with pytest.raises(xmlsafe.Refused, match="not well-formed XML: multi-byte encodings"):
        xmlsafe.sanitise(doc)
    with pytest.raises(ReportError, match="is not well-formed XML"):
        from_junit(doc)
