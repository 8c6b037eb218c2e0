"""What the tests share: running the CLI (in this process or as a real one), building Evals,
git, and reading the records a command left. Test modules import from here (or from the
conftest fixtures), never from another test module (tests/project/test_layout_of_tests.py)."""

from tests.helpers.cli import SMEVALS, Result, reset_process_state, run_cli, run_cli_process
from tests.helpers.evals import ECHO_RUNNER, make_eval, write
from tests.helpers.git import GIT_ENV, git
from tests.helpers.records import grade_records, grades_by_task
from tests.helpers.waiting import wait_for

__all__ = ["ECHO_RUNNER", "GIT_ENV", "SMEVALS", "Result", "git", "grade_records",
           "grades_by_task", "make_eval", "reset_process_state", "run_cli", "run_cli_process",
           "wait_for", "write"]
