"""A writer killed with SIGKILL leaves no visible object; verify reports its staging folder
and gc removes it. A live writer's staging folder is neither reported nor removed."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from smevals.store.read import Store
from tests.helpers.store import python

STAGE_AND_WAIT = r"""
import os, sys, time
from pathlib import Path
from smevals.store.write import host_name
from smevals.store.read import Store
from tests.helpers.store import run_record
staging = Store(Path(sys.argv[1])).stage("run")
with open(staging.dir / "big.bin", "wb") as handle:
    handle.write(os.urandom(1 << 20) * 16)
print(staging.dir.name, flush=True)
time.sleep(120)
staging.commit(run_record(), ["t1", "c", "m"])
"""

WRITE_FOREVER = r"""
import os, sys
from pathlib import Path
from smevals.store.write import host_name
from smevals.store.read import Store
from tests.helpers.store import run_record
store = Store(Path(sys.argv[1]))
i = 0
print("go", flush=True)
while True:
    staging = store.stage("run")
    (staging.dir / "blob.bin").write_bytes(os.urandom(1 << 18))
    staging.commit(run_record(i), ["t1", "c", "m"])
    i += 1
"""

ROOT = Path(__file__).resolve().parents[2]


def start(code: str, root: Path) -> subprocess.Popen[str]:
    return python(code, str(root), stdout=subprocess.PIPE, cwd=ROOT)


def kill(proc: subprocess.Popen[str]) -> None:
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


def test_a_writer_killed_before_commit_leaves_only_a_staging_leftover(cli, tmp_path: Path):
    root = tmp_path / "st"
    proc = start(STAGE_AND_WAIT, root)
    assert proc.stdout is not None
    name = proc.stdout.readline().strip()
    assert name.startswith("run-") and f"-{proc.pid}-" in name

    live = cli("verify", "st", cwd=tmp_path)          # a write in progress is no damage
    assert (live.code, live.out) == (0, "OK: 0 object(s) verified, no problems\n")
    spared = cli("gc", "st", "--grace", "0", cwd=tmp_path)
    assert (spared.code, spared.out) == (0, "0 item(s) removed\n")

    kill(proc)
    assert Store(root).runs() == [] and not (root / "runs").exists()
    res = cli("verify", "st", cwd=tmp_path)
    assert res.code == 1
    assert res.out == f"st/.staging/{name}: staging leftover of an interrupted write " \
                      "(`smevals gc` removes it)\n"
    dry = cli("gc", "st", "--dry-run", cwd=tmp_path)
    assert dry.out == f"would remove staging leftover (its process is gone): " \
                      f"st/.staging/{name}\n1 item(s) would be removed\n"
    assert (root / ".staging" / name).exists()
    gone = cli("gc", "st", cwd=tmp_path)              # the default grace is an hour
    assert (gone.code, gone.out) == (0, f"removed staging leftover (its process is gone): "
                                        f"st/.staging/{name}\n1 item(s) removed\n")
    assert os.listdir(root / ".staging") == [".gitignore"]
    assert cli("verify", "st", cwd=tmp_path).out == "OK: 0 object(s) verified, no problems\n"


def test_a_writer_killed_at_any_moment_leaves_only_complete_objects(cli, tmp_path: Path):
    root = tmp_path / "st"
    for delay in (0.3, 0.55, 0.8):
        proc = start(WRITE_FOREVER, root)
        assert proc.stdout is not None
        proc.stdout.readline()
        time.sleep(delay)
        kill(proc)
    res = cli("verify", "st", cwd=tmp_path)
    damage = [line for line in res.out.splitlines() if "staging leftover" not in line]
    assert damage == [] or damage[0].startswith("OK:"), res.out
    cli("gc", "st", cwd=tmp_path)
    res = cli("verify", "st", cwd=tmp_path)
    assert res.code == 0 and res.out.startswith("OK: ")
    assert len(Store(root).runs()) == int(res.out.split()[1]) > 0


def test_an_old_leftover_of_another_host_goes_after_the_grace_period(cli, tmp_path: Path):
    folder = tmp_path / "st" / ".staging" / "grade-elsewhere-4242-0123456789ab"
    folder.mkdir(parents=True)
    (folder / "part.txt").write_text("x")
    kept = cli("gc", "st", cwd=tmp_path)     # whether its writer lives, only time can tell
    assert kept.out == "0 item(s) removed\n"
    time.sleep(1.1)
    res = cli("gc", "st", "--grace", "1", cwd=tmp_path)
    assert res.out == "removed staging leftover (unchanged for more than 1 s): " \
                      "st/.staging/grade-elsewhere-4242-0123456789ab\n1 item(s) removed\n"
    assert not folder.exists()


WRITE_MANY = r"""
import sys
from pathlib import Path
from smevals.store.write import host_name
from smevals.store.read import Store
from tests.helpers.store import run_record
store, first = Store(Path(sys.argv[1])), int(sys.argv[2])
print("ready", flush=True)
sys.stdin.readline()
for i in range(first, first + int(sys.argv[3])):
    staging = store.stage("run")
    (staging.dir / "output.txt").write_text(f"output {i}\n")
    staging.commit(run_record(i, task=f"t{i % 7}"), [f"t{i % 7}", "c", "m"])
"""


def test_two_processes_writing_500_objects_each_at_once(cli, tmp_path: Path):
    root = tmp_path / "st"
    procs = [python(WRITE_MANY, str(root), str(first), "500", stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, cwd=ROOT) for first in (0, 500)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:                         # release both at the same moment
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        assert proc.wait(timeout=120) == 0
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.close()
        proc.stdout.close()
    assert len(Store(root).runs()) == 1000
    res = cli("verify", "st", cwd=tmp_path)
    assert (res.code, res.out) == (0, "OK: 1000 object(s) verified, no problems\n")


def test_two_processes_writing_the_same_objects_make_one_copy(tmp_path: Path):
    root = tmp_path / "st"
    procs = [python(WRITE_MANY, str(root), "0", "100", stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE, cwd=ROOT) for _ in range(2)]
    for proc in procs:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    out = [proc.communicate("go\n", timeout=120) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0], out
    assert len(Store(root).runs()) == 100
    assert os.listdir(root / ".staging") == [".gitignore"]
