"""The shortcuts of `run -g` (issue 38) keep the hostile-file guarantees. A Run graded as it
is made is graded from the copy made as it was sealed (no claim, no re-read), and placed with
its Grade by the committer: its checkers must see exactly what `grade` would see of the Run
once stored (its checked private copy), whatever the runner left, and nothing the runner did
after its files were hashed.

Every command runs as a real process with a timeout, so a FIFO that blocks fails the test."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.helpers import make_eval

QUICK = 60

# Describes the Run's folder as the checker sees it, every name with its kind and content;
# passes when it sees the answer.
DESCRIBE = r"""#!/bin/sh
cd "$SMEVALS_RUN_DIR" || exit 3
seen=$(find . -mindepth 1 | LC_ALL=C sort | while read -r p; do
  if [ -L "$p" ]; then echo "$p link $(readlink "$p")"
  elif [ -p "$p" ]; then echo "$p fifo"
  elif [ -d "$p" ]; then echo "$p dir"
  else echo "$p file $(head -c 40 "$p" | tr '\n' '|')"; fi
done | tr '\n' ';')
if grep -q answer output.txt; then ok=true; else ok=false; fi
printf '{"ok": %s, "notes": "%s"}\n' "$ok" "$seen"
"""


def hostile_eval(root: Path, outside: Path) -> Path:
    runner = (f"#!/bin/sh\necho answer\nln '{outside}/kept' hard.txt\n"
              f"ln -s '{outside}/secret' link\nmkfifo pipe\nmkdir sub\n"
              "printf 'deep\\n' > sub/deep.txt\n")
    return make_eval(root, tasks={"t": "prompt: p\n"},
                     configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                     graders={"default": "checks:\n  - checker: ./describe.sh\n"},
                     files={"configs/r.sh": runner, "graders/describe.sh": DESCRIBE})


def checks_of(ev: Path) -> list[dict[str, Any]]:
    (grade,) = (ev / "results" / "grades").rglob("grade.json")
    record = json.loads(grade.read_text())
    return [{k: v for k, v in check.items() if k != "seconds"} for check in record["checks"]]


def test_run_g_grades_what_grade_would_read_of_the_stored_run(cli, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept").write_text("kept\n")
    (outside / "secret").write_text("SECRET\n")
    together = hostile_eval(tmp_path / "together", outside)
    res = cli("run", str(together), "-g", timeout=QUICK)
    assert res.code == 0, res.both
    apart = hostile_eval(tmp_path / "apart", outside)
    assert cli("run", str(apart), timeout=QUICK).code == 0
    assert cli("grade", str(apart), timeout=QUICK).code == 0
    seen = checks_of(together)
    assert seen == checks_of(apart)
    notes = seen[0]["details"]["output"]
    assert notes.startswith('{"ok": true, "notes": "./hard.txt file kept|;./link link ')
    assert "./output.txt file answer|;./run.json file {" in notes
    assert "./sub dir;./sub/deep.txt file deep|;" in notes
    assert "SECRET" not in notes and "pipe" not in notes and seen[0]["ok"] is True
    assert (outside / "kept").stat().st_nlink == 1          # the store holds a copy of its own
    assert cli("verify", str(together), timeout=QUICK).code == 0


def test_what_the_runner_leaves_running_cannot_change_the_graded_copy(cli,
                                                                      tmp_path: Path) -> None:
    """A process the runner left behind is ended before the Run is sealed: the copy graded
    and the Run stored are the answer the runner gave, never a later rewrite."""
    runner = ("#!/bin/sh\necho answer\n"
              "(sleep 1; echo rewritten > output.txt; echo late > late.txt) &\n")
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   graders={"default": "checks:\n  - checker: ./describe.sh\n"},
                   files={"configs/r.sh": runner, "graders/describe.sh": DESCRIBE})
    res = cli("run", str(ev), "-g", timeout=QUICK)
    assert res.code == 0, res.both
    import time

    time.sleep(1.5)                                 # past the moment it would have written
    (folder,) = (ev / "results" / "runs").glob("*/*/*/*")
    assert (folder / "output.txt").read_text() == "answer\n"
    assert not (folder / "late.txt").exists()
    assert checks_of(ev)[0]["details"]["output"].startswith(
        '{"ok": true, "notes": "./output.txt file answer|;./run.json file {')
    assert cli("verify", str(ev), timeout=QUICK).code == 0


def test_a_run_damaged_after_run_g_is_left_out_by_the_next_grade(cli, tmp_path: Path) -> None:
    """The Grade placed with the Run is of the bytes sealed; an edit of the stored Run made
    later is damage that `grade` and `report` name, never a Grade counted for it."""
    ev = make_eval(tmp_path / "ev", tasks={"t": "prompt: p\n"},
                   configs={"default": "runner: ./r.sh\nmodel: m1\n"},
                   graders={"default": "checks:\n  - checker: ./describe.sh\n"},
                   files={"configs/r.sh": "#!/bin/sh\necho answer\n",
                          "graders/describe.sh": DESCRIBE})
    assert cli("run", str(ev), "-g", timeout=QUICK).code == 0
    (folder,) = (ev / "results" / "runs").glob("*/*/*/*")
    folder.chmod(0o755)
    (folder / "output.txt").chmod(0o644)
    (folder / "output.txt").write_text("answer, and more\n")
    shutil.rmtree(ev / "results" / "grades")
    res = cli("grade", str(ev), timeout=QUICK)
    assert "Graded 0 Run(s)" in res.out
    assert "output.txt: size changed: 7 bytes recorded, 17 found" in res.err
    assert not (ev / "results" / "grades").exists()
    assert os.listdir(ev / "results" / "runs")
