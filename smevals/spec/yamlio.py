"""Read one YAML authoring file into plain data plus the line and column of every field.

Duplicate keys are an error (PyYAML would silently keep the last one), and so are non-UTF-8
bytes, tabs used for indentation, and other syntax errors: each becomes a `Problem` that
names the file, the line and the column.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smevals.errors import Problem

try:  # the C loader is much faster when PyYAML was built with libyaml
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]

Pos = tuple[int, int]
FieldPath = tuple[str | int, ...]


@dataclass
class YamlDoc:
    """A loaded document: its data and the 1-based (line, col) of each field path."""

    path: str
    data: Any
    locs: dict[FieldPath, Pos] = field(default_factory=dict)     # where each key starts
    vlocs: dict[FieldPath, Pos] = field(default_factory=dict)    # where each value starts
    raw: bytes = b""

    def pos(self, where: FieldPath) -> Pos:
        """The position of the nearest known field on the path (the document start at worst)."""
        for cut in range(len(where), -1, -1):
            if where[:cut] in self.locs:
                return self.locs[where[:cut]]
        return (1, 1)

    def problem(self, where: FieldPath, message: str, at_value: bool = False) -> Problem:
        line, col = self.vlocs[where] if at_value and where in self.vlocs else self.pos(where)
        return Problem(self.path, line, col, message, dotted(where))


def dotted(where: FieldPath) -> str:
    """`("checks", 0, "checker")` -> `checks[0].checker`."""
    out = ""
    for part in where:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


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
            _walk(node, (), doc)
            doc.data = loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        raise YamlProblem(_syntax_problem(exc, text, shown)) from None
    except yaml.YAMLError as exc:
        raise YamlProblem(Problem(shown, 1, 1, f"invalid YAML: {exc}")) from None
    finally:
        loader.dispose()
    return doc


class YamlProblem(Exception):
    def __init__(self, problem: Problem):
        self.problem = problem
        super().__init__(problem.render())


def _decode(raw: bytes, shown: str) -> str:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        msg = f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})"
        raise YamlProblem(Problem(shown, line, col, msg)) from None
    return text.removeprefix("\ufeff")


MAX_ALIAS_NODES = 100_000     # nodes aliases may add to a document once expanded


def bound_aliases(root: yaml.Node, shown: str) -> None:
    """Refuse a document whose aliases would expand it by more than MAX_ALIAS_NODES nodes
    (a "billion laughs" bomb: a few hundred bytes that expand to billions), or that refers
    to itself. The expanded size is counted over the node graph, each node once, so the
    check is as quick as the document is small."""
    sizes = _sizes(root, shown)
    if sizes[id(root)] - len(sizes) <= MAX_ALIAS_NODES:
        return
    node = root
    while True:                 # down to the node whose aliases blow up, for its line
        big = [child for child in _children(node) if sizes[id(child)] > MAX_ALIAS_NODES]
        if not big:
            break
        node = big[0]
    raise YamlProblem(Problem(shown, node.start_mark.line + 1, node.start_mark.column + 1,
                              f"aliases expand this document to {sizes[id(root)]:,} nodes, "
                              f"more than {MAX_ALIAS_NODES:,} above its own size (an alias "
                              "bomb?)"))


def _sizes(root: yaml.Node, shown: str) -> dict[int, int]:
    """id(node) -> the number of nodes it stands for once every alias is expanded."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            open_nodes.discard(key)
            sizes[key] = 1 + sum(sizes[id(c)] for c in _children(node))
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
    return sizes


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _walk(node: yaml.Node, where: FieldPath, doc: YamlDoc) -> None:
    doc.locs.setdefault(where, (node.start_mark.line + 1, node.start_mark.column + 1))
    doc.vlocs[where] = (node.start_mark.line + 1, node.start_mark.column + 1)
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
            _walk(value_node, where + (key,), doc)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _walk(item, where + (index,), doc)


def _syntax_problem(exc: yaml.MarkedYAMLError, text: str, shown: str) -> Problem:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    lines = text.splitlines()
    source = lines[line - 1] if 0 < line <= len(lines) else ""
    if "\t" in source[: len(source) - len(source.lstrip())] or "'\\t'" in str(exc.problem):
        return Problem(shown, line, col, "tab character used for indentation; YAML needs spaces")
    what = exc.problem or str(exc)
    return Problem(shown, line, col, f"invalid YAML: {what}")
