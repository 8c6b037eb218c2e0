"""A disposable cache of an Eval's parsed authoring files, so that a command does not parse
thousands of task files again when none changed.

One marshal file per Eval folder (in the cache folder of files/cachefile.py) holds, for every
file that loaded with no problem, its stat stamp (inode, size, mtime and ctime in ns) and
what was read: the data and the line and column of every field (for a data file of
tasks/, evaldef/datafile.py, its rows: one entry for the whole file). An entry is used only
while the file's stamp is the same; a file changed within RACY_NS of a read is not cached
(a second change in the same clock tick could keep its stamp). A file with a problem is
never cached, so every error is found and reported by reading the file, as before. A
cache file that is unreadable, of another version, or made by other schemas is ignored
and written again.
"""

from __future__ import annotations

import marshal
import os
import sys
import time
from pathlib import Path
from typing import Any

from smevals.evaldef.yamlio import YamlDoc
from smevals.files.cachefile import cache_dir, enabled, folder_key, read_marshal, write_marshal
from smevals.store.index import RACY_NS

VERSION = 1
_CODE = ("schemas/eval.schema.json", "schemas/task.schema.json", "schemas/config.schema.json",
         "schemas/grader.schema.json", "schemas/__init__.py", "schemas/words.py",
         "evaldef/yamlio.py", "evaldef/yamlparse.py", "evaldef/schema.py", "evaldef/datafile.py")

Stamp = tuple[int, int, int, int]
Entry = tuple[Stamp, Any, Any, Any, bytes]          # stamp, data, locs, vlocs, raw


class Definitions:
    """The cached files of one Eval folder: `get` what is current, `put` what was read,
    `save` at the end."""

    def __init__(self, folder: Path, on: bool = True):
        self.on = on and enabled()
        self.path = ""
        self.header: tuple[Any, ...] = ()
        self.old: dict[str, Entry] = {}
        self.new: dict[str, Entry] = {}
        if self.on:
            real = os.path.realpath(folder)
            self.header = (b"smevals-defs", VERSION, sys.version_info[:2], real, _code())
            self.path = str(cache_dir() / f"defs-{folder_key(real)}.marshal")
            self.old = _load(self.path, self.header)
        self.racy_ns = time.time_ns() - RACY_NS

    def get(self, path: Path, display: str) -> tuple[Stamp | None, YamlDoc | None]:
        """(the file's stamp, the document as cached) — None for either when unknown."""
        if not self.on:
            return None, None
        try:
            st = os.stat(path)
        except OSError:
            return None, None
        stamp = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
        hit = self.old.get(str(path))
        if hit is None or hit[0] != stamp:
            return stamp, None
        self.new[str(path)] = hit
        return stamp, YamlDoc(display, hit[1], hit[2], hit[3], hit[4])

    def put(self, path: Path, stamp: Stamp | None, doc: YamlDoc, keep_raw: bool) -> None:
        """Remember a document that loaded with no problem (unless changed too recently)."""
        if stamp is None or stamp[2] >= self.racy_ns or stamp[3] >= self.racy_ns:
            return
        entry = (stamp, doc.data, doc.locs, doc.vlocs, doc.raw if keep_raw else b"")
        try:
            marshal.dumps(entry)            # dates and other YAML types marshal cannot keep
        except ValueError:
            return
        self.new[str(path)] = entry

    def save(self) -> None:
        """Write the cache when what is current differs from what was loaded."""
        if self.on and self.new != self.old:
            write_marshal(self.path, (*self.header, self.new))


def _code() -> tuple[Any, ...]:
    """Stamps of the schemas and readers the cached documents were checked by."""
    base = Path(__file__).resolve().parent.parent
    out: list[tuple[int, int] | None] = []
    for rel in _CODE:
        try:
            st = os.stat(base / rel)
        except OSError:
            out.append(None)
            continue
        out.append((st.st_size, st.st_mtime_ns))
    return tuple(out)


def _load(path: str, header: tuple[Any, ...]) -> dict[str, Entry]:
    data = read_marshal(path)
    if not (isinstance(data, tuple) and len(data) == len(header) + 1
            and data[:-1] == header and isinstance(data[-1], dict)):
        return {}
    return {name: entry for name, entry in data[-1].items() if _sound(entry)}


def _sound(entry: object) -> bool:
    return (isinstance(entry, tuple) and len(entry) == 5 and isinstance(entry[0], tuple)
            and isinstance(entry[2], dict) and isinstance(entry[3], dict)
            and isinstance(entry[4], bytes))
