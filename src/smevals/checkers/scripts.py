"""javascript and python: a promptfoo `javascript` or `python` assertion, run as promptfoo
runs it, in the sandbox of the program checkers (smevals.proc.sandbox).

The assertion is inline code (`code`: an expression, or a function body when it has
several lines) or a file beside the grader (`script`, with `function`). It gets the output
and promptfoo's context: `prompt` (the Run's prompt; chat messages as JSON), `vars` (the
test's vars), `test`, `config` (the assertion's), `providerResponse.output`. What it returns
is read as promptfoo reads it (scripts/results.py): a boolean, a number (a pass when above 0,
or at least `threshold`), or `{pass, score, reason}`. It runs in a private folder, with a
deadline, memory and output limits and no network; JavaScript needs `node` on PATH, and
without it the Check is an error (no verdict), never a pass. Python runs with the Python
smevals runs on.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from smevals.checkers.base import (
    BOOL,
    NONEMPTY,
    Checker,
    CheckError,
    CheckInput,
    CheckResult,
    checker,
    fail,
    is_number,
)
from smevals.checkers.script_results import HARNESS_JS, HARNESS_PY, read_js, read_python
from smevals.proc.sandbox import SandboxRefused, run_sandboxed
from smevals.proc.setting import SCHEMA as SANDBOX_SCHEMA
from smevals.proc.setting import Setting

CHECKERS: dict[str, Checker] = {}

DEFAULT_TIMEOUT = 30.0
MEMORY_MB = {"javascript": 2048, "python": 1024}     # V8 reserves much address space
CAP = 1024 * 1024
RESULT = "result.json"
_OPTIONS: dict[str, Any] = {
    "code": {"type": "string", "x-expect": "the assertion's code (a string)"},
    "script": NONEMPTY,
    "function": NONEMPTY,
    "threshold": {"type": "number", "x-expect": "a number"},
    "negate": BOOL,
    "test": {"type": "object", "x-expect": "a mapping (the test: vars, description...)"},
    "config": {"type": "object", "x-expect": "a mapping"},
    "memory_mb": {"type": "integer", "minimum": 16, "x-expect": "an integer >= 16"},
    "sandbox": SANDBOX_SCHEMA,
}


def _context(opts: dict[str, Any], inp: CheckInput) -> dict[str, Any]:
    """promptfoo's assertion context: prompt, vars, test, config, providerResponse."""
    task = dict(inp.task)
    test = dict(opts["test"]) if isinstance(opts.get("test"), dict) else {
        "vars": {k: v for k, v in task.items() if k not in ("name", "grading", "prompt",
                                                             "messages")}}
    vars_ = test.get("vars") if isinstance(test.get("vars"), dict) else {}
    prompt = task.get("prompt")
    if not isinstance(prompt, str):
        messages = task.get("messages")
        prompt = json.dumps(messages, indent=2, ensure_ascii=False) if messages else ""
    context: dict[str, Any] = {"prompt": prompt, "vars": vars_, "test": {**test,
                                                                          "vars": vars_},
                               "providerResponse": {"output": inp.output}}
    if isinstance(opts.get("config"), dict):
        context["config"] = opts["config"]
    return context


def _program(language: str, opts: dict[str, Any], inp: CheckInput, folder: Path
             ) -> tuple[list[str], dict[str, Any]]:
    """The command that runs the harness in `folder`, and the harness's input."""
    given: dict[str, Any] = {"output": inp.output, "context": _context(opts, inp)}
    if "script" in opts:
        source = _script_path(opts["script"], inp)
        name = "assertion" + (source.suffix if language == "javascript" else ".py")
        shutil.copyfile(source, folder / name)
        given["script"] = name
        given["function"] = opts.get("function")
    else:
        given["code"] = opts["code"]
    if language == "javascript":
        node = shutil.which("node")
        if node is None:
            raise CheckError("node is not on PATH: a javascript Check needs Node.js to run "
                             "(install it, e.g. apt-get install nodejs)")
        (folder / "harness.cjs").write_text(HARNESS_JS, encoding="utf-8")
        return [node, str(folder / "harness.cjs")], given
    (folder / "harness.py").write_text(HARNESS_PY, encoding="utf-8")
    return [sys.executable, "-I", str(folder / "harness.py")], given


def _script_path(name: str, inp: CheckInput) -> Path:
    base = Path(inp.grader_dir) if inp.grader_dir is not None else Path.cwd()
    path = (base / name).resolve()
    if not path.is_relative_to(base.resolve()):
        fail(f"script: {name!r} leads outside the grader's folder")
    if not path.is_file():
        fail(f"script: no such file: {name} (beside the grader)")
    return path


def _run(language: str, opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    if ("code" in opts) == ("script" in opts):
        fail("give exactly one of code and script")
    timeout = float(inp.timeout) if is_number(inp.timeout) and inp.timeout > 0 \
        else DEFAULT_TIMEOUT
    try:
        setting = Setting.merged(opts.get("sandbox"), inp.task.get("sandbox"))
    except ValueError as exc:
        raise CheckError(f"the Task's {exc}") from None
    with tempfile.TemporaryDirectory(prefix="smevals-script-") as tmp:
        folder = Path(tmp).resolve()
        argv, given = _program(language, opts, inp, folder)
        (folder / "input.json").write_text(json.dumps(given, ensure_ascii=False),
                                           encoding="utf-8")
        policy = setting.policy(timeout, folder, cap=CAP,
                                memory_mb=opts.get("memory_mb", MEMORY_MB[language]))
        try:
            outcome = run_sandboxed(argv, folder, policy)
        except SandboxRefused as refused:
            raise CheckError(refused.reason, {"sandbox": refused.sandbox}) from None
        why = outcome.why(policy)
        result = _result(folder / RESULT)
    details: dict[str, Any] = {"sandbox": outcome.sandbox}
    if result is None:
        stderr = bytes(outcome.stderr).decode("utf-8", "replace")[-500:]
        fail(f"the {language} assertion gave no result ({why or 'no result file'})",
             score=0.0, stderr=stderr, **details)
    read = read_js if language == "javascript" else read_python
    return read(result, opts.get("threshold"), bool(opts.get("negate", False)), details)


def _result(path: Path) -> dict[str, Any] | None:
    try:
        if path.stat().st_size > CAP:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


@checker(
    CHECKERS,
    "javascript",
    "A promptfoo javascript assertion (inline code or a script beside the grader) run by "
    "node in the sandbox; a boolean, number or {pass, score, reason} read as promptfoo does.",
    properties=_OPTIONS,
    required=(("code", "script"),),
    reads="none",
)
def javascript(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    return _run("javascript", opts, inp)


@checker(
    CHECKERS,
    "python",
    "A promptfoo python assertion (inline code or a script beside the grader) run in the "
    "sandbox; a boolean, number or {pass, score, reason} read as promptfoo does.",
    properties=_OPTIONS,
    required=(("code", "script"),),
    reads="none",
)
def python(opts: dict[str, Any], inp: CheckInput) -> CheckResult:
    return _run("python", opts, inp)
