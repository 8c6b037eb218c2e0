"""How the tests and the benchmarks are put together: tests/ mirrors the package (a folder
per package or top-level module), shared code lives in tests/helpers only, never in a test
module another one imports; no benchmark imports the tests (what both use lives in
tools/)."""

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


# Folders of tests that are not named after a part of the package: shared code, data, the
# project's own checks, the manual, the benchmarks, the security suite, the shipped suites.
NOT_A_PACKAGE = {"helpers", "fixtures", "project", "docs", "bench", "security", "suites"}


def layout_problems(tests: Path, package: Path) -> list[str]:
    """Test folders not named after a package or top-level module of smevals, and modules
    outside tests/helpers (and the data of tests/fixtures) that are neither tests nor
    conftest files."""
    parts = {p.name for p in package.iterdir() if (p / "__init__.py").is_file()} | \
        {p.stem for p in package.glob("*.py")}
    problems = [f"tests/{d.name}/ names no part of smevals" for d in sorted(tests.iterdir())
                if d.is_dir() and not d.name.startswith((".", "_"))
                and d.name not in parts | NOT_A_PACKAGE]
    for path in sorted(tests.rglob("*.py")):
        rel = path.relative_to(tests)
        if rel.parts[0] in ("helpers", "fixtures") or path.name in ("__init__.py", "conftest.py"):
            continue
        if not path.name.startswith("test_"):
            problems.append(f"tests/{rel} is shared code outside tests/helpers")
    return problems


def test_tests_mirror_the_package_and_share_code_only_through_helpers(tmp_path: Path) -> None:
    assert layout_problems(ROOT / "tests", ROOT / "src" / "smevals") == []
    (tmp_path / "tests" / "store").mkdir(parents=True)
    (tmp_path / "tests" / "stuff").mkdir()
    (tmp_path / "tests" / "store" / "builder.py").write_text("")
    (tmp_path / "tests" / "store" / "test_a.py").write_text("")
    assert layout_problems(tmp_path / "tests", ROOT / "src" / "smevals") == [
        "tests/stuff/ names no part of smevals", "tests/store/builder.py is shared code "
        "outside tests/helpers"]
