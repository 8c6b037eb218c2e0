"""Writing an object sent by a worker (or sent to one) through the store module."""

from __future__ import annotations

import os
from pathlib import Path

from smevals.scale.packed import Entries, Packed
from smevals.store.merge import copy_in, safe_inner
from smevals.store.write import Written


def unpack(root: Path, packed: Packed) -> Written:
    """Verify and write one Packed object into the store at `root` (StoreError when its
    files or record do not hash as they should)."""

    def fill(folder: Path) -> None:
        for path, mode, data, link in packed.files:
            target = folder / safe_inner(path)
            target.parent.mkdir(parents=True, exist_ok=True)
            if link is not None:
                os.symlink(link, target)
            else:
                target.write_bytes(data or b"")
                target.chmod(mode | 0o200)

    return copy_in(root, packed.kind, packed.rel, packed.record, fill)


def keep_judged(root: Path, entries: Entries) -> None:
    """Keep the judge cache entries a worker made, each verified first (its request hashes
    to its name; one that does not is left out)."""
    from smevals.store import judgecache

    for key, data in entries:
        judgecache.accept(root, key, data)
