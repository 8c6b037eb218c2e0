"""`smevals show` (cli/show_cmd.py): a Run's or Grade's record, or one of its files (the
object an id names is found by smevals.evaldef.stores)."""

from __future__ import annotations

from typing import Any

from smevals.errors import SmevalsError
from smevals.evaldef.load import display_path
from smevals.files.gitcat import SourceError
from smevals.store.layout import RECORD_NAMES
from smevals.store.read import AnyObj, Obj, Store
from smevals.store.records import GradeRecord, RunRecord


def show_object(st: Store, obj: AnyObj,
                name: str | None) -> tuple[RunRecord | GradeRecord | None, bytes]:
    """(record, record bytes) to show an object, or (None, content) of one of its files."""
    record_name = RECORD_NAMES[obj.kind]
    if name is None:
        return obj.record, _read(st, obj, record_name)
    listed = {f.get("path") for f in obj.record.get("files", []) if isinstance(f, dict)}
    if name not in listed | {record_name}:
        raise SmevalsError(f"{obj.kind} {obj.id} has no file '{name}'; files: "
                           + ", ".join(sorted(str(p) for p in listed | {record_name})))
    return None, _read(st, obj, name)


def _read(st: Store, obj: Obj[Any], name: str) -> bytes:
    try:
        return st.read_file(obj, name)
    except (OSError, SourceError) as exc:
        raise SmevalsError(f"cannot read {name} of {obj.kind} {obj.id}: {exc}") from None


def object_location(st: Store, obj: Obj[Any]) -> str:
    where = display_path(st.path_of(obj))
    return f"{st.rev}:{where}" if st.rev else where
