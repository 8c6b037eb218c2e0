"""checkers/machinery.py: which of the agent's files configure or replace the test machinery
(refused by `command`, marked as tampering in a Grade), one kind at a time."""

from __future__ import annotations

import pytest

from smevals.checkers.machinery import Mark, matches, refused

CONTENT = {
    "setup.cfg": b"[metadata]\nname = x\n\n[tool:pytest]\naddopts = --collect-only\n",
    "plain/setup.cfg": b"[metadata]\nname = x\n",
    "old/setup.cfg": b"  [pytest]\naddopts = -p no:junitxml\n",
    "pyproject.toml": b'[project]\nname = "x"\n[tool.pytest.ini_options]\naddopts = "-q"\n',
    "dotted/pyproject.toml": b'tool.pytest.ini_options.addopts = "--co"\n',
    "plain/pyproject.toml": b'[project]\nname = "x"\n[tool.ruff]\nline-length = 9\n',
    "broken/pyproject.toml": b"[tool.pytest\naddopts=--co\n",
    "pkg/__init__.py": b"def load_tests(loader, tests, pattern):\n    return tests\n",
    "lib/__init__.py": b"VERSION = 1\n",
}


def read(path: str) -> bytes | None:
    return CONTENT.get(path, b"")


@pytest.mark.parametrize(("path", "kind"), [
    ("conftest.py", "conftest"),
    ("deep/down/conftest.py", "conftest"),
    ("pytest.ini", "test-config"),
    ("tests/.pytest.ini", "test-config"),
    ("pytest.toml", "test-config"),
    (".pytest.toml", "test-config"),
    ("tox.ini", "test-config"),
    ("setup.cfg", "test-config"),
    ("old/setup.cfg", "test-config"),
    ("pyproject.toml", "test-config"),
    ("dotted/pyproject.toml", "test-config"),
    ("broken/pyproject.toml", "test-config"),
    ("sitecustomize.py", "site-hook"),
    ("lib/usercustomize.py", "site-hook"),
    ("evil.pth", "site-hook"),
    ("pkg/__init__.py", "test-hook"),
])
def test_each_kind_of_machinery_is_refused_by_its_name_or_content(path: str, kind: str) -> None:
    assert refused({path: "added", "leap.py": "changed"}, read) == [Mark(path, kind)]
    assert refused({path: "changed"}, read) == [Mark(path, kind)]     # a starting file too


@pytest.mark.parametrize("path", ["plain/setup.cfg", "plain/pyproject.toml", "lib/__init__.py",
                                  "leap.py", "tests/test_mine.py", "conftest.txt", "notes.ini",
                                  "src/json.py", "docs/unittest.md"])
def test_implementation_files_are_not_machinery(path: str) -> None:
    assert refused({path: "added"}, read) == []


@pytest.mark.parametrize(("path", "shown"), [
    ("unittest/__init__.py", "unittest/"),
    ("unittest/__main__.py", "unittest/"),
    ("json.py", "json.py"),
    ("pytest.py", "pytest.py"),
    ("_pytest/__init__.py", "_pytest/"),
    ("pluggy.py", "pluggy.py"),
    ("os.cpython-311-x86_64-linux-gnu.so", "os.cpython-311-x86_64-linux-gnu.so"),
    ("hidden_dir/json.py", "hidden_dir/json.py"),       # beside a hidden file: on the path
])
def test_a_module_shadowing_the_standard_library_or_the_runner(path: str, shown: str) -> None:
    assert refused({path: "added"}, read, hidden=["hidden_dir/test_x.py"]) == \
        [Mark(shown, "shadow")]


def test_a_starting_module_named_like_the_standard_library_is_the_tasks_own() -> None:
    assert refused({"calendar.py": "changed", "queue/core.py": "changed"}, read) == []
    assert refused({"calendar.py": "added"}, read) == [Mark("calendar.py", "shadow")]


def test_a_package_is_marked_once() -> None:
    agent = {"unittest/__init__.py": "added", "unittest/__main__.py": "added",
             "unittest/case.py": "added"}
    assert refused(agent, read) == [Mark("unittest/", "shadow")]


@pytest.mark.parametrize("path", ["test_leap.py", "tests", "tests/test_leap.py/x"])
def test_a_file_where_a_hidden_file_goes(path: str) -> None:
    hidden = ["test_leap.py", "tests/test_leap.py"]
    assert refused({path: "added"}, read, hidden) == [Mark(path, "hidden-path")]


def test_allow_names_files_that_may_stay() -> None:
    agent = {"conftest.py": "added", "tests/conftest.py": "added", "pytest.ini": "added",
             "json.py": "added"}
    assert refused(agent, read, allow=["tests/", "json.py"]) == \
        [Mark("conftest.py", "conftest"), Mark("pytest.ini", "test-config")]
    assert refused(agent, read, allow=["*conftest.py", "*.ini", "./json.py"]) == []


@pytest.mark.parametrize(("path", "patterns", "expected"), [
    ("tests/a.py", ["tests"], True),
    ("tests/a.py", ["tests/"], True),
    ("tests/a.py", ["./tests/"], True),
    ("testsuite/a.py", ["tests"], False),
    ("a/b/c.txt", ["a/*/c.txt"], True),
    ("a/b/c.txt", ["*.txt"], True),
    ("a/b/c.txt", ["a/b"], True),
    ("a/b/c.txt", ["b"], False),
    ("a/b/c.txt", ["", "  "], False),
    (".github/workflows/ci.yml", [".github"], True),
])
def test_patterns_name_a_file_or_a_folder(path: str, patterns: list[str], expected: bool) -> None:
    assert matches(path, patterns) is expected
