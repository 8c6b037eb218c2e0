"""The store contract: what is written is read back the same, from the working tree and from
a git revision alike (one suite, two sources, like dulwich's ObjectStoreTests)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path

import pytest

from smevals.files.canonical import dumps
from smevals.store.read import AmbiguousId, Obj, PrefixTooShort, Store, UnknownId, store_root
from smevals.store.records import RunFields
from smevals.store.write import StoreError
from tests.helpers.store import commit_all, remove_tree, write_grade, write_run

FIXED_RECORD: RunFields = {
    "eval": "e", "task": {"name": "t1", "prompt": "prompt 0"},
    "config": {"name": "c", "runner": "./r.sh", "model": "m"}, "model": "m",
    "inputs": {"hash": "h", "task": "t", "config": "c", "runner": "r"}, "sample": 0,
    "started": "2026-01-02T03:04:05Z", "ended": "2026-01-02T03:04:06Z",
    "duration_seconds": 1, "status": "ok",
}
FIXED_SHA256 = "b1ee74706a5b5e0d85e713029beb1fa20d85c6da94d9904cdadc75f7a8850e61"


def test_the_canonical_encoding_and_the_hash_of_a_fixed_object_never_drift(tmp_path: Path):
    staging = Store(tmp_path / "st").stage("run")
    (staging.dir / "output.txt").write_bytes(b"hello, world\n")
    written = staging.commit(FIXED_RECORD.copy(), ["t1", "c", "m"])
    assert written.id == "20260102T030405Z-b1ee74706a5b"
    assert written.rel == "runs/t1/c/m/20260102T030405Z-b1ee74706a5b"
    data = (written.path / "run.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == FIXED_SHA256
    assert data.startswith(b'{\n  "config": {\n    "model": "m",\n')
    assert b'"files": [\n    {\n      "path": "output.txt",\n      "sha256": "853ff937' in data
    assert data.endswith(b'    "prompt": "prompt 0"\n  }\n}\n')
    assert dumps({"b": 1, "a": [1.5, None, "é"]}) == \
        b'{\n  "a": [\n    1.5,\n    null,\n    "\xc3\xa9"\n  ],\n  "b": 1\n}\n'


def test_files_are_read_only_and_the_record_lists_every_file(tmp_path: Path):
    root = tmp_path / "st"
    staging = Store(root).stage("run")
    (staging.dir / "sub").mkdir()
    (staging.dir / "sub" / "a.txt").write_bytes(b"a")
    (staging.dir / "tool.sh").write_bytes(b"#!/bin/sh\n")
    (staging.dir / "tool.sh").chmod(0o755)
    os.symlink("sub/a.txt", staging.dir / "link")
    written = staging.commit(FIXED_RECORD.copy(), ["t1", "c", "m"])
    record = Store(root).runs()[0].record
    assert record["files"] == [
        {"path": "link", "symlink": "sub/a.txt"},
        {"path": "sub/a.txt", "sha256": hashlib.sha256(b"a").hexdigest(), "size": 1},
        {"path": "tool.sh", "sha256": hashlib.sha256(b"#!/bin/sh\n").hexdigest(), "size": 10},
    ]
    for name, mode in (("run.json", 0o444), ("sub/a.txt", 0o444), ("tool.sh", 0o555)):
        assert stat.S_IMODE((written.path / name).stat().st_mode) == mode, name
    assert os.listdir(root / ".staging") == [".gitignore"]


def test_identical_content_twice_is_one_object(tmp_path: Path):
    root = tmp_path / "st"
    first = write_run(root, 1)
    again = write_run(root, 1)
    assert (first.existed, again.existed) == (False, True)
    assert again.id == first.id and again.path == first.path
    assert [o.id for o in Store(root).runs()] == [first.id]
    assert os.listdir(root / ".staging") == [".gitignore"]


def test_the_record_name_is_reserved_and_abort_leaves_nothing(tmp_path: Path):
    root = tmp_path / "st"
    staging = Store(root).stage("run")
    (staging.dir / "run.json").write_text("{}")
    with pytest.raises(StoreError, match="'run.json' is reserved for the run record"):
        staging.commit(FIXED_RECORD.copy(), ["t1", "c", "m"])
    staging.abort()
    assert os.listdir(root / ".staging") == [".gitignore"]
    assert Store(root).runs() == []


def test_a_store_read_at_a_revision_cannot_be_written(tmp_path: Path):
    write_run(tmp_path / "st")
    commit_all(tmp_path)
    with pytest.raises(ValueError, match="cannot write"):
        Store(tmp_path / "st", "HEAD").stage("run")


def test_store_root_default_and_relocated(tmp_path: Path):
    assert store_root(tmp_path / "ev", "My Eval", None) == tmp_path / "ev" / "results"
    assert store_root(tmp_path / "ev", "my-eval", str(tmp_path / "s")) == tmp_path / "s/my-eval"
    relocated = store_root(tmp_path / "ev", "My Eval", str(tmp_path / "s"))
    assert relocated.parent == tmp_path / "s" and relocated.name.startswith("my-eval-")


def populate(root: Path) -> dict[str, str]:
    """Three Runs, one Grade of the first, and a folder with a broken record."""
    ids = {}
    for i in range(3):
        ids[f"run{i}"] = write_run(root, i).id
    run0 = write_run(root, 0)
    ids["grade"] = write_grade(root, run0).id
    broken = root / "runs" / "t1" / "c" / "m" / "20260101T000000Z-000000000000"
    broken.mkdir()
    (broken / "run.json").write_text("{not json")
    return ids


@pytest.fixture(params=["fs", "git"])
def reader(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[Store, dict[str, str]]:
    root = tmp_path / "results"
    ids = populate(root)
    if request.param == "git":
        commit_all(tmp_path)
        remove_tree(root)                      # no checkout needed to read a revision
        return Store(root, "HEAD"), ids
    return Store(root), ids


def test_every_run_and_grade_is_read_with_its_record(reader: tuple[Store, dict[str, str]]):
    store, ids = reader
    runs = store.runs()
    assert sorted(o.id for o in runs) == sorted(ids[f"run{i}"] for i in range(3))
    assert all(o.kind == "run" and o.rel == f"runs/t1/c/m/{o.id}" for o in runs)
    assert {o.record["sample"] for o in runs} == {0, 1, 2}
    assert [o.id for o in store.grades()] == [ids["grade"]]
    assert store.grades()[0].record["run"]["id"] == ids["run0"]
    [(rel, why)] = store.broken
    assert rel == "runs/t1/c/m/20260101T000000Z-000000000000"
    assert why.startswith("unreadable run.json: ")       # then orjson's own words


def test_files_and_listing(reader: tuple[Store, dict[str, str]]):
    store, ids = reader
    obj = store.resolve(ids["run1"])
    assert store.read_file(obj, "output.txt") == b"out 1\n"
    assert store.read_file(obj, "run.json") == dumps(obj.record)
    assert [(e.path, e.size, e.link) for e in store.listing(obj)] == [("output.txt", 6, None)]
    with pytest.raises(FileNotFoundError):
        store.read_file(obj, "nope.txt")


def test_id_prefixes_resolve_git_style(reader: tuple[Store, dict[str, str]]):
    store, ids = reader
    full = ids["run2"]
    for prefix in (full, full[:20], full.split("-")[1][:6], full.split("-")[1][:6].upper()):
        assert store.resolve(prefix).id == full
    with pytest.raises(PrefixTooShort, match="at least 6 characters: 'abcde'"):
        store.resolve("abcde")
    with pytest.raises(UnknownId, match="no Run or Grade with id 'ffffffffff'"):
        store.resolve("ffffffffff")
    with pytest.raises(AmbiguousId) as caught:
        store.resolve("2026010")
    assert len(caught.value.candidates) == 4
    assert str(caught.value).splitlines()[0] == "id prefix '2026010' is ambiguous; candidates:"
    assert f"  grade {ids['grade']}  grades/g/t1/c/m/{ids['grade']}" in str(caught.value)


def test_forget_sees_objects_written_since(tmp_path: Path):
    root = tmp_path / "st"
    store = Store(root)
    assert store.runs() == []
    written = write_run(root)
    assert store.runs() == []                  # what was read is kept until forget()
    store.forget()
    assert [o.id for o in store.runs()] == [written.id]
    assert isinstance(store.runs()[0], Obj)
