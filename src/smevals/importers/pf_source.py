"""Reading a promptfoo config for `smevals import promptfoo`: YAML with line numbers, the
`file://` references it makes, promptfoo's `{{var}}` templates, and the skipped-items list.
"""

from __future__ import annotations

import csv
import glob
import io
import json
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from smevals.errors import SmevalsError
from smevals.evaldef.yamlio import YamlProblem
from smevals.evaldef.yamlparse import bound_aliases

VAR = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
OPEN = re.compile(r"\{\{|\{%")
# Task keys smevals gives a meaning of its own: a promptfoo var of that name is renamed.
RESERVED_KEYS = frozenset({"name", "id", "grading", "messages", "prompt"})
MAX_FILE = 64 * 1024 * 1024


class ImportInputError(SmevalsError):
    """Bad input to an importer: exit 2, naming the file and line."""


@dataclass(frozen=True)
class Skipped:
    where: str          # file:line
    what: str
    why: str

    def line(self) -> str:
        return f"{self.where}: {self.what}: {self.why}"


@dataclass
class Source:
    """A parsed promptfoo config, with the line of each mapping and list item in it."""

    path: Path
    data: dict[str, Any]
    lines: dict[int, int]
    items: dict[int, list[int]]
    skipped: list[Skipped] = field(default_factory=list)
    root: Path | None = None          # the config's folder: what references may name

    @property
    def base(self) -> Path:
        return self.root or self.path.parent

    def where(self, obj: object = None, index: int | None = None, path: Path | None = None,
              line: int | None = None) -> str:
        if line is None and obj is not None:
            line = self.items.get(id(obj), [])[index] if index is not None and \
                index < len(self.items.get(id(obj), [])) else self.lines.get(id(obj))
        return f"{path or self.path}:{line}" if line else str(path or self.path)

    def key_where(self, mapping: dict[str, Any], key: str) -> str:
        """file:line of a mapping's key."""
        keys = list(mapping)
        return self.where(mapping, keys.index(key)) if key in keys else self.where(mapping)

    def skip(self, where: str, what: str, why: str) -> None:
        self.skipped.append(Skipped(where, what, why))

    def resolve(self, ref: str, where: str, field: str = "") -> list[Path]:
        """The files a reference names (`file://` or a bare path; a glob may name several),
        each inside the config's folder; exit 2 if one is outside it, or if none exists."""
        found = self.glob(ref, where, field)
        if not found:
            raise ImportInputError(f"{where}: {_field(field)}{ref}: no such file")
        return found

    def glob(self, ref: str, where: str, field: str = "") -> list[Path]:
        """The files `ref` names (maybe none), refusing (exit 2) any outside the folder."""
        rel, _function = split_ref(ref)
        base = self.base
        if has_magic(rel):
            found = sorted(Path(p) for p in glob.glob(str(base / rel), recursive=True)
                           if os.path.isfile(p))
        else:
            found = [base / rel] if (base / rel).is_file() or _outside(base, base / rel) else []
        for path in found:
            if _outside(base, path):
                raise ImportInputError(
                    f"{where}: {_field(field)}{ref}: outside the config's folder "
                    f"({base.resolve()}): smevals import reads only files under it")
        return found


def _field(field: str) -> str:
    return f"{field}: " if field else ""


def _outside(base: Path, path: Path) -> bool:
    """Whether `path` (its links followed) is outside the folder `base`."""
    return not os.path.realpath(path).startswith(os.path.realpath(base) + os.sep)


SCRIPT_SUFFIXES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".py", ".rb", ".go")


def split_ref(ref: str) -> tuple[str, str | None]:
    """(path, function) of a reference: `file://` dropped, and `:NAME` after a script's
    name is the function it names (`file://check.py:grade`)."""
    rel = ref[len("file://"):] if ref.startswith("file://") else ref
    head, colon, tail = rel.rpartition(":")
    if colon and head.lower().endswith(SCRIPT_SUFFIXES) and tail:
        return head, tail
    return rel, None


def has_magic(text: str) -> bool:
    """Whether a path is a glob pattern, as node-glob sees one: `*`, `?`, `[`, or a brace
    list (`{a,b}`, `{1..3}`)."""
    return bool(re.search(r"[*?[]", text) or re.search(r"\{[^{}]*(,|\.\.)[^{}]*\}", text))


def read_text(path: Path, where: str) -> str:
    try:
        if path.stat().st_size > MAX_FILE or not path.is_file():
            raise ImportInputError(f"{where}: {path}: not a regular file of at most 64 MiB")
        return path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportInputError(f"{where}: {path}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise ImportInputError(f"{where}: {path}: {exc.strerror}") from None


def load_json(text: str, where: str) -> Any:
    """`text` parsed as JSON; an ImportInputError naming `where` when it is not."""
    try:
        return json.loads(text)
    except ValueError as exc:
        raise ImportInputError(f"{where}: not valid JSON: {exc}") from None


def csv_rows(path: Path, text: str, delim: str, strip_names: bool = False
             ) -> Iterator[tuple[str, dict[str, str]]]:
    """(file:line, row by column name) of each non-blank row of a CSV or TSV file's text; a
    row whose cells are not as many as the header's is an ImportInputError naming its line.
    `strip_names`: column names without surrounding spaces."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim)
    header: list[str] | None = None
    start = 1
    for row in reader:
        at, start = f"{path}:{start}", reader.line_num + 1
        if header is None:
            header = [h.strip() for h in row] if strip_names else row
        elif any(cell.strip() for cell in row):
            if len(row) != len(header):
                raise ImportInputError(f"{at}: the row has {len(row)} cells, the header "
                                       f"{len(header)}")
            yield at, dict(zip(header, row, strict=True))


class _Loader(yaml.SafeLoader):
    lines: dict[int, int]
    keys: dict[int, dict[str, int]]
    items: dict[int, list[int]]


def _map(loader: _Loader, node: yaml.MappingNode) -> Any:
    data: dict[Any, Any] = {}
    yield data
    data.update(loader.construct_mapping(node, deep=True))
    loader.lines[id(data)] = node.start_mark.line + 1
    loader.keys[id(data)] = {k.value: k.start_mark.line + 1 for k, _ in node.value
                             if isinstance(k, yaml.ScalarNode)}


def _seq(loader: _Loader, node: yaml.SequenceNode) -> Any:
    data: list[Any] = []
    yield data
    data.extend(loader.construct_sequence(node, deep=True))
    loader.lines[id(data)] = node.start_mark.line + 1
    loader.items[id(data)] = [n.start_mark.line + 1 for n in node.value]


_Loader.add_constructor("tag:yaml.org,2002:map", _map)
# promptfoo reads YAML 1.2: only true/false are booleans (`body: Yes` is the text "Yes").
_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}
for _first in "tTfF":
    _Loader.add_implicit_resolver("tag:yaml.org,2002:bool",
                                  re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"), [_first])
_Loader.add_constructor("tag:yaml.org,2002:seq", _seq)


def load_yaml_lines(path: Path, where: str | None = None) -> tuple[Any, dict[int, int],
                                                                   dict[int, list[int]]]:
    text = read_text(path, where or str(path))
    loader = _Loader(text)
    loader.lines, loader.items, loader.keys = {}, {}, {}
    try:
        node = loader.get_single_node()
        if node is None:
            return None, {}, {}
        bound_aliases(node, str(path))          # a "billion laughs" document is refused
        data = loader.construct_document(node)
    except YamlProblem as exc:
        raise ImportInputError(str(exc)) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark
        at = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise ImportInputError(f"{at}: not valid YAML: {exc.problem}") from None
    except yaml.YAMLError as exc:
        raise ImportInputError(f"{path}: not valid YAML: {exc}") from None
    finally:
        loader.dispose()
    for obj, keys in loader.keys.items():       # a key's own line: (id(mapping), key) → line
        loader.items[obj] = [keys[k] for k in keys]
    return data, loader.lines, loader.items


PROMPTFOO_KEYS = ("prompts", "providers", "targets", "tests")


def load_config(path: Path) -> Source:
    if not path.is_file():
        raise ImportInputError(f"{path}: no such file")
    data, lines, items = load_yaml_lines(path)
    if not isinstance(data, dict) or not any(k in data for k in PROMPTFOO_KEYS):
        raise ImportInputError(f"{path}:1: not a promptfoo config: it needs at least one of "
                               "`prompts`, `providers` (or `targets`) and `tests`")
    return Source(path, data, lines, items)


def key_for(var: str) -> str:
    """The Task key a promptfoo var becomes (smevals' own keys get a `var_` prefix)."""
    return f"var_{var}" if var in RESERVED_KEYS else var


def convert_template(text: str, where: str, src: Source) -> str:
    """promptfoo's `{{var}}` becomes `{{task.var}}`; any other Nunjucks expression or tag is
    kept as literal text (escaped) and reported."""
    out: list[str] = []
    pos = 0
    others: list[str] = []
    for m in OPEN.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        var = VAR.match(text, m.start())
        if var:
            out.append("{{task." + key_for(var.group(1)) + "}}")
            pos = var.end()
            continue
        end = text.find("}}" if m.group() == "{{" else "%}", m.end())
        end = len(text) if end < 0 else end + 2
        others.append(text[m.start():end])
        out.append("\\" + m.group() if m.group() == "{{" else m.group())
        pos = m.end()
    out.append(text[pos:])
    for expr in others:
        src.skip(where, f"template expression {short(expr)}",
                 "only plain {{var}} placeholders have a counterpart; kept as literal text")
    return "".join(out)


def nunjucks_text(value: object) -> str:
    """A var's value as promptfoo's Nunjucks writes it into text: a string as it is, a
    number or boolean as JavaScript writes it, a list's items joined by commas, null as
    nothing, a mapping as `[object Object]`."""
    from smevals.checkers.strict import js_text

    if value is None:
        return ""
    if isinstance(value, list):
        return ",".join(nunjucks_text(v) for v in value)
    if isinstance(value, dict):
        return "[object Object]"
    return js_text(value)


def plain_template(text: str) -> bool:
    """Whether every Nunjucks tag in `text` is a plain `{{var}}` (then `render_vars` gives
    what promptfoo renders)."""
    return all(VAR.match(text, m.start()) for m in OPEN.finditer(text)) and "{#" not in text


def render_vars(value: object, vars_: dict[str, Any]) -> Any:
    """promptfoo fills an assertion's value (a string, or each string of a list) from the
    test's vars: the same for plain `{{var}}` placeholders (a var the test lacks is empty)."""
    if isinstance(value, list):
        return [render_vars(v, vars_) for v in value]
    if not isinstance(value, str):
        return value
    return VAR.sub(lambda m: nunjucks_text(vars_.get(m.group(1))), value)


def short(value: object, room: int = 60) -> str:
    """`value` as text on one line, quoted, cut to `room` characters."""
    text = " ".join(str(value).split())
    return repr(text if len(text) <= room else text[:room - 3] + "...")
