"""The `command` checker's command line and environment: how a test command runs so that the
files it is run on cannot change how it runs.

- `python` (or `python3`) as the first word is the Python smevals runs on, isolated (`-I`:
  no `PYTHON*` variable, no user site, neither the working folder nor the script's folder
  first on the import path), so nothing in the tree is imported before the test runner;
- `python -m unittest ARGS` runs smevals' unittest runner (checkers/unitrun.py: the same
  tests and output, and a JUnit report of what ran);
- every pytest the command starts writes its JUnit report to the private report folder
  (`PYTEST_ADDOPTS=--junitxml=...`, which pytest reads wherever it is started);
- every pytest the command starts loads only the plugins the command names (`-p NAME`),
  not every one installed where smevals runs (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`, as
  pytest's own `pytester` does): an installed pytest-randomly or pytest-rerunfailures
  would change a verdict, and a grade must not depend on the grading machine;
- `{junit}` in the command is the report's path, and so is `$SMEVALS_JUNIT`.

`ReportFolder` is where the report goes: a fresh folder outside the tree, `host` as smevals
reads it and `seen` as the command sees it. In the command's own view of the filesystem
(smevals.proc.view) and in a container the folder is bound at VIEW_REPORT
(`/smevals/out`), outside both the tree and the private home; with `view: host` it is the
same path, in the private home.
"""

from __future__ import annotations

import re
import shlex
import sys
from dataclasses import dataclass, field
from pathlib import Path

from smevals.proc.sandbox import Bind

PYTHON_NAMES = ("python", "python3")
PYTEST_NAMES = ("pytest", "py.test")
REPORT = "junit.xml"
PLACEHOLDER = "{junit}"
REPORT_VARIABLE = "SMEVALS_JUNIT"
COLLECT_VARIABLE = "SMEVALS_COLLECT_ONLY"
VIEW_REPORT = "/smevals/out"

_FLAGS = r"((?:\s+-[A-Za-z]+)*)"
_PYTHON = re.compile(r"^\s*(?:python3?)" + _FLAGS + r"(?=\s|$)")
_PYTHON_M = re.compile(r"^\s*(?:python3?)" + _FLAGS + r"\s+-m\s+(pytest|unittest)(?=\s|$)")
_PYTEST = re.compile(r"^\s*(?:pytest|py\.test)(?=\s|$)")


@dataclass(frozen=True)
class ReportFolder:
    """The private folder the test report is written to: `host`, where smevals reads it;
    `seen`, the same folder as the command sees it."""

    host: Path
    seen: str

    @property
    def report(self) -> Path:
        return self.host / REPORT

    @property
    def report_seen(self) -> str:
        return f"{self.seen.rstrip('/')}/{REPORT}"

    @property
    def binds(self) -> tuple[Bind, ...]:
        """What the sandbox must add for the command to see the folder at `seen`."""
        return () if self.seen == str(self.host) else (
            Bind(str(self.host), self.seen, writable=True),)


def report_folder(home: Path, bound: bool = False) -> ReportFolder:
    """A new, empty folder for the report, outside the tree the command runs in.

    `bound`: the command runs in its own view of the filesystem or in a container, which
    shows the folder (made beside `home`, not in it) at VIEW_REPORT and nowhere else.
    Otherwise (`view: host`) the folder is in the command's private home, the one folder
    besides its own the sandbox keeps writable, at the same path for both."""
    import secrets

    if not bound:
        host = home / "smevals-report"
        host.mkdir(mode=0o700)
        return ReportFolder(host, str(host))
    host = home.parent / f"report-{secrets.token_hex(8)}"
    host.mkdir(mode=0o700)
    return ReportFolder(host, VIEW_REPORT)


@dataclass(frozen=True)
class Plan:
    """How the command runs: its argv, the test runner it starts (`pytest`, `unittest`, or
    "" when smevals cannot tell) and the variables added to the sandbox's environment."""

    argv: list[str]
    runner: str
    env: dict[str, str] = field(default_factory=dict)
    binds: tuple[Bind, ...] = ()        # the report folder, where a view shows it elsewhere


def runner_of(spec: str | list[str]) -> str:
    """`pytest` or `unittest` when the command starts one (as its first words), else ""."""
    if isinstance(spec, list):
        if spec[0] in PYTEST_NAMES:
            return "pytest"
        if spec[0] not in PYTHON_NAMES:
            return ""
        rest = spec[1:]
        while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
            rest = rest[1:]
        return rest[1] if len(rest) > 1 and rest[0] == "-m" and \
            rest[1] in ("pytest", "unittest") else ""
    found = _PYTHON_M.match(spec)
    if found:
        return found.group(2)
    return "pytest" if _PYTEST.match(spec) else ""


def plan(spec: str | list[str], folder: ReportFolder, collect: bool = False,
         source: str | None = None) -> Plan:
    """The command `spec` (a string for `sh -c`, or an argv) as it runs: see the module's
    docstring. With `collect`, the test runner only counts the tests it would run."""
    runner = runner_of(spec)
    code = unittest_runner() if source is None else source
    argv = _argv_list(spec, runner, code, folder) if isinstance(spec, list) \
        else ["/bin/sh", "-c", _argv_text(spec, runner, code, folder)]
    seen = folder.report_seen
    env = {REPORT_VARIABLE: seen, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    addopts = ["--collect-only"] if collect else [f"--junitxml={seen}"]
    env["PYTEST_ADDOPTS"] = " ".join(shlex.quote(a) for a in addopts)
    if collect:
        env[COLLECT_VARIABLE] = "1"
    return Plan(argv, runner, env, folder.binds)


def _argv_list(spec: list[str], runner: str, code: str, folder: ReportFolder) -> list[str]:
    args = [a.replace(PLACEHOLDER, folder.report_seen) for a in spec]
    if args[0] not in PYTHON_NAMES:
        return args
    out = [sys.executable, "-I"]
    rest = args[1:]
    if runner == "unittest":
        at = rest.index("-m")
        return [*out, *rest[:at], "-c", code, *rest[at + 2:]]
    return [*out, *rest]


def _argv_text(spec: str, runner: str, code: str, folder: ReportFolder) -> str:
    text = spec.strip().replace(PLACEHOLDER, shlex.quote(folder.report_seen))
    python = shlex.quote(sys.executable)
    if runner == "unittest":
        found = _PYTHON_M.match(text)
        assert found is not None
        return f"{python} -I{found.group(1)} -c {shlex.quote(code)}{text[found.end():]}"
    found = _PYTHON.match(text)
    if found is None:
        return text
    return f"{python} -I{found.group(1)}{text[found.end():]}"


def unittest_runner() -> str:
    """The source of smevals' unittest runner (checkers/unitrun.py), run by `-c`."""
    return (Path(__file__).parent / "unitrun.py").read_text(encoding="utf-8")


def isolated_env(env: dict[str, str], added: dict[str, str]) -> dict[str, str]:
    """`env` without any `PYTHON*` variable (a setting's `env:` may name one), with `added`
    on top; a `PYTEST_ADDOPTS` the setting passes comes before smevals' (which wins)."""
    out = {k: v for k, v in env.items() if not k.startswith("PYTHON")}
    theirs = out.get("PYTEST_ADDOPTS", "").strip()
    out.update(added)
    if theirs and "PYTEST_ADDOPTS" in added:
        out["PYTEST_ADDOPTS"] = f"{theirs} {added['PYTEST_ADDOPTS']}"
    return out
