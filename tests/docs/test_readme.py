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


def shared_start(page: str) -> tuple[str, ...]:
    """The commands a page starts with, up to its last `smevals run suites ...` among its
    first `smevals validate/run suites ...` lines: the costly part, which pages that start
    alike run once (empty when the page starts otherwise)."""
    leading: list[str] = []
    for _, _, command, _, _ in [s for s in STEPS if s[0] == page]:
        words = command.split()
        if not (PLAIN_SMEVALS.fullmatch(command) and words[1] in ("validate", "run")
                and "suites" in words):
            break
        leading.append(command)
    while leading and leading[-1].split()[1] != "run":
        leading.pop()
    return tuple(leading)


def page_groups() -> list[tuple[str, ...]]:
    """The pages, those with the same costly start together (one test runs that start
    once, then each page on its own copy of the result)."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for page in sorted({step[0] for step in STEPS}):
        groups.setdefault(shared_start(page) or (page,), []).append(page)
    return sorted(tuple(pages) for pages in groups.values())


def check_step(where: str, expected: list[str], code: int, res: Result) -> None:
    actual = (res.out + res.err).splitlines()
    assert res.code == code, f"{where}\n{res.out}{res.err}"
    assert matches(expected, actual), f"{where}\n--- got:\n" + "\n".join(actual)


def test_pages_that_start_alike_are_grouped() -> None:
    """The two pages that run every shipped suite first share that run, and no page is
    left out or counted twice."""
    groups = page_groups()
    assert ("docs/getting-started.md", "docs/web-report.md") in groups
    assert sorted(p for g in groups for p in g) == sorted({step[0] for step in STEPS})


@pytest.mark.parametrize("pages", page_groups(), ids="+".join)
def test_console_examples(pages: tuple[str, ...], tmp_path: Path) -> None:
    """A page's examples, in order, in one scratch folder (later ones use what earlier
    ones made). Pages with the same costly start (shared_start) each go on from their own
    copy of one scratch folder in which that start ran, and each checks its outputs."""
    start = shared_start(pages[0]) if len(pages) > 1 else ()
    base = new_scratch(tmp_path / "start")
    done = [run_example(base, command) for command in start]
    for i, page in enumerate(pages):
        scratch = base
        if start and i < len(pages) - 1:          # the last page goes on in the first folder
            root = tmp_path / f"page{i}"
            shutil.copytree(base.root, root, symlinks=True)
            scratch = Scratch(root, root)
        steps = [s for s in STEPS if s[0] == page]
        for (_, number, command, expected, code), res in zip(steps, done, strict=False):
            check_step(f"{page} example {number}: $ {command}", expected, code, res)
        for _, number, command, expected, code in steps[len(done):]:
            if command.startswith("cd ") and not expected:
                change_dir(scratch, command)
                continue
            check_step(f"{page} example {number}: $ {command}", expected, code,
                       run_example(scratch, command))
