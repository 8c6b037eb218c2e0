"""A full disk or a read-only store is an environment problem: the store and the OS reason are
named, exit 2, no partial object is left, and the next run tops up.

Tests run as root, for whom chmod stops nothing, so the disk is made to refuse for real: a
tiny tmpfs in a private mount namespace (`unshare`), and a file size limit (RLIMIT_FSIZE,
which makes write() fail with EFBIG) where namespaces are not available."""

from __future__ import annotations

import json
import resource
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import SMEVALS, make_eval

SCRIPT = """
set -u
mount -t tmpfs -o size=256k tmpfs "$STORE" || exit 99
head -c 220000 /dev/zero > "$STORE/filler"
echo "--- full"; smevals run "$EV" -n 3 -g --store "$STORE"; echo "rc=$?"
smevals verify "$EV" --store "$STORE" >/dev/null; echo "verify=$?"
rm "$STORE/filler"
echo "--- freed"; smevals run "$EV" -n 3 -g --store "$STORE"; echo "rc=$?"
mount -o remount,ro "$STORE"
echo "--- read-only"; smevals run "$EV" -n 4 --store "$STORE"; echo "rc=$?"
smevals grade "$EV" -g other --store "$STORE"; echo "rc=$?"
find "$STORE" -name run.json | wc -l
"""


def namespaces_work() -> bool:
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(["unshare", "-rm", "sh", "-c", "mount -t tmpfs tmpfs /mnt"],
                           capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(not namespaces_work(), reason="needs unshare and mount of a tmpfs")
def test_a_full_then_read_only_store_is_named_and_the_next_run_tops_up(tmp_path: Path):
    ev = make_eval(tmp_path / "ev", graders={
        "default": "checks:\n  - checker: contains\n    value: says\n",
        "other": "checks:\n  - checker: contains\n    value: hello\n"})
    (tmp_path / "store").mkdir()
    env = {"EV": str(ev), "STORE": "store", "PATH": f"{Path(SMEVALS).parent}:/usr/bin:/bin",
           "SMEVALS_CACHE_DIR": str(tmp_path / "_cache")}
    proc = subprocess.run(["unshare", "-rm", "sh", "-c", SCRIPT], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)
    out, err = proc.stdout.splitlines(), proc.stderr.splitlines()
    assert "Internal error" not in proc.stderr, proc.stderr
    full = out[out.index("--- full"):out.index("--- freed")]
    assert full[-2:] == ["rc=2", "verify=0"], proc.stdout + proc.stderr
    assert err[0] == "Error: cannot write to store/ev/: No space left on device"
    freed = out[out.index("--- freed"):out.index("--- read-only")]
    assert freed[-2].endswith(" ok, 0 failed") and freed[-1] == "rc=0", freed
    ro = out[out.index("--- read-only"):]
    assert [line for line in ro if line.startswith("rc=")] == ["rc=2", "rc=2"], ro
    assert ro[-1] == "6"                        # 3 Runs per cell: the full disk's topped up
    assert err[1:] == ["Error: cannot write to store/ev/: Read-only file system"] * 2


def limit_file_size(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_a_write_the_os_refuses_is_named_with_its_reason(tmp_path: Path, cli):
    ev = make_eval(tmp_path / "ev")
    proc = subprocess.run([SMEVALS, "run", str(ev), "-n", "2"], cwd=tmp_path, text=True,
                          capture_output=True, timeout=60, preexec_fn=limit_file_size(600))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.splitlines()[-1] == "Error: cannot write to ev/results/: File too large"
    res = cli("verify", str(ev), cwd=tmp_path)
    assert res.code == 0 and res.out.startswith("OK: 0 object(s) verified"), res.both
    res = cli("run", str(ev), "-n", "2", cwd=tmp_path)
    assert (res.code, res.out.splitlines()[-1]) == (0, "4 ok, 0 failed")
    res = cli("report", str(ev), "--json", cwd=tmp_path)
    assert json.loads(res.out)["evals"][0]["summary"]["runs"] == 4
