"""The definitions cache: its files, its racy window, and output checked against none."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from smevals.evaldef import defcache
from smevals.store import index

SHORT_RACY_NS = 300_000_000


def short_racy_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """The racy window of this process (where `cli` runs smevals) cut from 2 s to 0.3 s, so
    that a test waits it out sooner; far longer than a clock tick, so nothing else changes."""
    assert index.RACY_NS == 2_000_000_000                # what it shortens
    monkeypatch.setattr(index, "RACY_NS", SHORT_RACY_NS)
    monkeypatch.setattr(defcache, "RACY_NS", SHORT_RACY_NS)


def settle() -> None:
    """Wait out the racy window, so that the files written so far get cached."""
    time.sleep(index.RACY_NS / 1e9 + 0.1)


def cached_files(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "_cache").glob("defs-*.marshal"))


def without_time(text: str) -> str:
    return "".join(line for line in text.splitlines(True) if not line.startswith("- Generated"))


def same_as_uncached(cli, tmp_path: Path, *args: str) -> str:
    """The output of `smevals args` (cache in use), checked against one with no cache."""
    res = cli(*args, cwd=tmp_path)
    bare = cli(*args, cwd=tmp_path, env={"SMEVALS_NO_CACHE": "1"})
    assert (res.code, without_time(res.out), res.err) == (bare.code, without_time(bare.out),
                                                          bare.err)
    out: str = res.out
    return out
