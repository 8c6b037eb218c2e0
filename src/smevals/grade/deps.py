"""The files a grader's checker programs read from their Eval, beyond the programs themselves:
found in a program's text (Python imports, shell `.`/`source`) or declared by a Check's
`depends:` globs. Each is hashed into the grader version (grade/version.py), so editing a
module a checker imports makes a new version. docs/grading.md states the exact rule.

Nothing is executed or imported: Python programs are parsed with `ast`, shell scripts are
scanned line by line. Only regular files inside the Eval folder count (a symbolic link
counts as the file it names when that is inside the Eval; never a FIFO or a device, the
results store, a hidden folder or `__pycache__`), so a revision's mirror
(evaldef/committed.py), which holds the whole Eval folder as committed, gives the same
files as a checkout of that revision.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from pathlib import Path

from smevals.evaldef.discover import SKIP_DIRS
from smevals.evaldef.model import Grader
from smevals.files.regular import read_regular

PARSE_CAP = 1 << 20              # a program larger than this is hashed, not read for imports
STORE_DIR = "results"            # the Eval's default store: never a dependency
PYTHON = re.compile(r"(python|pypy)[0-9.]*")
SHELLS = frozenset({"sh", "bash", "dash", "ksh", "zsh", "ash", "mksh"})


def eval_dir(grader: Grader) -> Path:
    """The Eval folder of a grader (`<eval>/graders/<name>.yaml`)."""
    return grader.path.parent.parent


def language(name: str, data: bytes) -> str | None:
    """"python", "shell" or None: by the `#!` line when there is one (an interpreter named
    python*/pypy*, or sh, bash, dash, ksh, zsh, ash, mksh; through `env` too), else by the
    file name's extension (.py; .sh, .bash)."""
    if data.startswith(b"#!"):
        words = data[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
        interp = os.path.basename(words[0]) if words else ""
        if interp == "env":
            interp = next((w for w in words[1:] if not w.startswith("-") and "=" not in w), "")
        if PYTHON.fullmatch(interp):
            return "python"
        return "shell" if interp in SHELLS else None
    suffix = os.path.splitext(name)[1]
    if suffix == ".py":
        return "python"
    return "shell" if suffix in (".sh", ".bash") else None


def found_dependencies(root: Path, programs: list[Path]) -> list[Path]:
    """Files inside the Eval folder `root` that `programs` import or source, transitively
    (the programs themselves left out), sorted."""
    top = _real(root)
    seen: set[str] = set()
    out: set[str] = set()
    queue: list[tuple[str, str | None, str]] = []     # (file, language or None, its home)
    for program in programs:
        path = _real(program)
        if path not in seen and _inside(path, top):
            seen.add(path)
            queue.append((path, None, os.path.dirname(path)))
    while queue:
        path, lang, home = queue.pop()
        data = _read(path)
        if data is None:
            continue
        lang = lang or language(path, data)
        for found in _references(path, lang, data, home, top):
            if found not in seen and _inside(found, top) and _regular(found):
                seen.add(found)
                out.add(found)
                queue.append((found, lang, home))
    return [Path(p) for p in sorted(out)]


def _references(path: str, lang: str | None, data: bytes, home: str, top: str) -> list[str]:
    if len(data) > PARSE_CAP:
        return []
    if lang == "python":
        return python_imports(path, data, home)
    if lang == "shell":
        return shell_sources(data, home, top)
    return []


# --- Python ------------------------------------------------------------------------------


def python_imports(path: str, data: bytes, home: str) -> list[str]:
    """The files of the modules `path` imports that exist: absolute imports are looked up in
    `home` (the checker program's folder, the first entry of its sys.path), relative ones in
    the importing module's package. Every package on the way counts (its __init__.py)."""
    if b"import" not in data:
        return []
    try:
        tree = ast.parse(data, filename=path)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []                       # not Python after all: no Python dependencies
    here = os.path.dirname(path)
    out: list[str] = []
    for node in _import_statements(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                out += _module_files(home, alias.name.split("."))
        elif isinstance(node, ast.ImportFrom):
            base = home if node.level == 0 else _up(here, node.level - 1)
            parts = node.module.split(".") if node.module else []
            out += _module_files(base, parts)
            folder = os.path.join(base, *parts)
            for alias in node.names:          # `from pkg import mod` imports pkg/mod.py
                if alias.name != "*":
                    out += _module_files(folder, [alias.name])
    return out


BLOCKS = ("body", "orelse", "finalbody", "handlers", "cases")


def _import_statements(tree: ast.Module) -> Iterator[ast.stmt]:
    """Every statement of the module, inside functions, classes and blocks too (imports
    are statements: expressions need no visit)."""
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.stmt):
            yield node
        for block in BLOCKS:
            inner = getattr(node, block, None)
            if isinstance(inner, list):
                stack.extend(reversed(inner))


def _up(folder: str, levels: int) -> str:
    for _ in range(levels):
        folder = os.path.dirname(folder)
    return folder


def _module_files(base: str, parts: list[str]) -> list[str]:
    """The files Python would run to import the dotted name `parts` from the folder `base`:
    each package's __init__.py on the way, and the module's own file."""
    out: list[str] = []
    folder = base
    for part in parts:
        if not part.isidentifier():
            break
        module = os.path.join(folder, part + ".py")
        package = os.path.join(folder, part)
        init = os.path.join(package, "__init__.py")
        if os.path.isfile(init):                # a package wins over a module, as in Python
            out.append(init)
        elif os.path.isfile(module):
            out.append(module)
            break
        elif not os.path.isdir(package):        # a folder alone is a namespace package
            break
        folder = package
    return [os.path.realpath(p) for p in out]


# --- shell -------------------------------------------------------------------------------

SOURCE = re.compile(r"\s*(?:\.|source)\s+(\S.*)")
NAME = r"[\w.+@%=,-][\w./+@%=,-]*"
BESIDE = re.compile(rf"(?:\$\(dirname \$\{{?0\}}?\)|\$\{{0%/\*\}})/({NAME})")
IN_EVAL = re.compile(rf"\$\{{?SMEVALS_EVAL_DIR\}}?/({NAME})")
LITERAL = re.compile(NAME)


def shell_sources(data: bytes, home: str, top: str) -> list[str]:
    """The files a shell script sources with `.` or `source` at the start of a line:
    `"$(dirname "$0")/lib.sh"` (or `${0%/*}/lib.sh`) and a plain relative path such as
    `./lib.sh` name a file beside the checker program; `"$SMEVALS_EVAL_DIR/lib/x.sh"` one in
    the Eval folder. Quotes are ignored; anything else (another variable, a glob, a command)
    is not followed."""
    out = []
    for line in data.decode("utf-8", "replace").splitlines():
        match = SOURCE.match(line)
        if match is None:
            continue
        arg = match.group(1).replace('"', "").replace("'", "")
        words = re.sub(r"\$\(dirname \$\{?0\}?\)", "$(dirname_$0)", arg).split()
        arg = words[0].replace("$(dirname_$0)", "$(dirname $0)").rstrip(";") if words else ""
        target = _source_target(arg, home, top)
        if target is not None:
            out.append(os.path.realpath(target))
    return out


def _source_target(arg: str, home: str, top: str) -> str | None:
    if found := BESIDE.fullmatch(arg):
        return os.path.join(home, found.group(1))
    if found := IN_EVAL.fullmatch(arg):
        return os.path.join(top, found.group(1))
    if LITERAL.fullmatch(arg) and not arg.startswith("/"):
        return os.path.join(home, arg)
    return None


# --- declared: `depends:` ----------------------------------------------------------------


def glob_problem(pattern: str, folder: Path, root: Path) -> str | None:
    """Why the glob `pattern` (relative to the grader's `folder`) is refused, or None."""
    if not pattern.strip():
        return "is empty"
    if os.path.isabs(pattern):
        return "is an absolute path: give a glob relative to the grader's folder"
    rel = os.path.normpath(os.path.join(os.path.relpath(folder, root), pattern))
    if rel == ".." or rel.startswith(".." + os.sep):
        return "leads outside the Eval folder"
    return None


def declared(folder: Path, root: Path, pattern: str) -> list[Path]:
    """The files the glob `pattern` names (relative to `folder`, `**` for any depth),
    inside the Eval folder `root`: regular files only, outside the store, hidden folders and
    __pycache__, which are never walked. A refused glob (glob_problem) names nothing."""
    if glob_problem(pattern, folder, root) is not None:
        return []
    top = _real(root)
    rel = os.path.normpath(os.path.join(os.path.relpath(folder, root), pattern))
    parts = rel.replace(os.sep, "/").split("/")
    fixed = 0
    while fixed < len(parts) and not any(c in parts[fixed] for c in "*?["):
        fixed += 1
    start = os.path.join(top, *parts[:fixed])
    if fixed == len(parts):
        found = [start]                                   # no wildcard: one path
    else:
        wanted = _glob_regex(parts[fixed:])
        found = [path for path, below in _walk(start, top) if wanted.fullmatch(below)]
    out = {Path(real) for real in map(os.path.realpath, found)
           if _inside(real, top) and _regular(real) and not _skipped(real, top)}
    return sorted(out)


def _walk(start: str, top: str) -> Iterator[tuple[str, str]]:
    """(path, path relative to `start` with / separators) of every file below `start`,
    leaving out the store, hidden folders and __pycache__ (links to folders not followed)."""
    for here, dirs, files in os.walk(start):
        dirs[:] = [d for d in dirs if not (d.startswith(".") or d in SKIP_DIRS
                                           or (here == top and d == STORE_DIR))]
        rel = os.path.relpath(here, start)
        for name in files:
            below = name if rel == "." else f"{rel}/{name}".replace(os.sep, "/")
            yield os.path.join(here, name), below


def _glob_regex(parts: list[str]) -> re.Pattern[str]:
    """The path segments of a glob as one regex: `**` any number of folders (or, last,
    everything below), `*`, `?` and `[...]` within one name, which they never start with a
    dot unless the pattern does."""
    out = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            out.append("(?:[^/]+/)*[^/]+" if last else "(?:[^/]+/)*")
        else:
            out.append(_segment(part) + ("" if last else "/"))
    return re.compile("".join(out))


def _segment(part: str) -> str:
    out = "" if part.startswith(".") else r"(?!\.)"
    index = 0
    while index < len(part):
        char = part[index]
        close = part.find("]", index + 2) if char == "[" else -1
        if char == "*":
            out += "[^/]*"
        elif char == "?":
            out += "[^/]"
        elif close > 0:
            body = part[index + 1:close]
            body = "^" + body[1:] if body.startswith("!") else body
            out += "[" + body.replace("\\", "\\\\") + "]"
            index = close
        else:
            out += re.escape(char)
        index += 1
    return out


def _skipped(path: str, top: str) -> bool:
    parts = Path(os.path.relpath(path, top)).parts
    return (parts[0] == STORE_DIR
            or any(p.startswith(".") or p in SKIP_DIRS for p in parts[:-1]))


# --- helpers -----------------------------------------------------------------------------


def all_dependencies(grader: Grader, programs: list[Path]) -> Iterator[Path]:
    """Every dependency of the grader: found in its programs, then declared by its Checks
    (the programs and the grader file itself left out: they are hashed on their own)."""
    root = eval_dir(grader)
    own = {_real(p) for p in programs} | {_real(grader.path)}
    files = set(found_dependencies(root, programs))
    for check in grader.checks:
        for pattern in check.depends:
            files.update(declared(grader.path.parent, root, pattern))
    yield from (f for f in sorted(files) if str(f) not in own)


def _real(path: Path | str) -> str:
    return os.path.realpath(path)


def _inside(path: str, top: str) -> bool:
    return path.startswith(top + os.sep)


def _regular(path: str) -> bool:
    """A regular file (`path` is a real path: a symbolic link inside the Eval counts as the
    file it names, one leading out of the Eval never does)."""
    return os.path.isfile(path)


def _read(path: str) -> bytes | None:
    try:
        return read_regular(path)[1]
    except OSError:
        return None
