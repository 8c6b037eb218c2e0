"""Parse one YAML authoring file (the checks of yamlio.py's docstring): PyYAML's nodes
checked, located and built.

Imported only when a file is parsed, so that a command whose Eval comes from the
definitions cache (a warm `report`) never imports PyYAML (about 15 ms).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml

from smevals.errors import Problem
from smevals.evaldef.yamlio import (
    INT_MAX,
    INT_MIN,
    MAX_ALIAS_NODES,
    MAX_DEPTH,
    FieldPath,
    Pos,
    YamlDoc,
    YamlProblem,
    dotted,
)

try:  # the C loader is much faster when PyYAML was built with libyaml
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


def load_yaml(path: Path, display: str | None = None) -> YamlDoc:
    """Load `path`; raise `YamlProblem` with a located message when it cannot be read."""
    shown = display or str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise YamlProblem(Problem(shown, 1, 1, f"cannot read file: {exc.strerror}")) from None
    text = _decode(raw, shown)
    doc = YamlDoc(shown, None, raw=raw)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is not None:
            bound_aliases(node, shown)
            _walk(node, (), doc, loader)
            doc.data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise YamlProblem(_syntax_problem(exc, text, shown)) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(Problem(shown, 1, 1, f"invalid YAML: {exc}")) from None
    finally:
        loader.dispose()
    return doc


def _decode(raw: bytes, shown: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        msg = f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
        raise YamlProblem(Problem(shown, line, col, msg)) from None
    return text.removeprefix("\ufeff")




def bound_aliases(root: yaml.Node, shown: str) -> None:
    """Refuse a document whose aliases would expand it by more than MAX_ALIAS_NODES nodes
    (a "billion laughs" bomb: a few hundred bytes that expand to billions), that refers
    to itself, or whose lists and mappings nest more than MAX_DEPTH levels deep (aliases
    expanded). Both are counted over the node graph, each node once, so the check is as
    quick as the document is small."""
    sizes, depths = _sizes(root, shown)
    if sizes[id(root)] - len(sizes) > MAX_ALIAS_NODES:
        node = root
        while True:             # down to the node whose aliases blow up, for its line
            big = [child for child in _children(node) if sizes[id(child)] > MAX_ALIAS_NODES]
            if not big:
                break
            node = big[0]
        raise YamlProblem(Problem(shown, node.start_mark.line + 1, node.start_mark.column + 1,
                                  f"aliases expand this document to {sizes[id(root)]:,} nodes, "
                                  f"more than {MAX_ALIAS_NODES:,} above its own size (an alias "
                                  "bomb?)"))
    if depths[id(root)] > MAX_DEPTH:
        raise YamlProblem(_too_deep(root, depths, shown))


def _too_deep(root: yaml.Node, depths: dict[int, int], shown: str) -> Problem:
    """The problem at the first list or mapping nested one level below MAX_DEPTH, following
    the deepest path down, named by the field it is in (`checks[0].extra`, not a hundred
    list indexes)."""
    node, where = root, FieldPath()
    for _ in range(MAX_DEPTH):
        part, node = next((part, child) for part, child in _parts(node)
                          if depths[id(child)] == depths[id(node)] - 1)
        where += (part,)
    head = where[:4]
    named = max((i for i, part in enumerate(head) if isinstance(part, str)), default=-1)
    return Problem(shown, node.start_mark.line + 1, node.start_mark.column + 1,
                   f"values are nested more than {MAX_DEPTH} levels deep (lists and mappings)",
                   dotted(head[:named + 1]))


def _parts(node: yaml.Node) -> list[tuple[str | int, yaml.Node]]:
    """Each child of a list or mapping with the key or index it is reached by."""
    if isinstance(node, yaml.MappingNode):
        return [(str(key.value) if isinstance(key, yaml.ScalarNode) else "?", part)
                for key, value in node.value for part in (key, value)]
    if isinstance(node, yaml.SequenceNode):
        return list(enumerate(node.value))
    return []


def _sizes(root: yaml.Node, shown: str) -> tuple[dict[int, int], dict[int, int]]:
    """id(node) -> the number of nodes it stands for once every alias is expanded, and
    id(node) -> how many levels of lists and mappings it holds (0 for a scalar)."""
    sizes: dict[int, int] = {}
    depths: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            children = _children(node)
            sizes[key] = 1 + sum(sizes[id(c)] for c in children)
            depths[key] = (0 if isinstance(node, yaml.ScalarNode)
                           else 1 + max((depths[id(c)] for c in children), default=0))
            continue
        if key in sizes:
            continue
        if key in open_nodes:
            raise YamlProblem(Problem(shown, node.start_mark.line + 1,
                                      node.start_mark.column + 1,
                                      "an alias refers to a node that contains it (a "
                                      "recursive document cannot be loaded)"))
        open_nodes.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node) if id(child) not in sizes)
    return sizes, depths


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _walk(node: yaml.Node, where: FieldPath, doc: YamlDoc, loader: _Loader) -> None:
    """Record where each field is, refuse duplicate keys and values no record can hold
    (recursion is bounded: `bound_aliases` has checked the depth)."""
    doc.locs.setdefault(where, (node.start_mark.line + 1, node.start_mark.column + 1))
    doc.vlocs[where] = (node.start_mark.line + 1, node.start_mark.column + 1)
    _check_node(node, where, doc, loader)
    if isinstance(node, yaml.MappingNode):
        seen: dict[Any, Pos] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else str(key_node)
            here = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key in seen:
                first = seen[key][0]
                msg = f"duplicate key '{key}' (first defined on line {first})"
                raise YamlProblem(Problem(doc.path, here[0], here[1], msg))
            seen[key] = here
            doc.locs[where + (key,)] = here
            _check_node(key_node, where, doc, loader, "a key: ")
            _walk(value_node, where + (key,), doc, loader)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, where + (index,), doc, loader)


_TAG = "tag:yaml.org,2002:"
_SCALARS = frozenset(_TAG + name for name in ("str", "int", "float", "bool", "null",
                                                "timestamp", "merge"))
_COLLECTIONS = frozenset((_TAG + "map", _TAG + "seq"))
_STR = _TAG + "str"


def _check_node(node: yaml.Node, where: FieldPath, doc: YamlDoc, loader: _Loader,
                what: str = "") -> None:
    """Raise a located problem when `node` is a value (or, with `what`, a key of the
    mapping at `where`) that no record can hold exactly."""
    if node.tag in _COLLECTIONS or (node.tag == _STR and "\0" not in node.value):
        return                                  # most nodes: quick
    why = _node_problem(node, loader)
    if why is not None:
        mark = node.start_mark
        raise YamlProblem(Problem(doc.path, mark.line + 1, mark.column + 1, what + why,
                                  dotted(where)))


def _node_problem(node: yaml.Node, loader: _Loader) -> str | None:
    tag = str(node.tag)
    if not isinstance(node, yaml.ScalarNode):
        return None if tag in _COLLECTIONS else _type_problem(tag)
    if tag == _STR:
        return None if "\0" not in node.value else (
            "the text holds a NUL character (U+0000), which no runner, checker, environment "
            "variable or file name can be given")
    if tag not in _SCALARS:
        return _type_problem(tag)
    if tag == _TAG + "int" and len(node.value) > 100:     # int() of 4,300+ digits raises
        return _outside_64_bits(node.value)
    if tag not in (_TAG + "int", _TAG + "float", _TAG + "timestamp"):
        return None
    try:
        value = loader.construct_object(node)
    except (ValueError, OverflowError) as exc:
        return f"{_short(node.value)} is not a valid {tag.removeprefix(_TAG)}: {exc}"
    if isinstance(value, int) and not INT_MIN <= value <= INT_MAX:
        return _outside_64_bits(node.value)
    if isinstance(value, float) and not math.isfinite(value):
        return (f"{_short(node.value)} is not a finite number (.inf, -.inf, .nan and numbers "
                "too large for a float are refused)")
    return None


def _outside_64_bits(text: str) -> str:
    return f"the integer {_short(text)} is outside 64 bits ({INT_MIN} to {INT_MAX})"


def _type_problem(tag: str) -> str:
    shown = "!!" + tag.removeprefix(_TAG) if tag.startswith(_TAG) else tag
    return (f"the YAML type {shown} cannot be used: a value is a string, number, boolean, "
            "null, date, list or mapping")


def _short(text: str) -> str:
    return text if len(text) <= 40 else f"{text[:20]}... ({len(text):,} characters)"


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str, shown: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    lines = text.splitlines()
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    if "\t" in source[: len(source) - len(source.lstrip())] or "'\\t'" in str(exc.problem):
        return Problem(shown, line, col, "tab character used for indentation; YAML needs spaces")
    what = exc.problem or str(exc)
    return Problem(shown, line, col, f"invalid YAML: {what}")
