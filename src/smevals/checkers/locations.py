"""Code locations for localization_f1: parsing and line-range overlap.

Accepted shapes: text lines `path:start-end` / `path:line` / `path:1-3,7` / bare
`path` (the last colon splits path from ranges); a list of such strings or of objects
`{path, lines: [[start, end], ...]}`; one such object; or a map `{path: ranges}`
whose ranges are null (whole file), `"5-14,20"`, or a list of `[start, end]` pairs
and line numbers. Ranges are inclusive; reversed pairs are swapped; paths merge.
"""

from __future__ import annotations

from typing import Any

from smevals.checkers.base import fail, is_number

Ranges = list[tuple[int, int]]
Locations = dict[str, Ranges | None]


def parse_locations(value: object, what: str, score: float | None = None) -> Locations:
    """Parse `value`; fail (with `score`) when it is empty or any part unparseable."""
    found: Locations = {}
    try:
        for path, ranges in _entries(value):
            _merge(found, path, ranges)
    except ValueError as exc:
        fail(f"{what}: {exc}", score=score)
    if not found:
        fail(f"{what}: no locations", score=score)
    return found


def _entries(value: object) -> list[tuple[str, Ranges | None]]:
    if isinstance(value, str):
        return _parse_text(value)
    if isinstance(value, list):
        return [e for item in value for e in _entries_of_item(item)]
    if isinstance(value, dict):
        return _entries_of_item(value)
    raise ValueError(f"unreadable locations of type {type(value).__name__}")


def _entries_of_item(item: object) -> list[tuple[str, Ranges | None]]:
    if isinstance(item, str):
        return [_parse_line(item.strip())] if item.strip() else []
    if not isinstance(item, dict):
        raise ValueError(f"unreadable location {str(item)[:60]!r}")
    if isinstance(item.get("path"), str) and set(item) <= {"path", "lines"}:
        return [(_path(item["path"]), _ranges(item.get("lines")))]
    return [(_path(str(path)), _ranges(spec)) for path, spec in item.items()]


def _path(path: str) -> str:
    path = path.strip()
    if not path:
        raise ValueError("a location has an empty path")
    return path


def _parse_text(text: str) -> list[tuple[str, Ranges | None]]:
    """Location lines; the common `path:a-b` is parsed inline (outputs can be long)."""
    out: list[tuple[str, Ranges | None]] = []
    for raw in text.splitlines():
        line = raw.strip()
        path, colon, spec = line.rpartition(":")
        start, dash, end = spec.partition("-")
        if colon and dash and start.isdigit() and end.isdigit() and (start + end).isascii():
            low, high = int(start), int(end)
            out.append((_path(path), [(low, high) if low <= high else (high, low)]))
        elif line:
            out.append(_parse_line(line))
    return out


def _parse_line(text: str) -> tuple[str, Ranges | None]:
    path, colon, spec = text.rpartition(":")
    if not colon:
        return _path(text), None
    return _path(path), _range_text(spec, text)


def _range_text(spec: str, line: str) -> Ranges:
    start, dash, end = spec.partition("-")
    if dash and start.isdigit() and end.isdigit() and start.isascii() and end.isascii():
        low, high = int(start), int(end)  # the common `a-b`, inlined for speed
        return [(low, high) if low <= high else (high, low)]
    ranges = []
    for part in spec.split(","):
        start, dash, end = part.partition("-")
        start, end = start.strip(), end.strip() if dash else start.strip()
        if not (_digits(start) and _digits(end)):
            raise ValueError(f"unparseable location {line[:80]!r}")
        ranges.append(_pair(int(start), int(end)))
    return ranges


def _digits(text: str) -> bool:
    return text.isdigit() and text.isascii()


def _ranges(spec: object) -> Ranges | None:
    if spec is None:
        return None
    if isinstance(spec, str):
        return _range_text(spec, spec)
    if not isinstance(spec, list) or not spec:
        raise ValueError(f"unreadable line ranges {str(spec)[:60]!r}")
    return [_range_item(item) for item in spec]


def _range_item(item: Any) -> tuple[int, int]:
    if _line_number(item):
        return (int(item), int(item))
    if isinstance(item, list) and len(item) == 2 and all(map(_line_number, item)):
        return _pair(int(item[0]), int(item[1]))
    raise ValueError(f"unreadable line range {str(item)[:60]!r}")


def _line_number(value: object) -> bool:
    return is_number(value) and float(value).is_integer() and value >= 0


def _pair(start: int, end: int) -> tuple[int, int]:
    return (start, end) if start <= end else (end, start)


def _merge(found: Locations, path: str, ranges: Ranges | None) -> None:
    if path not in found:
        found[path] = ranges
    elif ranges is not None:
        found[path] = (found[path] or []) + ranges


def merged(ranges: Ranges) -> Ranges:
    """Sorted, non-overlapping, non-adjacent inclusive ranges."""
    out: Ranges = []
    for start, end in sorted(ranges):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def _size(ranges: Ranges) -> int:
    return sum(end - start + 1 for start, end in ranges)


def _intersection(a: Ranges, b: Ranges) -> int:
    total, i, j = 0, 0, 0
    while i < len(a) and j < len(b):
        low, high = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0, high - low + 1)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def iou(a: Ranges | None, b: Ranges | None) -> float:
    """Line-set intersection over union; two whole-file entries count as 1."""
    if a is None or b is None:
        return 1.0 if a is None and b is None else 0.0
    a, b = merged(a), merged(b)
    shared = _intersection(a, b)
    return shared / (_size(a) + _size(b) - shared)


def line_iou(cited: Locations, gold: Locations) -> float:
    """Mean IoU over the files both name (0 when they share none)."""
    shared = [path for path in gold if path in cited]
    if not shared:
        return 0.0
    return sum(iou(cited[p], gold[p]) for p in shared) / len(shared)
