"""Where a store's bytes come from: the working tree (`FsSource`), or a git revision without a
checkout (`GitSource`). Both give the same reading interface (`Source`)."""

from __future__ import annotations

from smevals.store.base import Entry, Scanned, Source, SourceError
from smevals.store.fssource import FsSource
from smevals.store.gitsource import GitSource
from smevals.store.layout import DEPTH

__all__ = ["DEPTH", "Entry", "FsSource", "GitSource", "Scanned", "Source", "SourceError"]
