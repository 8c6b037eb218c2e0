"""Judge cache entries sent between a Dask client and its workers: kept only when sound."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from smevals.files.canonical import dumps
from smevals.store import judgecache

REQUEST: Any = {"backend": "openai", "model": "judge-x", "messages": [{"role": "user",
                                                                   "content": "hi"}]}


def _entry(request: Mapping[str, object]) -> bytes:
    return dumps({"format": 1, "kind": "judge", "request": request,
                  "response": {"content": "{}"}, "created": "2026-01-01T00:00:00Z"})


def test_a_sound_entry_is_kept_byte_for_byte(tmp_path: Path) -> None:
    key = judgecache.request_key(REQUEST)
    assert judgecache.accept(tmp_path, key, _entry(REQUEST))
    name = judgecache.entry_name(key, _entry(REQUEST))
    path = tmp_path / judgecache.FOLDER / key[:2] / name
    assert path.read_bytes() == _entry(REQUEST)
    assert judgecache.entry_bytes(tmp_path, REQUEST) == (key, _entry(REQUEST))


def test_entries_that_do_not_hash_to_their_name_are_refused(tmp_path: Path) -> None:
    key = judgecache.request_key(REQUEST)
    other = {**REQUEST, "model": "judge-y"}
    refused = [(key, _entry(other)), (key, b"{not json"), ("../x", _entry(REQUEST)),
               (key, dumps({"kind": "grade", "request": REQUEST, "response": {}})),
               (key, dumps({"kind": "judge", "request": REQUEST, "response": "text"}))]
    assert [judgecache.accept(tmp_path, k, data) for k, data in refused] == [False] * 5
    assert not (tmp_path / judgecache.FOLDER).exists()
    assert judgecache.entry_bytes(tmp_path, REQUEST) is None
