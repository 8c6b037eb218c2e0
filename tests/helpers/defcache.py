"""The definitions cache: its files, its racy window, and output checked against none."""

from __future__ import annotations

import time
from pathlib import Path

from smevals.store.index import RACY_NS


def settle() -> None:
    """Wait out the racy window, so that the files written so far get cached."""
    time.sleep(RACY_NS / 1e9 + 0.1)


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
