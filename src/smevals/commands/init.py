"""`smevals init`: a new Eval that validates and runs at once, or a copy of a shipped suite."""

from __future__ import annotations

import re
import shutil
from importlib import resources
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.schemas.editors import (
    PROJECT_DIR,
    point_comments,
    schema_line,
    write_schemas,
)

SCHEMA = re.compile(r"\{schema:([a-z]+)\}")   # a template's schema comment, made per file

FILES: dict[str, tuple[str, bool]] = {
    "eval.yaml": ("""\
{schema:eval}
name: {name}
description: What capability does this Eval measure?
""", False),
    "tasks/capital.yaml": ("""\
{schema:task}
# Every key but `grading` reaches the runner as SMEVALS_TASK_<KEY>.
prompt: What is the capital of France? Answer with one word.
grading:
  # Only checkers see these (SMEVALS_TASK_EXPECTED); editing them never forces a re-run.
  expected: Paris
""", False),
    "configs/default.yaml": ("""\
{schema:config}
# The runner is any program: it gets the task in SMEVALS_* variables and prints its answer.
runner: ./run.sh
model: echo-model
timeout: 120
""", False),
    "configs/run.sh": ("""\
#!/bin/sh
# A stand-in runner: replace with a call to your model, e.g.
#   llm -m "$SMEVALS_MODEL" "$SMEVALS_PROMPT"
# stdout becomes the Run's output.txt; other files written here are kept as artifacts.
echo "Paris"
""", True),
    "graders/default.yaml": ("""\
{schema:grader}
checks:
  - checker: exact_match
    expected: {task: expected}
  - checker: ./check.py
scoring:
  # min: the Grade's score is its weakest Check's, so a failed Check (score 0) is never
  # hidden behind a later Check's 1.0 (the default, last, keeps the last Check's score).
  method: min
  pass_threshold: 1.0
""", False),
    "graders/check.py": ('''\
#!/usr/bin/env python3
"""A checker program: read the Run's output, print JSON, exit 0 for a pass."""
import json
import os
import sys

with open(os.path.join(os.environ["SMEVALS_RUN_DIR"], "output.txt"), encoding="utf-8") as f:
    output = f.read().strip()
expected = os.environ.get("SMEVALS_TASK_EXPECTED", "")
ok = output.lower() == expected.lower()
print(json.dumps({
    "score": 1.0 if ok else 0.0,
    "metrics": {"length": len(output), "exact": ok},
    "tags": [] if ok else ["wrong_answer"],
    "notes": f"expected {expected!r}, got {output!r}",
}))
sys.exit(0 if ok else 1)
''', True),
    "graders/default.fixtures/capital.yaml": ("""\
{schema:fixture}
# A fixture: `smevals test` grades this output with graders/default.yaml (no model call,
# no store) and checks that the grader concludes what `expect` says.
task: capital
output: "Paris\\n"
expect: pass
score: {min: 1}
""", False),
    "graders/default.fixtures/wrong-city.yaml": ("""\
{schema:fixture}
# An output that must fail ./check.py, and why.
task: capital
output: "Lyon\\n"
expect: fail
failing_check: ./check.py
notes: "expected 'Paris', got 'Lyon'"
tags: [wrong_answer]
""", False),
    "graders/default.fixtures/sentence.yaml": ("""\
{schema:fixture}
# An output that must fail exact_match: the right city, but not the one-word answer asked for.
task: capital
output: "The capital of France is Paris.\\n"
expect: fail
failing_check: exact_match
score: {max: 0}
""", False),
}


def shipped_suites() -> list[str]:
    root = resources.files("smevals").joinpath("suites")
    return sorted(p.name for p in root.iterdir() if p.is_dir() and (p / "eval.yaml").is_file())


def shipped_examples() -> list[tuple[str, str]]:
    """Each shipped example suite's name and the description its eval.yaml gives."""
    import yaml

    root = resources.files("smevals").joinpath("suites")
    out = []
    for name in shipped_suites():
        try:
            data = yaml.safe_load(root.joinpath(name, "eval.yaml").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, yaml.YAMLError):
            data = None
        about = data.get("description") if isinstance(data, dict) else None
        out.append((name, str(about or "")))
    return out


def init_eval(target: Path, example: str | None) -> list[str]:
    """Create `target`; return the files written (relative to it)."""
    if target.exists() and any(target.iterdir()):
        raise SmevalsError(f"{target} already exists and is not empty")
    if example:
        return _copy_example(target, example)
    written = []
    for rel, (text, executable) in FILES.items():
        path = target / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_with_schema(text, path, target).replace("{name}", target.absolute().name))
        if executable:
            path.chmod(0o755)
        written.append(rel)
    return written + _schemas(target)


def _with_schema(text: str, path: Path, target: Path) -> str:
    """A template with its `{schema:KIND}` made the comment pointing at the Eval's copy."""
    match = SCHEMA.search(text)
    if match is None:
        return text
    line = schema_line(match[1], path, target / PROJECT_DIR)
    return text[:match.start()] + line + text[match.end():]


def _schemas(target: Path) -> list[str]:
    """The editor schemas, in the new Eval, with its YAML files' comments pointed at them."""
    folder = target / PROJECT_DIR
    written = write_schemas(folder)
    point_comments([target], folder)
    return [p.relative_to(target).as_posix() for p in written]


def _copy_example(target: Path, example: str) -> list[str]:
    names = shipped_suites()
    if example not in names:
        raise SmevalsError(f"no example named '{example}' - available: {', '.join(names)}")
    source = resources.files("smevals").joinpath("suites", example)
    with resources.as_file(source) as src:
        shutil.copytree(src, target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("results", "__pycache__"))
    copied = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    return copied + _schemas(target)

