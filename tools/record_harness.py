"""Record what the real Codex, Claude Code and Pi write, through `smevals run`, against the
scripted servers of tools/model_servers.py, as fixtures for the offline tests:

    python -m tools.record_harness [--out tests/fixtures/harness] [RUNNER...]

For each harness on PATH, and each scenario (`good`: the model writes hello.py and says it
is done; `unauthorized`: every request gets a 401; `dead`: nothing listens), it runs a
temporary Eval whose Config puts a small wrapper in front of the harness: the wrapper runs
it unchanged and keeps a copy of its stdout in the Run. The copy is written to
OUT/PROGRAM-VERSION/SCENARIO.jsonl with the Run's workspace path replaced by @WORKSPACE@
and the harness's private home by @HOME@ (the fake harness of the tests puts its own back).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from tools.harness_scripts import REAL, Real, script
from tools.model_servers import ModelServer, dead_url

STREAM = ".recorded-stream.jsonl"
PLACES = ".recorded-places.json"
WRAPPER = '''#!{python}
import json, os, subprocess, sys
real = {real!r}
if sys.argv[1:] == ["--version"]:
    os.execv(real, [real, "--version"])
with open({places!r}, "w") as f:
    json.dump({{"workspace": os.getcwd(), "home": os.environ.get("HOME", "")}}, f)
child = subprocess.Popen([real, *sys.argv[1:]], stdout=subprocess.PIPE)
with open({stream!r}, "wb") as copy:
    for line in child.stdout:
        copy.write(line)
        copy.flush()
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
sys.exit(child.wait())
'''
SCENARIOS = ("good", "unauthorized", "dead")
IDLE = {"codex": 10, "claude-code": 30, "pi": 30}   # Codex waits for a dead server for ever


def record(real: Real, scenario: str, out: Path, tmp: Path) -> Path:
    program = shutil.which(real.program)
    if program is None:
        raise SystemExit(f"{real.program} is not on PATH")
    wrapper = tmp / "bin" / real.program
    wrapper.parent.mkdir(exist_ok=True)
    wrapper.write_text(WRAPPER.format(python=sys.executable, real=program, places=PLACES,
                                      stream=STREAM))
    wrapper.chmod(0o755)
    status = 401 if scenario == "unauthorized" else None
    with ModelServer(real.protocol, script(real.runner), status=status) as server:
        url = dead_url() if scenario == "dead" else server.base_url
        ev = _eval(tmp / f"ev-{real.runner}-{scenario}", real, url, wrapper)
        subprocess.run([sys.executable, "-m", "smevals", "run", str(ev)], check=False,
                       env={**os.environ, "SCRIPTED_KEY": "sk-scripted-0123456789"},
                       stdout=subprocess.DEVNULL)
    (run_dir,) = [p.parent for p in (ev / "results").rglob("run.json")]
    places = json.loads((run_dir / PLACES).read_text())
    data = (run_dir / STREAM).read_text()
    for key, mark in (("workspace", "@WORKSPACE@"), ("home", "@HOME@")):
        for path in {places[key], os.path.realpath(places[key])}:
            if path:
                data = data.replace(path, mark)
    version = json.loads((run_dir / "run.json").read_text())["provenance"]["runner"]["version"]
    target = out / f"{real.program}-{version}" / f"{scenario}.jsonl"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(data)
    return target


def _eval(root: Path, real: Real, url: str, wrapper: Path) -> Path:
    (root / "tasks").mkdir(parents=True)
    (root / "configs").mkdir()
    (root / "eval.yaml").write_text("description: recording a harness\n")
    (root / "tasks" / "hello.yaml").write_text("prompt: Write hello.py that greets.\n")
    (root / "configs" / "default.yaml").write_text(
        f"runner: smevals:{real.runner}\nmodel: scripted-model\nexecutable: {wrapper}\n"
        f"base_url: {url}\napi_key_env: SCRIPTED_KEY\nidle_timeout: {IDLE[real.runner]}\n"
        "max_retries: 0\n")
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("tests/fixtures/harness"))
    parser.add_argument("runners", nargs="*", default=sorted(REAL))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="smevals-record-") as tmp:
        for runner in args.runners:
            for scenario in SCENARIOS:
                print(record(REAL[runner], scenario, args.out, Path(tmp)))


if __name__ == "__main__":
    main()
