"""Peak memory (RSS) of commands given oversized input: the figures of issue 24 item 12.

Each case builds its hostile input in a temporary Eval, runs one `smevals` command on it and
prints the command's peak resident set size (from `wait4`, which covers the command and the
children it waited for), its exit code and its time. The target is 300 MB for every case;
nothing is asserted, but the exit code is 1 when a case is above it.

Cases:
  grade.json   a 200 MB grade.json in the store: `verify`, then `report`
  judge        a judge whose response body is 300 MB: `grade`
  usage        a runner that writes a 300 MB smevals-usage.json: `run`
  git artifact a committed Run holding a 200 MB artifact: `verify --rev HEAD`
  dry-run      `run -n 1000000 --dry-run` on a one-Task Eval
  sql CTE      an answer whose recursive WITH returns 15 MB rows until stopped: `grade`
               (sql_execution; issue 34 item 5)
  sparse file  a runner that leaves a 10 GB sparse file: `run`, then `build` (issue 34 item 5;
               before, `run` hashed it for about a minute and `build` wrote all 10 GB)

Usage: python bench/memory.py [--mb 200] [--smoke]
"""

from __future__ import annotations

import argparse
import contextlib
import http.server
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from bench._common import SMEVALS, write  # noqa: E402

TARGET_MB = 300
RUNNER = "#!/bin/sh\necho \"answer: $SMEVALS_TASK_EXPECTED\"\n"
GRADER = "checks:\n  - checker: contains\n    value: answer\n"


def peak(args: list[str], cwd: Path) -> tuple[float, int, float]:
    """(peak RSS in MB, exit code, seconds) of one smevals command."""
    start = time.perf_counter()
    proc = subprocess.Popen([SMEVALS, *args], cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1, 2):
        print(err.decode(errors="replace")[-2000:], file=sys.stderr)
    return usage.ru_maxrss / 1024, proc.returncode, time.perf_counter() - start


def make_eval(root: Path, runner: str = RUNNER, grader: str = GRADER) -> Path:
    write(root / "eval.yaml", "name: mem\n")
    write(root / "tasks" / "t1.yaml", "prompt: say the answer\nexpected: 42\n")
    write(root / "configs" / "default.yaml", "runner: ./r.sh\nmodel: m1\n")
    write(root / "configs" / "r.sh", runner, executable=True)
    write(root / "graders" / "default.yaml", grader)
    return root


def big_json(path: Path, mb: int) -> None:
    """A JSON object of `mb` MB: half one long string (a hand-edited note), half many small
    objects (the worst case for a parser). Written in pieces, so that this process stays
    small: a child's peak RSS starts from its parent's at the fork."""
    item = b'{"a": 1, "b": [1, 2, 3], "c": "x"},'
    half = mb * 1024 * 1024 // 2
    with path.open("wb") as out:
        out.write(b'{"note": "')
        for _ in range(half // (1 << 20)):
            out.write(b"x" * (1 << 20))
        out.write(b'", "items": [')
        for _ in range(half // len(item) // 4096):
            out.write(item * 4096)
        out.write(b'{}]}')


def case_grade_json(root: Path, mb: int) -> list[tuple[str, list[str]]]:
    ev = make_eval(root / "ev")
    subprocess.run([SMEVALS, "run", "-g", str(ev)], cwd=root, capture_output=True, check=True)
    grade = next((ev / "results" / "grades").rglob("grade.json"))
    grade.chmod(0o644)
    big_json(grade, mb)
    return [("verify", ["verify", str(ev)]), ("report", ["report", str(ev)])]


class BigBody(http.server.BaseHTTPRequestHandler):
    size = 0

    def do_POST(self) -> None:  # noqa: N802 (the http.server name)
        self.rfile.read(int(self.headers.get("content-length", 0)))
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(self.size))
        self.end_headers()
        chunk = b" " * (1 << 20)
        left = self.size
        with contextlib.suppress(OSError):      # smevals hangs up at its limit
            while left > 0:
                self.wfile.write(chunk[:left])
                left -= len(chunk)

    def log_message(self, *args: object) -> None:
        pass


def case_judge(root: Path, mb: int) -> list[tuple[str, list[str]]]:
    BigBody.size = mb * 1024 * 1024
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), BigBody)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    grader = (f"judge: {{model: j, base_url: '{url}', retries: 0}}\n"
              "checks:\n  - checker: llm_judge\n    rubric: Is the answer given?\n")
    ev = make_eval(root / "ev", grader=grader)
    subprocess.run([SMEVALS, "run", str(ev)], cwd=root, capture_output=True, check=True)
    return [("grade", ["grade", str(ev)])]


def case_usage(root: Path, mb: int) -> list[tuple[str, list[str]]]:
    runner = (f"#!/bin/sh\n{sys.executable} -c \"import sys; sys.path.insert(0, "
              f"'{Path(__file__).parent}'); import memory, pathlib; "
              f"memory.big_json(pathlib.Path('$SMEVALS_USAGE_FILE'), {mb})\"\necho answer\n")
    ev = make_eval(root / "ev", runner=runner)
    return [("run", ["run", str(ev)])]


def case_git_artifact(root: Path, mb: int) -> list[tuple[str, list[str]]]:
    runner = (f"#!/bin/sh\nhead -c {mb}M /dev/zero > big.bin\n"
              "echo \"answer: $SMEVALS_TASK_EXPECTED\"\n")
    ev = make_eval(root / "ev", runner=runner)
    subprocess.run([SMEVALS, "run", str(ev)], cwd=root, capture_output=True, check=True)
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "big"]):
        subprocess.run(["git", *args], cwd=root, capture_output=True, check=True)
    return [("verify --rev HEAD", ["verify", "--rev", "HEAD", str(ev)])]


def case_sql(root: Path, mb: int) -> list[tuple[str, list[str]]]:
    """An answer whose rows are `mb` MB each (15 in the figures), returned until a limit."""
    query = (f"WITH RECURSIVE r(n, b) AS (SELECT 1, zeroblob({mb * 1_000_000}) UNION ALL "
             f"SELECT n + 1, zeroblob({mb * 1_000_000}) FROM r) SELECT n, b FROM r")
    runner = f"#!/bin/sh\necho '{query}'\n"
    grader = ("checks:\n  - checker: sql_execution\n    database: db.sql\n"
              "    reference: SELECT 1\n")
    ev = make_eval(root / "ev", runner=runner, grader=grader)
    write(ev / "graders" / "db.sql", "CREATE TABLE t (x);\n")
    subprocess.run([SMEVALS, "run", str(ev)], cwd=root, capture_output=True, check=True)
    return [("grade", ["grade", str(ev)])]


def case_sparse(root: Path, size: str) -> list[tuple[str, list[str]]]:
    runner = (f"#!/bin/sh\ntruncate -s {size} big.bin\n"
              "echo \"answer: $SMEVALS_TASK_EXPECTED\"\n")
    ev = make_eval(root / "ev", runner=runner)
    return [("run", ["run", str(ev)]), ("build", ["build", str(ev), "-o", str(root / "site")])]


def case_dry_run(root: Path, n: int) -> list[tuple[str, list[str]]]:
    ev = make_eval(root / "ev")
    return [(f"run -n {n} --dry-run", ["run", "-n", str(n), "--dry-run", str(ev)])]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200, help="size of the grade.json (MB); "
                        "the judge response and usage file are 1.5x this")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, to check it runs")
    args = parser.parse_args()
    mb, big, n = (2, 3, 1000) if args.smoke else (args.mb, args.mb * 3 // 2, 1_000_000)
    row, sparse = (1, "1M") if args.smoke else (15, "10G")
    cases: list[tuple[str, Callable[[Path], list[tuple[str, list[str]]]]]] = [
        (f"{mb} MB grade.json", lambda r: case_grade_json(r, mb)),
        (f"{big} MB judge response", lambda r: case_judge(r, big)),
        (f"{big} MB usage file", lambda r: case_usage(r, big)),
        (f"{mb} MB artifact in git", lambda r: case_git_artifact(r, mb)),
        ("plan of a million Runs", lambda r: case_dry_run(r, n)),
        (f"SQL rows of {row} MB", lambda r: case_sql(r, row)),
        (f"sparse file of {sparse}", lambda r: case_sparse(r, sparse)),
    ]
    over = 0
    print(f"{'input':<26} {'command':<26} {'peak RSS':>10} {'exit':>5} {'time':>8}")
    for label, build in cases:
        with tempfile.TemporaryDirectory() as tmp:
            for name, command in build(Path(tmp)):
                rss, code, seconds = peak(command, Path(tmp))
                over += rss > TARGET_MB
                print(f"{label:<26} {name:<26} {rss:>7.0f} MB {code:>5} {seconds:>7.2f}s")
    print(f"target: every peak <= {TARGET_MB} MB; {over} above")
    return 1 if over and not args.smoke else 0


if __name__ == "__main__":
    raise SystemExit(main())
