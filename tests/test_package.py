"""The package as a user installs it: entry points, help, schemas, layers, no tracebacks."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

import smevals

ROOT = Path(__file__).resolve().parents[1]


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
    code = ("import smevals, json; from smevals.spec.schema import load_schema, SCHEMA_NAMES;"
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


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


LAYERS = ["cli", "commands", "report|diff|site|run|grade|imports|testing", "checkers|runners",
          "spec", "store", "proc"]


def _layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "smevals" or len(parts) < 2:
        return None
    for index, group in enumerate(LAYERS):
        if parts[1] in group.split("|"):
            return index
    return None


def test_only_the_cli_imports_click() -> None:
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "smevals").rglob("*.py")
                 if "click" in _imports(p) and "cli" not in p.relative_to(ROOT).parts]
    assert offenders == []


def test_layers_depend_only_downwards() -> None:
    """DESIGN.md: cli > commands > run/grade/report/diff > checkers/runners > spec > store >
    proc."""
    wrong = []
    for path in (ROOT / "smevals").rglob("*.py"):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        mine = _layer(module)
        if mine is None:
            continue
        for imported in _imports(path):
            theirs = _layer(imported)
            if theirs is not None and theirs < mine:
                wrong.append(f"{module} imports {imported}")
    assert wrong == []


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
