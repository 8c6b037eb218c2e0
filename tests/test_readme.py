"""The README's console examples run, in order, in one scratch folder, as a user would.

A block starting with ```console holds `$ command` lines, each followed by its expected
output (stdout then stderr). `[...]` alone on a line stands for any number of lines, and
inside a line for any text. `# exit N` after a command's output sets its expected exit code
(default 0).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import SMEVALS

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"^```console\n(.*?)^```", re.S | re.M)


def parse(readme: str) -> list[tuple[str, list[str], int]]:
    steps: list[tuple[str, list[str], int]] = []
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


STEPS = parse((ROOT / "README.md").read_text())


def test_readme_has_examples() -> None:
    assert len(STEPS) >= 10


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("readme")
    shutil.copytree(ROOT / "suites", root / "suites",
                    ignore=shutil.ignore_patterns("results", "__pycache__"))
    shutil.copytree(ROOT / "tests" / "fixtures", root / "tests" / "fixtures")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    return root


@pytest.mark.parametrize("index", range(len(STEPS)), ids=[s[0][:60] for s in STEPS])
def test_readme_step(scratch: Path, index: int) -> None:
    command, expected, code = STEPS[index]
    env = {**os.environ, "PATH": f"{Path(SMEVALS).parent}:{os.environ['PATH']}",
           "SMEVALS_CACHE_DIR": str(scratch / ".cache"), "GIT_AUTHOR_NAME": "A",
           "GIT_AUTHOR_EMAIL": "a@example.com", "GIT_COMMITTER_NAME": "A",
           "GIT_COMMITTER_EMAIL": "a@example.com", "COLUMNS": "100"}
    proc = subprocess.run(command, shell=True, cwd=scratch, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=300)
    actual = (proc.stdout + proc.stderr).splitlines()
    assert proc.returncode == code, f"{command}\n{proc.stdout}{proc.stderr}"
    assert matches(expected, actual), f"{command}\n--- got:\n" + "\n".join(actual)
