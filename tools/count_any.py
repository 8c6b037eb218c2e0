"""Count the functions of a package that take or return a bare `Any` (issue 39).

A parameter (`*args` and `**kwargs` included) or a return annotated `Any` itself counts; an
`Any` inside another type (`dict[str, Any]`, `list[Any]`) does not. Run it as

    python -m tools.count_any [--list] [PACKAGE_DIR]

which prints the count (and with `--list` each function as `path:line: name`). The package
is read with `ast`, never imported.
"""

from __future__ import annotations

import argparse
import ast
from collections.abc import Iterator
from pathlib import Path

Function = ast.FunctionDef | ast.AsyncFunctionDef


def is_bare_any(node: ast.expr | None) -> bool:
    """Whether an annotation is `Any`, `typing.Any` or the string 'Any'."""
    if isinstance(node, ast.Name):
        return node.id == "Any"
    if isinstance(node, ast.Attribute):
        return node.attr == "Any"
    return isinstance(node, ast.Constant) and node.value == "Any"


def takes_or_returns_any(function: Function) -> bool:
    args = function.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    params += [arg for arg in (args.vararg, args.kwarg) if arg is not None]
    return is_bare_any(function.returns) or any(is_bare_any(p.annotation) for p in params)


def bare_any_functions(root: Path) -> Iterator[tuple[Path, int, str]]:
    """(file, line, name) of every such function under `root`, in path order."""
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found = [node for node in ast.walk(tree) if isinstance(node, Function)]
        for node in sorted(found, key=lambda n: n.lineno):
            if takes_or_returns_any(node):
                yield path, node.lineno, node.name


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", default="src/smevals", type=Path)
    parser.add_argument("--list", action="store_true", help="name each function")
    options = parser.parse_args(argv)
    found = list(bare_any_functions(options.package))
    if options.list:
        for path, line, name in found:
            print(f"{path}:{line}: {name}")
    print(f"{len(found)} functions take or return a bare Any in {options.package}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
