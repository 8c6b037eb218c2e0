"""match_output (ash-project/evals issue #3): run the program in the output and compare
its stdout, trimmed, with `expected_output`, trimmed.

The program is the first fenced block of the language (else the first untagged
block, else the whole output). It runs in a private temporary folder that starts with a
copy of the Grade workspace's files, under the limits of sandbox.py; what it writes there
is dropped. The program, its stdout, its stderr and its exit code are kept in the
workspace as `match_output[.NAME].*`.
"""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
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
from smevals.checkers.inputs import fenced_block, input_text
from smevals.proc.policy import FILE_CAP
from smevals.proc.sandbox import Outcome, SandboxRefused, inside, run_sandboxed
from smevals.proc.setting import SCHEMA as SANDBOX_SCHEMA
from smevals.proc.setting import Setting

CHECKERS: dict[str, Checker] = {}

DEFAULT_TIMEOUT = 10.0
DEFAULT_MEMORY_MB = 1024
DEFAULT_CAP = 1024 * 1024

# language -> (file extension, interpreter on PATH or None for sys.executable, fence tags)
LANGUAGES: dict[str, tuple[str, str | None, frozenset[str]]] = {
    "python": ("py", None, frozenset({"python", "py", "python3"})),
    "bash": ("sh", "bash", frozenset({"bash", "sh", "shell"})),
    "sh": ("sh", "sh", frozenset({"sh", "shell", "bash"})),
    "node": ("js", "node", frozenset({"node", "js", "javascript"})),
    "ruby": ("rb", "ruby", frozenset({"ruby", "rb"})),
    "perl": ("pl", "perl", frozenset({"perl", "pl"})),
    "php": ("php", "php", frozenset({"php"})),
    "lua": ("lua", "lua", frozenset({"lua"})),
    "elixir": ("exs", "elixir", frozenset({"elixir", "exs"})),
}
_LANGUAGE_ALIASES = {"python3": "python", "py": "python", "javascript": "node", "js": "node"}


def _language(opts: dict[str, Any]) -> tuple[str, tuple[str, str | None, frozenset[str]]]:
    name = opts.get("language", "python").strip().lower()
    name = _LANGUAGE_ALIASES.get(name, name)
    if name in LANGUAGES:
        return name, LANGUAGES[name]
    if "command" not in opts:
        fail(f"unknown language {name!r}: give `command` (known: {', '.join(LANGUAGES)})")
    safe = "".join(c for c in name if c.isalnum())[:10] or "txt"
    return name, (safe, None, frozenset({name}))


def _argv(opts: dict[str, Any], interpreter: str | None, program: str) -> list[str]:
    """The command line; `program` is the program file as the sandbox shows it."""
    if "command" in opts:
        command = list(opts["command"])
        if not any("{file}" in part for part in command):
            return [*command, program]
        return [part.replace("{file}", program) for part in command]
    if interpreter is None:
        return [sys.executable, program]
    found = shutil.which(interpreter)
    if found is None:
        fail(f"interpreter {interpreter!r} not found on PATH")
    return [found, program]


def _prefix(check_name: str | None) -> str:
    if not check_name:
        return "match_output"
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in check_name)[:60]
    return f"match_output.{safe}"


def _timeout(inp: CheckInput) -> float:
    value = inp.timeout
    return float(value) if is_number(value) and value > 0 else DEFAULT_TIMEOUT


@checker(
    CHECKERS,
    "match_output",
    "Run the program in the output; its stdout, trimmed, must equal expected_output.",
    properties={
        "expected_output": {
            "type": ["string", "number"],
            "x-expect": "a string (or a number, compared as its text)",
        },
        "language": NONEMPTY,
        "command": {
            "type": "array",
            "minItems": 1,
            "items": {"type": "string", "minLength": 1},
            "x-expect": "a non-empty list of non-empty strings",
        },
        "memory_mb": {"type": "integer", "minimum": 16, "x-expect": "an integer >= 16"},
        "max_output_bytes": {"type": "integer", "minimum": 1, "x-expect": "a positive integer"},
        "sandbox": SANDBOX_SCHEMA,
    },
    required=("expected_output",),
    task_keys={"expected_output": ("expected_output",)},
)
def match_output(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    label, text = input_text(opts, inp)
    _name, (ext, interpreter, tags) = _language(opts)
    program = fenced_block(text, tags)
    if not program.strip():
        fail(f"no program found in {label}", score=0.0)
    if inp.workspace is not None:
        return _run_in(Path(inp.workspace), opts, inp, program, ext, interpreter)
    with tempfile.TemporaryDirectory(prefix="smevals-match-") as tmp:
        return _run_in(Path(tmp), opts, inp, program, ext, interpreter)


def _run_in(
    cwd: Path,
    opts: dict[str, Any],
    inp: CheckInput,
    program: str,
    ext: str,
    interpreter: str | None,
) -> CheckResult:
    prefix = _prefix(inp.check_name)
    (cwd / f"{prefix}.program.{ext}").write_text(program, encoding="utf-8")
    timeout = _timeout(inp)
    cap = opts.get("max_output_bytes", DEFAULT_CAP)
    setting = sandbox_setting(opts, inp)
    with tempfile.TemporaryDirectory(prefix="smevals-sandbox-") as tmp:
        private = Path(tmp).resolve()
        _copy_files(cwd, private)
        policy = setting.policy(timeout, private, cap=cap,
                                memory_mb=opts.get("memory_mb", DEFAULT_MEMORY_MB))
        path = inside(policy, private, private / f"{prefix}.program.{ext}")
        try:
            outcome = run_sandboxed(_argv(opts, interpreter, path), private, policy)
        except SandboxRefused as refused:
            raise CheckError(refused.reason, {"sandbox": refused.sandbox}) from None
    if outcome.error is not None:
        fail(outcome.error, sandbox=outcome.sandbox)
    _keep(cwd, prefix, outcome)
    expected = opts["expected_output"]
    return _verdict(outcome, expected if isinstance(expected, str) else str(expected), timeout, cap)


def sandbox_setting(opts: dict[str, Any], inp: CheckInput) -> Setting:
    """The Check's `sandbox:` with the Task's on top (smevals.proc.setting)."""
    try:
        return Setting.merged(opts.get("sandbox"), inp.task.get("sandbox"))
    except ValueError as exc:
        raise CheckError(f"the Task's {exc}") from None


def _copy_files(source: Path, private: Path) -> None:
    """The workspace's regular files (not links, none over FILE_CAP) into the private folder."""
    for entry in os.scandir(source):
        if entry.is_file(follow_symlinks=False) and entry.stat().st_size <= FILE_CAP:
            shutil.copyfile(entry.path, private / entry.name)


def _keep(cwd: Path, prefix: str, outcome: Outcome) -> None:
    (cwd / f"{prefix}.stdout.txt").write_bytes(bytes(outcome.stdout))
    (cwd / f"{prefix}.stderr.txt").write_bytes(bytes(outcome.stderr))
    (cwd / f"{prefix}.exit_code.txt").write_text(f"{outcome.exit_code}\n", encoding="utf-8")


def _decode(data: bytes) -> str:
    return bytes(data).decode("utf-8", "replace").replace("\r\n", "\n")


def _tail(text: str, limit: int = 500) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]


def _verdict(outcome: Outcome, expected: str, timeout: float, cap: int) -> CheckResult:
    stdout, stderr = _decode(outcome.stdout), _decode(outcome.stderr)
    details: dict[str, Any] = {"exit_code": outcome.exit_code, "timed_out": outcome.timed_out,
                               "sandbox": outcome.sandbox}
    problem = failure(outcome, timeout, cap)
    if problem is None and stdout.strip() != expected.strip():
        problem = "stdout does not match expected_output"
        details["expected"] = _tail(expected.strip())
        details["stdout"] = _tail(stdout.strip())
    if problem is None:
        return CheckResult(ok=True, score=1.0, details={"sandbox": outcome.sandbox})
    if stderr.strip():
        details["stderr"] = _tail(stderr)
    return CheckResult(ok=False, score=0.0, notes=problem, details=details)


def failure(outcome: Outcome, timeout: float, cap: int, what: str = "program") -> str | None:
    """Why a sandboxed `what` (a checker program, a command) did not end well, or None."""
    if outcome.timed_out:
        return f"{what} timed out after {timeout:g} s"
    if outcome.over_cap:
        streams = " and ".join(outcome.over_cap)
        return f"{streams} passed the output cap of {cap} bytes (kept truncated; {what} stopped)"
    code = outcome.exit_code
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"{what} was killed by {name}"
    if code:
        return f"{what} exited with code {code}"
    return None
