"""`smevals verify` (cli/verify_cmd.py): every store the paths name verified (which stores
they name is smevals.evaldef.stores)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from smevals.errors import SmevalsError
from smevals.evaldef.stores import store_roots
from smevals.files.gitcat import SourceError
from smevals.store.verify import Damage, verify_store


@dataclass
class VerifyReport:
    checked: int = 0
    problems: list[tuple[Path, Damage]] = field(default_factory=list)


def verify_command(paths: tuple[str, ...], store: str | None, rev: str | None) -> VerifyReport:
    report = VerifyReport()
    for root in store_roots(paths, store):
        if not root.exists() and not rev:
            continue
        try:
            count, problems = verify_store(root, rev)
        except SourceError as exc:
            raise SmevalsError(str(exc)) from None
        report.checked += count
        report.problems.extend((root, p) for p in problems)
    return report
