"""A fake coding-agent harness for the tests of `smevals:codex`, `smevals:claude-code` and
`smevals:pi`: an executable that records how it was started (argv, environment, working
folder) and replays a recorded event stream from tests/fixtures/harness/ (the streams the
real CLIs wrote, in folders naming their versions, recorded by tools/record_harness.py,
and hand-written ones for what a scripted server cannot make them do). The real
harnesses are never needed."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "harness"

_SCRIPT = '''#!{python}
import json, os, resource, sys
if sys.argv[1:] == ["--version"]:
    print({version!r})
    sys.exit(0)
files = {{}}                               # the settings smevals left in its home
for top, _dirs, names in os.walk(os.environ.get("HOME", "/nonexistent")):
    for name in names:
        path = os.path.join(top, name)
        with open(path, errors="replace") as f:
            files[os.path.relpath(path, os.environ["HOME"])] = f.read()
with open({record!r}, "w") as f:
    json.dump({{"argv": sys.argv[1:], "env": dict(os.environ), "cwd": os.getcwd(),
               "address_space": resource.getrlimit(resource.RLIMIT_AS)[0],
               "files": files}}, f)
home = os.environ.get({home_var!r})
if home:                                  # a harness writes its session into its home
    with open(os.path.join(home, "session.jsonl"), "w") as f:
        f.write("secret session\\n")
with open("agent-made.txt", "w") as f:    # and its work into the workspace
    f.write("made by the agent\\n")
{extra}
sys.stderr.write({stderr!r})
with open({stream!r}, "rb") as f:             # a recorded stream's own places put back
    sys.stdout.buffer.write(f.read().replace(b"@WORKSPACE@", os.getcwd().encode())
                            .replace(b"@HOME@", os.environ.get("HOME", "").encode()))
sys.stdout.flush()
if {repeat!r}:                            # a line said again and again (a retry notice)
    import time
    for _ in range(3000):
        sys.stdout.write({repeat!r})
        sys.stdout.flush()
        time.sleep(0.2)
if {signal}:
    os.kill(os.getpid(), {signal})
if {sleep}:
    import time
    time.sleep({sleep})
sys.exit({code})
'''

HOME_VARS = {"codex": "CODEX_HOME", "claude": "CLAUDE_CONFIG_DIR", "pi": "PI_CODING_AGENT_DIR"}


VERSION = "fake-harness 9.8.7"


def fake_harness(path: Path, stream: Path | bytes, record: Path, program: str = "codex",
                 code: int = 0, stderr: str = "", sleep: float = 0, signal: int = 0,
                 extra: str = "", version: str = VERSION, repeat: str = "") -> Path:
    """Write the fake at `path` (executable): it replays `stream` (a fixture's path, or
    bytes written beside it) and writes what it saw to `record` (read with `seen`); then it
    kills itself with `signal`, or sleeps `sleep` seconds, or exits with `code`. `extra`:
    Python lines it runs first (a hostile harness); `repeat`: a line it then writes every
    0.2 s, 3,000 times. With the one argument `--version` it prints `version` and exits."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(stream, bytes):
        data, stream = stream, path.with_suffix(".stream")
        stream.write_bytes(data)
    path.write_text(_SCRIPT.format(python=sys.executable, record=str(record),
                                   home_var=HOME_VARS[program], stderr=stderr,
                                   stream=str(stream), code=code, sleep=sleep,
                                   signal=signal, extra=extra, version=version,
                                   repeat=repeat))
    path.chmod(0o755)
    return path


def seen(record: Path) -> dict[str, Any]:
    """What the fake harness was started with: argv (after the program), env, cwd, its
    address-space limit (RLIMIT_AS, bytes), and the files in its home (`files`: path
    relative to HOME -> text)."""
    loaded: dict[str, Any] = json.loads(record.read_text())
    return loaded


def fixture(name: str) -> Path:
    return FIXTURES / name


def recorded() -> list[Path]:
    """The streams recorded from the real CLIs (`PROGRAM-VERSION/SCENARIO.jsonl`)."""
    return sorted(FIXTURES.glob("*-*/*.jsonl"))
