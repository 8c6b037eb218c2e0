"""The `qa` Eval graded by checks that pass with partial scores, committed in git."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import make_eval, run_cli
from tests.helpers.qa import commit, git

RUNNER = """\
#!/bin/sh
# alpha fails t6, t7, t8 (5/8 pass); beta fails t8 (7/8 pass)
case "$SMEVALS_MODEL:$SMEVALS_TASK" in
  alpha:t6|alpha:t7|alpha:t8|beta:t8) echo "$SMEVALS_TASK: ok" ;;
  *) echo "$SMEVALS_TASK: yes ok" ;;
esac
"""


UNSCORED_THEN_SCORED = """\
checks:
  - checker: contains
    value: "yes"
  - checker: contains
    value: [ok]
"""


FAILS_WITH_SCORE_1 = """\
checks:
  - checker: contains
    value: ["yes"]
  - checker: not_contains
    fragments: ["t1:"]
  - checker: contains
    value: [ok]
"""


NOTE = "the Checks' scores, although check 'contains' failed"


NOTE_T1 = "the Checks' scores, although check 'not_contains' failed"


ENV = {"SOURCE_DATE_EPOCH": "1767322800"}


def scores_repo(repo: Path) -> Path:
    """`qa`: 8 tasks, models alpha and beta, graded by UNSCORED_THEN_SCORED and committed.
    Returns the Eval folder."""
    tasks = {f"t{i}": f"prompt: task {i}\n" for i in range(1, 9)}
    ev = make_eval(repo / "qa", name="qa", tasks=tasks,
                   configs={"default": "runner: ./run.sh\nmodel: alpha\n"},
                   graders={"default": UNSCORED_THEN_SCORED}, files={"configs/run.sh": RUNNER})
    git(repo, "init", "-q")
    made = run_cli("run", str(ev), "-m", "alpha", "-m", "beta", "-g", env=ENV)
    assert made.code == 1, made.both                 # some Runs graded fail
    commit(repo, "graded")
    return ev
