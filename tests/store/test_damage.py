"""`smevals verify` finds every kind of damage, says where, and exits 1."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from smevals.files.canonical import dumps, loads
from smevals.store.write import Written
from tests.helpers.store import writable, write_grade, write_run


class Built:
    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.root = tmp / "st"
        self.run: Written = write_run(self.root, 0, files={"output.txt": b"hello world\n",
                                                           "notes.txt": b"n\n"})
        self.other = write_run(self.root, 1)
        self.grade = write_grade(self.root, self.run)

    def at(self, written: Written, name: str = "") -> str:
        return f"st/{written.rel}" + (f"/{name}" if name else "")


@pytest.fixture
def built(tmp_path: Path) -> Built:
    return Built(tmp_path)


def verify(cli, built: Built, *args: str):
    return cli("verify", "st", *args, cwd=built.tmp)


def test_a_clean_store_verifies_with_a_count(cli, built: Built):
    res = verify(cli, built)
    assert (res.code, res.out, res.err) == (0, "OK: 3 object(s) verified, no problems\n", "")
    res = verify(cli, built, "--json")
    assert res.code == 0
    assert json.loads(res.out) == {"checked": 3, "ok": True, "rev": None, "problems": []}


def test_a_flipped_byte(cli, built: Built):
    path = built.run.path / "output.txt"
    writable(path)
    path.write_bytes(b"hello World\n")
    res = verify(cli, built)
    assert res.code == 1
    assert res.out == f"{built.at(built.run, 'output.txt')}: content changed: sha256 does not " \
                      "match the record\n"
    assert res.err == "Error: 1 problem(s) in 3 object(s)\n"


def test_a_truncated_file(cli, built: Built):
    path = built.run.path / "output.txt"
    writable(path)
    path.write_bytes(b"hello")
    res = verify(cli, built)
    assert (res.code, res.out) == (1, f"{built.at(built.run, 'output.txt')}: size changed: 12 "
                                      "bytes recorded, 5 found\n")


def test_a_deleted_file(cli, built: Built):
    (built.run.path / "notes.txt").unlink()
    res = verify(cli, built)
    assert (res.code, res.out) == (1, f"{built.at(built.run, 'notes.txt')}: missing: listed in "
                                      "the record but not in the folder\n")


def test_an_extra_file(cli, built: Built):
    (built.other.path / "extra.txt").write_text("x")
    res = verify(cli, built)
    assert (res.code, res.out) == (1, f"{built.at(built.other, 'extra.txt')}: extra file: in the "
                                      "folder but not listed in the record\n")


def test_a_renamed_object_folder(cli, built: Built):
    stamp, digest = built.run.id.split("-")
    new_id = f"{stamp}-{'0' * 12}"
    built.run.path.rename(built.run.path.parent / new_id)
    res = verify(cli, built)
    assert res.code == 1
    assert res.out.splitlines() == [
        f"st/runs/t1/c/m/{new_id}: run.json hashes to {digest}, not 000000000000 as the "
        "folder name says (record edited or folder renamed)",
        f"{built.at(built.grade)}: the Run it grades is missing: {built.run.rel}",
    ]


def test_an_edited_record(cli, built: Built):
    path = built.other.path / "run.json"
    record = loads(path.read_bytes())
    record["status"] = "failed"
    writable(path)
    path.write_bytes(dumps(record))
    digest = hashlib.sha256(dumps(record)).hexdigest()[:12]
    res = verify(cli, built)
    assert (res.code, res.out) == (1, f"{built.at(built.other)}: run.json hashes to {digest}, "
                                      f"not {built.other.id[-12:]} as the folder name says "
                                      "(record edited or folder renamed)\n")


def test_a_record_edited_by_hand_is_also_not_canonical(cli, built: Built):
    path = built.other.path / "run.json"
    writable(path)
    path.write_bytes(path.read_bytes().replace(b'"status": "ok"', b'"status":  "ok"'))
    res = verify(cli, built)
    assert res.code == 1
    assert res.out.splitlines()[0] == f"{built.at(built.other, 'run.json')}: run.json is not " \
                                      "in canonical form (edited by hand?)"
    assert len(res.out.splitlines()) == 2


def test_unreadable_and_missing_records_and_strays(cli, built: Built):
    writable(built.other.path / "run.json")
    (built.other.path / "run.json").write_text("{oops")
    (built.grade.path / "grade.json").unlink()
    (built.root / "runs" / "t1" / "stray.txt").write_text("x")
    res = verify(cli, built)
    lines = res.out.splitlines()
    assert res.code == 1 and len(lines) == 3
    assert lines[0] == "st/runs/t1/stray.txt: stray entry outside any object folder"
    assert lines[1].startswith(f"{built.at(built.other, 'run.json')}: unreadable run.json: ")
    assert lines[2] == f"{built.at(built.grade)}: grade.json is missing"


def test_a_grade_whose_run_is_missing_and_a_moved_object(cli, built: Built):
    shutil.rmtree(built.run.path)
    moved = built.root / "runs" / "t2" / "c" / "m" / built.other.id
    moved.parent.mkdir(parents=True)
    built.other.path.rename(moved)
    res = verify(cli, built, "--json")
    assert res.code == 1
    doc = json.loads(res.out)
    assert doc["ok"] is False and doc["checked"] == 2
    assert [(p["path"], p["message"]) for p in doc["problems"]] == [
        (f"runs/t2/c/m/{built.other.id}", "filed under runs/t2/c/m, but its record belongs "
                                          "under runs/t1/c/m"),
        (built.grade.rel, f"the Run it grades is missing: {built.run.rel}"),
    ]
    assert all(p["store"] == "st" for p in doc["problems"])


def test_a_symlink_retargeted(cli, tmp_path: Path):
    root = tmp_path / "st"
    staging_run = write_run(root, 5, files={"out.txt": b"x"})
    os.symlink("out.txt", staging_run.path / "alias")
    res = cli("verify", "st", cwd=tmp_path)
    assert res.out == f"st/{staging_run.rel}/alias: extra file: in the folder but not listed " \
                      "in the record\n"
