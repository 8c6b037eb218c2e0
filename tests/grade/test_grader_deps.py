"""Files a checker program reads from its Eval are part of the grader version: a Python
module it imports, a shell file it sources, a file its Check declares with `depends:`.
In the user's flow: commit, edit the dependency, `smevals grade` grades again with a new
version, `smevals diff HEAD` names the file; then both directions of `diff` between the
two commits read each side's dependency from that side's revision (never the working
tree's copy)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import ECHO_RUNNER, git, make_eval, run_cli

TASKS = {"short": "prompt: hi\n", "long": "prompt: a much longer prompt\n"}

CHECK_PY = """#!/usr/bin/env python3
import os
import sys

from rules import MAX_LEN

with open(os.path.join(os.environ["SMEVALS_RUN_DIR"], "output.txt")) as f:
    sys.exit(len(f.read()) > MAX_LEN)
"""
CHECK_SOURCES = """#!/bin/sh
. "$(dirname "$0")/lib.sh"
[ "$(wc -c < "$SMEVALS_RUN_DIR/output.txt")" -le "$MAX_LEN" ]
"""
CHECK_READS = """#!/bin/sh
[ "$(wc -c < "$SMEVALS_RUN_DIR/output.txt")" -le "$(cat "$SMEVALS_EVAL_DIR/data/limit.txt")" ]
"""

# how the checker gets its limit: (grader, files, the dependency, its text with a limit)
FLOWS = {
    "python import": ("checks:\n  - checker: ./check.py\n",
                      {"graders/check.py": CHECK_PY}, "graders/rules.py", "MAX_LEN = {}\n"),
    "shell source": ("checks:\n  - checker: ./check.sh\n",
                     {"graders/check.sh": CHECK_SOURCES}, "graders/lib.sh", "MAX_LEN={}\n"),
    "depends glob": ("checks:\n  - checker: ./check.sh\n    depends: ../data/*.txt\n",
                     {"graders/check.sh": CHECK_READS}, "data/limit.txt", "{}\n"),
}


def grade(repo: Path) -> tuple[str, str]:
    """`smevals grade`: the version it graded with and its output."""
    res = run_cli("grade", "ev", cwd=repo)
    assert res.code in (0, 1), res.err
    (version,) = re.findall(r"grading \d+ Run\(s\) with grader version (\w+)", res.out)
    return version, res.out


@pytest.mark.parametrize("flow", list(FLOWS))
def test_editing_a_dependency_makes_a_new_version(tmp_path: Path, flow: str) -> None:
    grader, files, dep, text = FLOWS[flow]
    repo = tmp_path / "repo"
    make_eval(repo / "ev", tasks=TASKS, graders={"default": grader},
              files={"configs/echo.sh": ECHO_RUNNER, **files, dep: text.format(100)})
    git(repo, "init", "-q")
    assert run_cli("run", "ev", "-g", cwd=repo).code == 0
    version_a, out = grade(repo)
    assert "Skipped 2 Run(s) already graded by this grader version" in out
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a")

    (repo / "ev" / dep).write_text(text.format(20))         # "m says: hi" fits, the other not
    version_b, out = grade(repo)
    assert version_b != version_a
    assert "ev: grading 2 Run(s) with grader version" in out
    res = run_cli("diff", "HEAD", "ev", cwd=repo)
    assert res.code == 0, res.err
    assert (f"- Grader: default, version {version_a} in A, {version_b} in B "
            f"(changed: {dep})\n") in res.out
    assert "- Flips: 1 pass -> fail, 0 fail -> pass\n" in res.out
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "b")

    (repo / "ev" / dep).write_text(text.format(5))           # the working tree: no side's
    assert grade(repo)[0] not in (version_a, version_b)
    for revs, versions in ((("HEAD~1", "HEAD"), (version_a, version_b)),
                           (("HEAD", "HEAD~1"), (version_b, version_a))):
        res = run_cli("diff", *revs, "ev", "--format", "json", cwd=repo)
        assert res.code == 0, res.err
        (entry,) = json.loads(res.out)["evals"]
        assert (entry["version_a"], entry["version_b"]) == versions
        assert entry["version_changed_files"] == [dep]
        assert [(f["task"], f["direction"]) for f in entry["flips"]] == [
            ("long", "pass->fail" if revs[0] == "HEAD~1" else "fail->pass")]
    for rev, version in (("HEAD~1", version_a), ("HEAD", version_b)):
        res = run_cli("report", "ev", "--rev", rev, "--format", "json", cwd=repo)
        assert json.loads(res.out)["evals"][0]["grader_version"] == version, res.err


BAD_DEPENDS = """checks:
  - checker: contains
    value: says
    depends: ../data/*.csv
  - checker: contains
    value: says
    depends:
      - ../data/*.txt
      - /etc/passwd
      - ../../elsewhere/*.py
      - "**/*.json"
"""


def test_validate_refuses_depends_globs_that_match_nothing_or_leave_the_eval(
        tmp_path: Path) -> None:
    ev = make_eval(tmp_path / "ev", graders={"default": BAD_DEPENDS},
                   files={"configs/echo.sh": ECHO_RUNNER, "data/limit.txt": "3\n",
                          "results/runs/x.json": "{}\n", "graders/.hidden/a.json": "{}\n"})
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "x.py").write_text("")
    res = run_cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert res.err == (
        "ev/graders/default.yaml:4:14: checks[0].depends: '../data/*.csv' matches no file "
        "(globs are relative to the grader's folder, ev/graders/)\n"
        "ev/graders/default.yaml:9:9: checks[1].depends[1]: '/etc/passwd' is an absolute path: "
        "give a glob relative to the grader's folder\n"
        "ev/graders/default.yaml:10:9: checks[1].depends[2]: '../../elsewhere/*.py' leads "
        "outside the Eval folder\n"
        "ev/graders/default.yaml:11:9: checks[1].depends[3]: '**/*.json' matches no file "
        "(globs are relative to the grader's folder, ev/graders/)\n"
        "4 problems found\n"), res.err
    res = run_cli("grade", "ev", cwd=tmp_path)
    assert res.code == 2 and "checks[0].depends: '../data/*.csv' matches no file" in res.err
    (ev / "graders" / "default.yaml").write_text("checks:\n  - checker: contains\n"
                                                 "    depends: []\n    value: says\n")
    res = run_cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, "ev/graders/default.yaml:3:14: checks[0].depends: "
                                      "invalid value a list\n1 problem found\n")


# --- the exact rule of what is found (no process: the files a version covers) ----------

MAIN_PY = """#!/usr/bin/env -S python3 -u
import json, os                         # the standard library: not in the Eval
import helpers                          # graders/helpers.py
from pkg import sub                     # graders/pkg/__init__.py, graders/pkg/sub.py
from pkg.deep import thing              # graders/pkg/deep/__init__.py, .../thing.py
from . import dotted                    # graders/dotted.py
import outside, fifo, missing, numpy    # a link out of the Eval, a FIFO, absent, third-party

def later():
    import lazy                         # graders/lazy.py
"""
FILES = {
    "graders/main": MAIN_PY,
    "graders/helpers.py": "import helpers\nimport main\n",   # itself, and the program
    "graders/pkg/__init__.py": "",
    "graders/pkg/sub.py": "from .inner import X\nfrom .. import up\n",
    "graders/pkg/inner.py": "import notes\n",      # absolute: looked up beside the program
    "graders/pkg/deep/__init__.py": "",
    "graders/pkg/deep/thing.py": "",
    "graders/pkg/unused.py": "",
    "graders/up.py": "",
    "graders/notes.py": "this is not Python (\n",  # parses as nothing: no dependencies
    "graders/dotted.py": "",
    "graders/lazy.py": "",
    "graders/check.sh": """#!/bin/bash
        source ./lib.sh
        . "$(dirname "$0")"/more.sh   # a comment
        . "$SMEVALS_EVAL_DIR/shared/env.sh";
        . $HOME/profile.sh
        . /etc/profile
        . ./*.sh
        echo . ./never.sh
        """,
    "graders/lib.sh": ". ${0%/*}/deeper.sh\n",
    "graders/more.sh": "", "graders/deeper.sh": "", "graders/never.sh": "",
    "shared/env.sh": "",
    "graders/plain": "#!/bin/sh\nimport helpers\n. ./none.sh\n",
    "data/a.txt": "", "data/sub/b.txt": "", "data/__pycache__/c.txt": "",
    "data/.hidden/d.txt": "", "results/runs/e.txt": "",
}
GRADER = """checks:
  - checker: ./main
  - checker: ./check.sh
  - checker: contains
    value: x
    depends: [../data/**, ../results/**/*.txt, "*.yaml", main, helpers.py]
"""


def test_what_a_version_covers(tmp_path: Path) -> None:
    import os

    from smevals.evaldef.load import load_eval
    from smevals.grade.version import version_files

    ev = make_eval(tmp_path / "ev", graders={"default": GRADER}, files=FILES)
    (tmp_path / "elsewhere.py").write_text("")
    (ev / "graders" / "outside.py").symlink_to(tmp_path / "elsewhere.py")
    os.mkfifo(ev / "graders" / "fifo.py")
    files = version_files(load_eval(ev).graders["default"])
    assert sorted(files) == [
        "data/a.txt", "data/sub/b.txt", "graders/check.sh", "graders/deeper.sh",
        "graders/default.yaml", "graders/dotted.py", "graders/helpers.py", "graders/lazy.py",
        "graders/lib.sh", "graders/main", "graders/more.sh", "graders/notes.py",
        "graders/pkg/__init__.py", "graders/pkg/deep/__init__.py",
        "graders/pkg/deep/thing.py", "graders/pkg/inner.py", "graders/pkg/sub.py",
        "graders/up.py", "shared/env.sh", "smevals built-ins"]
