"""The order in which a write reaches the disk, read from the system calls of a real
`smevals run` (strace): every file and folder of an object is fsynced before the object is
renamed into place, and the folders it lands in are fsynced once per batch, before the
command ends (docs/reliability.md, "Writing: atomic, crash-safe, concurrent")."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers import SMEVALS, make_eval

pytestmark = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")

RUNNER = """#!/bin/sh
mkdir -p plots
echo "a plot" > plots/p.txt
echo "$SMEVALS_MODEL: $SMEVALS_PROMPT"
"""
FSYNC = re.compile(r"^(\d+) +fsync\(\d+<(.*)>(\) += 0| <unfinished \.\.\.>)$")
RESUMED = re.compile(r"^(\d+) +<\.\.\. fsync resumed>\) += 0")
# rename("a", "b"), or renameat(3</dir/a>, "a", 4</dir/b>, "b") between folder descriptors
RENAME = re.compile(r'^\d+ +rename(?:at2?)?\((?:AT_FDCWD, |\d+<([^>]*)>, )?"([^"]+)", '
                    r'(?:AT_FDCWD, |\d+<([^>]*)>, )?"([^"]+)"')


def traced_run(ev: Path, log: Path) -> list[str]:
    proc = subprocess.run(
        ["strace", "-f", "-y", "-qq", "-e", "trace=fsync,rename,renameat,renameat2",
         "-o", str(log), SMEVALS, "run", str(ev), "-n", "4", "-j", "4"],
        capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines()


def _joined(folder: str | None, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def fsyncs_and_renames(lines: list[str]) -> tuple[list[str], list[tuple[int, str, str]]]:
    """The paths whose fsync ended, in the order they ended; and for each rename out of the
    staging area, how many fsyncs had ended when it began, its source and its target."""
    synced: list[str] = []
    under_way: dict[str, str] = {}                 # thread -> path its fsync is syncing
    renames: list[tuple[int, str, str]] = []
    for line in lines:
        if m := FSYNC.match(line):
            if "unfinished" in m.group(3):
                under_way[m.group(1)] = m.group(2)
            else:
                synced.append(m.group(2))
        elif m := RESUMED.match(line):
            synced.append(under_way.pop(m.group(1)))
        elif m := RENAME.match(line):
            source, target = _joined(m.group(1), m.group(2)), _joined(m.group(3), m.group(4))
            if "/.staging/" in source:
                renames.append((len(synced), source, target))
    return synced, renames


def test_an_object_is_on_disk_before_its_rename_and_its_folder_before_the_command_ends(
        tmp_path: Path):
    ev = make_eval(tmp_path / "ev", tasks={"t1": "prompt: hi\n"},
                   files={"configs/echo.sh": RUNNER})
    synced, renames = fsyncs_and_renames(traced_run(ev, tmp_path / "trace"))
    runs = sorted(p.parent for p in (ev / "results" / "runs").rglob("run.json"))
    assert len(runs) == 4 and len(renames) == 4
    for at, source, dest in renames:
        before = set(synced[:at])
        inside = sorted(Path(dest).rglob("*"))
        assert {p.name for p in inside} == {"output.txt", "plots", "p.txt", "run.json"}
        for path in [Path(dest), *inside]:
            assert source + str(path)[len(dest):] in before, f"{path} not fsynced before rename"
    # the folder the Runs landed in is fsynced after the last rename into it, and once for
    # the four Runs rather than once per Run; the folders made for it after the first one
    cell = runs[0].parent
    assert cell in [Path(p) for p in synced[max(at for at, _, _ in renames):]]
    assert [Path(p) for p in synced].count(cell) < len(runs)
    after_first = [Path(p) for p in synced[min(at for at, _, _ in renames):]]
    assert cell.parent in after_first and cell.parent.parent in after_first
