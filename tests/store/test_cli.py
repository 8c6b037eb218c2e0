"""`smevals show`, `smevals gc` and how verify/show/gc find stores, end to end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from smevals.files.canonical import dumps
from smevals.store.layout import slug
from smevals.store.read import Store
from tests.helpers import SMEVALS, make_eval
from tests.helpers.store import write_grade, write_run


def test_show_prints_the_header_the_files_and_the_record(cli, tmp_path: Path):
    written = write_run(tmp_path / "st", 0, files={"output.txt": b"hi\n", "b/c.txt": b"abc"})
    record = dumps(Store(tmp_path / "st").runs()[0].record)
    res = cli("show", written.id[-12:-4], "st", cwd=tmp_path)
    assert res.code == 0 and res.err == ""
    assert res.out == (
        f"run {written.id}\n"
        f"path: st/{written.rel}\n"
        "files:\n"
        "  b/c.txt (3 bytes)\n"
        "  output.txt (3 bytes)\n"
        f"  run.json ({len(record)} bytes, the record below)\n"
        "\n" + record.decode())


def test_show_a_file_and_the_errors(cli, tmp_path: Path):
    run = write_run(tmp_path / "st", 0, files={"output.txt": b"\x00binary\xff"})
    grade = write_grade(tmp_path / "st", run)
    proc = subprocess.run([SMEVALS, "show", run.id, "st", "--file", "output.txt"],
                          cwd=tmp_path, capture_output=True, check=False)
    assert (proc.returncode, proc.stdout) == (0, b"\x00binary\xff")      # bytes as stored
    res = cli("show", grade.id, "st", "--file", "nope", cwd=tmp_path)
    assert (res.code, res.err) == (2, f"Error: grade {grade.id} has no file 'nope'; files: "
                                      "grade.json, grader.yaml\n")
    res = cli("show", "abc", "st", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: an id prefix needs at least 6 characters: 'abc'\n")
    res = cli("show", "ffffffff", "st", cwd=tmp_path)
    assert (res.code, res.err) == (2, "Error: no Run or Grade with id 'ffffffff' in the stores "
                                      "of st\n")
    res = cli("show", "20260102", "st", cwd=tmp_path)
    assert res.code == 2
    assert res.err == ("Error: id prefix '20260102' is ambiguous; candidates:\n"
                       f"  run {run.id}  st/{run.rel}\n"
                       f"  grade {grade.id}  st/{grade.rel}\n")


def test_commands_find_stores_through_evals_suites_and_store_folders(cli, tmp_path: Path):
    ev = make_eval(tmp_path / "suite" / "ev", name="My Eval")
    default = write_run(ev / "results", 0)
    assert cli("verify", "suite", cwd=tmp_path).out == "OK: 1 object(s) verified, no problems\n"
    assert cli("show", default.id, "suite/ev", cwd=tmp_path).code == 0
    shared = tmp_path / "shared"
    moved = write_run(shared / slug("My Eval"), 1)
    res = cli("verify", "suite", "--store", "shared", cwd=tmp_path)
    assert res.out == "OK: 1 object(s) verified, no problems\n"
    res = cli("show", moved.id, "suite", cwd=tmp_path, env={"SMEVALS_STORE": "shared"})
    assert res.out.splitlines()[1] == f"path: shared/{slug('My Eval')}/{moved.rel}"
    write_run(shared / "other-eval", 2)
    res = cli("verify", "shared", "--json", cwd=tmp_path)      # a folder of stores
    assert json.loads(res.out)["checked"] == 2
