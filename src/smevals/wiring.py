"""What a package looks up at run time that a layer above it provides, filled in by the
composition root (smevals/__init__.py, which every import of smevals runs first), so that
no package imports upward and the dependency stays in plain sight.

CHECKER_FAMILIES: the built-in checker families that live above smevals.checkers, each a
function giving its table of checkers by name. The judge checkers (smevals.judges.checks)
are one: they ask judges through the judges layer, which itself uses the checkers'
declarations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

CHECKER_FAMILIES: dict[str, Callable[[], Mapping[str, Any]]] = {}
