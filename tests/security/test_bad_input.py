"""Bad input is exit 2, never exit 3 (issue 24, items 9 and 10): each hostile authoring file
goes through `validate` and `run` (and `grade` or `test` where they read it), each hostile
option through the command that takes it. Every one must exit 2 with the exact file, line
and field (or the option) in its message, and no traceback anywhere.

The commands run in-process through `smevals.cli.main`, the console entry point's own
wrapper (its mapping of exceptions to exit codes is what a user gets), with click's
CliRunner capturing the output. Every test fails on 6a1d8c1: most rows exited 3 there, or 0
having ignored or silently changed the value (`--timeout nan`, `.inf` recorded as null,
`creates: [/etc/passwd]` passing), the others named no option or field."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.helpers import make_eval, run_cli

NOT_FINITE = ("is not a finite number (.inf, -.inf, .nan and numbers too large for a float "
              "are refused)")
INT_RANGE = "is outside 64 bits (-9223372036854775808 to 9223372036854775807)"
NUL = ("the text holds a NUL character (U+0000), which no runner, checker, environment "
       "variable or file name can be given")
TYPES = "a value is a string, number, boolean, null, date, list or mapping"


@dataclass(frozen=True)
class Bad:
    """An Eval with one bad file (`files`: path in the Eval -> bytes) and the one line every
    command that loads it must print (without `Error: `)."""

    files: dict[str, bytes]
    line: str
    commands: tuple[str, ...] = ("validate", "run")


def task(text: str) -> dict[str, bytes]:
    return {"tasks/one.yaml": b"prompt: hello\n" + text.encode()}


def config(text: str) -> dict[str, bytes]:
    return {"configs/default.yaml": b"runner: ./echo.sh\nmodel: m1\n" + text.encode()}


def grader(text: str) -> dict[str, bytes]:
    return {"graders/default.yaml": b"checks:\n  - checker: contains\n    value: says\n"
            + text.encode()}


GRADED = ("validate", "run -g", "grade")       # `run` alone does not read the grader
FILES: dict[str, Bad] = {
    "a Task value nested 256 deep": Bad(
        task("x: " + "[" * 256 + "]" * 256 + "\n"),
        "ev/tasks/one.yaml:2:103: x: values are nested more than 100 levels deep (lists and "
        "mappings)"),
    "a grader value nested 999 deep (recursion)": Bad(
        grader("    extra: " + "[" * 900 + "]" * 900 + "\n"),
        "ev/graders/default.yaml:4:109: checks[0].extra: values are nested more than 100 levels "
        "deep "
        "(lists and mappings)", GRADED),
    "!!set in a Task": Bad(
        task("x: !!set {a, b}\n"),
        f"ev/tasks/one.yaml:2:4: x: the YAML type !!set cannot be used: {TYPES}"),
    "!!binary in a Task": Bad(
        task("x: !!binary aGVsbG8=\n"),
        f"ev/tasks/one.yaml:2:4: x: the YAML type !!binary cannot be used: {TYPES}"),
    "a 5,000-digit integer": Bad(
        task("x: " + "9" * 5000 + "\n"),
        f"ev/tasks/one.yaml:2:4: x: the integer 99999999999999999999... (5,000 characters) "
        f"{INT_RANGE}"),
    "a date that cannot be": Bad(
        task("x: 0000-01-01\n"),
        "ev/tasks/one.yaml:2:4: x: 0000-01-01 is not a valid timestamp: year 0 is out of range"),
    "a NUL in a Task value": Bad(
        task('x: ["a\\0b"]\n'), f"ev/tasks/one.yaml:2:5: x[0]: {NUL}"),
    "a NUL in a prompt": Bad(
        {"tasks/one.yaml": b'prompt: "hi\\0"\n'}, f"ev/tasks/one.yaml:1:9: prompt: {NUL}"),
    "a NUL in a Config key": Bad(
        config('"a\\0b": 1\n'), f"ev/configs/default.yaml:3:1: a key: {NUL}"),
    "max_output_bytes above 2^63": Bad(
        config("max_output_bytes: 18446744073709551616\n"),
        f"ev/configs/default.yaml:3:19: max_output_bytes: the integer 18446744073709551616 "
        f"{INT_RANGE}"),
    "timeout: .nan": Bad(
        config("timeout: .nan\n"), f"ev/configs/default.yaml:3:10: timeout: .nan {NOT_FINITE}"),
    ".inf in a Task": Bad(
        task("x: .inf\n"), f"ev/tasks/one.yaml:2:4: x: .inf {NOT_FINITE}"),
    "-.inf in a grader": Bad(
        grader("    weight: -.inf\n"),
        f"ev/graders/default.yaml:4:13: checks[0].weight: -.inf {NOT_FINITE}", GRADED),
    "a Task file whose name is not UTF-8": Bad(
        {"tasks/\udcff.yaml": b"prompt: hi\n"},
        "ev/tasks/\\xff.yaml:1:1: name: the file name is not valid UTF-8 (byte 0xff); rename "
        "the file"),
    "a JSONL integer outside 64 bits": Bad(
        {"tasks/rows.jsonl": b'{"name": "r", "x": 123456789012345678901234567890}\n'},
        f"ev/tasks/rows.jsonl:1:20: the integer 123456789012345678901234567890 {INT_RANGE}"),
    "a NUL in a JSONL key": Bad(
        {"tasks/rows.jsonl": b'{"name": "r", "x": {"k\\u0000": 1}}\n'},
        "ev/tasks/rows.jsonl:1:15: x: the value holds a NUL character, which no runner or "
        "checker can be given"),
    "creates: an absolute path": Bad(
        grader("    creates: [/etc/passwd]\n"),
        "ev/graders/default.yaml:4:15: checks[0].creates[0]: must be a relative path, not "
        "'/etc/passwd'", GRADED),
    "creates: ..": Bad(
        grader("    creates: ../outside.txt\n"),
        "ev/graders/default.yaml:4:14: checks[0].creates: may not contain '..' "
        "('../outside.txt')", GRADED),
    "file: an absolute path": Bad(
        grader("    file: /etc/passwd\n"),
        "ev/graders/default.yaml:4:5: checks[0].file: must be a relative path, not "
        "'/etc/passwd'", GRADED),
    "file: ..": Bad(
        grader("    file: sub/../../x\n"),
        "ev/graders/default.yaml:4:5: checks[0].file: may not contain '..' ('sub/../../x')",
        GRADED),
    "a NUL in a fixture's files: name": Bad(
        {"graders/default.fixtures/case.yaml":
         b'task: one\noutput: m1 says hi\nexpect: pass\nfiles:\n  "a\\0b": src.txt\n',
         "graders/default.fixtures/src.txt": b"x\n"},
        f"ev/graders/default.fixtures/case.yaml:5:3: files: a key: {NUL}", ("test",)),
}


def _build(root: Path, files: dict[str, bytes]) -> None:
    make_eval(root / "ev")
    for rel, data in files.items():
        path = os.path.join(os.fsencode(root / "ev"), os.fsencode(rel))
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


@pytest.mark.parametrize("name", list(FILES))
def test_a_bad_file_is_exit_2_at_its_line_for_every_command(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = FILES[name]
    _build(tmp_path, bad.files)
    monkeypatch.chdir(tmp_path)
    for command in bad.commands:
        res = run_cli(*command.split(), "ev")
        expected = (f"{bad.line}\n1 problem found\n" if command == "validate"
                    else f"Error: {bad.line}\n")
        assert (command, res.code, res.err) == (command, 2, expected)
        assert "Traceback" not in res.both
    assert not (tmp_path / "ev" / "results").exists()       # nothing was run or written


USAGE = {"run": "EVAL_OR_SUITE...", "label": "RUN_ID pass|fail [EVAL_OR_SUITE]...",
         "diff": "[A] [B] [EVAL_OR_SUITE]...", "gc": "[EVAL_OR_SUITE]..."}
OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "run -m, not UTF-8": (("run", "ev", "-m", "m\udcff"),
                          "Invalid value for '-m' / '--model': 'm\\xff' is not valid UTF-8 "
                          "(byte 0xff)"),
    "run -t, not UTF-8": (("run", "ev", "-t", "\udce9t"),
                          "Invalid value for '-t' / '--task': '\\xe9t' is not valid UTF-8 "
                          "(byte 0xe9)"),
    "label --by, not UTF-8": (("label", "0123", "pass", "ev", "--by", "\udcff"),
                              "Invalid value for '--by': '\\xff' is not valid UTF-8 (byte 0xff)"),
    "label --note, not UTF-8": (("label", "0123", "pass", "ev", "--note", "ok \udcfe"),
                                "Invalid value for '--note': 'ok \\xfe' is not valid UTF-8 "
                                "(byte 0xfe)"),
    "run --timeout nan": (("run", "ev", "--timeout", "nan"),
                          "Invalid value for '--timeout': nan is not a finite number"),
    "run --timeout inf": (("run", "ev", "--timeout", "inf"),
                          "Invalid value for '--timeout': inf is not a finite number"),
    "diff --alpha nan": (("diff", "a", "b", "ev", "--alpha", "nan"),
                         "Invalid value for '--alpha': nan is not a finite number"),
    "gc --grace inf": (("gc", "ev", "--grace", "inf"),
                       "Invalid value for '--grace': inf is not a finite number"),
}


@pytest.mark.parametrize("name", list(OPTIONS))
def test_a_bad_option_is_exit_2_naming_the_option(
        name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args, message = OPTIONS[name]
    make_eval(tmp_path / "ev")
    monkeypatch.chdir(tmp_path)
    res = run_cli(*args)
    usage = (f"Usage: smevals {args[0]} [OPTIONS] {USAGE[args[0]]}\n"
             f"Try 'smevals {args[0]} --help' for help.\n\n")
    assert (res.code, res.out, res.err) == (2, "", f"{usage}Error: {message}\n")
    assert not (tmp_path / "ev" / "results").exists()


def test_a_path_argument_may_be_any_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                          ) -> None:
    """A folder's name is the file system's business: an Eval in a folder that is not UTF-8
    runs once eval.yaml names it (records are UTF-8; the runner's path is kept as \\xe9),
    and without a name it is a problem at eval.yaml."""
    folder = os.fsdecode(b"caf\xe9")
    make_eval(tmp_path / folder)
    monkeypatch.chdir(tmp_path)
    res = run_cli("validate", folder)
    assert (res.code, res.err) == (2, "caf\\xe9/eval.yaml:1:1: name: the Eval's folder name is "
                                      "not valid UTF-8 (byte 0xe9); give it a name here or "
                                      "rename the folder\n1 problem found\n")
    (tmp_path / folder / "eval.yaml").write_text("name: cafe\n")
    res = run_cli("run", folder, "-g")
    assert (res.code, res.out.splitlines()[-1]) == (0, "2 ok, 0 failed")
    runs = sorted((tmp_path / folder / "results" / "runs").rglob("run.json"))
    assert len(runs) == 2
    assert f'"runner": "{tmp_path}/caf\\\\xe9/configs/echo.sh"' in runs[0].read_text()


def test_a_source_date_epoch_past_year_9999_is_exit_2(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """It was an OSError (exit 3) in `build`."""
    make_eval(tmp_path / "ev")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "99999999999999999")
    res = run_cli("build", "ev", "-o", "site")
    assert (res.code, res.err) == (2, "Error: SOURCE_DATE_EPOCH: '99999999999999999' is not a "
                                      "time smevals can show (seconds since 1970, before the "
                                      "year 10000)\n")
