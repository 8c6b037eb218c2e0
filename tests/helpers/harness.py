"""A fake coding-agent harness for the tests of `smevals:codex`, `smevals:claude-code` and
`smevals:pi`: an executable that records how it was started (argv, environment, working
folder) and replays a recorded event stream from tests/fixtures/harness/. The real
harnesses are never needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"

_SCRIPT = '''#!{python}
import json, os, resource, sys
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(),
               "address_space": resource.getrlimit(resource.RLIMIT_AS)[0]}}, f)
home = os.environ.get({home_var!r})
if home:                                  # a harness writes its session into its home
    with open(os.path.join(home, "session.jsonl"), "w") as f:
        f.write("secret session\\n")
with open("agent-made.txt", "w") as f:    # and its work into the workspace
    f.write("made by the agent\\n")
{extra}
sys.stderr.write({stderr!r})
with open({stream!r}, "rb") as f:
    sys.stdout.buffer.write(f.read())
sys.stdout.flush()
if {signal}:
    os.kill(os.getpid(), {signal})
if {sleep}:
    import time
    time.sleep({sleep})
sys.exit({code})
'''

HOME_VARS = {"codex": "CODEX_HOME", "claude": "CLAUDE_CONFIG_DIR", "pi": "PI_CODING_AGENT_DIR"}


def fake_harness(path: Path, stream: Path | bytes, record: Path, program: str = "codex",
                 code: int = 0, stderr: str = "", sleep: float = 0, signal: int = 0,
                 extra: str = "") -> Path:
    """Write the fake at `path` (executable): it replays `stream` (a fixture's path, or
    bytes written beside it) and writes what it saw to `record` (read with `seen`); then it
    kills itself with `signal`, or sleeps `sleep` seconds, or exits with `code`. `extra`:
    Python lines it runs first (a hostile harness)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(stream, bytes):
        data, stream = stream, path.with_suffix(".stream")
        stream.write_bytes(data)
    path.write_text(_SCRIPT.format(python=sys.executable, record=str(record),
                                   home_var=HOME_VARS[program], stderr=stderr,
                                   stream=str(stream), code=code, sleep=sleep,
                                   signal=signal, extra=extra))
    path.chmod(0o755)
    return path


def seen(record: Path) -> dict[str, Any]:
    """What the fake harness was started with: argv (after the program), env, cwd, and
    its address-space limit (RLIMIT_AS, bytes)."""
    loaded: dict[str, Any] = json.loads(record.read_text())
    return loaded


def fixture(name: str) -> Path:
    return FIXTURES / name
