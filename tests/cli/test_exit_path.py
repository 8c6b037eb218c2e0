"""One exit path: a command ends with an exit code by raising (smevals.errors.Exit, or a
SmevalsError with its message), and only smevals.cli.main turns that into the process's
exit; no `raise SystemExit` or `sys.exit` in the commands."""

from __future__ import annotations

import ast
from pathlib import Path

import smevals

PACKAGE = Path(smevals.__file__).parent
# Where the process ends: the console entry point and the CLI's one error path.
EXITS = {"__main__.py", "cli/__init__.py"}
# Child programs, run as their own process (never imported by smevals).
CHILDREN = {"cases/program.py", "checkers/unitrun.py"}


def exits(path: Path) -> list[int]:
    """The lines that raise SystemExit or call sys.exit (a program in a string is data: not
    looked at)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name) and target.id == "SystemExit":
                lines.append(node.lineno)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                node.func.attr == "exit" and isinstance(node.func.value, ast.Name) and \
                node.func.value.id == "sys":
            lines.append(node.lineno)
    return lines


def test_only_the_one_error_path_exits(tmp_path: Path) -> None:
    found = [f"{rel}:{line}" for path in sorted(PACKAGE.rglob("*.py"))
             if (rel := path.relative_to(PACKAGE).as_posix()) not in EXITS | CHILDREN
             for line in exits(path)]
    assert found == []
    planted = tmp_path / "cmd.py"
    planted.write_text("import sys\n\ndef f():\n    raise SystemExit(2)\n\n"
                       "def g():\n    sys.exit(1)\n\nTEXT = 'sys.exit(3)'\n")
    assert exits(planted) == [4, 7]


def test_a_quiet_exit_keeps_its_code_and_says_nothing_more(cli, tmp_path: Path) -> None:
    res = cli("check", '{"checker": "contains", "value": "snow"}', "--output", "rain")
    assert res.code == 1
    assert res.err == ""
    res = cli("check", '{"checker": "contains", "value": "rain"}', "--output", "rain")
    assert (res.code, res.err) == (0, "")
