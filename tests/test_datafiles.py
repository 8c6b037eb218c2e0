"""Tasks from data files (`tasks/*.jsonl`, `*.csv`, `*.tsv`): what a row becomes, and every
bad input named at file:line:col, by `validate` and by `run` alike, with the other rows
still read."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import make_eval, write
from tests.helpers.records import runs

SHOW_ENV = """
#!/bin/sh
env | grep '^SMEVALS_TASK' | sort
"""


def data_eval(root: Path, files: dict[str, bytes], yaml_tasks: dict[str, str] | None = None,
              ) -> Path:
    ev = make_eval(root, tasks=yaml_tasks or {},
                   files={"configs/echo.sh": "#!/bin/sh\necho \"$SMEVALS_PROMPT\"\n"})
    (ev / "tasks").mkdir(exist_ok=True)
    for name, data in files.items():
        (ev / "tasks" / name).write_bytes(data)
    return ev


def test_rows_of_each_format_are_tasks_with_their_keys(cli, tmp_path: Path) -> None:
    ev = data_eval(tmp_path / "ev", {
        "q.jsonl": b'{"name": "alpha", "prompt": "one", "n": 3, "grading": {"expected": "a"}}\n'
                   b"\n"
                   b'{"prompt": "two", "tags": ["x"]}\n'
                   b'{"id": 17, "prompt": "three"}\n',
        "t.csv": b'\xef\xbb\xbfname,prompt,grading.expected\r\n'
                 b'beta,"hello, ""world""",b\r\n'
                 b'gamma,"two\nlines",\r\n',
        "u.tsv": b"prompt\tlevel\nfrom tsv\t2\n",
    }, yaml_tasks={"delta": "prompt: yaml\n"})
    write(ev / "configs" / "show.yaml", "runner: ./show.sh\nmodel: m1\n")
    write(ev / "configs" / "show.sh", SHOW_ENV.lstrip(), executable=True)
    res = cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (0, "OK: 1 eval, 7 tasks, 2 configs, 1 grader; no problems\n")
    res = cli("run", "ev", "-c", "show", "--dry-run", cwd=tmp_path)
    assert [line.split(" / ")[0].strip() for line in res.out.splitlines()[1:]] == [
        "delta", "alpha", "q-2", "17", "beta", "gamma", "u-1"]
    res = cli("run", "ev", "-c", "show", "-t", "alpha", "-t", "17", "-t", "beta", cwd=tmp_path)
    assert res.code == 0, res.err
    records = {r["task"]["name"]: r for r in runs(ev)}
    assert records["alpha"]["task"] == {"name": "alpha", "prompt": "one", "n": 3}
    assert records["alpha"]["grading"] == {"expected": "a"}
    assert records["17"]["task"] == {"name": "17", "id": 17, "prompt": "three"}
    assert records["beta"]["task"] == {"name": "beta", "prompt": 'hello, "world"'}
    assert records["beta"]["grading"] == {"expected": "b"}
    outputs = {name: next((ev / "results" / "runs" / name).rglob("output.txt")).read_text()
               for name in records}
    assert outputs["alpha"] == ("SMEVALS_TASK=alpha\nSMEVALS_TASK_N=3\nSMEVALS_TASK_NAME=alpha\n"
                                "SMEVALS_TASK_PROMPT=one\n")      # no grading key
    assert outputs["beta"] == ('SMEVALS_TASK=beta\nSMEVALS_TASK_NAME=beta\n'
                               'SMEVALS_TASK_PROMPT=hello, "world"\n')


JSONL_LINES = [b'{"name": "q%d", "prompt": "p"}' % i for i in range(1, 7)]

CASES = {
    "bad JSON on line 7": (
        {"q.jsonl": b"\n".join([*JSONL_LINES, b'{"name": "q7", "prompt": "p",}']) + b"\n"},
        ["ev/tasks/q.jsonl:7:29: invalid JSON: trailing comma is not allowed"]),
    "a duplicate name in one file": (
        {"q.jsonl": b'{"name": "a"}\n{"name": "b"}\n{"name": "a", "prompt": "again"}\n'},
        ["ev/tasks/q.jsonl:3:1: name: task name 'a' is already used by ev/tasks/q.jsonl:1"]),
    "a row named like a YAML Task": (
        {"a.csv": b"name,prompt\nb,x\none,y\n"},
        ["ev/tasks/one.yaml:1:1: name: task name 'one' is already used by ev/tasks/a.csv:3"]),
    "a row named like a row of another file": (
        {"a.csv": b"name,prompt\nx,1\n", "b.jsonl": b'{"prompt": "2"}\n{"id": "x"}\n'},
        ["ev/tasks/b.jsonl:2:1: name: task name 'x' is already used by ev/tasks/a.csv:2"]),
    "a key twice in one object": (
        {"q.jsonl": b'{"name": "a", "prompt": "x", "prompt": "y"}\n'
                    b'{"name": "b", "grading": {"k": 1, "k": 2}}\n'},
        ["ev/tasks/q.jsonl:1:30: duplicate key 'prompt' (most JSON readers would keep only its "
         "last value)",
         "ev/tasks/q.jsonl:2:35: duplicate key 'k' (most JSON readers would keep only its last "
         "value)"]),
    "values nested too deep": (
        {"q.jsonl": b'{"name": "a", "x": ' + b"[" * 101 + b"]" * 101 + b"}\n"
                    b'{"name": "b", "x": ' + b"[" * 1000 + b"]" * 1000 + b"}\n"},
        ["ev/tasks/q.jsonl:1:1: values are nested more than 100 levels deep",
         "ev/tasks/q.jsonl:2:1: values are nested more than 100 levels deep"]),
    "a ragged CSV row": (
        {"t.csv": b"name,prompt\na,1\nb,2,extra\nc\nd,4\n"},
        ["ev/tasks/t.csv:3:1: row 2 has 3 fields but the header has 2 columns",
         "ev/tasks/t.csv:4:1: row 3 has 1 field but the header has 2 columns"]),
    "a non-UTF-8 JSONL line": (
        {"q.jsonl": b'{"prompt": "ok"}\n{"prompt": "caf\xe9"}\n'},
        ["ev/tasks/q.jsonl:2:16: line is not valid UTF-8 (byte 0xe9)"]),
    "a non-UTF-8 CSV row": (
        {"t.csv": b"prompt\nok\ncaf\xe9\n"},
        ["ev/tasks/t.csv:3:1: row is not valid UTF-8 (byte 0xe9)"]),
    "NUL bytes": (
        {"q.jsonl": b'{"prompt": "a\x00"}\n', "t.tsv": b"prompt\nx\x00y\n"},
        ["ev/tasks/q.jsonl:1:14: NUL byte in the file (is it a binary file?)",
         "ev/tasks/t.tsv:2:1: NUL byte in the file (is it a binary file?)"]),
    "a NUL character escaped in JSON": (
        {"q.jsonl": b'{"prompt": "a\\u0000b"}\n'},
        ["ev/tasks/q.jsonl:1:2: prompt: the value holds a NUL character, which no runner or "
         "checker can be given"]),
    "empty files": (
        {"q.jsonl": b"", "t.csv": b"", "u.csv": b"name,prompt\n", "w.jsonl": b"\n  \n"},
        ["ev/tasks/q.jsonl:1:1: the data file has no rows (each line or row is one Task)",
         "ev/tasks/t.csv:1:1: the data file has no header and no rows (the first row names "
         "the columns)",
         "ev/tasks/u.csv:1:1: the data file has a header but no rows",
         "ev/tasks/w.jsonl:1:1: the data file has no rows (each line or row is one Task)"]),
    "a row that is not an object": (
        {"q.jsonl": b'{"prompt": "ok"}\n["prompt", "x"]\n"text"\n'},
        ["ev/tasks/q.jsonl:2:1: each line must be a JSON object, got an array",
         "ev/tasks/q.jsonl:3:1: each line must be a JSON object, got a string (\"text\")"]),
    "names that are not Task names": (     # (row 2's empty name falls back to q-2)
        {"q.jsonl": b'{"name": "a/b"}\n{"name": ""}\n{"name": " x"}\n{"id": 2.5}\n'
                    b'{"name": true}\n{"name": "' + b"n" * 201 + b'"}\n{"id": "tab\\there"}\n',
         "t.csv": b"prompt,name\nhi,..\n"},
        ["ev/tasks/q.jsonl:1:2: name: task name 'a/b' must not hold '/' (a Task name must be "
         "usable as a file name)",
         "ev/tasks/q.jsonl:3:2: name: task name ' x' must not start or end with white space",
         "ev/tasks/q.jsonl:4:2: id: a Task name must be a string (or an integer id), got a "
         "number (2.5)",
         "ev/tasks/q.jsonl:5:2: name: a Task name must be a string, got a boolean",
         f"ev/tasks/q.jsonl:6:2: name: task name '{'n' * 60}' is 201 characters long, more "
         "than 200",
         "ev/tasks/q.jsonl:7:2: id: task name 'tab\\there' must not hold the control character "
         "U+0009 (a Task name must be usable as a file name)",
         "ev/tasks/t.csv:2:4: name: task name '..' cannot be '..'"]),
    "a grading value that is not an object, and other schema errors": (
        {"q.jsonl": b'{"name": "x", "grading": ["a"]}\n{"name": "y", "prompt": 5}\n'},
        ["ev/tasks/q.jsonl:1:15: grading: expected a JSON object, got an array",
         "ev/tasks/q.jsonl:2:15: prompt: expected a string, got 5"]),
    "bad CSV headers": (
        {"t.csv": b"name,prompt,name\nx,y,z\n", "u.tsv": b"prompt\tgrading\t\tgrading.\n"},
        ["ev/tasks/t.csv:1:13: column 3 of the header: the column 'name' is named twice",
         "ev/tasks/u.tsv:1:8: column 2 of the header: a column cannot be named 'grading'; "
         "name grading keys 'grading.KEY'",
         "ev/tasks/u.tsv:1:16: column 3 of the header: a column needs a name",
         "ev/tasks/u.tsv:1:17: column 4 of the header: 'grading.' needs a key after the dot "
         "('grading.expected')"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_every_bad_input_is_named_by_validate_and_by_run(cli, tmp_path: Path, case: str) -> None:
    files, expected = CASES[case]
    data_eval(tmp_path / "ev", {"ok.jsonl": b'{"name": "fine", "prompt": "x"}\n', **files},
              yaml_tasks={"one": "prompt: yaml\n"})
    res = cli("validate", "ev", cwd=tmp_path)
    n = len(expected)
    assert (res.code, res.out, res.err) == (
        2, "", "".join(line + "\n" for line in expected)
        + f"{n} problem{'' if n == 1 else 's'} found\n")
    res = cli("run", "ev", cwd=tmp_path)
    assert (res.code, res.out) == (2, "")
    assert res.err == "".join(f"Error: {line}\n" if i == 0 else f"{line}\n"
                              for i, line in enumerate(expected)), res.err
    assert not (tmp_path / "ev" / "results").exists()


def test_an_empty_name_cell_falls_back_as_a_row_without_one(cli, tmp_path: Path) -> None:
    """A `name` (or `id`) column whose cell is empty names no Task: the row is
    `<stem>-<row>`, as in a file without the column (issue 37)."""
    data_eval(tmp_path / "ev", {
        "t.csv": b"name,prompt\nfirst,one\n,two\n\"\",three\n",
        "u.tsv": b"id\tname\tprompt\n7\t\tfour\n\t\tfive\n",
        "q.jsonl": b'{"name": "", "prompt": "six"}\n{"name": null, "id": "", "prompt": "7"}\n',
    })
    res = cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (0, ""), res.err
    res = cli("run", "ev", "--dry-run", cwd=tmp_path)
    assert [line.split(" / ")[0].strip() for line in res.out.splitlines()[1:]] == [
        "q-1", "q-2", "first", "t-2", "t-3", "7", "u-2"]


def test_a_bad_row_never_stops_the_others(cli, tmp_path: Path) -> None:
    """Good rows around bad ones load: a grader reading a key every good row has is fine,
    and the one row lacking it is named (so the good rows were read)."""
    ev = data_eval(tmp_path / "ev", {
        "q.jsonl": b'{"name": "a", "grading": {"expected": "1"}}\n'
                   b'{"name": "b",\n'
                   b'{"name": "c", "grading": {"expected": "3"}}\n'
                   b'{"name": "d"}\n'},
    )
    write(ev / "graders" / "default.yaml", "checks:\n  - checker: exact_match\n"
          "    expected: {task: expected}\n")
    res = cli("validate", "ev", cwd=tmp_path)
    assert res.code == 2
    assert res.err.splitlines() == [
        "ev/tasks/q.jsonl:2:14: invalid JSON: unexpected end of data",
        "ev/graders/default.yaml:3:15: checks[0].expected: {task: expected} reads the Task key "
        "'expected', which Task 'd' (ev/tasks/q.jsonl:4) lacks",
        "2 problems found"]


def test_a_byte_order_mark_is_accepted(cli, tmp_path: Path) -> None:
    data_eval(tmp_path / "ev", {"q.jsonl": b'\xef\xbb\xbf{"name": "a", "prompt": "x"}\n',
                                "t.csv": b"\xef\xbb\xbfname,prompt\nb,y\n"})
    res = cli("run", "ev", "--dry-run", cwd=tmp_path)
    assert res.code == 0, res.err
    assert res.out.splitlines()[1:] == ["  a / default / m1: 0 Run(s) exist, would run 1",
                                        "  b / default / m1: 0 Run(s) exist, would run 1"]


def test_a_50_MB_line_is_refused_before_it_is_parsed(cli, tmp_path: Path) -> None:
    big = b'{"prompt": "' + b"x" * (50 << 20) + b'"}'
    data_eval(tmp_path / "ev", {"q.jsonl": b'{"name": "a"}\n' + big + b'\n{"name": "c"}\n',
                                "t.csv": b"prompt\nsmall\n" + big + b"\nsmall too\n"})
    res = cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, (
        "ev/tasks/q.jsonl:2:1: line is 52,428,814 bytes, more than the limit of 1 MiB for one "
        "line of a data file\n"
        "ev/tasks/t.csv:3:1: line is 52,428,814 bytes, more than the limit of 1 MiB for one "
        "line of a data file\n"
        "2 problems found\n"))


def test_a_file_over_256_MiB_is_refused_unread_and_big_cells_are_fine(cli, tmp_path: Path
                                                                      ) -> None:
    ev = data_eval(tmp_path / "ev", {"t.csv": b'name,prompt\nbig,"' + b"y" * 300_000 + b'"\n'})
    with open(ev / "tasks" / "huge.jsonl", "wb") as f:     # sparse: nothing is written
        f.truncate(300 << 20)
    res = cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (2, (
        "ev/tasks/huge.jsonl:1:1: file is 314,572,800 bytes, more than the limit of 256 MiB "
        "for a data file; split it into several files\n1 problem found\n"))
    (ev / "tasks" / "huge.jsonl").unlink()
    res = cli("run", "ev", "--dry-run", cwd=tmp_path)
    assert (res.code, res.out.splitlines()[1:]) == (0, ["  big / default / m1: 0 Run(s) exist, "
                                                        "would run 1"])


def test_a_misspelt_key_in_a_row_is_a_warning_at_its_row(cli, tmp_path: Path) -> None:
    data_eval(tmp_path / "ev", {"q.jsonl": b'{"name": "a", "prompt": "x"}\n'
                                           b'{"name": "b", "promt": "y"}\n'})
    res = cli("validate", "ev", cwd=tmp_path)
    assert (res.code, res.err) == (0, (
        "ev/tasks/q.jsonl:2:1: warning: promt: unknown Task key 'promt' - did you mean "
        "'prompt'? (as written it is an ordinary key, given to runners)\n"))


def test_a_yaml_task_nested_too_deep_is_bad_input_too(cli, tmp_path: Path) -> None:
    """Hashing such a Task made `run` exit 3; now it is named like any other problem."""
    deep = "[" * 300 + "]" * 300
    data_eval(tmp_path / "ev", {}, yaml_tasks={"deep": f"prompt: p\nx: {deep}\n",
                                               "fine": "prompt: p\nx: [[[]]]\n"})
    res = cli("run", "ev", "--dry-run", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: ev/tasks/deep.yaml:2:103: x: values are nested "
                                      "more than 100 levels deep (lists and mappings)\n")
