"""`smevals merge`: union of stores (shards, other machines), verified object by object."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.store import folders
from smevals.store.merge import Merged, merge_store, store_pairs
from smevals.store.write import StoreError


def merge_command(sources: tuple[str, ...], into: str,
                  each: Callable[[Merged], None]) -> list[Merged]:
    """Merge every source into `into`; bad sources are named before anything is copied."""
    dest = Path(into)
    if dest.exists() and not dest.is_dir():
        raise SmevalsError(f"--into {into}: not a folder")
    pairs: list[tuple[Path, Path]] = []
    for text in sources:
        src = Path(text)
        if not src.is_dir():
            raise SmevalsError(f"{text}: no such folder")
        found = store_pairs(src, dest)
        if not found:
            raise SmevalsError(f"{text}: not a store (no runs/ or grades/ folder in it or in "
                               "any sub-folder)")
        for one, target in found:
            if one.resolve() == target.resolve():
                raise SmevalsError(f"{text}: is the store merged into (--into {into})")
        pairs.extend(found)
    for _src, target in pairs:
        folders.refuse_links(target)         # never written through a linked store folder
    done = []
    for src, target in pairs:
        try:
            merged = merge_store(src, target)
        except (StoreError, OSError) as exc:
            raise SmevalsError(f"cannot merge {src} into {target}: {exc}") from None
        each(merged)
        done.append(merged)
    return done
