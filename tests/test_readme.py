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

from tests.helpers import SMEVALS

ROOT = Path(__file__).resolve().parents[1]
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


def matches(expected: list[str], actual: list[str]) -> bool:
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "[...]":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    if not actual:
        return False
    pattern = ".*".join(re.escape(part) for part in head.split("[...]"))
    return re.fullmatch(pattern, actual[0]) is not None and matches(rest, actual[1:])


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


@pytest.fixture(scope="session")
def scratches() -> dict[str, Scratch]:
    return {}


@pytest.fixture
def scratch(scratches: dict[str, Scratch], tmp_path_factory: pytest.TempPathFactory,
            request: pytest.FixtureRequest) -> Scratch:
    page = request.node.callspec.params["step"][0]
    if page not in scratches:
        root = tmp_path_factory.mktemp("example")
        shutil.copytree(ROOT / "suites", root / "suites",
                        ignore=shutil.ignore_patterns("results", "__pycache__"))
        shutil.copytree(ROOT / "tests" / "fixtures", root / "tests" / "fixtures")
        (root / "home").mkdir()
        subprocess.run(["git", "init", "-q"], cwd=root, check=True)
        scratches[page] = Scratch(root, root)
    return scratches[page]


def change_dir(scratch: Scratch, command: str) -> None:
    proc = subprocess.run(f"{command} && pwd", shell=True, cwd=scratch.cwd, env=scratch.env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, f"{command}\n{proc.stderr}"
    scratch.cwd = Path(proc.stdout.strip())


@pytest.mark.parametrize("step", STEPS, ids=[f"{s[0]}:{s[1]}:{s[2][:50]}" for s in STEPS])
def test_console_example(scratch: Scratch, step: tuple[str, int, str, list[str], int]) -> None:
    _, _, command, expected, code = step
    if command.startswith("cd ") and not expected:
        change_dir(scratch, command)
        return
    proc = subprocess.run(command, shell=True, cwd=scratch.cwd, env=scratch.env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=300)
    actual = (proc.stdout + proc.stderr).splitlines()
    assert proc.returncode == code, f"{command}\n{proc.stdout}{proc.stderr}"
    assert matches(expected, actual), f"{command}\n--- got:\n" + "\n".join(actual)
