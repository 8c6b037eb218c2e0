"""Human labels are Grades of the reserved grader `human`: its name and who gave a label."""

from __future__ import annotations

from smevals.evaldef.load import RESERVED_GRADER
from smevals.store.records import GradeRecord

HUMAN = RESERVED_GRADER
VERSION = "label"


def who(record: GradeRecord) -> str:
    """`Name <email>` of a label's record."""
    label = record.get("label")
    by = label.get("by") if isinstance(label, dict) else None
    by = by if isinstance(by, dict) else {}
    name, email = by.get("name"), by.get("email")
    return " ".join(str(p) for p in (name, f"<{email}>" if email else None) if p) or "unknown"
