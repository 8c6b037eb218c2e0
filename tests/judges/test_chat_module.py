"""The judges ask an OpenAI-compatible server through smevals.net (the shared HTTP client,
retry policy and chat-completions reading), not through a runner: of smevals.runners they
import only runners.llmlib, the one adapter to the `llm` library."""

from __future__ import annotations

import ast
from pathlib import Path

import smevals

JUDGES = Path(smevals.__file__).parent / "judges"


def runner_imports(root: Path) -> list[str]:
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else \
                [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            found += [f"{path.name}: {name}" for name in names
                      if name.startswith("smevals.runners")]
    return found


def test_the_judges_use_no_runner(tmp_path: Path) -> None:
    assert runner_imports(JUDGES) == ["backends.py: smevals.runners.llmlib"]
    (tmp_path / "x.py").write_text("def f():\n"
                                   "    from smevals.runners.openai import first_choice\n")
    assert runner_imports(tmp_path) == ["x.py: smevals.runners.openai"]
