"""An assertion's value as promptfoo 0.121 renders it before checking: a `file://` value read
(a `.txt` file's text trimmed, a `.json` or `.yaml` file's data), `{{var}}` placeholders
filled from the test's vars, and a javascript or python assertion's `file://` script copied
beside the grader."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

from smevals.importers.pf_asserts import EXACT, MISSING, Mapped
from smevals.importers.pf_source import (
    Source,
    load_yaml_lines,
    plain_template,
    read_text,
    render_vars,
    short,
    split_ref,
)

SCRIPTS = "promptfoo"          # where copied scripts go, under graders/


def resolve_value(src: Source, kind: str, value: object, where: str, vars_: dict[str, Any]
                  ) -> tuple[Any, bool, str]:
    """(the value, or a Mapped for a script assertion; whether it used the test's vars; why
    it cannot be imported, or "")."""
    base = kind[4:] if kind.startswith("not-") else kind
    if base in ("javascript", "python") and isinstance(value, str) \
            and value.startswith("file://"):
        return _script(src, kind, value, where), False, ""
    if value is MISSING:
        return value, False, ""
    try:
        loaded = _files(src, value, where)
    except ValueError as exc:
        return None, False, str(exc)
    texts = [v for v in (loaded if isinstance(loaded, list) else [loaded])
             if isinstance(v, str)]
    odd = [t for t in texts if not plain_template(t)]
    if odd:
        return None, False, (f"the value uses Nunjucks beyond {{{{var}}}} ({short(odd[0], 40)}),"
                             " which smevals does not render")
    uses = any("{{" in t for t in texts)
    return render_vars(loaded, vars_), uses, ""


def _files(src: Source, value: object, where: str) -> object:
    if isinstance(value, list):
        return [_files(src, v, where) for v in value]
    if not (isinstance(value, str) and value.startswith("file://")):
        return value
    (path,) = src.resolve(value, where, "assert.value")[:1]
    suffix = path.suffix.lower()
    if suffix in (".json", ".yaml", ".yml"):
        return load_yaml_lines(path, where)[0]
    if suffix == ".txt":
        return read_text(path, where).strip()
    raise ValueError(f"a value read from a {suffix or 'suffix-less'} file: promptfoo refuses "
                     "it (only .txt, .json and .yaml)")


def _script(src: Source, kind: str, value: str, where: str) -> Mapped:
    """A javascript or python assertion's script: copied to graders/promptfoo/..., named by
    the Check's `script` (and `function`)."""
    (path,) = src.resolve(value, where, "assert.value")[:1]
    if path.suffix.lower() in (".ts", ".cts", ".mts"):
        return Mapped(None, "a TypeScript script: smevals runs JavaScript with node, which "
                      "does not compile TypeScript")
    _rel, function = split_ref(value)
    rel = PurePosixPath(path.resolve().relative_to(src.base.resolve()).as_posix())
    language = kind[4:] if kind.startswith("not-") else kind
    options: dict[str, Any] = {"checker": language, "script": f"{SCRIPTS}/{rel}"}
    if function:
        options["function"] = function
    if kind.startswith("not-"):
        options["negate"] = True
    copied = {f"graders/{SCRIPTS}/{rel}": read_text(path, where)}
    return Mapped(options, value=True, fidelity=EXACT, files=copied)
