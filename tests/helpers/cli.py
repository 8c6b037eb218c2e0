"""Running `smevals`: in this process through click's CliRunner (`run_cli`, for a test that
checks only output, files and exit codes), or as a real process (`run_cli_process`, where
signals, pipes, children, a crash, start-up or `sys.executable` matter).

In this process the command goes through the same `smevals.cli.main` a user's process runs
(exceptions mapped to exit codes 2/3, no traceback), with the test's environment, its
working folder, and an empty stdin. What a fresh process would not carry over from the
command before (module-level caches, the damage found) is cleared before each command
(`reset_process_state`); tests/test_cli_in_process.py holds the two ways to the same
exit code, stdout and stderr."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SMEVALS = str(Path(sys.executable).parent / "smevals")

# Module-level state a real process starts without: (module, attribute) of each dict, list
# or set to empty, and of each functools cache to clear. A name a later version moved or
# removed is skipped (see `reset_process_state`).
CACHES = (
    ("smevals.store.damage", "_FOUND"),
    ("smevals.store.gitindex", "_SEEN"),
    ("smevals.store.gitindex", "_KNOWN"),
    ("smevals.store.gitsource", "_FOLDERS"),
    ("smevals.store.judgecache", "_LISTED"),
    ("smevals.store.claims", "_ALL"),
    ("smevals.commands.grade", "_VERSIONS"),
    ("smevals.commands.grade", "_SINCE"),
    ("smevals.commands.grade", "_ASKED"),
    ("smevals.spec.programs", "_MIRRORS"),
    ("smevals.runners.replay", "_CACHE"),
    ("smevals.judges.backends", "_REPLAY_CACHE"),
    ("smevals.checkers.sqldb", "_COPIES"),
    ("smevals.checkers.plugins", "_LOADED"),
    ("smevals.checkers.json_schema", "_CACHE"),
    ("smevals.checkers.options", "_VALIDATORS"),
    ("smevals.scale.worker", "_EVALS"),
    ("smevals.spec.workspace", "_CACHE"),
    ("smevals.history.point", "_HASHED"),
    ("smevals.runners.versions", "_ASKED"),
)


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


def reset_process_state() -> list[str]:
    """Empty the module-level caches of CACHES that are loaded; the names cleared."""
    cleared = []
    for module_name, attr in CACHES:
        module = sys.modules.get(module_name)
        value = getattr(module, attr, None) if module is not None else None
        cache_clear = getattr(value, "cache_clear", None)
        if callable(cache_clear):
            cache_clear()
        elif isinstance(value, dict | list | set):
            value.clear()
        else:
            continue
        cleared.append(f"{module_name}.{attr}")
    return cleared


@contextlib.contextmanager
def _working_folder(cwd: Path | None) -> Iterator[None]:
    before = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(before)


def run_cli(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
            timeout: float = 120) -> Result:
    """`smevals ARGS` in this process: exit code, stdout and stderr as a process gives them.
    `timeout` is the real process's; here pytest-timeout bounds a hang."""
    del timeout
    from click import formatting
    from click.testing import CliRunner

    from smevals.cli import main

    reset_process_state()
    runner = CliRunner()
    with _working_folder(cwd), runner.isolation(input="", env=env) as (out, err, _mixed):
        formatting.FORCED_WIDTH = None          # the terminal's width, as in a process
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    return Result(code, out.getvalue().decode(), err.getvalue().decode("utf-8", "replace"))


def _exit_code(code: object) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")              # sys.exit("message"), as Python prints it
    return 1


def run_cli_process(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None,
                    timeout: float = 120) -> Result:
    """`smevals ARGS` as a real process of this venv's `smevals` (stdin closed)."""
    full_env = {**os.environ, **(env or {})}
    proc = subprocess.run([SMEVALS, *args], cwd=cwd, env=full_env, capture_output=True,
                          text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    return Result(proc.returncode, proc.stdout, proc.stderr)

