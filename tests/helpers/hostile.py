"""An Eval with hidden tests, and code that tries to get out of its view of the filesystem
(tests/security/test_view*.py): read the hidden tests by a relative path, by their
absolute path and by walking `/`, list the store, connect to Unix sockets bound outside.

`hostile_eval` builds the Eval: a Task whose workspace holds a stub `impl.py`, its hidden
unittest file in `hidden/impl/` (holding MARK), a `command` Check running it, and an
`smevals:agent` Config replaying recorded sessions. `PROBE` is a Python program that
tries everything and prints one line, `PROBE {json}`; `probed` reads it back.
"""

from __future__ import annotations

import json
import socket
import sys
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from tests.helpers.evals import make_eval

MARK = "HIDDEN-TESTS-7f3a9c"
HIDDEN_TEST = f"""
# {MARK}: the hidden test, never in the agent's sight
import unittest

from impl import answer


class TestAnswer(unittest.TestCase):
    def test_answer(self):
        self.assertEqual(answer(), 42)
"""
TASK = "prompt: Make answer() return 42.\nworkspace: workspaces/impl\n" \
       "grading:\n  hidden_tests: hidden/impl\n"
GRADER = """checks:
  - checker: command
    name: hidden-tests
    command: python -m unittest discover -s . -p "test_*.py"
    files: {task: hidden_tests}
    timeout: 60
"""
CONFIG = "runner: smevals:agent\nbackend: replay\nsessions: sessions\nmax_turns: 10\n"

PROBE = '''
import json, os, socket, time
HIDDEN, STORE, SOCKETS, MARK = {hidden!r}, {store!r}, {sockets!r}, {mark!r}


def opened(path):
    try:
        with open(path, "rb") as handle:
            return "the hidden tests" if MARK.encode() in handle.read() else "read"
    except OSError as error:
        return error.strerror


def listed(path):
    try:
        return sorted(os.listdir(path))
    except OSError as error:
        return error.strerror


def found():
    hits, end, seen = [], time.monotonic() + 40, 0
    for here, dirs, files in os.walk("/"):
        if here == "/":
            dirs[:] = [d for d in dirs if d not in ("proc", "sys", "usr")]
        hits += [os.path.join(here, f) for f in files if f == "test_hidden_impl.py"]
        seen += 1
        if time.monotonic() > end or seen > 1000000:
            return hits + ["(stopped)"]
    return sorted(hits)


def connect(path):
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(path)
            return "connected"
        except OSError as error:
            return error.strerror


seen = {{"cwd": os.getcwd(), "home": os.environ.get("HOME"),
         "relative": sorted({{opened("../" * up + "hidden/impl/test_hidden_impl.py")
                             for up in range(1, 7)}}),
         "absolute": opened(HIDDEN), "find": found(), "store": listed(STORE),
         "sockets": [connect(path) for path in SOCKETS]}}
print("PROBE " + json.dumps(seen, sort_keys=True), flush=True)
'''

# What the probe must find in its view: nothing of the Eval, the store or the sockets.
NOTHING = {"relative": ["No such file or directory"], "absolute": "No such file or directory",
           "find": [], "store": "No such file or directory",
           "sockets": ["No such file or directory", "No such file or directory"]}


def hostile_eval(root: Path, configs: dict[str, str] | None = None,
                 graders: dict[str, str] | None = None, files: dict[str, str] | None = None,
                 task: str = TASK) -> Path:
    """The Eval (see the module's docstring) at `root`."""
    return make_eval(root, tasks={"impl": task},
                     configs={"default": CONFIG} if configs is None else configs,
                     graders={"default": GRADER} if graders is None else graders,
                     files={"workspaces/impl/impl.py": "def answer():\n    return 0\n",
                            "hidden/impl/test_hidden_impl.py": HIDDEN_TEST, **(files or {})})


def probe(ev: Path, sockets: list[str]) -> str:
    """PROBE for the Eval `ev` and these sockets."""
    return PROBE.format(hidden=str(ev / "hidden" / "impl" / "test_hidden_impl.py"),
                        store=str(ev / "results"), sockets=sockets, mark=MARK)


def probed(text: str) -> dict[str, Any]:
    """What the probe printed in `text` (its `PROBE` line)."""
    [line] = [line for line in text.splitlines() if line.startswith("PROBE ")]
    found: dict[str, Any] = json.loads(line[len("PROBE "):])
    return found


def session(ev: Path, model: str, lines: list[dict[str, Any]]) -> None:
    """The recorded session of `model` on the Task."""
    path = ev / "configs" / "sessions" / model / "impl.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


def bash(*commands: str) -> list[dict[str, Any]]:
    """A session calling `bash` once per command, then answering."""
    return [*({"tool_calls": [{"name": "bash", "arguments": {"command": c}}]}
              for c in commands), {"content": "done"}]


HONEST: list[dict[str, Any]] = [{"tool_calls": [{"name": "write_file", "arguments": {
              "path": "impl.py", "content": "def answer():\n    return 42\n"}}]},
          {"tool_calls": [{"name": "bash", "arguments": {
              "command": f"{sys.executable} -c 'import impl; print(impl.answer())'; pwd"}}]},
          {"content": "answer() returns 42."}]


@contextmanager
def host_sockets() -> Iterator[list[str]]:
    """Two listening Unix sockets of the host: one in its /tmp, one in a folder standing
    for /run (short paths: a socket's path is at most 107 bytes)."""
    with ExitStack() as stack:
        paths = []
        for prefix in ("smevals-tmp-", "smevals-run-"):
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix=prefix, dir="/tmp"))
            sock = stack.enter_context(socket.socket(socket.AF_UNIX))
            sock.bind(f"{folder}/app.sock")
            sock.listen(8)
            paths.append(f"{folder}/app.sock")
        yield paths
