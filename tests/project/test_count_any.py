"""tools/count_any.py counts the functions that take or return a bare `Any` (issue 39: under
80 in smevals/, the rest parsed JSON or untyped libraries at the edge)."""

from __future__ import annotations

from pathlib import Path

from tools.count_any import bare_any_functions, main

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "smevals"

MODULE = '''\
from typing import Any
import typing


def takes(value: Any) -> int: ...
def gives() -> typing.Any: ...
def star(*args: Any, **kwargs: int) -> None: ...
def quoted(value: "Any") -> None: ...
def inside(value: dict[str, Any]) -> list[Any]: ...
def plain(value: object) -> str: ...


class Thing:
    def method(self, other: Any) -> None:
        def nested(x) -> Any: ...
'''


def test_only_a_bare_any_counts(tmp_path: Path, capsys) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text(MODULE)
    found = [(line, name) for _path, line, name in bare_any_functions(tmp_path / "pkg")]
    assert found == [(5, "takes"), (6, "gives"), (7, "star"), (8, "quoted"), (14, "method"),
                     (15, "nested")]
    assert main([str(tmp_path / "pkg")]) == 0
    assert capsys.readouterr().out == (
        f"6 functions take or return a bare Any in {tmp_path / 'pkg'}\n")


def test_smevals_has_fewer_than_80() -> None:
    assert (PACKAGE / "__init__.py").is_file()         # never a count of a missing folder
    assert 0 < len(list(bare_any_functions(PACKAGE))) < 80
