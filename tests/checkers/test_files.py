"""xml_valid and the `file:` option: workspace first, then the Run directory, never outside."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.checkers import run

LAUGHS = (
    '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaa">'
    '<!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;">]><l>&c;</l>'
)


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    run_dir, workspace = tmp_path / "run", tmp_path / "ws"
    run_dir.mkdir()
    workspace.mkdir()
    (run_dir / "good.xml").write_text("<a><b/></a>")
    (run_dir / "broken.xml").write_text("<a><b></a>")
    (run_dir / "laughs.xml").write_text(LAUGHS)
    (run_dir / "external.xml").write_text(
        '<!DOCTYPE a [<!ENTITY e SYSTEM "/etc/hostname">]><a>&e;</a>'
    )
    (run_dir / "answer.txt").write_text("the answer is 42\n")
    (run_dir / "latin1.txt").write_bytes("caf\xe9".encode("latin-1"))
    (tmp_path / "secret.txt").write_text("42")
    (run_dir / "link.txt").symlink_to(tmp_path / "secret.txt")
    return run_dir, workspace


def xml(dirs: tuple[Path, Path], opts: dict[str, str], output: str = "") -> dict[str, object]:
    return run("xml_valid", opts, output, run_dir=dirs[0], workspace=dirs[1]).as_dict()


TABLE = [
    ({"file": "good.xml"}, "", {"ok": True}),
    ({"file": "nope.xml"}, "", {"ok": False, "notes": "no such file: nope.xml"}),
    ({}, "<x>ok</x>", {"ok": True}),
    ({}, "<x>", {"ok": False, "notes": "XML parse error: no element found: line 1, column 3"}),
    (
        {"file": "../good.xml"},
        "",
        {"ok": False, "notes": "file: may not contain '..' ('../good.xml')"},
    ),
    (
        {"file": "/etc/hosts"},
        "",
        {"ok": False, "notes": "file: must be a relative path, not '/etc/hosts'"},
    ),
]


@pytest.mark.parametrize("opts,output,expected", TABLE)
def test_xml_table(
    dirs: tuple[Path, Path], opts: dict[str, str], output: str, expected: dict[str, object]
) -> None:
    assert xml(dirs, opts, output) == expected


def test_parse_error_notes_start_like_the_original(dirs: tuple[Path, Path]) -> None:
    assert str(xml(dirs, {"file": "broken.xml"})["notes"]).startswith("XML parse error")


def test_workspace_wins_over_run_dir(dirs: tuple[Path, Path]) -> None:
    (dirs[1] / "broken.xml").write_text("<fixed/>")
    assert xml(dirs, {"file": "broken.xml"}) == {"ok": True}


@pytest.mark.parametrize("name", ["laughs.xml", "external.xml"])
def test_entity_declarations_are_refused(dirs: tuple[Path, Path], name: str) -> None:
    result = xml(dirs, {"file": name})
    assert result["ok"] is False
    assert "entity declarations are not allowed" in str(result["notes"])


def test_hyphenated_name(dirs: tuple[Path, Path]) -> None:
    assert run("xml-valid", {"file": "good.xml"}, run_dir=dirs[0]).ok


def test_file_option_for_text_checkers(dirs: tuple[Path, Path]) -> None:
    result = run("contains", {"value": "zzz", "file": "answer.txt"}, run_dir=dirs[0])
    assert result.notes == "answer.txt does not contain 'zzz'"
    assert run("regex", {"pattern": r"\b42\b", "file": "answer.txt"}, run_dir=dirs[0]).ok


def test_file_must_be_utf8(dirs: tuple[Path, Path]) -> None:
    result = run("contains", {"value": "caf", "file": "latin1.txt"}, run_dir=dirs[0])
    assert result.ok is False and "not UTF-8" in result.notes


def test_symlink_out_of_the_run_dir_is_refused(dirs: tuple[Path, Path]) -> None:
    result = run("contains", {"value": "42", "file": "link.txt"}, run_dir=dirs[0])
    assert result.ok is False and "leads outside" in result.notes


def test_file_without_directories_fails() -> None:
    result = run("contains", {"value": "42", "file": "answer.txt"})
    assert result.ok is False and "needs a Run directory" in result.notes


def test_file_is_not_an_option_of_usage_checkers() -> None:
    result = run("http_status", {"status": 200, "file": "x"}, usage={"http_status": 200})
    assert result.ok is False and "unknown option" in result.notes
