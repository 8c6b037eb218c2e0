"""Running a documentation page like a notebook (tests/test_docs_python.py): its ```console
and ```python blocks in order, in one scratch folder (a copy of suites/, a git repository
and the HOME), each Python block in one namespace shared by the page, and its output
compared with the ```text block that follows it.

Console blocks are written as tests/test_readme.py runs them (`$ command`, then its
output; `[...]` stands for any lines, or any text within a line; `# exit N`)."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.helpers.cli import SMEVALS, Result, run_cli

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```(console|python|text)\n(.*?)^```", re.S | re.M)
PLAIN_SMEVALS = re.compile(r"smevals( [A-Za-z0-9_./=:,@+-]+)*")


@dataclass
class Block:
    kind: str               # console, python or text
    body: str
    line: int               # where its fence is in the page


def blocks(page: str) -> list[Block]:
    return [Block(m[1], m[2], page.count("\n", 0, m.start()) + 1) for m in FENCE.finditer(page)]


def matches(expected: list[str], actual: list[str]) -> bool:
    """`actual` lines as `expected` has them, `[...]` standing for any lines or text."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "[...]":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("[...]"))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


@dataclass
class Scratch:
    root: Path
    namespace: dict[str, Any]

    @property
    def env(self) -> dict[str, str]:
        return {"PATH": f"{Path(SMEVALS).parent}:{os.environ['PATH']}",
                "HOME": str(self.root / "home"), "SMEVALS_CACHE_DIR": str(self.root / ".cache"),
                "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
                "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com",
                "GIT_CONFIG_NOSYSTEM": "1", "COLUMNS": "100", "MPLBACKEND": "Agg"}


def new_scratch(root: Path) -> Scratch:
    shutil.copytree(ROOT / "suites", root / "suites",
                    ignore=shutil.ignore_patterns("results", "__pycache__"))
    (root / "home").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return Scratch(root, {})


@contextlib.contextmanager
def inside(scratch: Scratch) -> Iterator[None]:
    """The scratch folder as the working folder, its environment set."""
    before_dir, before_env = os.getcwd(), dict(os.environ)
    os.chdir(scratch.root)
    os.environ.update(scratch.env)
    try:
        yield
    finally:
        os.chdir(before_dir)
        os.environ.clear()
        os.environ.update(before_env)


def console(scratch: Scratch, block: Block) -> list[str]:
    """Run a console block; the problems found (empty when every command did as shown)."""
    steps: list[tuple[str, list[str], int]] = []
    for line in block.body.splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], [], 0))
        elif line.startswith("# exit "):
            command, out, _ = steps[-1]
            steps[-1] = (command, out, int(line[7:]))
        elif steps:
            steps[-1][1].append(line)
    problems = []
    for command, expected, code in steps:
        res = _command(scratch, command)
        actual = (res.out + res.err).splitlines()
        if res.code != code or not matches(expected, actual):
            problems.append(f"line {block.line}: $ {command} (exit {res.code})\n{res.both}")
    return problems


def _command(scratch: Scratch, command: str) -> Result:
    if PLAIN_SMEVALS.fullmatch(command):
        return run_cli(*command.split()[1:], cwd=scratch.root, env=scratch.env)
    proc = subprocess.run(command, shell=True, cwd=scratch.root, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300,
                          env={**os.environ, **scratch.env})
    return Result(proc.returncode, proc.stdout, proc.stderr)


def python(scratch: Scratch, block: Block) -> str:
    """Run a Python block in the page's namespace, in the scratch folder; what it printed."""
    out = io.StringIO()
    code = compile(block.body, f"<page line {block.line}>", "exec")
    with inside(scratch), contextlib.redirect_stdout(out):
        exec(code, scratch.namespace)
    return out.getvalue()
