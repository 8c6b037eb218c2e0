"""No install line in the README, docs/ or the code's messages fetches the package index's
`smevals` (another tool, 0.2.0): every one installs this project, by a git URL, a path to a
clone or a wheel built from it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "smevals"
# the commands that fetch what they name from a package index
INSTALL = re.compile(r"\b(?:pip3? install|pip wheel|pip download|pipx install|pipx inject"
                     r"|uv pip install|uv tool install|uv add|uvx)\b(.*)")
BY_NAME = re.compile(r"smevals\s*(\[[^\]]*\])?\s*([=<>!~].*)?", re.I)   # no URL, no path
EXTRA = re.compile(r"smevals\[[^\]]*\](?!\s*@)", re.I)   # `smevals[x]` that is not `... @ URL`
ORIGINAL = "smevals==0.2.0"   # the original tool, installed on purpose (docs/performance.md)
PROSE = {"where", "beside", "in", "into", "on", "and", "or", "then", "to", "for", "the", "is"}


def problems(text: str) -> list[str]:
    """The lines of `text` that would install the package index's `smevals`."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        bad = [m[0] for m in EXTRA.finditer(line)]
        for match in INSTALL.finditer(line):
            bad += [arg for arg in _arguments(match[1])
                    if BY_NAME.fullmatch(arg) and arg != ORIGINAL]
        if bad:
            found.append(f"{number}: {line.strip()}")
    return found


def _arguments(rest: str) -> list[str]:
    rest = re.split(r"`|\)|;|&&|\|\||#(?!\S)", rest)[0]
    try:
        words = shlex.split(rest)
    except ValueError:          # an unbalanced quote in prose: the words as they stand
        words = [w.strip("'\"") for w in rest.split()]
    stop = next((i for i, w in enumerate(words) if w in PROSE), len(words))
    return words[:stop]         # the command's arguments end where the sentence goes on


def documents() -> list[Path]:
    docs = sorted(p for p in (ROOT / "docs").rglob("*") if p.suffix in (".md", ".yml"))
    code = sorted(PACKAGE.rglob("*.py")) + sorted((ROOT / "schemas").glob("*.json"))
    return [ROOT / "README.md", *docs, *code, *sorted((ROOT / "suites").rglob("README.md"))]


@pytest.mark.parametrize("path", documents(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_install_line_fetches_the_package_index_smevals(path: Path) -> None:
    assert problems(path.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("line", [
    "pip install smevals",
    "run: python -m pip install smevals   # or a pinned version",
    "      - run: pip install smevals",
    "pip install 'smevals[dask]'",
    'pip install "smevals[llm]>=0.1"',
    "pip install -U smevals==0.1.0",
    "pipx install smevals",
    "uv tool install smevals",
    "uv pip install --upgrade 'smevals[dask,llm]'",
    "with `pip install 'smevals[llm]'`, any model",
    "- `smevals[dask]`, the same version as the client",
    "smevals[dask]>=0.1",
])
def test_the_guard_catches_each_way_of_naming_the_index_package(line: str) -> None:
    assert problems(line) == [f"1: {line.strip()}"]


@pytest.mark.parametrize("line", [
    "pip install 'smevals @ git+https://github.com/OWNER/REPO@v0.1.0'",
    "pip install 'smevals[dask,llm] @ git+https://github.com/OWNER/REPO@v0.1.0'",
    "pip install dist/smevals-0.1.0-py3-none-any.whl",
    "pip install 'dist/smevals-0.1.0-py3-none-any.whl[dask]'",
    "pip install '/path/to/smevals-clone[llm]'",
    "pip install -e '.[dev]' && smevals run suites/haiku",
    "pipx install 'git+https://github.com/OWNER/REPO@v0.1.0'",
    'run: python -m pip install "$SMEVALS_PACKAGE"',
    "pip install smevals==0.2.0",
    "`pip install 'llm>=0.19'` beside an installed smevals",
    "\"pip install 'llm>=0.19' where smevals is installed\",",
    "smevals run evals -n 3 -g",
])
def test_the_guard_lets_installs_of_this_project_through(line: str) -> None:
    assert problems(line) == []
