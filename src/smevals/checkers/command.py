"""command: run a command (tests, a linter, a build) in a sandboxed copy of the Run's final
workspace, with hidden files that were never in the agent's workspace copied in first, where
nothing the agent left can change how the tests run or what they report.

1. The agent's files (what it added or changed) are judged first: a file that configures or
   replaces the test machinery (checkers/machinery.py: a conftest.py, a pytest.ini, a module
   shadowing the standard library, a file where a hidden file goes, ...) fails the Check,
   named, and nothing runs, unless the Task's `allow:` names it.
2. The copy is private to the Check: the final tree (CheckInput.run_workspace; compiled
   bytecode and pytest's cache left out), then the `files:` (a folder of the Eval, whose
   content goes to the top, or a list of files of the Eval, each kept at its path).
3. The command runs under smevals.proc.sandbox, as checkers/cmdline.py builds it: Python
   isolated, pytest's and unittest's figures written to a JUnit report in a private folder
   outside the tree (`{junit}`, `$SMEVALS_JUNIT`).
4. The verdict: the report, when the run created one, is the only source of figures (a
   summary the run printed is then not read); without one, pytest's or unittest's summary
   as before, except where a report was due (`junit: true`, or the command starts pytest or
   unittest): then the Check fails. It fails too when its own figures say a test failed or
   none ran, whatever the exit code, and when fewer tests ran than the hidden files define
   (checkers/defined.py) or than `expect_tests`. Otherwise it passes on exit 0; `score` is
   passed/total.

The command's stdout and stderr are kept with the Grade (`command[.NAME].stdout.txt`,
`.stderr.txt`), capped at `max_output_bytes`.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from smevals.checkers import machinery
from smevals.checkers.base import (
    Checker,
    CheckError,
    CheckInput,
    CheckResult,
    checker,
    fail,
    is_number,
)
from smevals.checkers.cmdline import Plan, ReportFolder, isolated_env, plan, report_folder
from smevals.checkers.program import sandbox_setting
from smevals.checkers.testcounts import JUNIT_LIMIT, Counts, ReportError, from_junit, from_output
from smevals.checkers.testverdict import Figures, decode, verdict
from smevals.proc.policy import Policy
from smevals.proc.sandbox import Outcome, SandboxRefused, choose, run_sandboxed
from smevals.proc.setting import SCHEMA as SANDBOX_SCHEMA

if TYPE_CHECKING:
    from smevals.evaldef.workspace import Starting

CHECKERS: dict[str, Checker] = {}

DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY_MB = 2048
DEFAULT_CAP = 1024 * 1024
DERIVED = ("__pycache__", "*.pyc", ".pytest_cache")     # never copied into the grading tree
LEGACY_JUNIT = ("a report in the tree is no longer read (a file the agent left could "
                "stand in for it): write `junit: true` and have the command write the report "
                "to {junit} (e.g. --junitxml={junit}), a private path outside the tree")

_FILES = {
    "type": ["string", "array"], "minLength": 1, "minItems": 1,
    "items": {"type": "string", "minLength": 1},
    "x-expect": "a folder, or a non-empty list of files, relative to the Eval",
}


def _files_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    from smevals.evaldef.paths import path_problem

    files = opts.get("files")
    names = [files] if isinstance(files, str) else files if isinstance(files, list) else []
    found = [("files", why) for name in names if isinstance(name, str)
             and (why := path_problem(name))]
    if isinstance(opts.get("junit"), str):
        found.append(("junit", LEGACY_JUNIT))
    return found


@checker(
    CHECKERS,
    "command",
    "Run a command in a sandboxed copy of the Run's final workspace, with hidden `files:` "
    "copied in; passes on exit 0 when its tests all ran and passed, scored passed/total.",
    properties={
        "command": {
            "type": ["string", "array"], "minLength": 1, "minItems": 1,
            "items": {"type": "string", "minLength": 1},
            "x-expect": "a command line (run by sh -c) or a non-empty list of arguments",
        },
        "files": _FILES,
        "junit": {"type": ["boolean", "string"], "x-expect": "true or false"},
        "expect_tests": {"type": "integer", "minimum": 1, "x-expect": "an integer >= 1"},
        "memory_mb": {"type": "integer", "minimum": 16, "x-expect": "an integer >= 16"},
        "max_output_bytes": {"type": "integer", "minimum": 1, "x-expect": "a positive integer"},
        "sandbox": SANDBOX_SCHEMA,
    },
    required=("command",),
    task_keys={"files": ("files",), "expect_tests": ("expect_tests",)},
    reads="workspace",
    problems=_files_problems,
)
def command(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    if isinstance(opts.get("junit"), str):
        fail(f"junit: {LEGACY_JUNIT}")
    if inp.run_workspace is None:
        fail("command needs a Run's workspace (none is given here)")
    try:
        tree = inp.run_workspace()
    except ValueError as exc:
        fail(str(exc))
    hidden = _hidden(opts, inp)
    _refuse(inp, tree, hidden)
    with tempfile.TemporaryDirectory(prefix="smevals-command-") as tmp:
        root = Path(tmp).resolve()
        private = root / "work"
        shutil.copytree(tree, private, symlinks=True, ignore=shutil.ignore_patterns(*DERIVED))
        if hidden is not None:
            _copy_hidden(hidden, private)
        home = _home(root)
        run = _runner(opts, inp)
        folder = report_folder(home, run.bound())
        steps = plan(opts["command"], folder)
        outcome = run(steps, private, home)
        _keep(inp, outcome)
        figures = _figures(opts, steps, folder, outcome)
    figures.expected = _expected(opts, inp, steps, hidden, run)
    return verdict(outcome, figures, run.timeout, run.cap)


def _home(root: Path) -> Path:
    home = root / "home"
    home.mkdir()
    return home


def _hidden(opts: dict[str, Any], inp: CheckInput) -> Starting | None:
    """The hidden `files:` (relative to the Eval), checked and hashed; None without any."""
    files = opts.get("files")
    if not files:
        return None
    if inp.grader_dir is None:
        fail("files: needs the Eval's folder (none is given here)")
    from smevals.evaldef.workspace import WorkspaceError, tree_of

    try:
        return tree_of(Path(inp.grader_dir).parent, files)
    except WorkspaceError as exc:
        fail(f"files: {exc}")


def _copy_hidden(hidden: Starting, private: Path) -> None:
    from smevals.evaldef.workspace import CopyError, copy_in
    from smevals.files.workspace import open_dir

    fd = open_dir(private)
    try:
        copy_in(hidden, fd, replace=True)
    except CopyError as exc:
        fail(f"files: {exc}")
    finally:
        os.close(fd)


def _refuse(inp: CheckInput, tree: Path, hidden: Starting | None) -> None:
    """Fail, naming them, when the agent left files that configure or replace the test
    machinery (checkers/machinery.py) and the Task's `allow:` does not name them."""
    agent = dict(inp.agent_files()) if inp.agent_files is not None else _every_file(tree)
    marks = machinery.refused(agent, machinery.folder_reader(tree),
                              list(hidden.sha256) if hidden else [],
                              machinery.patterns(inp.task, "allow"))
    if marks:
        fail(f"refused, not run: the agent left {machinery.said(marks)}; files that configure "
             "or replace the test machinery are not run (a Task's `allow:` can name one)",
             score=0.0, refused=[{"path": m.path, "kind": m.kind} for m in marks])


def _every_file(tree: Path) -> dict[str, str]:
    out = {}
    for folder, dirs, files in os.walk(tree):
        rel = os.path.relpath(folder, tree)
        for name in files + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            out[name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")] = "added"
    return out


@dataclass(frozen=True)
class _Runner:
    """Runs a plan in the Check's sandbox (the tests, and the clean count of checkers/
    defined.py)."""

    opts: dict[str, Any]
    inp: CheckInput
    timeout: float
    cap: int

    def policy(self, home: Path) -> Policy:
        return sandbox_setting(self.opts, self.inp).policy(
            self.timeout, home, cap=self.cap,
            memory_mb=int(self.opts.get("memory_mb", DEFAULT_MEMORY_MB)), read_only=True)

    def bound(self) -> bool:
        """Whether the command sees the report folder only where a bind shows it: in its
        own view of the filesystem (smevals.proc.view) or in a container."""
        try:
            box = choose(self.policy(Path("/")))
        except SandboxRefused as refused:
            raise CheckError(refused.reason, {"sandbox": refused.sandbox}) from None
        return box.view or box.container

    def __call__(self, steps: Plan, folder: Path, home: Path) -> Outcome:
        policy = self.policy(home)
        path = f"{os.path.dirname(sys.executable)}:{policy.env.get('PATH', '')}"
        env = isolated_env({**policy.env, "PATH": path}, steps.env)    # its pytest, its python
        try:
            return run_sandboxed(steps.argv, folder,
                                 replace(policy, env=env, binds=policy.binds + steps.binds))
        except SandboxRefused as refused:
            raise CheckError(refused.reason, {"sandbox": refused.sandbox}) from None


def _runner(opts: dict[str, Any], inp: CheckInput) -> _Runner:
    timeout = float(inp.timeout) if is_number(inp.timeout) and inp.timeout > 0 \
        else DEFAULT_TIMEOUT
    return _Runner(opts, inp, timeout, int(opts.get("max_output_bytes", DEFAULT_CAP)))


def _prefix(check_name: str | None) -> str:
    if not check_name:
        return "command"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in check_name)[:60]
    return f"command.{safe}"


def _keep(inp: CheckInput, outcome: Outcome) -> None:
    """The command's stdout and stderr (as capped) in the Grade's workspace."""
    if inp.workspace is None:
        return
    prefix = _prefix(inp.check_name)
    (Path(inp.workspace) / f"{prefix}.stdout.txt").write_bytes(bytes(outcome.stdout))
    (Path(inp.workspace) / f"{prefix}.stderr.txt").write_bytes(bytes(outcome.stderr))


def _figures(opts: dict[str, Any], steps: Plan, folder: ReportFolder,
             outcome: Outcome) -> Figures:
    printed = from_output(decode(outcome.stdout) + "\n" + decode(outcome.stderr))
    try:
        report = _report(folder)
    except ReportError as exc:
        return Figures(None, f"the test report {exc}")
    if report is not None:
        return Figures(report)
    due = opts.get("junit") is True or steps.runner != "" or (
        printed is not None and printed.source == "pytest")
    if not due:
        return Figures(printed)
    why = "no test report was written: the test run ended before it finished"
    if printed is not None:
        why += (f" (the {printed.source} summary it printed, {printed.passed} of "
                f"{printed.total} passed, is not trusted)")
    return Figures(None, why)


def _report(folder: ReportFolder) -> Counts | None:
    """The JUnit report the run wrote in its report folder (new and empty before it ran),
    read without following a link; None when there is none."""
    from smevals.files.regular import NotRegular, TooLarge, read_capped

    try:
        data = read_capped(str(folder.report), JUNIT_LIMIT, "a JUnit report", "junit")[1]
    except FileNotFoundError:
        return None
    except (NotRegular, TooLarge, OSError) as exc:
        raise ReportError(f"cannot be read: {exc}") from None
    return from_junit(data)


def _expected(opts: dict[str, Any], inp: CheckInput, steps: Plan, hidden: Starting | None,
              run: _Runner) -> tuple[int, str] | None:
    given = opts.get("expect_tests")
    if isinstance(given, int) and not isinstance(given, bool):
        return given, "expect_tests"
    if hidden is None or not steps.runner:
        return None
    from smevals.checkers.defined import defined_tests

    found = defined_tests(opts["command"], steps.runner, _starting(inp), hidden, run)
    return (found, "collected") if found else None


def _starting(inp: CheckInput) -> Starting | None:
    from smevals.evaldef.workspace import KEY, WorkspaceError, tree_of

    spec = inp.task.get(KEY)
    if spec is None or inp.grader_dir is None:
        return None
    try:
        return tree_of(Path(inp.grader_dir).parent, spec)
    except WorkspaceError:
        return None


