"""docs/development.md follows the code: its package map names every package and top-level
module of smevals (and nothing that is gone), its layer table is the layers contract of
pyproject.toml, and the code keeps that table and every import rule the page states, as
found by parsing each module's imports (top level, in functions and under TYPE_CHECKING).
Each check is also shown failing on a page that says something false."""

from __future__ import annotations

import ast
import re
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "development.md"
PACKAGE = ROOT / "src" / "smevals"


# --- the code -----------------------------------------------------------------------------


def module_files() -> Iterator[tuple[str, Path]]:
    """(dotted name without `smevals.`, path) of every module of the package."""
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] == "suites":
            continue
        parts = list(rel.with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        yield ".".join(parts), path


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    base = package[:len(package) - node.level + 1]
    return ".".join(["smevals", *base] + ([node.module] if node.module else []))


def imports_of(module: str, path: Path, modules: set[str]) -> set[str]:
    """Every module `module` imports: `from smevals.x import y` counts as smevals.x.y when
    that is a module (of `modules`), else as smevals.x."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, path, node)
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if sub.removeprefix("smevals.") in modules else target)
    return found


def import_graph() -> dict[str, set[str]]:
    """smevals module (dotted, without `smevals.`) -> the smevals modules and the outside
    modules it imports (outside ones keep their full name, prefixed by `:`)."""
    names = {name for name, _path in module_files()}
    graph: dict[str, set[str]] = {}
    for name, path in module_files():
        out = set()
        for target in imports_of(name, path, names):
            if target == "smevals" or target.startswith("smevals."):
                inner = target.removeprefix("smevals").removeprefix(".")
                if inner in names and inner != name:
                    out.add(inner)
            else:
                out.add(":" + target)
        graph[name] = out
    return graph


def top_level() -> list[str]:
    """The top-level packages and modules (`store`, `stats`, `__main__` ...)."""
    return sorted({name.split(".")[0] for name, _path in module_files() if name})


def packages() -> list[str]:
    """Every package with its subpackages, as paths (`runners/agent`)."""
    return sorted(str(path.parent.relative_to(PACKAGE)) for path in PACKAGE.rglob("__init__.py")
                  if path.parent != PACKAGE and "suites" not in path.parts)


# --- the page -----------------------------------------------------------------------------


def map_entries(text: str) -> list[str]:
    """The names the package map starts its lines with: `store`, `runners/agent`, `stats.py`."""
    block = text[text.index("```\nsmevals/"):]
    block = block[:block.index("\n```", 4)]
    return [m.group(1).rstrip("/") for m in re.finditer(r"^smevals/([\w/.]+)", block, re.M)]


def layer_table(text: str) -> list[set[str]]:
    section = text[text.index("### Layers"):text.index("### How a call travels")]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [set(re.findall(r"`([\w.]+)`", row.split("|")[1])) for row in rows]


def import_rules(text: str) -> list[str]:
    section = text[text.index("Import rules ("):text.index("### How a call travels")]
    rules = []
    for line in section.splitlines()[1:]:
        if line.startswith("- "):
            rules.append(line[2:].strip())
        elif line.startswith("  ") and rules:
            rules[-1] += " " + line.strip()
    return rules


# --- the checks ---------------------------------------------------------------------------


def map_problems(text: str) -> list[str]:
    named = map_entries(text)
    wanted = [*packages(), *(f"{name}.py" for name in top_level()
                             if (PACKAGE / f"{name}.py").is_file())]
    missing = [f"not in the map: smevals/{name}" for name in wanted if name not in named]
    gone = [f"in the map but not in the code: smevals/{name}" for name in named
            if not (PACKAGE / name).exists()]
    return missing + gone


def contract_layers() -> list[set[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]
    (layers,) = [c["layers"] for c in config["contracts"] if c["id"] == "layers"]
    return [{name.strip() for name in line.split("|")} for line in layers]


def layer_problems(table: list[set[str]], graph: dict[str, set[str]]) -> list[str]:
    """Each import between two top-level packages runs down the table, never up or sideways."""
    level = {name: i for i, row in enumerate(table) for name in row}
    problems = [f"not in the layer table: {name}" for name in top_level() if name not in level]
    for module, targets in sorted(graph.items()):
        here = module.split(".")[0] if module else ""
        for target in sorted(t for t in targets if not t.startswith(":")):
            there = target.split(".")[0]
            if here in level and there in level and here != there \
                    and level[here] >= level[there]:
                problems.append(f"smevals.{module} imports smevals.{target}, which is not "
                                f"below it in the layer table")
    return problems


def _names(text: str) -> list[str]:
    return re.findall(r"`([\w.]+)`", text)


def _in(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def rule_problems(rule: str, graph: dict[str, set[str]]) -> list[str]:
    """What the code does against one rule of the page; a rule of no known form is itself a
    problem, so that every rule stated there is checked."""
    if m := re.fullmatch(r"only `([\w.]+)` imports `([\w.]+)`", rule):
        owner, outside = m.groups()
        return [f"smevals.{mod} imports {outside}" for mod, targets in sorted(graph.items())
                if not _in(mod, owner)
                and any(_in(t[1:], outside) for t in targets if t.startswith(":"))]
    if m := re.fullmatch(r"`([\w.]+)` imports no smevals package but (.+)", rule):
        allowed = [m.group(1), *_names(m.group(2))]
        return [f"smevals.{mod} imports smevals.{t}" for mod, targets in sorted(graph.items())
                if _in(mod, m.group(1)) for t in sorted(targets)
                if not t.startswith(":") and not any(_in(t, a) for a in allowed)]
    if m := re.fullmatch(r"no module of `([\w.]+)`(?: ending in `(\w+)`)? imports another",
                         rule):
        package, suffix = m.group(1), m.group(2) or ""
        members = {mod for mod in graph if mod.startswith(package + ".")
                   and mod.endswith(suffix)}
        return [f"smevals.{mod} imports smevals.{t}" for mod in sorted(members)
                for t in sorted(graph[mod] & members)]
    if m := re.fullmatch(r"no two modules import each other but (.+)", rule):
        pairs = {frozenset(pair) for pair in
                 re.findall(r"`([\w.]+)` and `([\w.]+)`", m.group(1))}
        return [f"smevals.{a} and smevals.{b} import each other"
                for a, targets in sorted(graph.items()) for b in sorted(targets)
                if a < b and a in graph.get(b, set()) and frozenset((a, b)) not in pairs]
    return [f"a rule the test cannot check: {rule!r}"]


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    return import_graph()


def test_the_map_names_every_package_and_top_level_module() -> None:
    text = PAGE.read_text()
    assert {"files", "history", "runners/agent", "evaldef", "caches.py"} <= set(map_entries(text))
    assert map_problems(text) == []


def test_the_layer_table_is_the_contract_and_the_code_keeps_it(graph) -> None:
    table = layer_table(PAGE.read_text())
    assert table == contract_layers()
    assert layer_problems(table, graph) == []


def test_every_import_rule_of_the_page_holds(graph) -> None:
    rules = import_rules(PAGE.read_text())
    assert len(rules) >= 5
    assert [problem for rule in rules for problem in rule_problems(rule, graph)] == []


def test_a_page_that_says_something_false_fails(graph) -> None:
    text = PAGE.read_text()
    assert map_problems(text.replace("\nsmevals/history/", "\nsmevals/hist0ry/")) == [
        "not in the map: smevals/history", "in the map but not in the code: smevals/hist0ry"]
    table = layer_table(text)
    swapped = [row for row in table]
    low, high = table.index({"files"}), table.index({"store"})
    swapped[low], swapped[high] = swapped[high], swapped[low]
    assert "smevals.store.write imports smevals.files.durable, which is not below it in the " \
           "layer table" in layer_problems(swapped, graph)
    assert rule_problems("only `store` imports `click`", graph)[:1] == [
        "smevals.cli imports click"]
    assert "smevals.files.regular imports smevals.errors" in rule_problems(
        "`files` imports no smevals package but `stats`", graph)
    assert rule_problems("no module of `grade` imports another", graph) != []
    assert "smevals.proc and smevals.proc.child import each other" in rule_problems(
        "no two modules import each other but `store.gitindex` and `store.gitsource`", graph)
    assert rule_problems("files are small", graph) == [
        "a rule the test cannot check: 'files are small'"]
