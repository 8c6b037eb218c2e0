"""How the tests and the benchmarks are put together: shared code lives in tests/helpers (or
a package's helper module), never in a test module another one imports; no benchmark
imports the tests (what both use lives in tools/)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def imported_modules(path: Path) -> list[str]:
    """Every module `path` imports, at top level or inside a function."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
    return found


def test_imports_of_test_modules(tmp_path: Path) -> None:
    """A module imports no test module (`test_*.py`): the finder sees a planted one."""
    def offenders(root: Path) -> list[str]:
        return [f"{path.relative_to(root)}: {module}"
                for path in sorted(root.rglob("*.py"))
                for module in imported_modules(path)
                if module.split(".")[0] == "tests"
                and any(part.startswith("test_") for part in module.split("."))]

    assert offenders(ROOT / "tests") == []
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_a.py").write_text("def f():\n    from tests.test_b import g\n")
    assert offenders(tmp_path) == ["tests/test_a.py: tests.test_b"]


def test_no_benchmark_imports_the_tests() -> None:
    found = [f"{path.name}: {module}" for path in sorted((ROOT / "bench").glob("*.py"))
             for module in imported_modules(path) if module.split(".")[0] == "tests"]
    assert found == []
