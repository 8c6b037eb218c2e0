"""Staging.commit_copy (used by `merge` and by `--dask` for what workers send back):
a copy lands only when its record hashes to its id, belongs at its path and matches
its files."""

from __future__ import annotations

from pathlib import Path

import pytest

from smevals.scale.packed import Packed
from smevals.scale.unpack import unpack
from smevals.scale.worker import pack
from smevals.store.write import StoreError
from tests.helpers import make_eval, run_cli


@pytest.fixture
def packed(tmp_path: Path) -> Packed:
    ev = make_eval(tmp_path / "ev", tasks={"one": "prompt: hi\n"})
    assert run_cli("run", str(ev)).code == 0
    folder = next((ev / "results").glob("runs/*/*/*/*"))
    return pack(ev / "results", "run", folder.relative_to(ev / "results").as_posix())


def _objects(root: Path) -> list[Path]:
    return list(root.glob("runs/*/*/*/*"))


def test_a_sound_copy_lands_once(tmp_path: Path, packed: Packed) -> None:
    first = unpack(tmp_path / "into", packed)
    again = unpack(tmp_path / "into", packed)
    assert (first.existed, again.existed) == (False, True)
    assert [p.relative_to(tmp_path / "into").as_posix() for p in _objects(tmp_path / "into")] \
        == [packed.rel]
    assert run_cli("verify", str(tmp_path / "into")).code == 0


@pytest.mark.parametrize("damage, message", [
    ("file", "its files do not match the record's manifest"),
    ("record", "its record does not hash to its id"),
    ("place", "its record does not belong at that path"),
    ("escape", "is not a path inside an object"),
])
def test_a_damaged_copy_is_refused(tmp_path: Path, packed: Packed, damage: str,
                                   message: str) -> None:
    files = list(packed.files)
    rel, record = packed.rel, packed.record
    if damage == "file":
        path, mode, _data, link = files[0]
        files[0] = (path, mode, b"tampered\n", link)
    elif damage == "record":
        record = record.replace(b'"sample": 0', b'"sample": 1')
    elif damage == "place":
        rel = rel.replace("runs/one/", "runs/two/")
    else:
        files.append(("../outside.txt", 0o644, b"x", None))
    with pytest.raises(StoreError, match=message):
        unpack(tmp_path / "into", Packed("run", rel, record, tuple(files)))
    assert _objects(tmp_path / "into") == []
    assert not (tmp_path / "outside.txt").exists()
    assert [p.name for p in (tmp_path / "into" / ".staging").iterdir()] == [".gitignore"]
