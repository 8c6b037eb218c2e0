"""The reading interface every source of a store's bytes gives (working tree or git)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from collections.abc import Set as AbstractSet
from typing import Any, NamedTuple, Protocol


class Entry(NamedTuple):
    """One file of an object, as found (not as recorded)."""

    path: str                 # inside the object, with / separators
    size: int
    sha256: str | None        # None for a symlink or a special file
    link: str | None          # symlink target


class Scanned(NamedTuple):
    """One object folder as found: its record bytes (None when absent) and its other files."""

    rel: str
    record: bytes | str | None      # a str says why the record file is not a regular file
    files: list[Entry]


class Source(Protocol):
    """Where a store's bytes come from: the working tree (`FsSource`, writable) or a git
    revision read without a checkout (`GitSource`, read-only). `Store` asks its source and
    never looks at which one it has."""

    label: str
    writable: bool            # objects may be staged here, and read afresh

    def records(self, kind: str, brief: bool) -> tuple[Sequence[str], Sequence[Any]]:
        """(rels, records) of every object of `kind`, sorted, through the index cache; a
        record that cannot be used is given as a str saying why."""
        ...

    def fresh(self, kind: str, parent: str, known: AbstractSet[str]) -> list[tuple[str, Any]]:
        """(id, record or why not) of each object of one folder, read now past any cache,
        ids in `known` left out. Only a writable source can."""
        ...

    def afresh(self) -> Source:
        """This source, forgetting what it has listed (itself when it cannot change)."""
        ...

    def empty(self) -> bool:
        """Whether the source holds no object folder of any kind."""
        ...

    def objects(self, kind: str) -> list[str]:
        """Every object folder of `kind`, relative to the store root, sorted."""
        ...

    def read(self, rel: str) -> bytes:
        """The bytes of one file, by path relative to the store root."""
        ...

    def listing(self, rel: str) -> list[Entry]:
        """Every file of one object except its record, sorted by path (sha256 not computed)."""
        ...

    def scan(self, kind: str) -> Iterator[Scanned]:
        """Every object with its record bytes and every other file hashed (for verify)."""
        ...

    def strays(self, kind: str) -> list[str]:
        """Files and hidden or linked folders lying where only object folders belong."""
        ...
