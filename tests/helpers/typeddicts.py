"""A TypedDict held to the JSON Schema node it types: the same keys, the same required ones
(store/records.py, report/jsondoc.py, site/pagedata.py)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, ForwardRef


def typed_keys(typed: Any, working: Collection[str] = ()) -> tuple[set[str], set[str]]:
    """All keys of a TypedDict and its required ones, read from its annotations (under
    `from __future__ import annotations` Python 3.11 counts a NotRequired key as required;
    a TypedDict of the functional form holds the types themselves);
    `working`: keys held only while a record is made, left out."""
    keys: set[str] = set()
    required: set[str] = set()
    for key, annotation in typed.__annotations__.items():
        if key in working:
            continue
        text = annotation.__forward_arg__ if isinstance(annotation, ForwardRef) else str(
            annotation)
        keys.add(key)
        if typed.__total__ and not text.removeprefix("typing.").startswith("NotRequired["):
            required.add(key)
    return keys, required


def key_differences(node: Mapping[str, Any], typed: Any, working: Collection[str] = ()
                    ) -> list[str]:
    """What an object schema `node` and the TypedDict `typed` disagree on."""
    keys, required = typed_keys(typed, working)
    named = set(node["properties"])
    needed = set(node.get("required", []))
    return ([f"only in the schema: {k}" for k in sorted(named - keys)]
            + [f"only in {typed.__name__}: {k}" for k in sorted(keys - named)]
            + [f"required by one only: {k}" for k in sorted(needed ^ required)])
