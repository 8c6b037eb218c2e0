"""command: run a command (tests, a linter, a build) in a sandboxed copy of the Run's final
workspace, with hidden files that were never in the agent's workspace copied in first.

The copy is private to the Check: the Run's final tree (CheckInput.run_workspace), then the
`files:` (a folder of the Eval, whose content goes to the top, or a list of files of the
Eval, each kept at its path), then the command, under smevals.proc.sandbox. It passes on
exit 0; `score` is passed/total from the `junit:` report the command writes, else from
pytest's or unittest's summary, else 1 or 0. The command's stdout and stderr are kept with
the Grade (`command[.NAME].stdout.txt`, `.stderr.txt`), capped at `max_output_bytes`.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

from smevals.checkers.base import (
    NONEMPTY,
    Checker,
    CheckError,
    CheckInput,
    CheckResult,
    checker,
    fail,
    is_number,
)
from smevals.checkers.program import SANDBOX_SCHEMA, sandbox_setting
from smevals.checkers.testcounts import JUNIT_LIMIT, Counts, ReportError, from_junit, from_output
from smevals.proc.sandbox import Outcome, SandboxRefused, run_sandboxed

CHECKERS: dict[str, Checker] = {}

DEFAULT_TIMEOUT = 120.0
DEFAULT_MEMORY_MB = 2048
DEFAULT_CAP = 1024 * 1024
PYTHON_NAMES = ("python", "python3")

_FILES = {
    "type": ["string", "array"], "minLength": 1, "minItems": 1,
    "items": {"type": "string", "minLength": 1},
    "x-expect": "a folder, or a non-empty list of files, relative to the Eval",
}


def _files_problems(opts: dict[str, Any]) -> list[tuple[str, str]]:
    from smevals.spec.paths import path_problem

    files = opts.get("files")
    names = [files] if isinstance(files, str) else files if isinstance(files, list) else []
    found = [("files", why) for name in names if isinstance(name, str)
             and (why := path_problem(name))]
    junit = opts.get("junit")
    if isinstance(junit, str) and (why := path_problem(junit)):
        found.append(("junit", why))
    return found


@checker(
    CHECKERS,
    "command",
    "Run a command in a sandboxed copy of the Run's final workspace, with hidden `files:` "
    "copied in; passes on exit 0, scored passed/total from `junit:` or pytest/unittest.",
    properties={
        "command": {
            "type": ["string", "array"], "minLength": 1, "minItems": 1,
            "items": {"type": "string", "minLength": 1},
            "x-expect": "a command line (run by sh -c) or a non-empty list of arguments",
        },
        "files": _FILES,
        "junit": NONEMPTY,
        "memory_mb": {"type": "integer", "minimum": 16, "x-expect": "an integer >= 16"},
        "max_output_bytes": {"type": "integer", "minimum": 1, "x-expect": "a positive integer"},
        "sandbox": SANDBOX_SCHEMA,
    },
    required=("command",),
    task_keys={"files": ("files",)},
    reads="workspace",
    problems=_files_problems,
)
def command(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    if inp.run_workspace is None:
        fail("command needs a Run's workspace (none is given here)")
    try:
        tree = inp.run_workspace()
    except ValueError as exc:
        fail(str(exc))
    with tempfile.TemporaryDirectory(prefix="smevals-command-") as tmp:
        private = Path(tmp).resolve() / "work"
        shutil.copytree(tree, private, symlinks=True)
        home = Path(tmp).resolve() / "home"
        home.mkdir()
        _hidden(opts, inp, private)
        outcome, timeout, cap = _run(opts, inp, private, home)
        _keep(inp, outcome)
        counts = _counts(opts, private, outcome)
    return _verdict(outcome, counts, timeout, cap)


def _hidden(opts: dict[str, Any], inp: CheckInput, private: Path) -> None:
    """Copy the hidden `files:` (relative to the Eval) over the private copy."""
    files = opts.get("files")
    if not files:
        return
    if inp.grader_dir is None:
        fail("files: needs the Eval's folder (none is given here)")
    from smevals.spec.workspace import CopyError, WorkspaceError, copy_in, tree_of
    from smevals.store.workspace import open_dir

    try:
        start = tree_of(Path(inp.grader_dir).parent, files)
        fd = open_dir(private)
        try:
            copy_in(start, fd, replace=True)
        finally:
            os.close(fd)
    except (WorkspaceError, CopyError) as exc:
        fail(f"files: {exc}")


def argv_of(spec: str | list[str]) -> list[str]:
    """The command's argv: a string runs under `sh -c`, a list as it is; `python` (or
    `python3`) as the first word is the Python smevals runs on."""
    if isinstance(spec, list):
        first = sys.executable if spec[0] in PYTHON_NAMES else spec[0]
        return [first, *spec[1:]]
    text = spec.strip()
    word, _, rest = text.partition(" ")
    if word in PYTHON_NAMES:
        text = f"{shlex.quote(sys.executable)} {rest}".rstrip()
    return ["/bin/sh", "-c", text]


def _run(opts: dict[str, Any], inp: CheckInput, private: Path,
         home: Path) -> tuple[Outcome, float, int]:
    timeout = float(inp.timeout) if is_number(inp.timeout) and inp.timeout > 0 \
        else DEFAULT_TIMEOUT
    cap = int(opts.get("max_output_bytes", DEFAULT_CAP))
    policy = sandbox_setting(opts, inp).policy(
        timeout, home, cap=cap, memory_mb=int(opts.get("memory_mb", DEFAULT_MEMORY_MB)),
        read_only=True)
    path = f"{os.path.dirname(sys.executable)}:{policy.env.get('PATH', '')}"
    policy = replace(policy, env={**policy.env, "PATH": path})   # its pytest, its python
    try:
        return run_sandboxed(argv_of(opts["command"]), private, policy), timeout, cap
    except SandboxRefused as refused:
        raise CheckError(refused.reason, {"sandbox": refused.sandbox}) from None


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


def _counts(opts: dict[str, Any], private: Path, outcome: Outcome) -> Counts | None:
    junit = opts.get("junit")
    if isinstance(junit, str):
        return _junit(private, junit)
    text = _decode(outcome.stdout) + "\n" + _decode(outcome.stderr)
    return from_output(text)


def _junit(private: Path, name: str) -> Counts:
    """The JUnit report `name` the command wrote in its copy, read without following a link."""
    from smevals.spec.paths import path_problem
    from smevals.store.regular import NotRegular, TooLarge, read_capped
    from smevals.store.workspace import descend, open_dir

    why = path_problem(name)
    if why is not None:
        fail(f"junit: {why}")
    *folders, base = name.replace("\\", "/").split("/")
    root = open_dir(private)
    try:
        here = descend(root, folders)
        try:
            data = read_capped(base, JUNIT_LIMIT, "a JUnit report", "junit", here)[1]
        finally:
            os.close(here)
    except FileNotFoundError:
        fail(f"junit: the command wrote no report at {name}", score=0.0)
    except (NotRegular, TooLarge, NotADirectoryError, OSError) as exc:
        fail(f"junit: {name} cannot be read: {exc}", score=0.0)
    finally:
        os.close(root)
    try:
        return from_junit(data)
    except ReportError as exc:
        fail(f"junit: {name} {exc}", score=0.0)


def _decode(data: bytes) -> str:
    return bytes(data).decode("utf-8", "replace").replace("\r\n", "\n")


def _verdict(outcome: Outcome, counts: Counts | None, timeout: float, cap: int) -> CheckResult:
    details: dict[str, Any] = {"exit_code": outcome.exit_code, "sandbox": outcome.sandbox}
    if counts is not None:
        details["tests"] = {"passed": counts.passed, "total": counts.total,
                            "from": counts.source}
        if counts.failing:
            details["failing"] = counts.failing
    problem = outcome.error or _failure(outcome, timeout, cap)
    score = counts.score if counts is not None and counts.total else None
    if problem is None:
        return CheckResult(ok=True, score=1.0 if score is None else score, details=details)
    if counts is not None and counts.total:
        problem += f": {counts.total - counts.passed} of {counts.total} tests failed"
        if counts.failing:
            more = ", ..." if len(counts.failing) > 5 else ""
            problem += f" ({', '.join(counts.failing[:5])}{more})"
    for name in ("stdout", "stderr"):       # their ends, beside the files kept in full
        text = _decode(getattr(outcome, name)).strip()
        if text:
            details[name] = text if len(text) <= 500 else "…" + text[-500:]
    return CheckResult(ok=False, score=0.0 if score is None else score, notes=problem,
                       details=details)


def _failure(outcome: Outcome, timeout: float, cap: int) -> str | None:
    if outcome.timed_out:
        return f"command timed out after {timeout:g} s"
    if outcome.over_cap:
        streams = " and ".join(outcome.over_cap)
        return (f"{streams} passed the output cap of {cap} bytes (kept truncated; "
                "command stopped)")
    code = outcome.exit_code
    if code is not None and code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"command was killed by {name}"
    if code:
        return f"command exited with code {code}"
    return None
