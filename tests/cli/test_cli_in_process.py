"""`run_cli` runs smevals in the test's process; a user runs it as a process. For the same
commands both give the same exit code, stdout and stderr (tests/helpers/cli.py)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from tests.helpers import make_eval, run_cli, run_cli_process, write

BROKEN_TASK = "prompt: [unclosed\n"


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("both")
    make_eval(root / "ok")
    make_eval(root / "bad", tasks={"one": BROKEN_TASK})
    make_eval(root / "fails", graders={"default": "checks:\n  - checker: contains\n"
                                                  "    value: absent\n"})
    return root


COMMANDS = [
    ("--version",),
    ("--help",),
    ("run", "--help"),
    ("validate", "ok"),
    ("validate", "bad"),                       # exit 2: file, line and field
    ("run", "bad"),
    ("run", "--no-such-option", "ok"),         # a usage error: exit 2
    ("report", "missing-folder"),
    ("no-such-command",),
    ("verify", "ok"),
]


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_in_process_and_as_a_process_agree(work: Path, args: tuple[str, ...]) -> None:
    inside = run_cli(*args, cwd=work)
    outside = run_cli_process(*args, cwd=work)
    assert (inside.code, inside.out, inside.err) == (outside.code, outside.out, outside.err)


def test_a_failed_run_agrees_on_its_exit_and_its_records(tmp_path: Path) -> None:
    """Exit 1 (the evidence failed), with the same output both ways, on two copies."""
    results = []
    for way, runner in (("in", run_cli), ("out", run_cli_process)):
        make_eval(tmp_path / way / "ev", graders={"default": "checks:\n  - checker: contains\n"
                                                             "    value: absent\n"})
        res = runner("run", "ev", "-g", "-j", "1", cwd=tmp_path / way)
        out = re.sub(r"\(\d+\.\ds\) -> \S+", "(TIME) -> ID", res.out)
        results.append((res.code, out, res.err))
    assert results[0] == results[1]
    assert results[0][0] == 1
    assert results[0][1].count("failed check 'contains'") == 2


def test_the_working_folder_and_the_environment_come_back(tmp_path: Path) -> None:
    before = Path.cwd()
    write(tmp_path / "ev" / "eval.yaml", "description: x\n")
    res = run_cli("validate", "ev", cwd=tmp_path, env={"SMEVALS_STORE": str(tmp_path / "s")})
    assert (res.code, res.out) == (0, "OK: 1 eval, 0 tasks, 0 configs, 0 graders; no problems\n")
    assert Path.cwd() == before
    assert "SMEVALS_STORE" not in os.environ


def test_damage_found_by_one_command_is_not_reported_by_the_next(tmp_path: Path) -> None:
    """What a process forgets when it exits, here the damaged objects it found, belongs to
    the command (smevals/scope.py): the next in-process command starts with none."""
    damaged, clean = make_eval(tmp_path / "damaged"), make_eval(tmp_path / "clean")
    for ev in (damaged, clean):
        assert run_cli("run", "-g", str(ev)).code == 0
    output = next((damaged / "results" / "runs").rglob("output.txt"))
    output.chmod(0o644)
    output.write_text("edited to another size\n")
    first = run_cli("report", str(damaged))
    assert (first.code, "1 damaged object(s) left out" in first.err) == (0, True)
    second = run_cli("report", str(clean))
    assert (second.code, "damaged" in second.err) == (0, False)
