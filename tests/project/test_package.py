"""The package as a user installs it: entry points, help, schemas, layers, no tracebacks."""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

import smevals

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "smevals"


def test_version(cli) -> None:
    res = cli("--version")
    assert res.code == 0
    assert res.out == f"smevals, version {smevals.__version__}\n"


@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_help(cli, flag: str) -> None:
    res = cli(flag)
    assert res.code == 0
    assert res.out.startswith("Usage: smevals [OPTIONS] COMMAND [ARGS]...")
    for command in ("validate", "run", "grade", "regrade", "verify", "show", "gc"):
        assert f"\n  {command} " in res.out


def test_python_dash_m(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "smevals", "--version"], capture_output=True,
                          text=True, cwd=tmp_path)
    assert proc.returncode == 0
    assert proc.stdout == f"smevals, version {smevals.__version__}\n"


def test_unknown_option_exits_2(cli) -> None:
    res = cli("validate", "--nope")
    assert res.code == 2
    assert "Error: No such option '--nope'." in res.err


def test_schemas_load_from_the_installed_package(tmp_path: Path) -> None:
    """Install a wheel into a folder and load every schema from it, away from the source."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-build-isolation",
                    "--quiet", "--target", str(target), str(ROOT)], check=True,
                   capture_output=True)
    code = ("import smevals, json; from smevals.schemas import load_schema, SCHEMA_NAMES;"
            "print(json.dumps([smevals.__file__] + [load_schema(k)['$id'] for k in SCHEMA_NAMES]))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp_path, env={"PYTHONPATH": str(target)})
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert found[0].startswith(str(target))
    assert found[1:] == [f"https://smevals.dev/schemas/{k}.schema.json"
                         for k in ("eval", "task", "config", "grader", "run", "grade", "usage",
                                   "fixture")]


def test_schemas_are_valid_2020_12_with_help() -> None:
    import jsonschema

    for path in sorted((ROOT / "schemas").glob("*.schema.json")):
        doc = json.loads(path.read_text())
        jsonschema.Draft202012Validator.check_schema(doc)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        assert doc["title"] and doc["description"], path


def _lint_imports(root: Path) -> subprocess.CompletedProcess[str]:
    """`lint-imports` with the project's contracts on the package found under `root`."""
    return subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache",
                           str(ROOT / "pyproject.toml")],
                          capture_output=True, text=True, cwd=root,
                          env={**os.environ, "PYTHONPATH": str(root)})


def test_the_import_contracts_hold() -> None:
    res = _lint_imports(ROOT)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Contracts: 6 kept, 0 broken." in res.stdout


@pytest.fixture(scope="module")
def copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The package's Python files, copied, for breaking one contract at a time."""
    root = tmp_path_factory.mktemp("pkg")
    for path in PACKAGE.rglob("*.py"):
        target = root / path.relative_to(PACKAGE.parent)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return root


@contextmanager
def appended(path: Path, line: str) -> Iterator[str]:
    """`path` with `line` added at its end (the file and its folder made if missing) for the
    `with` block, then as before; gives the text written."""
    before = path.read_text() if path.exists() else None
    text = (before or "") + f"\n{line}\n"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    try:
        yield text
    finally:
        if before is None:
            shutil.rmtree(path.parent)
        else:
            path.write_text(before)


@pytest.mark.parametrize(("file", "line", "message"), [
    # The hole the old ast test had: the `from smevals import X` form.
    ("store/brief.py", "from smevals import commands",
     "smevals.store is not allowed to import smevals.commands"),
    # The file tools sit below the store, and import nothing of smevals but errors.
    ("files/canonical.py", "from smevals.store import layout",
     "smevals.files is not allowed to import smevals.store"),
    ("files/regular.py", "from smevals import stats",
     "smevals.files is not allowed to import smevals.stats"),
    ("evaldef/load.py", "import smevals.report.rows",
     "smevals.evaldef is not allowed to import smevals.report"),
    ("proc/tree.py", "from smevals.store import layout",
     "smevals.proc is not allowed to import smevals.store"),
    ("checkers/text.py", "from smevals.runners import replay",
     "smevals.checkers is not allowed to import smevals.runners"),
    ("store/layout.py", "import click", "smevals.store is not allowed to import click"),
    ("cli/run_cmd.py", "from smevals.cli import grade_cmd",
     "smevals.cli.run_cmd is not allowed to import smevals.cli.grade_cmd"),
    ("new/__init__.py", "", "not listed as layers:\n\n- smevals.new\n"),
    # The judge checkers come through smevals.wiring, never by an upward import.
    ("checkers/__init__.py", "from smevals.judges import checks",
     "smevals.checkers is not allowed to import smevals.judges"),
    ("commands/run.py", "from smevals.commands import grade",
     "smevals.commands.run is not allowed to import smevals.commands.grade"),
])
def test_each_contract_catches_its_break(copy: Path, file: str, line: str,
                                         message: str) -> None:
    with appended(copy / "smevals" / file, line):
        res = _lint_imports(copy)
    assert res.returncode == 1, res.stdout + res.stderr
    assert message in res.stdout, res.stdout


def private_names_used_across_modules(package: Path) -> list[str]:
    """`from smevals.X import _y` and `X._y` on a smevals module, anywhere in `package`: a
    private name belongs to its module (make it public where it lives, or move it)."""
    return [finding for path in sorted(package.rglob("*.py"))
            for finding in _private_uses(path.read_text(), str(path.relative_to(package.parent)))]


@functools.cache
def _private_uses(text: str, where: str) -> tuple[str, ...]:
    """The findings in one module's text (kept: the tests that break one file of a copy
    parse only that one again)."""
    import ast

    tree = ast.parse(text, where)
    found = []
    modules = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("smevals"):
            for alias in node.names:
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{where}:{node.lineno}: {node.module}.{alias.name}")
                modules.add(alias.asname or alias.name)
        elif isinstance(node, ast.Import):
            modules.update(alias.asname or alias.name.split(".")[0] for alias in node.names
                           if alias.name.startswith("smevals"))
    found += [f"{where}:{node.lineno}: {node.value.id}.{node.attr}" for node in ast.walk(tree)
              if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
              and node.value.id in modules and node.attr.startswith("_")
              and not node.attr.startswith("__")]
    return tuple(found)


def test_no_private_name_is_used_across_modules() -> None:
    assert private_names_used_across_modules(PACKAGE) == []


@pytest.mark.parametrize(("file", "line", "message"), [
    ("store/gc.py", "from smevals.store.write import _read",
     "smevals/store/gc.py:{n}: smevals.store.write._read"),
    ("report/rows.py", "from smevals.store import index\nindex._stamp",
     "smevals/report/rows.py:{n}: index._stamp"),
])
def test_the_private_name_check_catches_a_break(copy: Path, file: str, line: str,
                                                message: str) -> None:
    with appended(copy / "smevals" / file, line) as text:
        found = private_names_used_across_modules(copy / "smevals")
    n = len(text.splitlines())
    assert found == [message.format(n=n)]


def test_each_command_module_pairs_a_cli_module() -> None:
    """commands/X.py is the work of cli/X_cmd.py; every commands module stands in the
    commands contract (a wildcard), every CLI module in its own (pyproject.toml)."""
    import tomllib

    commands = sorted(p.stem.removesuffix("_") for p in (PACKAGE / "commands").glob("*.py")
                      if p.stem != "__init__")
    clis = {p.stem.removesuffix("_cmd") for p in (PACKAGE / "cli").glob("*_cmd.py")}
    assert [name for name in commands if name not in clis] == []
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    listed = {c["id"]: c.get("modules") for c in contracts["contracts"]}
    assert listed["commands"] == ["smevals.commands.*"]     # every one, a new one too
    assert sorted(listed["cli-commands"]) == sorted(
        f"smevals.cli.{name}_cmd" for name in clis)


def test_each_command_is_found_by_its_name() -> None:
    """`smevals X` is defined in cli/X_cmd.py, and each cli/X_cmd.py defines a command of
    its name (what two commands share lives in a module without `_cmd`)."""
    import smevals.cli.commands  # noqa: F401  (attaches every command to the group)
    from smevals.cli.base import cli

    where = {name: command.callback.__module__ for name, command in cli.commands.items()
             if command.callback is not None}
    assert sorted(where) == sorted(cli.commands)
    assert {name: module for name, module in where.items()
            if module != f"smevals.cli.{name}_cmd"} == {}
    clis = {p.stem.removesuffix("_cmd") for p in (PACKAGE / "cli").glob("*_cmd.py")}
    assert sorted(clis) == sorted(where)


def test_unexpected_bug_shows_no_traceback_but_debug_does(tmp_path: Path) -> None:
    code = ("import smevals.cli.base as b, click\n"
            "@b.cli.command('boom')\n"
            "def boom():\n    raise RuntimeError('kaput')\n"
            "from smevals.cli import main\nmain()\n")
    script = tmp_path / "boom.py"
    script.write_text(code)
    plain = subprocess.run([sys.executable, str(script), "boom"], capture_output=True, text=True)
    assert plain.returncode == 3
    assert plain.stderr == ("Internal error: RuntimeError: kaput\nThis is a bug in smevals. "
                            "Re-run with --debug to see the traceback.\n")
    debug = subprocess.run([sys.executable, str(script), "--debug", "boom"],
                           capture_output=True, text=True)
    assert debug.returncode == 3
    assert "Traceback (most recent call last)" in debug.stderr
    assert "RuntimeError: kaput" in debug.stderr
