"""The console examples of the README and of every page under docs/ run, in order, one
scratch folder per page, as a user would.

A block starting with ```console holds `$ command` lines, each followed by its expected
output (stdout then stderr). `[...]` alone on a line stands for any number of lines, and
inside a line for any text. `# exit N` after a command's output sets its expected exit code
(default 0). `$ cd DIR` moves the page's later commands to DIR. Each page's scratch folder
holds a copy of `suites/` and `tests/fixtures/`, is a git repository, and is HOME (so `~/jx`
stays inside it): no example writes into the checkout.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import SMEVALS, Result, run_cli
from tests.helpers.docpages import matches

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)
FENCE = re.compile(r"^```([^\n`]*)\n(.*?)^```", re.S | re.M)
LINK = re.compile(r"\]\(([^)\s]+)\)")
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

Step = tuple[str, list[str], int]


def parse(readme: str) -> list[Step]:
    steps: list[Step] = []
    for block in BLOCK.findall(readme):
        for line in block.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], [], 0))
            elif line.startswith("# exit "):
                cmd, out, _ = steps[-1]
                steps[-1] = (cmd, out, int(line[7:].split(":")[0]))
            elif steps:
                steps[-1][1].append(line)
    return steps


def rel(page: Path) -> str:
    return page.relative_to(ROOT).as_posix()


STEPS = [(rel(page), i, *step) for page in PAGES
         for i, step in enumerate(parse(page.read_text()))]


def test_readme_has_examples() -> None:
    assert sum(page == "README.md" for page, *_ in STEPS) >= 8
    assert len({page for page, *_ in STEPS}) >= 6


def test_readme_is_short() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= 300


@pytest.mark.parametrize("page", PAGES, ids=rel)
def test_every_console_example_is_a_console_block(page: Path) -> None:
    """A block that shows `$ command` lines is a ```console block, so that it runs here."""
    shown = [lang or "(none)" for lang, body in FENCE.findall(page.read_text())
             if body.lstrip().startswith("$ ") and lang != "console"]
    assert shown == []


def test_the_readme_links_only_to_files_that_exist() -> None:
    targets = [t.split("#")[0] for t in LINK.findall((ROOT / "README.md").read_text())
               if not re.match(r"[a-z]+:", t)]
    assert targets and [t for t in targets if not (ROOT / t).exists()] == []


@dataclass
class Scratch:
    root: Path
    cwd: Path

    @property
    def env(self) -> dict[str, str]:
        return {**os.environ, "PATH": f"{Path(SMEVALS).parent}:{os.environ['PATH']}",
                "HOME": str(self.root / "home"), "SMEVALS_CACHE_DIR": str(self.root / ".cache"),
                "GIT_AUTHOR_NAME": "A", "GIT_AUTHOR_EMAIL": "a@example.com",
                "GIT_COMMITTER_NAME": "A", "GIT_COMMITTER_EMAIL": "a@example.com",
                "GIT_CONFIG_NOSYSTEM": "1", "COLUMNS": "100"}


def new_scratch(root: Path) -> Scratch:
    """A page's scratch folder: a copy of suites/ and tests/fixtures, a HOME, a git
    repository."""
    shutil.copytree(ROOT / "suites", root / "suites",
                    ignore=shutil.ignore_patterns("results", "__pycache__"))
    shutil.copytree(ROOT / "tests" / "fixtures", root / "tests" / "fixtures")
    (root / "home").mkdir()
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return Scratch(root, root)


def change_dir(scratch: Scratch, command: str) -> None:
    proc = subprocess.run(f"{command} && pwd", shell=True, cwd=scratch.cwd, env=scratch.env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{command}\n{proc.stderr}"
    scratch.cwd = Path(proc.stdout.strip())


def run_example(scratch: Scratch, command: str) -> Result:
    """A plain `smevals ...` line runs in this process (tests/helpers/cli.py), anything the
    shell must read (pipes, redirections, quotes, variables, other programs) in bash."""
    if PLAIN_SMEVALS.fullmatch(command):
        return run_cli(*command.split()[1:], cwd=scratch.cwd, env=scratch.env)
    proc = subprocess.run(command, shell=True, cwd=scratch.cwd, env=scratch.env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    return Result(proc.returncode, proc.stdout, proc.stderr)


PLAIN_SMEVALS = re.compile(r"smevals( [A-Za-z0-9_./=:,@+-]+)*")


@pytest.mark.parametrize("page", sorted({step[0] for step in STEPS}))
def test_console_examples(page: str, tmp_path: Path) -> None:
    """A page's examples, in order, in one scratch folder (later ones use what earlier
    ones made)."""
    scratch = new_scratch(tmp_path)
    for _, number, command, expected, code in [s for s in STEPS if s[0] == page]:
        where = f"{page} example {number}: $ {command}"
        if command.startswith("cd ") and not expected:
            change_dir(scratch, command)
            continue
        res = run_example(scratch, command)
        actual = (res.out + res.err).splitlines()
        assert res.code == code, f"{where}\n{res.out}{res.err}"
        assert matches(expected, actual), f"{where}\n--- got:\n" + "\n".join(actual)
